package session_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
)

// A key at an instance's place that is not an instance hash (another program's, or
// one written by hand) is reported, not fatal to the store: List lists the other
// instances (it failed with WRONGTYPE, so no instance could be listed), Load and
// Delete name it as ErrCorrupt, Save does not write over it, and saving another
// instance (whose save prunes the index sets) does not fail on it.
func TestRedisKeyOfAnotherTypeAtAnInstance(t *testing.T) {
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			rdb := s.store.Client()
			bad := s.store.Prefix() + "s:bad-1"
			t.Cleanup(func() {
				c := context.WithoutCancel(ctx)
				rdb.Del(c, bad)
				rdb.SRem(c, s.store.Prefix()+"all", "bad-1")
				_ = s.store.Delete(c, "good-1")
			})
			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot("good-1"), 0))
			require.NoError(t, rdb.Set(ctx, bad, "x", 0).Err())
			require.NoError(t, rdb.SAdd(ctx, s.store.Prefix()+"all", "bad-1").Err())
			require.NoError(t, rdb.SAdd(ctx, s.store.Prefix()+"status:suspended", "bad-1").Err())

			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot("good-1"), 1), "the save's pruning passes the key by")
			ids, err := s.store.List(ctx, "")
			require.NoError(t, err)
			assert.Equal(t, []string{"good-1"}, ids)
			ids, err = s.store.List(ctx, session.StatusSuspended)
			require.NoError(t, err)
			assert.NotContains(t, ids, "bad-1")

			_, err = s.store.Load(ctx, "bad-1")
			assert.ErrorIs(t, err, session.ErrCorrupt)
			assert.ErrorContains(t, err, "bad-1")
			err = s.store.Delete(ctx, "bad-1")
			assert.ErrorIs(t, err, session.ErrCorrupt)
			assert.Error(t, s.store.Save(ctx, storetest.NewSnapshot("bad-1"), 0))
			v, err := rdb.Get(ctx, bad).Result()
			require.NoError(t, err)
			assert.Equal(t, "x", v, "the key is left as it was")
		})
	}
}
