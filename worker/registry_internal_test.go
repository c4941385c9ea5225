package worker

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// Consumers idle for long with nothing pending (workers gone) leave the group; one
// with a pending entry stays until its entry is reclaimed.
func TestPruneConsumersKeepsThoseWithPendingEntries(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	q := NewQueue(session.NewRedisStore(rdb))
	ctx := context.Background()
	require.NoError(t, q.ensureGroup(ctx))
	require.NoError(t, q.Enqueue(ctx, "i-1", nil))
	read := func(consumer string) {
		err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: consumer,
			Streams: []string{q.stream, ">"}, Count: 1, Block: -1}).Err()
		if err != redis.Nil {
			require.NoError(t, err)
		}
	}
	read("busy") // takes i-1
	read("gone") // finds nothing
	mr.SetTime(time.Now().Add(time.Hour))
	q.pruneConsumers(ctx, time.Minute)
	cs, err := rdb.XInfoConsumers(ctx, q.stream, group).Result()
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Equal(t, "busy", cs[0].Name)
	q.leaveGroup(ctx, "busy")
	cs, err = rdb.XInfoConsumers(ctx, q.stream, group).Result()
	require.NoError(t, err)
	assert.Len(t, cs, 1, "a consumer with a pending entry does not leave")
}
