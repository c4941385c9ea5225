package session_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
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

// roundTrips counts the commands a go-redis client sends, one per round trip
// (pipelines count once).
type roundTrips struct {
	n    atomic.Int64
	mu   sync.Mutex
	cmds []string
}

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		h.mu.Lock()
		h.cmds = append(h.cmds, cmd.Name())
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// redisStores returns a miniredis store and, with REDIS_ADDR, one on the real server,
// each with a round-trip counter on its client.
func redisStores(t *testing.T) map[string]struct {
	store *session.RedisStore
	rt    *roundTrips
} {
	out := map[string]struct {
		store *session.RedisStore
		rt    *roundTrips
	}{}
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	rt := &roundTrips{}
	rdb.AddHook(rt)
	out["miniredis"] = struct {
		store *session.RedisStore
		rt    *roundTrips
	}{session.NewRedisStore(rdb), rt}
	if addr := realRedisAddr(); addr != "" {
		s := realRedis(t)
		rt := &roundTrips{}
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { rdb.Close() })
		rdb.AddHook(rt)
		out["redis-server"] = struct {
			store *session.RedisStore
			rt    *roundTrips
		}{session.NewRedisStore(rdb, session.WithPrefix(s.Prefix())), rt}
	}
	return out
}

// TestRedisOneRoundTripPerSave counts the commands of saves, loads and runs.
func TestRedisOneRoundTripPerSave(t *testing.T) {
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			// Connecting sends HELLO and CLIENT SETINFO once per connection: not per save.
			require.NoError(t, s.store.Client().Ping(ctx).Err())
			for i := range int64(5) {
				snap := storetest.NewSnapshot("rt-1")
				before := s.rt.n.Load()
				require.NoError(t, s.store.Save(ctx, snap, i))
				assert.EqualValues(t, 1, s.rt.n.Load()-before, "save %d is one round trip", i+1)
			}
			before := s.rt.n.Load()
			_, err := s.store.Load(ctx, "rt-1")
			require.NoError(t, err)
			assert.EqualValues(t, 1, s.rt.n.Load()-before, "load is one round trip")
			before = s.rt.n.Load()
			assert.ErrorIs(t, s.store.Save(ctx, storetest.NewSnapshot("rt-1"), 1), session.ErrConflict)
			assert.EqualValues(t, 1, s.rt.n.Load()-before, "a conflict is one round trip")

			// Per-node durability: one save per completed node, one round trip each.
			eng := flow.NewEngine()
			parallelGraph(t, eng, func(string) {}, func() {})
			r := session.NewRunner(eng, s.store, session.WithDurability(session.PerNode))
			before = s.rt.n.Load()
			res, err := r.Run(ctx, "par", flow.NewContext("rt-run"))
			require.NoError(t, err)
			saves := 1 + res.Steps + 1 // claim, one per node, outcome
			assert.EqualValues(t, saves, s.rt.n.Load()-before, "%d saves, as many round trips", saves)
			assert.EqualValues(t, saves, res.Version)
			t.Logf("%s: per-node run of %d nodes: %d round trips", name, res.Steps, s.rt.n.Load()-before)
		})
	}
}

// TestRedisClosedMidRun closes the Redis server while a resumed run is between nodes:
// the run fails with an error that says the save failed and why, and once Redis is
// back a resume (Recover: the dead run's claim is still there) completes the instance.
func TestRedisClosedMidRun(t *testing.T) {
	for _, d := range []session.Durability{session.OnExit, session.PerNode} {
		t.Run(d.String(), func(t *testing.T) {
			ctx := t.Context()
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
			t.Cleanup(func() { rdb.Close() })
			store := session.NewRedisStore(rdb)

			eng, cnt := flow.NewEngine(), newCounter()
			var closeOnce sync.Once
			s := flow.NewSpec("crashy")
			s.Start("s").LinkTo("manager")
			s.Activity("manager").DoFunc(func(_ context.Context, c *flow.Context, n *flow.Node) error {
				cnt.add(n.ID)
				if _, ok := c.Get("approved"); !ok {
					c.Suspend("waiting")
				}
				return nil
			}).LinkTo("outage")
			s.Activity("outage").DoFunc(func(_ context.Context, _ *flow.Context, n *flow.Node) error {
				cnt.add(n.ID)
				closeOnce.Do(mr.Close) // Redis goes away while the run is in progress
				return nil
			}).LinkTo("e")
			s.End("e").DoFunc(func(_ context.Context, _ *flow.Context, n *flow.Node) error { cnt.add(n.ID); return nil })
			g, err := s.Build()
			require.NoError(t, err)
			require.NoError(t, eng.Register(g))
			r := session.NewRunner(eng, store, session.WithDurability(d))

			res, err := r.Run(ctx, "crashy", flow.NewContext("outage-1"))
			require.NoError(t, err)
			require.Equal(t, flow.StatusSuspended, res.Status)

			res, err = r.Resume(ctx, "outage-1", map[string]any{"approved": true})
			require.Error(t, err)
			require.NotNil(t, res, "the run happened; its outcome could not be saved")
			assert.ErrorContains(t, err, `instance "outage-1"`)
			assert.ErrorContains(t, err, "session: redis: save")
			var opErr *net.OpError
			assert.ErrorAs(t, err, &opErr, "the cause is the connection: %v", err)
			t.Logf("%s: error while Redis is down: %v", d, err)
			if d == session.PerNode {
				var ne *flow.NodeError
				require.ErrorAs(t, err, &ne)
				assert.Equal(t, flow.CodeCheckpoint, ne.Code, "the failed checkpoint fails the run at the node")
				assert.Equal(t, "outage", ne.Node)
			}

			require.NoError(t, mr.Restart()) // the same server (and data) on the same address
			_, err = r.Resume(ctx, "outage-1", map[string]any{"approved": true})
			require.ErrorIs(t, err, session.ErrRunning, "the dead run's claim is there")
			expireLease(t, store, "outage-1")
			res, err = r.Resume(ctx, "outage-1", nil, session.Recover())
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, true, res.Context.Value("approved"), "the update was saved with the claim")
			want := map[string]int{"manager": 3, "outage": 2, "e": 2} // on-exit: again from the claim's frontier
			if d == session.PerNode {
				want = map[string]int{"manager": 2, "outage": 2, "e": 1} // from the last checkpoint
			}
			assert.Equal(t, want, cnt.snapshot())
		})
	}
}

