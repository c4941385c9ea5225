package worker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/worker"
)

// startWorker runs a worker in a goroutine; the returned func stops it and returns
// Run's error.
func startWorker(t *testing.T, q *worker.Queue, eng *flow.Engine, opts ...worker.Option) (*worker.Worker, func() error) {
	t.Helper()
	opts = append([]worker.Option{worker.WithLease(testRenew, testTTL)}, opts...)
	w, err := worker.New(q, eng, opts...)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	var err2 error
	stop := func() error { once.Do(func() { cancel(); err2 = <-done }); return err2 }
	t.Cleanup(func() { stop() })
	return w, stop
}

func submitJobs(t *testing.T, q *worker.Queue, eng *flow.Engine, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("job-%03d", i)
		require.NoError(t, q.Submit(context.Background(), eng, "job", ids[i], map[string]any{"i": i}))
	}
	return ids
}

func TestWorkersRunEverySubmittedInstanceOnce(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	eng := jobEngine(rdb, prefix, time.Millisecond, 100*time.Millisecond)
	ids := submitJobs(t, q, eng, 30)

	st, err := q.Stats(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(30), st.Depth)
	assert.False(t, st.Oldest.IsZero())
	snap, err := store.Load(context.Background(), ids[0])
	require.NoError(t, err)
	assert.Equal(t, session.StatusSuspended, snap.Status)
	assert.Equal(t, worker.QueuedReason, snap.Reason)

	_, stop1 := startWorker(t, q, eng, worker.WithWorkerName("w1"), worker.WithConcurrency(4))
	_, stop2 := startWorker(t, q, eng, worker.WithWorkerName("w2"), worker.WithConcurrency(4))
	waitCompleted(t, store, len(ids), 20*time.Second)

	live, err := q.Workers(context.Background())
	require.NoError(t, err)
	require.Len(t, live, 2)
	assert.Equal(t, "w1", live[0].Name)
	assert.Equal(t, 4, live[0].Concurrency)

	require.NoError(t, stop1())
	require.NoError(t, stop2())
	for _, key := range []func(string, string, string) string{counterKey, effectKey} {
		once, other := counters(t, rdb, prefix, ids, key)
		assert.Equal(t, len(ids)*len(jobNodes), once)
		assert.Empty(t, other)
	}
	st, err = q.Stats(context.Background())
	require.NoError(t, err)
	assert.Zero(t, st.Depth, "every entry acknowledged")
	assert.Zero(t, st.Wakeups)
	live, err = q.Workers(context.Background())
	require.NoError(t, err)
	assert.Empty(t, live, "stopped workers leave the registry")
	consumers, err := rdb.XInfoConsumers(context.Background(), prefix+"worker:{default}:queue", "workers").Result()
	require.NoError(t, err)
	assert.Empty(t, consumers, "and the consumer group")
	assert.ErrorIs(t, q.Submit(context.Background(), eng, "job", ids[0], nil), session.ErrConflict)
}

func TestEntriesThatCannotRunAreDropped(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	eng := jobEngine(rdb, prefix, 0, 0)
	require.NoError(t, q.Enqueue(context.Background(), "missing", nil))
	ids := submitJobs(t, q, eng, 1)
	_, stop := startWorker(t, q, eng)
	waitCompleted(t, store, 1, 10*time.Second)
	// A resume queued for a completed instance is dropped too.
	require.NoError(t, q.Enqueue(context.Background(), ids[0], map[string]any{"x": 1}))
	require.Eventually(t, func() bool {
		st, err := q.Stats(context.Background())
		return err == nil && st.Depth == 0
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, stop())
	once, _ := counters(t, rdb, prefix, ids, effectKey)
	assert.Equal(t, len(jobNodes), once)
}

func TestShutdownQueuesUnfinishedRunsAgain(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	started := make(chan struct{}, 1)
	var runs atomic.Int32
	spec := flow.NewSpec("slow")
	spec.Start("s").LinkTo("block")
	spec.Activity("block").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if runs.Add(1) > 1 {
			return nil
		}
		started <- struct{}{}
		<-ctx.Done() // until the grace period ends
		return ctx.Err()
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine()
	require.NoError(t, eng.Register(g))
	require.NoError(t, q.Submit(context.Background(), eng, "slow", "slow-1", nil))

	_, stop := startWorker(t, q, eng, worker.WithGrace(50*time.Millisecond))
	<-started
	require.NoError(t, stop())
	snap, err := store.Load(context.Background(), "slow-1")
	require.NoError(t, err)
	assert.NotEqual(t, session.StatusRunning, snap.Status, "the cut-short run saved its outcome")
	st, err := q.Stats(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1), st.Depth, "queued again")
	assert.Zero(t, st.Pending, "and acknowledged")

	_, stop = startWorker(t, q, eng)
	waitCompleted(t, store, 1, 10*time.Second)
	require.NoError(t, stop())
}

