package session_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
)

var _ session.EffectStore = (*session.RedisStore)(nil)

// binaryPair is an argument go-redis sends by its MarshalBinary.
type binaryPair struct{ x, y int }

func (p binaryPair) MarshalBinary() ([]byte, error) { return []byte{byte(p.x), byte(p.y)}, nil }

// TestRedisSaveEffects: a save's effects are made once, with the save, in its one
// round trip, with their arguments as go-redis writes them; a save that conflicts makes
// none, and neither does one with an effect the store does not know (nothing is sent).
func TestRedisSaveEffects(t *testing.T) {
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			rdb := s.store.Client()
			id := "fx-1"
			count, log := "fx:"+s.store.Tag(id)+":count", "fx:"+s.store.Tag(id)+":log"
			t.Cleanup(func() { rdb.Del(context.WithoutCancel(ctx), count, log) })
			for _, key := range []string{count, log} {
				assert.Equal(t, keySlot(instanceKey(s.store, id)), keySlot(key), "in the instance's slot")
			}
			effects := []any{
				session.RedisEffect{Name: "INCR", Key: count},
				session.RedisEffect{Name: "RPUSH", Key: log, Args: []any{"s", []byte("b"), 7, int8(-8), uint16(9), 1.5, true,
					2 * time.Second, binaryPair{1, 2}, net.IPv4(10, 0, 0, 1).To4(), nil, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
			}
			require.NoError(t, rdb.Ping(ctx).Err())
			before := s.rt.n.Load()
			require.NoError(t, s.store.SaveEffects(ctx, storetest.NewSnapshot(id), 0, 0, effects))
			assert.EqualValues(t, 1, s.rt.n.Load()-before, "one round trip")
			assert.Equal(t, "1", rdb.Get(ctx, count).Val())
			assert.Equal(t, []string{"s", "b", "7", "-8", "9", "1.5", "1", "2000000000", "\x01\x02", "\x0a\x00\x00\x01", "",
				"2026-01-02T03:04:05Z"}, rdb.LRange(ctx, log, 0, -1).Val())
			assert.Equal(t, time.Duration(-1), rdb.PTTL(ctx, instanceKey(s.store, id)).Val(), "no TTL")

			err := s.store.SaveEffects(ctx, storetest.NewSnapshot(id), 0, 0, effects)
			require.ErrorIs(t, err, session.ErrConflict)
			assert.Equal(t, "1", rdb.Get(ctx, count).Val(), "a conflict makes none")

			for _, bad := range [][]any{
				{session.RedisEffect{Name: "INCR", Key: count}, "INCR " + count},
				{session.RedisEffect{Name: "INCR", Key: count}, &session.RedisEffect{Name: "INCR", Key: count}},
				{session.RedisEffect{Name: "INCR", Key: count}, session.RedisEffect{Key: count}},
				{session.RedisEffect{Name: "SET", Key: count, Args: []any{struct{}{}}}},
				{session.RedisEffect{Name: "SET", Key: count, Args: []any{new(int)}}},
				{session.RedisEffect{Name: "RPUSH", Key: log, Args: make([]any, session.MaxEffectArgs+1)}},
			} {
				before := s.rt.n.Load()
				err := s.store.SaveEffects(ctx, storetest.NewSnapshot(id), 1, 0, bad)
				require.Error(t, err)
				assert.ErrorContains(t, err, `"fx-1"`)
				assert.EqualValues(t, 0, s.rt.n.Load()-before, "nothing sent: %v", err)
			}
			assert.Error(t, s.store.SaveEffects(ctx, nil, 0, 0, []any{"INCR " + count}), "no snapshot, no panic")
			got, err := s.store.Load(ctx, id)
			require.NoError(t, err)
			assert.EqualValues(t, 1, got.Version, "not saved")

			many := session.RedisEffect{Name: "RPUSH", Key: log, Args: make([]any, session.MaxEffectArgs)}
			require.NoError(t, s.store.SaveEffects(ctx, storetest.NewSnapshot(id), 1, time.Hour, append(effects[:1:1], many)))
			assert.Equal(t, "2", rdb.Get(ctx, count).Val())
			assert.EqualValues(t, 12+session.MaxEffectArgs, rdb.LLen(ctx, log).Val())
			assert.Greater(t, rdb.PTTL(ctx, instanceKey(s.store, id)).Val(), 59*time.Minute)
		})
	}
}