func realRedisAddr() string { return os.Getenv("REDIS_ADDR") }

// instanceKey is the key of instance id's hash, as the RedisStore doc gives it.
func instanceKey(s *session.RedisStore, id string) string { return s.Prefix() + "s:{" + id + "}" }

// TestRedisIndexSetsStayBounded: instances that expire leave their ids in the index
// sets; without any List, the saves that follow remove them.
func TestRedisIndexSetsStayBounded(t *testing.T) {
	ctx := t.Context()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	store := session.NewRedisStore(rdb, session.WithTTL(time.Minute))
	all := store.Prefix() + "all"
	suspended := store.Prefix() + "status:" + string(session.StatusSuspended)
	for i := range 100 {
		require.NoError(t, store.Save(ctx, storetest.NewSnapshot(fmt.Sprintf("short-%d", i)), 0))
		mr.FastForward(2 * time.Minute)
	}
	require.NoError(t, store.Save(ctx, storetest.NewSnapshot("live"), 0))
	for _, set := range []string{all, suspended} {
		members, err := rdb.SMembers(ctx, set).Result()
		require.NoError(t, err)
		assert.Equal(t, []string{"live"}, members, "%s holds only the live instance", set)
	}

	// An id that expired and came back with another status leaves its old status set
	// on the next save to that status.
	mr.FastForward(2 * time.Minute)
	back := storetest.NewSnapshot("live")
	back.Status = session.StatusCompleted
	require.NoError(t, store.Save(ctx, back, 0))
	require.NoError(t, store.Save(ctx, storetest.NewSnapshot("next"), 0))
	members, err := rdb.SMembers(ctx, suspended).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"next"}, members)
	ids, err := store.List(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"live", "next"}, ids)
}

// TestRedisVersionsBeyondFloat64: versions above 2^53, where float64 (a Lua number)
// no longer holds every integer, are compared and reported exactly.
func TestRedisVersionsBeyondFloat64(t *testing.T) {
	const stored = int64(1<<53 + 1)
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			snap := storetest.NewSnapshot("big-1")
			snap.Format, snap.Version = session.FormatVersion, stored
			snap.Created = time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
			snap.Updated = snap.Created
			data, err := session.Encode(snap)
			require.NoError(t, err)
			key := instanceKey(s.store, "big-1")
			require.NoError(t, s.store.Client().HSet(ctx, key, "v", stored, "st", string(snap.Status), "d", data).Err())
			t.Cleanup(func() { s.store.Client().Del(context.WithoutCancel(ctx), key) })

			err = s.store.Save(ctx, storetest.NewSnapshot("big-1"), stored-1)
			require.ErrorIs(t, err, session.ErrConflict, "expecting 2^53, stored 2^53+1")
			assert.ErrorContains(t, err, fmt.Sprintf("stored version is %d", stored))
			got, err := s.store.Load(ctx, "big-1")
			require.NoError(t, err)
			assert.Equal(t, stored, got.Version, "the failed save stored nothing")

			next := storetest.NewSnapshot("big-1")
			require.NoError(t, s.store.Save(ctx, next, stored))
			assert.Equal(t, stored+1, next.Version)
			got, err = s.store.Load(ctx, "big-1")
			require.NoError(t, err)
			assert.Equal(t, stored+1, got.Version)
			err = s.store.Save(ctx, storetest.NewSnapshot("big-1"), stored+2)
			require.ErrorIs(t, err, session.ErrConflict)
			assert.ErrorContains(t, err, fmt.Sprintf("stored version is %d", stored+1))
		})
	}
}

