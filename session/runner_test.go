package session_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
)

func TestSuspendResumeSameProcess(t *testing.T) {
	for _, d := range []session.Durability{session.OnExit, session.PerNode} {
		t.Run(d.String(), func(t *testing.T) {
			ctx := t.Context()
			eng, cnt := flow.NewEngine(), newCounter()
			approvalGraph(t, eng, cnt, "Manager")
			store := session.NewMemoryStore()
			r := session.NewRunner(eng, store, session.WithDurability(d))

			res, err := r.Run(ctx, "leave", flow.NewContextWith("leave-1", map[string]any{"days": 5}))
			require.NoError(t, err)
			assert.Equal(t, flow.StatusSuspended, res.Status)
			snap, err := store.Load(ctx, "leave-1")
			require.NoError(t, err)
			assert.Equal(t, session.StatusSuspended, snap.Status)
			assert.Equal(t, "waiting for the manager", snap.Reason)
			assert.Equal(t, res.Version, snap.Version)
			assert.Equal(t, int64(5), snap.Vars["days"], "numbers come back as int64")
			assert.Equal(t, "manager", snap.Trace.LastNode("leave"))
			require.NotNil(t, snap.Frontier)
			assert.Equal(t, "manager", snap.Frontier.Tokens[0].Node)
			if d == session.OnExit {
				assert.EqualValues(t, 2, snap.Version, "claim, then the outcome")
			} else {
				assert.EqualValues(t, 4, snap.Version, "claim, s, submit, then the outcome")
			}

			res, err = r.Resume(ctx, "leave-1", map[string]any{"approved": true})
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, "approved", res.Context.Value("status"))
			assert.Equal(t, map[string]int{"s": 1, "submit": 1, "manager": 2, "e": 1}, cnt.snapshot(),
				"nothing is replayed; the suspended node runs again")
			snap, err = store.Load(ctx, "leave-1")
			require.NoError(t, err)
			assert.Equal(t, session.StatusCompleted, snap.Status)
			assert.Nil(t, snap.Frontier)
			assert.Equal(t, "approved", snap.Vars["status"])
			assert.Equal(t, res.Version, snap.Version)

			_, err = r.Resume(ctx, "leave-1", nil)
			assert.ErrorIs(t, err, session.ErrCompleted)
			assert.ErrorIs(t, err, session.ErrConflict)
		})
	}
}

func TestRunClaimsTheInstance(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	r := session.NewRunner(eng, session.NewMemoryStore())
	_, err := r.Run(ctx, "leave", flow.NewContext("dup"))
	require.NoError(t, err)
	res, err := r.Run(ctx, "leave", flow.NewContext("dup"))
	assert.Nil(t, res)
	assert.ErrorIs(t, err, session.ErrConflict)
	assert.ErrorContains(t, err, `"dup" already exists`)
	assert.Equal(t, 1, cnt.get("s"), "the second run ran nothing")

	_, err = r.Run(ctx, "leave", flow.NewContext("../etc"))
	assert.ErrorIs(t, err, session.ErrInvalidID)
	_, err = r.Run(ctx, "nope", flow.NewContext("x"))
	assert.ErrorIs(t, err, flow.ErrGraphNotFound)
	_, err = r.Resume(ctx, "ghost", nil)
	assert.ErrorIs(t, err, session.ErrNotFound)
}

