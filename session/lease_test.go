package session_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// blockingGraph registers "block", whose node "work" waits until release is closed
// or its run is cancelled.
func blockingGraph(t *testing.T, eng *flow.Engine, release <-chan struct{}) {
	t.Helper()
	s := flow.NewSpec("block")
	s.Start("s").LinkTo("work")
	s.Activity("work").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
}

// While a run goes on, its Runner renews the instance's lease every renew interval
// (the time here is synctest's fake clock); Recover is refused while it is fresh,
// naming the owner. The outcome drops the lease, and the renewing goroutine ends with
// the run (synctest.Test fails if a goroutine of the bubble is left).
func TestLeaseRenewedWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		eng, release := flow.NewEngine(), make(chan struct{})
		blockingGraph(t, eng, release)
		store := session.NewMemoryStore()
		r := session.NewRunner(eng, store, session.WithLease(2*time.Second, 7*time.Second))
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := r.Run(ctx, "block", flow.NewContext("lease-1"))
			done <- err
		}()
		synctest.Wait()
		claim, err := store.Load(ctx, "lease-1")
		require.NoError(t, err)
		require.NotNil(t, claim.Lease)
		host, _ := os.Hostname()
		assert.Equal(t, host, claim.Lease.Host)
		assert.Equal(t, os.Getpid(), claim.Lease.PID)
		assert.Len(t, claim.Lease.Token, 16)
		assert.WithinDuration(t, start.Add(7*time.Second), claim.Lease.Expiry, 0)

		time.Sleep(11 * time.Second) // five renewals
		synctest.Wait()
		snap, err := store.Load(ctx, "lease-1")
		require.NoError(t, err)
		assert.Equal(t, claim.Version+5, snap.Version, "one save per renewal")
		assert.WithinDuration(t, start.Add(10*time.Second), snap.Lease.Renewed, 0)
		assert.WithinDuration(t, start.Add(17*time.Second), snap.Lease.Expiry, 0)
		assert.Equal(t, claim.Lease.Token, snap.Lease.Token, "the same owner")

		// Long after the claim's lease would have ended, the owner is alive.
		_, err = session.NewRunner(eng, store).Resume(ctx, "lease-1", nil, session.Recover())
		var held *session.LeaseHeldError
		require.ErrorAs(t, err, &held)
		assert.ErrorIs(t, err, session.ErrConflict)
		assert.ErrorIs(t, err, session.ErrRunning)
		assert.Equal(t, *snap.Lease, held.Lease)
		assert.ErrorContains(t, err, "holds its lease until "+snap.Lease.Expiry.UTC().Format(time.RFC3339Nano))

		close(release)
		require.NoError(t, <-done)
		snap, err = store.Load(ctx, "lease-1")
		require.NoError(t, err)
		assert.Equal(t, session.StatusCompleted, snap.Status)
		assert.Nil(t, snap.Lease, "only a running instance has a lease")
	})
}

// An instance whose process died keeps its last lease: Recover is refused until it
// expires, and then takes the instance over with a lease of its own.
func TestRecoverAfterTheLeaseExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		eng, cnt := flow.NewEngine(), newCounter()
		approvalGraph(t, eng, cnt, "Manager")
		mem := session.NewMemoryStore()
		_, err := session.NewRunner(eng, &claimOnly{Store: mem}).Run(ctx, "leave", flow.NewContext("dead-1"))
		require.Error(t, err, "the process died after its claim")
		r := session.NewRunner(eng, mem)

		time.Sleep(session.DefaultLeaseTTL - time.Second)
		_, err = r.Resume(ctx, "dead-1", nil, session.Recover())
		var held *session.LeaseHeldError
		require.ErrorAs(t, err, &held, "a second before the lease expires")
		time.Sleep(time.Second)
		res, err := r.Resume(ctx, "dead-1", map[string]any{"approved": true}, session.Recover())
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
	})
}

// A renewal that finds the instance taken over (saved by another process once the
// lease had expired, as when the owner was paused) cancels the run with
// ErrLeaseLost; its outcome is not saved over the new owner's.
func TestLeaseLostCancelsTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		eng := flow.NewEngine()
		blockingGraph(t, eng, nil)
		store := session.NewMemoryStore()
		done := make(chan *session.Result, 1)
		var runErr error
		go func() {
			res, err := session.NewRunner(eng, store).Run(ctx, "block", flow.NewContext("lost-1"))
			runErr = err
			done <- res
		}()
		synctest.Wait()
		snap, err := store.Load(ctx, "lost-1")
		require.NoError(t, err)
		snap.Lease = &session.Lease{Host: "other", PID: 1, Token: "t", Renewed: time.Now(),
			Expiry: time.Now().Add(time.Hour)}
		require.NoError(t, store.Save(ctx, snap, snap.Version))

		res := <-done
		require.NotNil(t, res)
		assert.Equal(t, flow.StatusFailed, res.Status)
		assert.True(t, errors.Is(runErr, session.ErrLeaseLost), "%v", runErr)
		assert.ErrorIs(t, runErr, session.ErrConflict, "the outcome was not saved")
		after, err := store.Load(ctx, "lost-1")
		require.NoError(t, err)
		assert.Equal(t, "other", after.Lease.Host, "the new owner's instance is untouched")
	})
}