// TestRedisSaveEffectsFailing: an effect whose command fails ends the save with the
// command's error before the snapshot is written; the effects before it stay made.
func TestRedisSaveEffectsFailing(t *testing.T) {
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			rdb := s.store.Client()
			id := "fx-2"
			count, wrong := "fx:"+s.store.Tag(id)+":count", "fx:"+s.store.Tag(id)+":hash"
			t.Cleanup(func() { rdb.Del(context.WithoutCancel(ctx), count, wrong) })
			require.NoError(t, rdb.HSet(ctx, wrong, "f", "v").Err())
			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot(id), 0))

			err := s.store.SaveEffects(ctx, storetest.NewSnapshot(id), 1, 0, []any{
				session.RedisEffect{Name: "INCR", Key: count},
				session.RedisEffect{Name: "INCR", Key: wrong},
				session.RedisEffect{Name: "INCR", Key: count},
			})
			require.Error(t, err)
			var rerr redis.Error
			require.True(t, errors.As(err, &rerr), "%v", err)
			assert.True(t, redis.HasErrorPrefix(rerr, "WRONGTYPE"), "the command's error: %v", err)
			assert.ErrorContains(t, err, "effect 2: INCR")
			t.Log(err)
			assert.Equal(t, "1", rdb.Get(ctx, count).Val(), "the first effect stays made, the third is not")
			got, err := s.store.Load(ctx, id)
			require.NoError(t, err)
			assert.EqualValues(t, 1, got.Version, "the snapshot is not written")

			err = s.store.SaveEffects(ctx, storetest.NewSnapshot(id), 1, 0, []any{session.RedisEffect{Name: "NOSUCHCOMMAND", Key: count}})
			require.Error(t, err)
			t.Log(err)
			require.NoError(t, s.store.SaveEffects(ctx, storetest.NewSnapshot(id), 1, 0, nil), "the instance is saved as before")
		})
	}
}

// TestRedisEffectsExactlyOnce: a per-node run whose tasks count themselves with an
// effect, and whose Redis goes away while a node runs (its checkpoint is not saved),
// is recovered from the last checkpoint: the node runs twice, its count is made once,
// in the instance's slot.
func TestRedisEffectsExactlyOnce(t *testing.T) {
	ctx := t.Context()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	store := session.NewRedisStore(rdb)
	const id = "once-1"
	countKey := func(node string) string { return "fx:" + store.Tag(id) + ":" + node }

	var closeOnce sync.Once
	ran := newCounter()
	task := func(_ context.Context, c *flow.Context, n *flow.Node) error {
		ran.add(n.ID)
		if err := c.Effect(session.RedisEffect{Name: "INCR", Key: countKey(n.ID)}); err != nil {
			return err
		}
		if n.ID == "b" {
			closeOnce.Do(mr.Close) // the checkpoint of b, and b's count, are not saved
		}
		return nil
	}
	s := flow.NewSpec("count")
	s.Start("s").LinkTo("a")
	s.Activity("a").DoFunc(task).LinkTo("b")
	s.Activity("b").DoFunc(task).LinkTo("c")
	s.Activity("c").DoFunc(task).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	eng := flow.NewEngine()
	require.NoError(t, eng.Register(g))
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))

	_, err = r.Run(ctx, "count", flow.NewContext(id))
	require.Error(t, err, "b's checkpoint could not be saved")
	require.NoError(t, mr.Restart())
	expireLease(t, store, id)
	res, err := r.Resume(ctx, id, nil, session.Recover())
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, map[string]int{"a": 1, "b": 2, "c": 1}, ran.snapshot(), "b ran again from a's checkpoint")
	for _, node := range []string{"a", "b", "c"} {
		assert.Equal(t, "1", rdb.Get(ctx, countKey(node)).Val(), "node %s counted once", node)
		assert.Equal(t, keySlot(instanceKey(store, id)), keySlot(countKey(node)))
	}
}