func TestResumeAfterDefinitionChange(t *testing.T) {
	ctx := t.Context()
	store := session.NewMemoryStore()
	eng1, cnt := flow.NewEngine(), newCounter()
	g1 := approvalGraph(t, eng1, cnt, "Manager")
	_, err := session.NewRunner(eng1, store).Run(ctx, "leave", flow.NewContext("leave-7"))
	require.NoError(t, err)

	// A new deployment changed the manager node's title.
	eng2 := flow.NewEngine()
	g2 := approvalGraph(t, eng2, cnt, "Line manager")
	require.NotEqual(t, g1.Hash(), g2.Hash())
	_, err = session.NewRunner(eng2, store).Resume(ctx, "leave-7", map[string]any{"approved": true})
	require.ErrorIs(t, err, session.ErrDefinitionChanged)
	assert.ErrorContains(t, err, g1.Hash(), "the error names the stored hash")
	assert.ErrorContains(t, err, g2.Hash(), "and the loaded one")
	assert.Equal(t, 1, cnt.get("manager"), "nothing ran")
	snap, err := store.Load(ctx, "leave-7")
	require.NoError(t, err)
	assert.Equal(t, session.StatusSuspended, snap.Status, "and nothing was claimed")

	var migrated atomic.Bool
	r := session.NewRunner(eng2, store, session.WithMigration(func(_ context.Context, s *session.Snapshot, g *flow.Graph) error {
		assert.Equal(t, g1.Hash(), s.Hash)
		assert.Equal(t, g2.Hash(), g.Hash())
		s.Vars["migratedFrom"] = s.Hash
		migrated.Store(true)
		return nil
	}))
	res, err := r.Resume(ctx, "leave-7", map[string]any{"approved": true})
	require.NoError(t, err)
	assert.True(t, migrated.Load())
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, g1.Hash(), res.Context.Value("migratedFrom"))
	snap, err = store.Load(ctx, "leave-7")
	require.NoError(t, err)
	assert.Equal(t, g2.Hash(), snap.Hash, "saved under the new definition")

	// A failing migration is reported and claims nothing.
	_, err = session.NewRunner(eng1, store).Run(ctx, "leave", flow.NewContext("leave-8"))
	require.NoError(t, err)
	bad := session.NewRunner(eng2, store, session.WithMigration(func(context.Context, *session.Snapshot, *flow.Graph) error {
		return errors.New("no mapping for node manager")
	}))
	_, err = bad.Resume(ctx, "leave-8", nil)
	assert.ErrorContains(t, err, "no mapping for node manager")
	assert.ErrorContains(t, err, g1.Hash())
}

// TestConcurrentResumers starts n resumes of one suspended instance at once: exactly
// one runs, the others get ErrConflict and run no node.
func TestConcurrentResumers(t *testing.T) {
	for _, n := range []int{2, 50} {
		for _, expect := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/expect-version=%v", n, expect), func(t *testing.T) {
				ctx := t.Context()
				eng, cnt := flow.NewEngine(), newCounter()
				approvalGraph(t, eng, cnt, "Manager")
				clk := storetest.NewClock()
				file, err := session.NewFileStore(t.TempDir(), session.WithClock(clk.Now))
				require.NoError(t, err)
				for name, store := range map[string]session.Store{"memory": session.NewMemoryStore(), "file": file} {
					id := "leave-" + name
					r := session.NewRunner(eng, store)
					res, err := r.Run(ctx, "leave", flow.NewContext(id))
					require.NoError(t, err)
					var opts []session.ResumeOption
					if expect {
						opts = append(opts, session.ExpectVersion(res.Version))
					}
					before := cnt.get("manager")
					var (
						wg              sync.WaitGroup
						wins, conflicts atomic.Int32
						start           = make(chan struct{})
					)
					for range n {
						wg.Go(func() {
							<-start
							res, err := r.Resume(ctx, id, map[string]any{"approved": true}, opts...)
							if err == nil {
								wins.Add(1)
								assert.Equal(t, flow.StatusCompleted, res.Status)
								return
							}
							assert.ErrorIs(t, err, session.ErrConflict)
							assert.Nil(t, res, "a loser gets no result: it ran nothing")
							conflicts.Add(1)
						})
					}
					close(start)
					wg.Wait()
					assert.EqualValues(t, 1, wins.Load(), "%s: exactly one winner", name)
					assert.EqualValues(t, n-1, conflicts.Load())
					assert.Equal(t, before+1, cnt.get("manager"), "%s: the manager node ran once more, not %d times", name, n)
				}
			})
		}
	}
}

func TestRedaction(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	store := session.NewMemoryStore()
	r := session.NewRunner(eng, store, session.WithRedaction("apiToken", "password", "absent", "employee"))
	_, err := r.Run(ctx, "leave", flow.NewContextWith("red-1", map[string]any{"apiToken": "s3cr3t", "user": "ada",
		"employee": "Ada Lovelace", "note": "for Ada Lovelace", "db": map[string]any{"secret": "hunter22"}}))
	require.NoError(t, err)
	snap, err := store.Load(ctx, "red-1")
	require.NoError(t, err)
	assert.Equal(t, "***", snap.Vars["apiToken"])
	assert.Equal(t, []string{"apiToken", "employee"}, snap.Redacted)
	assert.Equal(t, "ada", snap.Vars["user"])
	assert.Equal(t, "for ***", snap.Vars["note"], "a secret value is masked where it is copied")
	assert.Equal(t, map[string]any{"secret": "***"}, snap.Vars["db"], "a sensitive key at any depth")

	res, err := r.Resume(ctx, "red-1", map[string]any{"approved": true})
	require.NoError(t, err)
	_, ok := res.Context.Get("apiToken")
	assert.False(t, ok, "a redacted value is not restored (the mask is not the value)")

	_, err = r.Run(ctx, "leave", flow.NewContextWith("red-2", map[string]any{"apiToken": "s3cr3t"}))
	require.NoError(t, err)
	res, err = r.Resume(ctx, "red-2", map[string]any{"approved": true, "apiToken": "fresh"})
	require.NoError(t, err)
	assert.Equal(t, "fresh", res.Context.Value("apiToken"), "the caller supplies it again")
	snap, err = store.Load(ctx, "red-2")
	require.NoError(t, err)
	assert.Equal(t, session.DefaultMask, snap.Vars["apiToken"])
}