func TestWakeDueQueuesEachWakeupOnce(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	q := worker.NewQueue(session.NewRedisStore(rdb, session.WithPrefix(prefix)))
	ctx := context.Background()
	now := time.Now()
	for i := range 50 {
		require.NoError(t, q.Schedule(ctx, fmt.Sprintf("i-%d", i), now.Add(-time.Second)))
	}
	require.NoError(t, q.Schedule(ctx, "later", now.Add(time.Hour)))
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 4 {
		wg.Go(func() {
			for {
				n, err := q.WakeDue(ctx, now)
				assert.NoError(t, err)
				if n == 0 {
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 50, total)
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(50), st.Depth)
	assert.Equal(t, int64(1), st.Wakeups)
	assert.WithinDuration(t, now.Add(time.Hour), st.NextWakeup, time.Millisecond)
}

// TestKilledWorkerRunsAreReclaimed starts worker processes, kills one with SIGKILL
// while it runs instances, and checks that the others finish every instance from its
// last checkpoint: no node that completed runs again, and every node's side effect
// is made exactly once.
func TestKilledWorkerRunsAreReclaimed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	rdb, prefix, addr := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	eng := jobEngine(rdb, prefix, time.Millisecond, 100*time.Millisecond)
	n := 300
	if os.Getenv("REDIS_ADDR") == "" {
		n = 60 // miniredis is slower
	}
	ids := submitJobs(t, q, eng, n)

	const conc = 4
	procs := make([]*exec.Cmd, 3)
	for i := range procs {
		procs[i] = startChild(t, addr, prefix, fmt.Sprintf("w%d", i), conc)
	}
	t.Cleanup(func() {
		for _, p := range procs[1:] {
			p.Process.Signal(syscall.SIGTERM)
			p.Wait()
		}
	})
	// Kill w0 at a random moment, while it runs instances.
	waitCompleted(t, store, n/10+rand.IntN(n/2), 60*time.Second)
	require.NoError(t, procs[0].Process.Kill())
	procs[0].Wait()
	killed := time.Now()

	waitCompleted(t, store, n, 120*time.Second)
	t.Logf("%d instances completed %v after the kill", n, time.Since(killed))
	// A node that was running when its worker died had not completed: it runs again.
	// At most conc instances ran on w0, with at most 3 nodes each at once.
	runOnce, ranTwice := counters(t, rdb, prefix, ids, counterKey)
	t.Logf("nodes run twice: %d", len(ranTwice))
	assert.LessOrEqual(t, len(ranTwice), conc*3, "nodes run more than once: %v", ranTwice)
	for k, v := range ranTwice {
		assert.Equal(t, int64(2), v, "node %s", k)
	}
	assert.Equal(t, n*len(jobNodes)-len(ranTwice), runOnce)
	// Its side effect, made with the checkpoint of its completion, is made once.
	once, other := counters(t, rdb, prefix, ids, effectKey)
	assert.Equal(t, n*len(jobNodes), once)
	assert.Empty(t, other, "side effects made other than once")
	// A worker acknowledges an entry after it saved the outcome: the last ones may
	// still be on their way.
	assert.Eventually(t, func() bool {
		st, err := q.Stats(context.Background())
		return err == nil && st.Depth == 0
	}, 10*time.Second, 10*time.Millisecond, "every entry acknowledged")
}

// TestReclaimWithinLeaseExpiry kills a worker process while it runs an instance and
// measures the time until another worker has finished it: within the lease's time to
// live and 2s.
func TestReclaimWithinLeaseExpiry(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	rdb, prefix, addr := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	eng := jobEngine(rdb, prefix, 0, 0)
	require.NoError(t, q.Submit(context.Background(), eng, "hang", "h-1", nil))
	child := startChild(t, addr, prefix, "doomed", 1)
	require.Eventually(t, func() bool {
		n, _ := rdb.Get(context.Background(), counterKey(prefix, "h-1", "h")).Int()
		return n == 1
	}, 20*time.Second, 5*time.Millisecond)
	mp, collect := meterReader(t, worker.DefaultQueue)
	_, stop := startWorker(t, q, eng, worker.WithWorkerName("survivor"), worker.WithMeterProvider(mp))
	require.NoError(t, child.Process.Kill())
	child.Wait()
	killed := time.Now()
	waitCompleted(t, store, 1, testTTL+2*time.Second)
	t.Logf("reclaimed and completed %v after the kill (lease ttl %v)", time.Since(killed), testTTL)
	require.NoError(t, stop())
	n, err := rdb.Get(context.Background(), counterKey(prefix, "h-1", "d")).Int()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, int64(1), collect()["flowteam.worker.reclaims"])
}

// A resume queued while its instance runs is not lost: its entry waits until the run
// has halted, then the instance resumes with its updates.
func TestResumeQueuedWhileRunningWaitsForTheRun(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	started, release := make(chan struct{}), make(chan struct{})
	spec := flow.NewSpec("gate")
	spec.Start("s").LinkTo("g")
	spec.Activity("g").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if _, ok := c.Get("go"); ok {
			return nil
		}
		close(started)
		<-release
		c.Suspend("need go")
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine()
	require.NoError(t, eng.Register(g))
	ctx := context.Background()
	require.NoError(t, q.Submit(ctx, eng, "gate", "x", nil))
	_, stop := startWorker(t, q, eng, worker.WithConcurrency(2))
	<-started
	require.NoError(t, q.Enqueue(ctx, "x", map[string]any{"go": true}))
	require.Eventually(t, func() bool {
		st, err := q.Stats(ctx)
		return err == nil && st.Pending == 2
	}, 10*time.Second, 5*time.Millisecond, "the worker took the resume while the run goes on")
	close(release)
	waitCompleted(t, store, 1, 10*time.Second)
	require.NoError(t, stop())
	snap, err := store.Load(ctx, "x")
	require.NoError(t, err)
	assert.Equal(t, true, snap.Vars["go"])
}

// A queued resume's updates reach the run with the types a resume from the store
// gives variables: an integer is an int64, not encoding/json's float64.
func TestQueuedUpdatesKeepIntegerTypes(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	spec := flow.NewSpec("typed")
	spec.Start("s").LinkTo("t")
	spec.Activity("t").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		v, ok := c.Get("n")
		if !ok {
			c.Suspend("need n")
			return nil
		}
		c.Set("kind", fmt.Sprintf("%T", v))
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine()
	require.NoError(t, eng.Register(g))
	ctx := context.Background()
	require.NoError(t, q.Submit(ctx, eng, "typed", "y", nil))
	_, stop := startWorker(t, q, eng)
	require.Eventually(t, func() bool {
		snap, err := store.Load(ctx, "y")
		return err == nil && snap.Status == session.StatusSuspended
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, q.Enqueue(ctx, "y", map[string]any{"n": 5}))
	waitCompleted(t, store, 1, 10*time.Second)
	require.NoError(t, stop())
	snap, err := store.Load(ctx, "y")
	require.NoError(t, err)
	assert.Equal(t, "int64", snap.Vars["kind"])
}