// WithLease keeps a ttl above renew.
func TestWithLeaseDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, release := flow.NewEngine(), make(chan struct{})
		blockingGraph(t, eng, release)
		for _, tc := range []struct{ renew, ttl, wantTTL time.Duration }{
			{0, 0, session.DefaultLeaseTTL},
			{time.Second, time.Second, 3 * time.Second},
			{time.Minute, 0, 3 * time.Minute},
			{-1, time.Minute, time.Minute},
		} {
			store := session.NewMemoryStore()
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, err := session.NewRunner(eng, store, session.WithLease(tc.renew, tc.ttl)).Run(t.Context(), "block",
					flow.NewContext("d"))
				assert.NoError(t, err)
			}()
			synctest.Wait()
			snap, err := store.Load(t.Context(), "d")
			require.NoError(t, err)
			assert.Equal(t, tc.wantTTL, snap.Lease.Expiry.Sub(snap.Lease.Renewed), "%v", tc)
			release <- struct{}{}
			<-done
		}
	})
}

// Renewals and per-node checkpoints of one run go through the instance's save lock:
// they never conflict with each other, whatever their interleaving (run with -race:
// a renewal encodes the variables a checkpoint saved while the run goes on).
func TestLeaseRenewalsBesideCheckpoints(t *testing.T) {
	eng := flow.NewEngine()
	s := flow.NewSpec("count")
	s.Start("s").LinkTo("inc")
	s.Activity("inc").SetTask(`context.incr("n")`).LinkTo("again")
	s.Exclusive("again").LinkTo("inc", flow.LinkWhen("n < 200")).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
	for name, newStore := range allStores() {
		t.Run(name, func(t *testing.T) {
			store := newStore(t)
			r := session.NewRunner(eng, store, session.WithDurability(session.PerNode),
				session.WithLease(time.Millisecond, time.Minute))
			res, err := r.Run(t.Context(), "count", flow.NewContext("beside-1"))
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			assert.EqualValues(t, 200, res.Context.Value("n"))
			snap, err := store.Load(t.Context(), "beside-1")
			require.NoError(t, err)
			assert.Equal(t, res.Version, snap.Version)
			assert.Nil(t, snap.Lease)
		})
	}
}

// outcomeLost is a store whose saves of an outcome fail, as when the process dies
// after its last checkpoint.
type outcomeLost struct{ session.Store }

func (s outcomeLost) Save(ctx context.Context, snap *session.Snapshot, expected int64) error {
	if snap.Status != session.StatusRunning {
		return errors.New("process died")
	}
	return s.Store.Save(ctx, snap, expected)
}

// A process that checkpointed the end of every branch and died before saving the
// outcome left an instance running with no frontier: Recover records it as completed
// once its lease expired, and runs nothing.
func TestRecoverCompletesRunThatEnded(t *testing.T) {
	ctx := t.Context()
	eng := flow.NewEngine()
	ran := 0
	s := flow.NewSpec("one")
	s.Start("s").LinkTo("work")
	s.Activity("work").DoFunc(func(context.Context, *flow.Context, *flow.Node) error { ran++; return nil }).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
	store := session.NewMemoryStore()
	fc := flow.NewContext("ended-1")
	fc.Set("x", int64(1))
	_, err = session.NewRunner(eng, outcomeLost{store}, session.WithDurability(session.PerNode)).Run(ctx, "one", fc)
	require.ErrorContains(t, err, "process died")
	snap, err := store.Load(ctx, "ended-1")
	require.NoError(t, err)
	require.Equal(t, session.StatusRunning, snap.Status)
	require.Nil(t, snap.Frontier, "the last checkpoint has no frontier left")

	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))
	_, err = r.Resume(ctx, "ended-1", nil)
	require.ErrorIs(t, err, session.ErrRunning, "without Recover a running instance is not taken over")
	expireLease(t, store, "ended-1")
	res, err := r.Resume(ctx, "ended-1", nil, session.Recover())
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, ran, "nothing ran again")
	assert.Equal(t, int64(1), res.Context.Vars()["x"])
	snap, err = store.Load(ctx, "ended-1")
	require.NoError(t, err)
	assert.Equal(t, session.StatusCompleted, snap.Status)
	assert.Nil(t, snap.Lease)
	assert.Equal(t, res.Version, snap.Version)
	_, err = r.Resume(ctx, "ended-1", nil, session.Recover())
	require.ErrorIs(t, err, session.ErrCompleted)
}

// A checkpoint renews the lease as it saves: a run whose nodes complete more often
// than the renewal interval makes no save for its lease, and a node that runs longer
// is renewed for once it is one interval old (the time is synctest's fake clock).
func TestCheckpointsRenewTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		eng := flow.NewEngine()
		s := flow.NewSpec("slow")
		s.Start("s").LinkTo("a")
		sleep := func(d time.Duration) func(context.Context, *flow.Context, *flow.Node) error {
			return func(context.Context, *flow.Context, *flow.Node) error { time.Sleep(d); return nil }
		}
		s.Activity("a").DoFunc(sleep(1500 * time.Millisecond)).LinkTo("b")
		s.Activity("b").DoFunc(sleep(1500 * time.Millisecond)).LinkTo("c")
		s.Activity("c").DoFunc(sleep(4500 * time.Millisecond)).LinkTo("e")
		s.End("e")
		g, err := s.Build()
		require.NoError(t, err)
		require.NoError(t, eng.Register(g))
		saves := func(renew time.Duration) int64 {
			store := session.NewMemoryStore()
			r := session.NewRunner(eng, store, session.WithDurability(session.PerNode), session.WithLease(renew, time.Hour))
			res, err := r.Run(ctx, "slow", flow.NewContext("slow-1"))
			require.NoError(t, err)
			return res.Version
		}
		// c, checkpointed by b at 3s, is renewed for at 5s and 7s.
		assert.Equal(t, saves(time.Hour)+2, saves(2*time.Second))
	})
}