// Meta is the program's record of how it runs the instance: saved with every
// snapshot of a Runner that has entries, kept by a resume that has none (a program
// that does not use it must not erase another's), sealed with the body.
func TestMeta(t *testing.T) {
	ctx := t.Context()
	eng := flow.NewEngine()
	approvalGraph(t, eng, newCounter(), "Manager")
	c, err := session.NewCipher(make([]byte, 32))
	require.NoError(t, err)
	store := session.NewMemoryStore()
	meta := func() []string {
		snap, err := session.NewRunner(eng, store, session.WithCipher(c)).Load(ctx, "m")
		require.NoError(t, err)
		return snap.Meta
	}
	_, err = session.NewRunner(eng, store, session.WithCipher(c), session.WithMeta("steps=5", "durability=per-node")).
		Run(ctx, "leave", flow.NewContextWith("m", nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"steps=5", "durability=per-node"}, meta())
	sealed, err := store.Load(ctx, "m")
	require.NoError(t, err)
	assert.Nil(t, sealed.Meta, "in the sealed body")

	_, err = session.NewRunner(eng, store, session.WithCipher(c)).Resume(ctx, "m", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"steps=5", "durability=per-node"}, meta(), "kept")
	_, err = session.NewRunner(eng, store, session.WithCipher(c), session.WithMeta("steps=7")).Resume(ctx, "m", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"steps=7"}, meta(), "replaced")
}

func TestEncryption(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	key := []byte("0123456789abcdef0123456789abcdef")
	c, err := session.NewCipher(key)
	require.NoError(t, err)
	store := session.NewMemoryStore()
	r := session.NewRunner(eng, store, session.WithCipher(c))
	_, err = r.Run(ctx, "leave", flow.NewContextWith("enc-1", map[string]any{"salary": "confidential-4242"}))
	require.NoError(t, err)

	raw, err := store.Load(ctx, "enc-1")
	require.NoError(t, err)
	assert.NotEmpty(t, raw.Sealed)
	assert.Nil(t, raw.Vars)
	assert.Nil(t, raw.Frontier)
	assert.Equal(t, session.StatusSuspended, raw.Status, "the header stays in clear")
	data, err := session.Encode(raw)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "confidential-4242")
	assert.NotContains(t, string(data), "waiting for the manager")

	_, err = session.NewRunner(eng, store).Resume(ctx, "enc-1", nil)
	assert.ErrorIs(t, err, session.ErrSealed)
	other, err := session.NewCipher([]byte("another key of 32 bytes, exactly"))
	require.NoError(t, err)
	_, err = session.NewRunner(eng, store, session.WithCipher(other)).Resume(ctx, "enc-1", nil)
	assert.ErrorIs(t, err, session.ErrDecrypt)
	moved := raw.Clone()
	moved.Instance = "enc-2"
	_, err = c.Open(moved)
	assert.ErrorIs(t, err, session.ErrDecrypt, "a body moved to another instance does not open")

	opened, err := r.Load(ctx, "enc-1")
	require.NoError(t, err)
	assert.Equal(t, "confidential-4242", opened.Vars["salary"])
	assert.Equal(t, "waiting for the manager", opened.Reason)
	res, err := r.Resume(ctx, "enc-1", map[string]any{"approved": true})
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "confidential-4242", res.Context.Value("salary"))

	_, err = session.NewCipher([]byte("short"))
	assert.Error(t, err)
}

