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

	"context"
	"path/filepath"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
	"github.com/stretchr/testify/assert"
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

// TestLoadRejectsAnotherInstancesSnapshot: a snapshot stored under the id of another
// instance (a file copied or renamed by hand, a key written by another tool) is
// corrupt for that id. Resuming the id fails and leaves both instances as they were.
func TestLoadRejectsAnotherInstancesSnapshot(t *testing.T) {
	type plant func(t *testing.T, from, to string)
	stores := map[string]func(t *testing.T) (session.Store, plant){
		"file": func(t *testing.T) (session.Store, plant) {
			dir := t.TempDir()
			fs, err := session.NewFileStore(dir)
			require.NoError(t, err)
			return fs, func(t *testing.T, from, to string) {
				data, err := os.ReadFile(filepath.Join(dir, from+".json"))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, to+".json"), data, 0o600))
			}
		},
		"miniredis": func(t *testing.T) (session.Store, plant) {
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { rdb.Close() })
			return redisPlant(session.NewRedisStore(rdb))
		},
		"redis-server": func(t *testing.T) (session.Store, plant) { return redisPlant(realRedis(t)) },
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			store, copyTo := newStore(t)
			eng, cnt := flow.NewEngine(), newCounter()
			approvalGraph(t, eng, cnt, "Manager")
			r := session.NewRunner(eng, store)
			_, err := r.Run(ctx, "leave", flow.NewContext("order-b"))
			require.NoError(t, err)
			copyTo(t, "order-b", "order-a")

			_, err = store.Load(ctx, "order-a")
			require.ErrorIs(t, err, session.ErrCorrupt)
			assert.ErrorContains(t, err, `"order-b"`, "the error names the instance the snapshot is of")
			_, err = r.Resume(ctx, "order-a", map[string]any{"approved": true})
			require.ErrorIs(t, err, session.ErrCorrupt)
			assert.Equal(t, 1, cnt.get("manager"), "nothing ran")
			b, err := store.Load(ctx, "order-b")
			require.NoError(t, err)
			assert.Equal(t, session.StatusSuspended, b.Status, "the other instance was not touched")
			assert.EqualValues(t, 2, b.Version)
		})
	}
}

func redisPlant(s *session.RedisStore) (session.Store, func(t *testing.T, from, to string)) {
	return s, func(t *testing.T, from, to string) {
		ctx := context.Background()
		rdb := s.Client()
		fields, err := rdb.HGetAll(ctx, instanceKey(s, from)).Result()
		require.NoError(t, err)
		require.NotEmpty(t, fields)
		require.NoError(t, rdb.HSet(ctx, instanceKey(s, to), fields).Err())
	}
}
