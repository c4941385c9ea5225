package testkit_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/testkit"
)

func TestRedisStoreHelpers(t *testing.T) {
	stores := map[string]func(t *testing.T) session.Store{
		"miniredis": func(t *testing.T) session.Store { s, _ := testkit.MiniredisStore(t); return s },
		"real":      func(t *testing.T) session.Store { return testkit.RealRedisStore(t) },
		"any":       func(t *testing.T) session.Store { return testkit.RedisStore(t) },
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			s := mk(t)
			snap := &session.Snapshot{Instance: "tk-1", Graph: "g", Hash: strings.Repeat("ab", 32), Status: session.StatusSuspended,
				Vars: map[string]any{"n": int64(1)}, Created: time.Now()}
			require.NoError(t, s.Save(t.Context(), snap, 0))
			got, err := s.Load(t.Context(), "tk-1")
			require.NoError(t, err)
			assert.Equal(t, int64(1), got.Vars["n"])
			assert.Equal(t, int64(1), got.Version)
		})
	}
}

// RealRedisStore deletes the keys of the store it returns when the test ends, also
// when a WithPrefix among its options replaced the random prefix.
func TestRealRedisStoreCleansItsOwnPrefix(t *testing.T) {
	var prefix string
	t.Run("store", func(t *testing.T) {
		own := "flowteam-test-own:" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "") + ":"
		s := testkit.RealRedisStore(t, session.WithPrefix(own)) // skips without a real Redis
		prefix = own
		require.Equal(t, prefix, s.Prefix())
		snap := &session.Snapshot{Instance: "tk-own", Graph: "g", Hash: strings.Repeat("ab", 32), Status: session.StatusSuspended,
			Created: time.Now()}
		require.NoError(t, s.Save(t.Context(), snap, 0))
	})
	if prefix == "" {
		t.Skip("no real Redis")
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(testkit.RedisAddrEnv)})
	defer rdb.Close()
	keys, err := rdb.Keys(t.Context(), prefix+"*").Result()
	require.NoError(t, err)
	assert.Empty(t, keys, "keys left on the server")
}
