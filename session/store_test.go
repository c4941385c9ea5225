package session_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	goleak.VerifyTestMain(m)
}

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store {
		clk := storetest.NewClock()
		return storetest.WithFastForward(session.NewMemoryStore(session.WithClock(clk.Now)), clk.FastForward)
	})
}

func TestFileStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store {
		clk := storetest.NewClock()
		s, err := session.NewFileStore(t.TempDir(), session.WithClock(clk.Now))
		require.NoError(t, err)
		return storetest.WithFastForward(s, clk.FastForward)
	})
}

func TestMiniredisStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store {
		mr := miniredis.RunT(t)
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { rdb.Close() })
		return storetest.WithFastForward(session.NewRedisStore(rdb, session.WithPrefix("test:")), mr.FastForward)
	})
}

// TestRealRedisStore runs the suite against the redis-server at REDIS_ADDR (as .ci/run
// starts one), each subtest under a random key prefix it removes afterwards.
func TestRealRedisStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store {
		return realRedis(t)
	})
}

// realRedis returns a store on the Redis at REDIS_ADDR under a fresh key prefix, and
// deletes the prefix's keys when the test ends. It skips the test without REDIS_ADDR.
func realRedis(t testing.TB, opts ...session.RedisOption) *session.RedisStore {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		t.Skip("REDIS_ADDR is not set")
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	require.NoError(t, rdb.Ping(t.Context()).Err(), "REDIS_ADDR=%s", addr)
	prefix := "flowteam-test:" + randomHex(6) + ":"
	t.Cleanup(func() {
		ctx, cancel := contextWithTimeout(5 * time.Second)
		defer cancel()
		keys, _ := rdb.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
		rdb.Close()
	})
	return session.NewRedisStore(rdb, append([]session.RedisOption{session.WithPrefix(prefix)}, opts...)...)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
