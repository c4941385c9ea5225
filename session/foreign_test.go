package session_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// TestLoadRejectsAnotherInstancesSnapshot: a snapshot stored under the id of another
// instance (a file copied or renamed by hand, a key written by another tool) is
// corrupt for that id. Resuming the id fails and leaves both instances as they were;
// before, the resume claimed, ran and completed the other instance.
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
		fields, err := rdb.HGetAll(ctx, s.Prefix()+"s:"+from).Result()
		require.NoError(t, err)
		require.NotEmpty(t, fields)
		require.NoError(t, rdb.HSet(ctx, s.Prefix()+"s:"+to, fields).Err())
	}
}
