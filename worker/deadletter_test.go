package worker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/worker"
)

// streamKey is the key of the stream of q's default queue in store.
func streamKey(store *session.RedisStore) string {
	return store.Prefix() + "worker:{" + worker.DefaultQueue + "}:queue"
}

// countingEngine registers graph "count": node a counts its runs (counterKey), then
// waits for release (nil: not at all).
func countingEngine(t *testing.T, rdb *redis.Client, prefix string, release <-chan struct{}) *flow.Engine {
	t.Helper()
	spec := flow.NewSpec("count")
	spec.Start("s").LinkTo("a")
	spec.Activity("a").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if err := rdb.Incr(ctx, counterKey(prefix, c.InstanceID(), n.ID)).Err(); err != nil {
			return err
		}
		if release != nil {
			<-release
		}
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine()
	require.NoError(t, eng.Register(g))
	return eng
}

// ghostDeliveries delivers the queue's oldest entry n times to consumers ghost-1 to
// ghost-n that never acknowledge it, as workers that died running it would, and
// leaves it idle for longer than any test's lease. It returns the entry's id.
func ghostDeliveries(t *testing.T, rdb *redis.Client, stream string, n int) string {
	t.Helper()
	ctx := context.Background()
	err := rdb.XGroupCreateMkStream(ctx, stream, "workers", "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		require.NoError(t, err)
	}
	res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "ghost-1",
		Streams: []string{stream, ">"}, Count: 1}).Result()
	require.NoError(t, err)
	id := res[0].Messages[0].ID
	for i := 2; i <= n; i++ {
		args := []any{"XCLAIM", stream, "workers", fmt.Sprintf("ghost-%d", i), 0, id}
		if i == n {
			args = append(args, "IDLE", time.Minute.Milliseconds())
		}
		require.NoError(t, rdb.Do(ctx, args...).Err())
	}
	if n == 1 {
		require.NoError(t, rdb.Do(ctx, "XCLAIM", stream, "workers", "ghost-1", 0, id,
			"IDLE", time.Minute.Milliseconds(), "RETRYCOUNT", 1).Err())
	}
	p, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: "workers",
		Start: id, End: id, Count: 1}).Result()
	require.NoError(t, err)
	require.Len(t, p, 1)
	require.Equal(t, int64(n), p[0].RetryCount, "the ghosts' deliveries are counted")
	return id
}

// leaveRunning records instance id as a worker that died running it leaves it: status
// running, under a lease that expired.
func leaveRunning(t *testing.T, store *session.RedisStore, id string) {
	t.Helper()
	ctx := context.Background()
	snap, err := store.Load(ctx, id)
	require.NoError(t, err)
	past := time.Now().Add(-time.Minute)
	snap.Status, snap.Reason = session.StatusRunning, ""
	snap.Lease = &session.Lease{Host: "ghost", PID: 1, Token: "t", Renewed: past, Expiry: past}
	require.NoError(t, store.Save(ctx, snap, snap.Version))
}

// An entry delivered more than the maximum goes to the dead letters once, its
// instance is recorded as failed with the reason, and a queued resume runs it.
func TestDeadLetterAfterMaxDeliveries(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	eng := countingEngine(t, rdb, prefix, nil)
	ctx := context.Background()
	require.NoError(t, q.Submit(ctx, eng, "count", "poison", map[string]any{"x": 1}))
	leaveRunning(t, store, "poison")
	entry := ghostDeliveries(t, rdb, streamKey(store), 3)
	require.NoError(t, q.Submit(ctx, eng, "count", "healthy", nil))

	before := time.Now()
	mp, collect := meterReader(t, worker.DefaultQueue)
	_, stop := startWorker(t, q, eng, worker.WithMaxDeliveries(3), worker.WithMeterProvider(mp))
	waitCompleted(t, store, 1, 10*time.Second)
	require.Eventually(t, func() bool {
		st, err := q.Stats(ctx)
		return err == nil && st.DeadLetters == 1 && st.Depth == 0
	}, 10*time.Second, 10*time.Millisecond)

	dead, err := q.DeadLetters(ctx, 0)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, "poison", dead[0].Instance)
	assert.Equal(t, entry, dead[0].Entry)
	assert.Equal(t, int64(3), dead[0].Deliveries)
	assert.Equal(t, "ghost-3", dead[0].Consumer)
	assert.Contains(t, dead[0].Reason, "delivered 3 times")
	assert.WithinRange(t, dead[0].Time, before.Add(-time.Second), time.Now().Add(time.Second))

	snap, err := store.Load(ctx, "poison")
	require.NoError(t, err)
	assert.Equal(t, session.StatusFailed, snap.Status)
	assert.Nil(t, snap.Lease)
	require.NotEmpty(t, snap.Errors)
	last := snap.Errors[len(snap.Errors)-1]
	assert.Equal(t, worker.DeadLetterCode, last.Code)
	assert.Contains(t, last.Message, "delivered 3 times")
	assert.Contains(t, last.Message, "ghost-3")
	assert.Zero(t, nodeRuns(t, rdb, prefix, "poison"), "a dead letter is not run")

	// After a fix, a queued resume runs it from where it stood.
	require.NoError(t, q.Enqueue(ctx, "poison", nil))
	waitCompleted(t, store, 2, 10*time.Second)
	require.NoError(t, stop())
	assert.Equal(t, int64(1), nodeRuns(t, rdb, prefix, "poison"))
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), st.DeadLetters, "moved once")
	assert.Equal(t, int64(1), collect()["flowteam.worker.dead_letters"])
}

