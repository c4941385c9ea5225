package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/flowteam/flowteam/session"
)

// RedisAddrEnv names the environment variable that points tests at a real
// redis-server (.ci/run starts one and sets it).
const RedisAddrEnv = "REDIS_ADDR"

// MiniredisStore returns a session store on an in-process miniredis, closed when the
// test ends, and the miniredis (to fast-forward TTLs, close it, or restart it).
func MiniredisStore(t testing.TB, opts ...session.RedisOption) (*session.RedisStore, *miniredis.Miniredis) {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	return session.NewRedisStore(rdb, opts...), mr
}

// RealRedisStore returns a session store on the redis-server at $REDIS_ADDR under a
// fresh random key prefix (or the one a WithPrefix in opts gives) whose keys are
// deleted when the test ends. It skips the test
// when REDIS_ADDR is not set, and fails it when the server does not answer.
func RealRedisStore(t testing.TB, opts ...session.RedisOption) *session.RedisStore {
	t.Helper()
	addr := os.Getenv(RedisAddrEnv)
	if addr == "" {
		t.Skip(RedisAddrEnv + " is not set: no real Redis for this test")
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		t.Fatalf("%s=%s: %v", RedisAddrEnv, addr, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	store := session.NewRedisStore(rdb, append([]session.RedisOption{session.WithPrefix("flowteam-test:" + hex.EncodeToString(b[:]) + ":")}, opts...)...)
	// The store's own prefix: a WithPrefix among opts replaces the random one, and its
	// keys must go too.
	prefix := store.Prefix()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if keys, _ := rdb.Keys(ctx, prefix+"*").Result(); len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
		rdb.Close()
	})
	return store
}

// RedisStore returns the real Redis store when REDIS_ADDR is set, else a miniredis
// one: tests that need any Redis run everywhere and on the real server in CI.
func RedisStore(t testing.TB, opts ...session.RedisOption) *session.RedisStore {
	t.Helper()
	if os.Getenv(RedisAddrEnv) != "" {
		return RealRedisStore(t, opts...)
	}
	s, _ := MiniredisStore(t, opts...)
	return s
}