// TestRedisLoadChecksTheHashFields: the store checks versions against the hash field
// "v" and lists by "st", while Load returns the snapshot in "d". A hash whose fields
// disagree (edited by hand, written in part by another tool) is damage: Load reports
// it naming both values, where it returned version 3 and every resume then conflicted
// with the 7 in "v" for ever. A hash without its snapshot is damage too, not an
// instance that is not there (a Run of the id would conflict with "v"), and Delete
// removes any of them (it reported a hash without "st" as not found, and left it).
func TestRedisLoadChecksTheHashFields(t *testing.T) {
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			rdb := s.store.Client()
			for _, c := range []struct {
				name   string
				fields []any
				want   string
			}{
				{"version", []any{"v", "7"}, `stored version is 7, the snapshot's is 1`},
				{"status", []any{"st", "completed"}, `stored status is "completed", the snapshot's is "suspended"`},
				{"no version", nil, `no stored version`},
				{"no status", nil, `stored status is "", the snapshot's is "suspended"`},
				{"no snapshot", nil, `no snapshot`},
			} {
				t.Run(c.name, func(t *testing.T) {
					id := "fields-" + strings.ReplaceAll(c.name, " ", "-")
					key := instanceKey(s.store, id)
					t.Cleanup(func() { rdb.Del(context.WithoutCancel(ctx), key) })
					require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot(id), 0))
					switch c.name {
					case "no version":
						require.NoError(t, rdb.HDel(ctx, key, "v").Err())
					case "no snapshot":
						require.NoError(t, rdb.HDel(ctx, key, "d").Err())
					case "no status":
						require.NoError(t, rdb.HDel(ctx, key, "st").Err())
					default:
						require.NoError(t, rdb.HSet(ctx, key, c.fields...).Err())
					}
					_, err := s.store.Load(ctx, id)
					require.ErrorIs(t, err, session.ErrCorrupt)
					assert.ErrorContains(t, err, c.want)
					assert.ErrorContains(t, err, id)
					if c.name == "no version" {
						// Not an instance that is not stored: a Run must not save over it.
						err = s.store.Save(ctx, storetest.NewSnapshot(id), 0)
						require.ErrorIs(t, err, session.ErrCorrupt)
						assert.NotErrorIs(t, err, session.ErrConflict)
					}

					// The damage can be deleted, whatever field is missing.
					require.NoError(t, s.store.Delete(ctx, id))
					_, err = s.store.Load(ctx, id)
					require.ErrorIs(t, err, session.ErrNotFound)
					require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot(id), 0), "the id can be used again")
				})
			}
		})
	}
}

// TestRedisHashWithoutCreationTime: a hash an earlier build wrote has no "c": a save
// expecting its version is not refused for a creation time the store cannot check,
// and writes "c" for the next.
func TestRedisHashWithoutCreationTime(t *testing.T) {
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			key := instanceKey(s.store, "old-1")
			t.Cleanup(func() { s.store.Client().Del(context.WithoutCancel(ctx), key) })
			first := storetest.NewSnapshot("old-1")
			require.NoError(t, s.store.Save(ctx, first, 0))
			require.NoError(t, s.store.Client().HDel(ctx, key, "c").Err())
			other := storetest.NewSnapshot("old-1")
			other.Created = first.Created.Add(-time.Hour)
			require.NoError(t, s.store.Save(ctx, other, 1))
			stale := storetest.NewSnapshot("old-1")
			stale.Created = first.Created
			assert.ErrorIs(t, s.store.Save(ctx, stale, 2), session.ErrConflict, "checked again once written")
		})
	}
}

// A hash holding a snapshot of another format (a newer build's, field "f") is neither
// saved over nor deleted, as FileStore does with such a file; a hash from before the
// field existed is saved over as before.
func TestRedisKeepsSnapshotsOfAnotherFormat(t *testing.T) {
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			key := instanceKey(s.store, "fmt-1")
			t.Cleanup(func() { s.store.Client().Del(context.WithoutCancel(ctx), key) })
			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot("fmt-1"), 0))
			f, err := s.store.Client().HGet(ctx, key, "f").Result()
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprint(session.FormatVersion), f)

			require.NoError(t, s.store.Client().HSet(ctx, key, "f", session.FormatVersion+1).Err())
			before, err := s.store.Client().HGetAll(ctx, key).Result()
			require.NoError(t, err)
			assert.ErrorIs(t, s.store.Save(ctx, storetest.NewSnapshot("fmt-1"), 1), session.ErrFormat)
			assert.ErrorIs(t, s.store.Delete(ctx, "fmt-1"), session.ErrFormat)
			after, err := s.store.Client().HGetAll(ctx, key).Result()
			require.NoError(t, err)
			assert.Equal(t, before, after, "the hash is left as it was")

			require.NoError(t, s.store.Client().HDel(ctx, key, "f").Err())
			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot("fmt-1"), 1), "a hash from an earlier build")
			require.NoError(t, s.store.Delete(ctx, "fmt-1"))
		})
	}
}

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
			bad := instanceKey(s.store, "bad-1")
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
