package session_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// TestConcurrentResumersEveryStore resumes one suspended instance from many
// goroutines at once on every store, and on a directory shared by one FileStore per
// goroutine (as separate processes share it): exactly one resume runs, every other one
// gets ErrConflict and runs nothing, the stored outcome is the winner's, and the
// version went up by exactly the saves of one run.
func TestConcurrentResumersEveryStore(t *testing.T) {
	const resumers = 20
	stores := allStores()
	stores["file, one store per resumer"] = nil
	for name, newStore := range stores {
		for _, d := range []session.Durability{session.OnExit, session.PerNode} {
			t.Run(name+"/"+d.String(), func(t *testing.T) {
				ctx := t.Context()
				eng, cnt := flow.NewEngine(), newCounter()
				approvalGraph(t, eng, cnt, "Manager")
				var runner func() *session.Runner
				if newStore != nil {
					r := session.NewRunner(eng, newStore(t), session.WithDurability(d))
					runner = func() *session.Runner { return r }
				} else {
					dir := t.TempDir()
					runner = func() *session.Runner {
						fs, err := session.NewFileStore(dir)
						require.NoError(t, err)
						return session.NewRunner(eng, fs, session.WithDurability(d))
					}
				}
				res, err := runner().Run(ctx, "leave", flow.NewContext("race-1"))
				require.NoError(t, err)
				suspendedAt := res.Version

				var (
					wg        sync.WaitGroup
					wins      atomic.Int32
					winner    atomic.Int64
					winSteps  atomic.Int64
					conflicts atomic.Int32
					start     = make(chan struct{})
				)
				for i := range resumers {
					r := runner()
					wg.Go(func() {
						<-start
						res, err := r.Resume(ctx, "race-1", map[string]any{"approved": true, "by": i})
						if err == nil {
							wins.Add(1)
							winner.Store(int64(i))
							winSteps.Store(int64(res.Steps))
							assert.Equal(t, flow.StatusCompleted, res.Status)
							return
						}
						assert.ErrorIs(t, err, session.ErrConflict)
						assert.Nil(t, res)
						conflicts.Add(1)
					})
				}
				close(start)
				wg.Wait()
				require.EqualValues(t, 1, wins.Load(), "exactly one resume wins")
				assert.EqualValues(t, resumers-1, conflicts.Load())
				assert.Equal(t, 2, cnt.get("manager"), "the manager node ran once at the run, once at the one resume")
				assert.Equal(t, 1, cnt.get("e"))

				snap, err := runner().Store().Load(ctx, "race-1")
				require.NoError(t, err)
				assert.Equal(t, session.StatusCompleted, snap.Status)
				assert.Equal(t, winner.Load(), snap.Vars["by"], "the stored outcome is the winner's")
				want := suspendedAt + 2 // the claim and the outcome
				if d == session.PerNode {
					want += winSteps.Load() // and a checkpoint per node
				}
				assert.Equal(t, want, snap.Version, "the version counts the winner's saves, and nothing else")
			})
		}
	}
}

// TestResumeWithBadUpdatesLosesNothing: updates that cannot be saved are reported by
// name, nothing runs, and the stored instance is as it was, so a resume with good
// updates still works.
func TestResumeWithBadUpdatesLosesNothing(t *testing.T) {
	for name, newStore := range allStores() {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			eng, cnt := flow.NewEngine(), newCounter()
			approvalGraph(t, eng, cnt, "Manager")
			store := newStore(t)
			r := session.NewRunner(eng, store)
			_, err := r.Run(ctx, "leave", flow.NewContextWith("bad-1", map[string]any{"days": 5}))
			require.NoError(t, err)
			before, err := store.Load(ctx, "bad-1")
			require.NoError(t, err)

			for what, updates := range map[string]map[string]any{
				"func":            {"approved": true, "callback": func() {}},
				"channel":         {"approved": true, "ch": make(chan int)},
				"invalid key":     {"approved": true, "k\xff": 1},
				"NaN in a list":   {"approved": true, "scores": []any{1.0, nanValue()}},
				"failing marshal": {"approved": true, "f": failing{}},
			} {
				res, err := r.Resume(ctx, "bad-1", updates)
				assert.Nil(t, res, what)
				require.ErrorIs(t, err, session.ErrUnserializable, what)
				after, err := store.Load(ctx, "bad-1")
				require.NoError(t, err)
				assert.Equal(t, before, after, "%s: the stored instance did not change", what)
			}
			assert.Equal(t, 1, cnt.get("manager"), "nothing ran")

			res, err := r.Resume(ctx, "bad-1", map[string]any{"approved": true})
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, before.Version+2, res.Version)
		})
	}
}

