package testkit_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/testkit"
)

// RedisValues reads every type of key under the prefix, and only those.
func TestRedisValuesReadsEveryType(t *testing.T) {
	store, _ := testkit.MiniredisStore(t)
	rdb := store.Client()
	ctx := context.Background()
	require.NoError(t, rdb.Set(ctx, "p:str", "s1", 0).Err())
	require.NoError(t, rdb.HSet(ctx, "p:hash", "f1", "h1").Err())
	require.NoError(t, rdb.SAdd(ctx, "p:set", "m1").Err())
	require.NoError(t, rdb.ZAdd(ctx, "p:zset", redis.Z{Score: 1, Member: "z1"}).Err())
	require.NoError(t, rdb.RPush(ctx, "p:list", "l1").Err())
	require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: "p:stream", Values: []any{"x1", "v1"}}).Err())
	require.NoError(t, rdb.Set(ctx, "other:str", "o1", 0).Err())

	got := testkit.RedisValues(t, rdb, "p:")
	assert.ElementsMatch(t, []string{"p:str", "s1", "p:hash", "f1", "h1", "p:set", "m1", "p:zset", "z1",
		"p:list", "l1", "p:stream", "x1", "v1"}, got)
}