func TestExpiry(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	clk := storetest.NewClock()
	store := session.NewMemoryStore(session.WithClock(clk.Now))
	r := session.NewRunner(eng, store, session.WithExpiry(24*time.Hour))
	_, err := r.Run(ctx, "leave", flow.NewContext("exp-1"))
	require.NoError(t, err)
	snap, err := store.Load(ctx, "exp-1")
	require.NoError(t, err)
	assert.Equal(t, clk.Now().Add(24*time.Hour), snap.Expires)
	clk.FastForward(25 * time.Hour)
	_, err = r.Resume(ctx, "exp-1", map[string]any{"approved": true})
	assert.ErrorIs(t, err, session.ErrNotFound)

	type plain struct{ session.Store } // hides SaveTTL
	_, err = session.NewRunner(eng, plain{store}, session.WithExpiry(time.Hour)).Run(ctx, "leave", flow.NewContext("exp-2"))
	assert.ErrorContains(t, err, "cannot expire")
}

// TestStoreDefaultExpiry: without WithExpiry a Runner's saves follow the store's
// default TTL, as Store.Save does. A MemoryStore's saves of what a run made for them
// (the claim, checkpoints, the outcome) passed the Runner's TTL, 0, instead: with
// WithDefaultTTL the instance never expired.
func TestStoreDefaultExpiry(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	for _, d := range []session.Durability{session.OnExit, session.PerNode} {
		t.Run(d.String(), func(t *testing.T) {
			clk := storetest.NewClock()
			store := session.NewMemoryStore(session.WithClock(clk.Now), session.WithDefaultTTL(time.Hour))
			r := session.NewRunner(eng, store, session.WithDurability(d))
			_, err := r.Run(ctx, "leave", flow.NewContext("ttl-1"))
			require.NoError(t, err)
			snap, err := store.Load(ctx, "ttl-1")
			require.NoError(t, err)
			assert.Equal(t, clk.Now().Add(time.Hour), snap.Expires)
			clk.FastForward(2 * time.Hour)
			_, err = r.Resume(ctx, "ttl-1", map[string]any{"approved": true})
			assert.ErrorIs(t, err, session.ErrNotFound)
		})
	}
}

func TestUnserializableVariables(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	store := session.NewMemoryStore()
	vars := map[string]any{"callback": func() {}, "ok": 1}

	_, err := session.NewRunner(eng, store).Run(ctx, "leave", flow.NewContextWith("u-1", vars))
	require.ErrorIs(t, err, session.ErrUnserializable)
	assert.ErrorContains(t, err, `"callback"`)
	assert.Zero(t, cnt.get("s"), "the claim failed: nothing ran")

	r := session.NewRunner(eng, store, session.WithDropUnserializable())
	res, err := r.Run(ctx, "leave", flow.NewContextWith("u-2", vars))
	require.NoError(t, err)
	assert.Equal(t, []string{"callback"}, res.Dropped)
	snap, err := store.Load(ctx, "u-2")
	require.NoError(t, err)
	assert.Equal(t, []string{"callback"}, snap.Dropped)
	assert.NotContains(t, snap.Vars, "callback")
	assert.Equal(t, int64(1), snap.Vars["ok"])
}

func TestResumeRunningNeedsRecover(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	store := session.NewMemoryStore()
	r := session.NewRunner(eng, store)
	_, err := r.Run(ctx, "leave", flow.NewContext("run-1"))
	require.NoError(t, err)
	// Simulate a resumer that claimed the instance and died.
	snap, err := store.Load(ctx, "run-1")
	require.NoError(t, err)
	snap.Status = session.StatusRunning
	require.NoError(t, store.Save(ctx, snap, snap.Version))

	_, err = r.Resume(ctx, "run-1", map[string]any{"approved": true})
	require.ErrorIs(t, err, session.ErrRunning)
	assert.ErrorIs(t, err, session.ErrConflict)
	res, err := r.Resume(ctx, "run-1", map[string]any{"approved": true}, session.Recover())
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
}

// claimOnly saves the first snapshot (the claim) and fails every later save, as if the
// process died right after claiming the instance.
type claimOnly struct {
	session.Store
	saves int
}

func (c *claimOnly) Save(ctx context.Context, s *session.Snapshot, expected int64) error {
	c.saves++
	if c.saves > 1 {
		return errors.New("process died")
	}
	return c.Store.Save(ctx, s, expected)
}