// TestResumeAfterANodeWasRemoved: the definition changed and the node the instance
// waits at is gone. Without a migration the hashes differ (ErrDefinitionChanged); with
// a migration that does not move the frontier, the error names the missing node. In
// both cases nothing runs and nothing is claimed; a migration that moves the token to
// the new node resumes it.
func TestResumeAfterANodeWasRemoved(t *testing.T) {
	ctx := t.Context()
	store := session.NewMemoryStore()
	eng1, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng1, cnt, "Manager")
	_, err := session.NewRunner(eng1, store).Run(ctx, "leave", flow.NewContext("moved-1"))
	require.NoError(t, err)
	before, err := store.Load(ctx, "moved-1")
	require.NoError(t, err)

	// The new definition calls the manager's step "approver".
	eng2 := flow.NewEngine()
	s := flow.NewSpec("leave")
	s.Start("s").LinkTo("submit")
	s.Activity("submit").LinkTo("approver")
	s.Activity("approver").DoFunc(func(_ context.Context, c *flow.Context, n *flow.Node) error {
		cnt.add(n.ID)
		if _, ok := c.Get("approved"); !ok {
			c.Suspend("waiting")
		}
		return nil
	}).LinkTo("e")
	s.End("e")
	g2, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng2.Register(g2))

	_, err = session.NewRunner(eng2, store).Resume(ctx, "moved-1", map[string]any{"approved": true})
	require.ErrorIs(t, err, session.ErrDefinitionChanged)

	keep := func(context.Context, *session.Snapshot, *flow.Graph) error { return nil }
	_, err = session.NewRunner(eng2, store, session.WithMigration(keep)).Resume(ctx, "moved-1", map[string]any{"approved": true})
	require.ErrorIs(t, err, flow.ErrBadFrontier)
	assert.ErrorContains(t, err, `"manager"`, "the error names the node that is gone")
	assert.ErrorContains(t, err, `"moved-1"`)
	after, err := store.Load(ctx, "moved-1")
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing was claimed")
	assert.Zero(t, cnt.get("approver"))

	move := func(_ context.Context, s *session.Snapshot, _ *flow.Graph) error {
		for i := range s.Frontier.Tokens {
			if s.Frontier.Tokens[i].Node == "manager" {
				s.Frontier.Tokens[i].Node = "approver"
			}
		}
		return nil
	}
	res, err := session.NewRunner(eng2, store, session.WithMigration(move)).Resume(ctx, "moved-1", map[string]any{"approved": true})
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, cnt.get("approver"))
}