// An entry over the maximum whose instance runs under a fresh lease (a queued resume
// waiting for that run) is not a dead letter: it is left pending as usual.
func TestDeadLetterSparesInstanceRunningElsewhere(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	eng := countingEngine(t, rdb, prefix, nil)
	ctx := context.Background()
	require.NoError(t, q.Submit(ctx, eng, "count", "busy", nil))
	snap, err := store.Load(ctx, "busy")
	require.NoError(t, err)
	now := time.Now()
	snap.Status, snap.Reason = session.StatusRunning, ""
	snap.Lease = &session.Lease{Host: "elsewhere", PID: 1, Token: "t", Renewed: now, Expiry: now.Add(time.Hour)}
	require.NoError(t, store.Save(ctx, snap, snap.Version))
	ghostDeliveries(t, rdb, streamKey(store), 3)

	mp, collect := meterReader(t, worker.DefaultQueue)
	_, stop := startWorker(t, q, eng, worker.WithMaxDeliveries(3), worker.WithMeterProvider(mp))
	require.Eventually(t, func() bool { return collect()["flowteam.worker.run.duration"] >= 1 },
		10*time.Second, 5*time.Millisecond)
	require.NoError(t, stop())
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.DeadLetters)
	assert.Equal(t, int64(1), st.Pending, "left pending for after that run")
	p, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: streamKey(store), Group: "workers",
		Start: "-", End: "+", Count: 10}).Result()
	require.NoError(t, err)
	require.Len(t, p, 1)
	assert.Equal(t, int64(3), p[0].RetryCount, "waiting for a run is not a delivery that died")
	got, err := store.Load(ctx, "busy")
	require.NoError(t, err)
	assert.Equal(t, session.StatusRunning, got.Status)
	assert.Equal(t, snap.Version, got.Version, "not saved over")
}

// nodeRuns returns how many times node a of graph "count" ran for instance inst.
func nodeRuns(t *testing.T, rdb *redis.Client, prefix, inst string) int64 {
	t.Helper()
	n, err := rdb.Get(context.Background(), counterKey(prefix, inst, "a")).Int64()
	if err == redis.Nil {
		return 0
	}
	require.NoError(t, err)
	return n
}

// The heartbeat that keeps a running entry from looking idle does not count as a
// delivery: a run that lasts longer than the lease is not dead-lettered.
func TestHeartbeatKeepsDeliveryCount(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	release := make(chan struct{})
	eng := countingEngine(t, rdb, prefix, release)
	ctx := context.Background()
	require.NoError(t, q.Submit(ctx, eng, "count", "long", nil))
	_, stop := startWorker(t, q, eng, worker.WithMaxDeliveries(1))
	require.Eventually(t, func() bool { return nodeRuns(t, rdb, prefix, "long") == 1 }, 10*time.Second, 5*time.Millisecond)
	running := time.Now()

	// Beats go on for longer than the lease.
	require.Eventually(t, func() bool {
		ws, err := q.Workers(ctx)
		return err == nil && len(ws) == 1 && ws[0].Heartbeat.After(running.Add(testTTL+2*testRenew))
	}, 10*time.Second, 5*time.Millisecond)
	p, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: streamKey(store), Group: "workers",
		Start: "-", End: "+", Count: 10}).Result()
	require.NoError(t, err)
	require.Len(t, p, 1)
	assert.Equal(t, int64(1), p[0].RetryCount)

	close(release)
	waitCompleted(t, store, 1, 10*time.Second)
	require.NoError(t, stop())
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.DeadLetters)
	assert.Equal(t, int64(1), nodeRuns(t, rdb, prefix, "long"))
}