// TestDiedAfterClaimRestartsFromStart: the claim stores the start frontier, so an
// instance whose process died before any node completed is resumed from the top.
func TestDiedAfterClaimRestartsFromStart(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	mem := session.NewMemoryStore()
	_, err := session.NewRunner(eng, &claimOnly{Store: mem}).Run(ctx, "leave", flow.NewContext("died-1"))
	require.Error(t, err, "the outcome could not be saved")
	snap, err := mem.Load(ctx, "died-1")
	require.NoError(t, err)
	require.Equal(t, session.StatusRunning, snap.Status)
	require.NotNil(t, snap.Frontier)

	_, err = session.NewRunner(eng, mem).Resume(ctx, "died-1", nil, session.Recover())
	var held *session.LeaseHeldError
	require.ErrorAs(t, err, &held, "refused while the dead run's lease is fresh")
	expireLease(t, mem, "died-1")
	res, err := session.NewRunner(eng, mem).Resume(ctx, "died-1", map[string]any{"approved": true}, session.Recover())
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
}

// continueSplitGraph is a parallel split under ContinueOnError: branch a fails with
// code E1 and branch b, once a is running, suspends until "decision" is set, then
// interrupts itself. No branch reaches the join.
func continueSplitGraph(t *testing.T, eng *flow.Engine) {
	t.Helper()
	aStarted := make(chan struct{})
	var once sync.Once
	s := flow.NewSpec("split")
	s.Meta = map[string]any{"branchPolicy": "continue"}
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		once.Do(func() { close(aStarted) })
		return &flow.Error{Code: "E1", Message: "bad"}
	}).LinkTo("j")
	s.Activity("b").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("decision") == nil {
			<-aStarted // a's failure is recorded whatever b does
			c.Suspend("wait")
		} else {
			c.Interrupt()
		}
		return nil
	}).LinkTo("j")
	s.Parallel("j").SetTask(`context.incr("joined")`).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
}

// TestContinueSplitFailuresSurviveTheStore: the stored frontier of a run suspended
// after a ContinueOnError split lost a branch keeps that failure (through the codec
// and every store), so when the resumed run's other branch interrupts itself the run
// fails with all_branches_failed naming it, as it does without the suspension.
func TestContinueSplitFailuresSurviveTheStore(t *testing.T) {
	stores := map[string]func(t *testing.T) session.Store{
		"memory": func(*testing.T) session.Store { return session.NewMemoryStore() },
		"file": func(t *testing.T) session.Store {
			s, err := session.NewFileStore(t.TempDir())
			require.NoError(t, err)
			return s
		},
	}
	for name, newStore := range stores {
		for _, d := range []session.Durability{session.OnExit, session.PerNode} {
			t.Run(name+"/"+d.String(), func(t *testing.T) {
				ctx := t.Context()
				eng := flow.NewEngine()
				continueSplitGraph(t, eng)
				store := newStore(t)
				r := session.NewRunner(eng, store, session.WithDurability(d))
				res, err := r.Run(ctx, "split", flow.NewContext("split-1"))
				require.NoError(t, err)
				require.Equal(t, flow.StatusSuspended, res.Status)

				snap, err := store.Load(ctx, "split-1")
				require.NoError(t, err)
				require.NotNil(t, snap.Frontier)
				var failed []flow.FailedBranch
				for _, f := range snap.Frontier.Frames {
					failed = append(failed, f.Failed...)
				}
				require.Len(t, failed, 1)
				assert.Equal(t, "a", failed[0].Node)
				assert.Equal(t, "E1", failed[0].Error.Code)
				assert.Equal(t, "bad", failed[0].Error.Message)
				data, err := session.Encode(snap)
				require.NoError(t, err)
				back, err := session.Decode(data)
				require.NoError(t, err)
				assert.Equal(t, snap, back, "the failed branch survives Encode and Decode")

				res, err = r.Resume(ctx, "split-1", map[string]any{"decision": "interrupt"})
				require.Error(t, err)
				require.NotNil(t, res)
				assert.Equal(t, flow.StatusFailed, res.Status)
				var ne *flow.NodeError
				require.ErrorAs(t, res.Err, &ne)
				assert.Equal(t, flow.CodeAllBranchesFailed, ne.Code)
				assert.Equal(t, "p", ne.Node)
				assert.Contains(t, res.Err.Error(), `node "a" in graph "split": E1: bad`)
				assert.Nil(t, res.Context.Value("joined"))
				snap, err = store.Load(ctx, "split-1")
				require.NoError(t, err)
				assert.Equal(t, session.StatusFailed, snap.Status)
			})
		}
	}
}