// TestFailedRunResumesFromLastCheckpoint: a node fails mid-way. The failure is saved
// with the frontier at the failed node and its error; a resume (once the cause is
// fixed) runs the failed node again and then the rest, and never the nodes before it.
// The version counts every save: the claim, a checkpoint per completed node
// (PerNode), the outcome.
func TestFailedRunResumesFromLastCheckpoint(t *testing.T) {
	for name, newStore := range allStores() {
		for _, d := range []session.Durability{session.OnExit, session.PerNode} {
			t.Run(name+"/"+d.String(), func(t *testing.T) {
				ctx := t.Context()
				eng, cnt := flow.NewEngine(), newCounter()
				var broken atomic.Bool
				broken.Store(true)
				count := func(_ context.Context, _ *flow.Context, n *flow.Node) error { cnt.add(n.ID); return nil }
				s := flow.NewSpec("chain")
				s.Start("s").DoFunc(count).LinkTo("a")
				s.Activity("a").DoFunc(func(_ context.Context, c *flow.Context, n *flow.Node) error {
					cnt.add(n.ID)
					c.Set("a", "done")
					return nil
				}).LinkTo("b")
				s.Activity("b").DoFunc(func(_ context.Context, _ *flow.Context, n *flow.Node) error {
					cnt.add(n.ID)
					if broken.Load() {
						return errors.New("database unavailable")
					}
					return nil
				}).LinkTo("c")
				s.Activity("c").DoFunc(count).LinkTo("e")
				s.End("e").DoFunc(count)
				g, err := s.Build()
				require.NoError(t, err)
				require.NoError(t, eng.Register(g))
				store := newStore(t)
				r := session.NewRunner(eng, store, session.WithDurability(d))

				res, err := r.Run(ctx, "chain", flow.NewContext("fail-1"))
				require.ErrorContains(t, err, "database unavailable")
				require.NotNil(t, res)
				assert.Equal(t, flow.StatusFailed, res.Status)
				saves := int64(2) // claim, outcome
				if d == session.PerNode {
					saves += 2 // s and a completed
				}
				assert.Equal(t, saves, res.Version)
				snap, err := store.Load(ctx, "fail-1")
				require.NoError(t, err)
				assert.Equal(t, session.StatusFailed, snap.Status)
				require.NotNil(t, snap.Frontier)
				require.Len(t, snap.Frontier.Tokens, 1)
				assert.Equal(t, "b", snap.Frontier.Tokens[0].Node, "the frontier is at the failed node")
				require.Len(t, snap.Errors, 1)
				assert.Equal(t, "b", snap.Errors[0].Node)
				assert.Equal(t, "done", snap.Vars["a"])

				broken.Store(false)
				res, err = r.Resume(ctx, "fail-1", nil)
				require.NoError(t, err)
				assert.Equal(t, flow.StatusCompleted, res.Status)
				assert.Equal(t, map[string]int{"s": 1, "a": 1, "b": 2, "c": 1, "e": 1}, cnt.snapshot())
				saves += 2
				if d == session.PerNode {
					saves += 3 // b, c, e
				}
				assert.Equal(t, saves, res.Version)
				snap, err = store.Load(ctx, "fail-1")
				require.NoError(t, err)
				assert.Equal(t, session.StatusCompleted, snap.Status)
				assert.Len(t, snap.Errors, 1, "the earlier failure stays in the record")
			})
		}
	}
}

func nanValue() float64 { return zero() / zero() }

func zero() float64 { return 0 }

// TestMigrationMustNotMoveTheInstance: a migration that changes the snapshot's
// instance id (or graph id) fails the resume.
func TestMigrationMustNotMoveTheInstance(t *testing.T) {
	ctx := t.Context()
	store := session.NewMemoryStore()
	eng1, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng1, cnt, "Manager")
	r1 := session.NewRunner(eng1, store)
	for _, id := range []string{"mig-a", "mig-b"} {
		_, err := r1.Run(ctx, "leave", flow.NewContext(id))
		require.NoError(t, err)
	}
	before, err := store.Load(ctx, "mig-b")
	require.NoError(t, err)
	eng2 := flow.NewEngine()
	approvalGraph(t, eng2, cnt, "Line manager")
	for name, edit := range map[string]func(s *session.Snapshot){
		"instance": func(s *session.Snapshot) { s.Instance = "mig-b" },
		"graph":    func(s *session.Snapshot) { s.Graph = "other" },
	} {
		r2 := session.NewRunner(eng2, store, session.WithMigration(func(_ context.Context, s *session.Snapshot, _ *flow.Graph) error {
			edit(s)
			return nil
		}))
		_, err = r2.Resume(ctx, "mig-a", map[string]any{"approved": true})
		require.ErrorContains(t, err, "only the body may change", name)
		assert.Equal(t, 2, cnt.get("manager"), "%s: nothing ran", name)
		after, err := store.Load(ctx, "mig-b")
		require.NoError(t, err)
		assert.Equal(t, before, after, "%s: the other instance is untouched", name)
		a, err := store.Load(ctx, "mig-a")
		require.NoError(t, err)
		assert.Equal(t, session.StatusSuspended, a.Status, name)
	}
}

