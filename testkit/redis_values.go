package testkit

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// RedisValues returns every key under prefix and every field, value and member it
// holds, whatever its type (string, hash, set, sorted set, list, stream; a stream
// entry's values as "field" then fmt.Sprint of the value), so that a test can check
// that a secret is in none of them. A key of another type fails the test.
func RedisValues(t testing.TB, rdb redis.UniversalClient, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	var vals []string
	iter := rdb.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		vals = append(vals, k)
		switch typ := rdb.Type(ctx, k).Val(); typ {
		case "hash":
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				vals = append(vals, f, v)
			}
		case "string":
			vals = append(vals, rdb.Get(ctx, k).Val())
		case "set":
			vals = append(vals, rdb.SMembers(ctx, k).Val()...)
		case "zset":
			vals = append(vals, rdb.ZRange(ctx, k, 0, -1).Val()...)
		case "list":
			vals = append(vals, rdb.LRange(ctx, k, 0, -1).Val()...)
		case "stream":
			for _, m := range rdb.XRange(ctx, k, "-", "+").Val() {
				for f, v := range m.Values {
					vals = append(vals, f, fmt.Sprint(v))
				}
			}
		case "none":
			// Deleted since the scan saw it.
		default:
			t.Fatalf("key %s: type %s not read", k, typ)
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("scan %s*: %v", prefix, err)
	}
	return vals
}