// TestDropVariablesNamedLikeSnapshotParts: a variable that cannot be serialized is
// dropped (WithDropUnserializable, DropUnserializable) whatever its name, also
// "frontier" or "trace", the names an UnserializableError gives those parts.
func TestDropVariablesNamedLikeSnapshotParts(t *testing.T) {
	ctx := t.Context()
	for _, name := range []string{"frontier", "trace"} {
		s := saved("drop-" + name)
		s.Vars[name] = func() {}
		data, err := session.Encode(s, session.DropUnserializable())
		require.NoError(t, err, name)
		got, err := session.Decode(data)
		require.NoError(t, err, name)
		assert.Equal(t, []string{name}, got.Dropped, name)
		assert.NotContains(t, got.Vars, name)

		for storeName, store := range allStores() {
			t.Run(name+"/"+storeName, func(t *testing.T) {
				eng, cnt := flow.NewEngine(), newCounter()
				approvalGraph(t, eng, cnt, "Manager")
				r := session.NewRunner(eng, store(t), session.WithDropUnserializable())
				res, err := r.Run(ctx, "leave", flow.NewContextWith("run-"+name, map[string]any{name: make(chan int), "ok": 1}))
				require.NoError(t, err)
				assert.Equal(t, flow.StatusSuspended, res.Status)
				assert.Equal(t, []string{name}, res.Dropped)
			})
		}
	}
}

// misfiled is a Store whose Load returns the snapshot of another instance than the
// one asked for, as a third-party store with a bug in its keys would.
type misfiled struct{ session.Store }

func (m misfiled) Load(ctx context.Context, id string) (*session.Snapshot, error) {
	return m.Store.Load(ctx, "other-1")
}

// TestRunnerLoadChecksTheInstance: Runner.Load, like Resume, rejects a snapshot of
// another instance than the one asked for with ErrCorrupt naming both ids.
func TestRunnerLoadChecksTheInstance(t *testing.T) {
	ctx := t.Context()
	mem := session.NewMemoryStore()
	require.NoError(t, mem.Save(ctx, storetest.NewSnapshot("other-1"), 0))
	r := session.NewRunner(flow.NewEngine(), misfiled{mem})
	_, err := r.Load(ctx, "mine-1")
	require.ErrorIs(t, err, session.ErrCorrupt)
	assert.ErrorContains(t, err, `"mine-1"`)
	assert.ErrorContains(t, err, `"other-1"`)
	_, err = r.Resume(ctx, "mine-1", nil)
	require.ErrorIs(t, err, session.ErrCorrupt)
}

// Sources are where the definitions a run loaded came from: a resume by a Runner with
// sources records its own (the instance's files may have moved), one without keeps
// the instance's.
func TestResumeSources(t *testing.T) {
	ctx := t.Context()
	eng := flow.NewEngine()
	approvalGraph(t, eng, newCounter(), "Manager")
	store := session.NewMemoryStore()
	sources := func() []string {
		snap, err := store.Load(ctx, "src")
		require.NoError(t, err)
		return snap.Sources
	}
	_, err := session.NewRunner(eng, store, session.WithSources("/a/leave.yml")).Run(ctx, "leave", flow.NewContextWith("src", nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"/a/leave.yml"}, sources())
	_, err = session.NewRunner(eng, store).Resume(ctx, "src", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"/a/leave.yml"}, sources(), "kept")
	_, err = session.NewRunner(eng, store, session.WithSources("/b/leave.yml")).Resume(ctx, "src", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"/b/leave.yml"}, sources(), "replaced")
}

// A redacted snapshot masks the secret values its suspend reason and error messages
// quote, and a redactor's patterns, wherever they appear.
func TestRedactorMasksReasonAndPatterns(t *testing.T) {
	ctx := t.Context()
	eng := flow.NewEngine()
	s := flow.NewSpec("ask")
	s.Start("s").LinkTo("wait")
	s.Activity("wait").SetTask(`context.suspend("approve for " + employee + ", card 1234-5678")`).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
	store := session.NewMemoryStore()
	red := redact.New(redact.Secrets("employee"), redact.Patterns(regexp.MustCompile(`\d{4}-\d{4}`)))
	r := session.NewRunner(eng, store, session.WithRedactor(red))
	_, err = r.Run(ctx, "ask", flow.NewContextWith("a-1", map[string]any{"employee": "Ada Lovelace"}))
	require.NoError(t, err)
	snap, err := store.Load(ctx, "a-1")
	require.NoError(t, err)
	assert.Equal(t, "approve for ***, card ***", snap.Reason)
	assert.Equal(t, "***", snap.Vars["employee"])
}