// TestExpectVersionZeroIsAVersion: ExpectVersion(v) fails the resume unless the
// stored version is v, also for v 0 (a caller that saw no snapshot, or a zero value
// it never filled) and for a negative v: no stored snapshot has either version, so
// the resume is an ErrConflict and runs nothing.
func TestExpectVersionZeroIsAVersion(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	store := session.NewMemoryStore()
	r := session.NewRunner(eng, store)
	res, err := r.Run(ctx, "leave", flow.NewContext("ev-1"))
	require.NoError(t, err)
	for _, v := range []int64{0, -1} {
		_, err = r.Resume(ctx, "ev-1", map[string]any{"approved": true}, session.ExpectVersion(v))
		require.ErrorIs(t, err, session.ErrConflict, "expect version %d", v)
		assert.ErrorContains(t, err, fmt.Sprintf("expected version %d", v))
		assert.Equal(t, 1, cnt.get("manager"), "expect version %d: nothing ran", v)
	}
	snap, err := store.Load(ctx, "ev-1")
	require.NoError(t, err)
	assert.Equal(t, res.Version, snap.Version, "nothing was saved")
	res, err = r.Resume(ctx, "ev-1", map[string]any{"approved": true}, session.ExpectVersion(res.Version))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
}

// recreatingStore runs between once, before the first save that expects a version
// and stores status running (a resume's claim).
type recreatingStore struct {
	session.Store
	between func()
}

func (s *recreatingStore) Save(ctx context.Context, snap *session.Snapshot, expected int64) error {
	if f := s.between; f != nil && snap.Status == session.StatusRunning && expected > 0 {
		s.between = nil
		f()
	}
	return s.Store.Save(ctx, snap, expected)
}

// TestResumeDoesNotClaimARecreatedInstance: between a resume's Load and its claim the
// instance is deleted (or expires) and started afresh up to the version the resume
// loaded. The claim expected that version and took the new instance over, running
// the old one's frontier and variables over it; it is an ErrConflict now, and the
// new instance is untouched.
func TestResumeDoesNotClaimARecreatedInstance(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	fs, err := session.NewFileStore(t.TempDir())
	require.NoError(t, err)
	for name, mem := range map[string]session.Store{"memory": session.NewMemoryStore(), "file": fs} {
		t.Run(name, func(t *testing.T) {
			store := &recreatingStore{Store: mem}
			r := session.NewRunner(eng, store)
			_, err := r.Run(ctx, "leave", flow.NewContextWith("again-1", map[string]any{"days": 5}))
			require.NoError(t, err)
			var fresh int64
			store.between = func() {
				require.NoError(t, mem.Delete(ctx, "again-1"))
				res, err := session.NewRunner(eng, mem).Run(ctx, "leave", flow.NewContextWith("again-1", map[string]any{"days": 9}))
				require.NoError(t, err)
				fresh = res.Version
			}
			_, err = r.Resume(ctx, "again-1", map[string]any{"approved": true})
			require.ErrorIs(t, err, session.ErrConflict)
			snap, err := mem.Load(ctx, "again-1")
			require.NoError(t, err)
			assert.Equal(t, fresh, snap.Version)
			assert.Equal(t, session.StatusSuspended, snap.Status)
			assert.Equal(t, int64(9), snap.Vars["days"], "the new instance is untouched")
		})
	}
}
