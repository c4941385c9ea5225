package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/worker"
)

const approvalYAML = `
id: approval
layout:
  - {id: s, type: start}
  - {id: w, task: "@wait", meta: {for: approved, wait: 1s}}
  - {id: x, type: exclusive, link: [{nextId: late, when: "timedOut == true"}, ok]}
  - {id: late, task: 'context.put("path", "late")', link: e}
  - {id: ok, task: 'context.put("path", "ok")', link: e}
  - {id: e, type: end}
`

// A node waits for a decision with a timeout: the decision queued in time takes one
// link (and cancels the wake-up); none in time, the worker wakes the instance and the
// timeout's link is taken.
func TestWaitTaskTimeoutTakesItsLink(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	eng := flow.NewEngine()
	eng.RegisterTask("wait", worker.WaitTask())
	g, err := flow.LoadGraph("approval.yml", []byte(approvalYAML))
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
	ctx := context.Background()
	require.NoError(t, q.Submit(ctx, eng, "approval", "late-1", nil))
	require.NoError(t, q.Submit(ctx, eng, "approval", "ok-1", nil))
	_, stop := startWorker(t, q, eng)

	require.Eventually(t, func() bool {
		snap, err := store.Load(ctx, "ok-1")
		return err == nil && snap.Status == session.StatusSuspended && snap.Reason != worker.QueuedReason
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, q.Enqueue(ctx, "ok-1", map[string]any{"approved": true}))
	waitCompleted(t, store, 2, 10*time.Second)
	require.NoError(t, stop())

	for id, path := range map[string]string{"late-1": "late", "ok-1": "ok"} {
		snap, err := store.Load(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, path, snap.Vars["path"], id)
		assert.NotContains(t, snap.Vars, worker.WakeAtVar+"w", id)
	}
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.Wakeups, "the decided instance's wake-up was cancelled")
	assert.Zero(t, st.Depth)
}

const scriptWaitYAML = `
id: pause
layout:
  - {id: s, type: start}
  - {id: w, task: 'context.suspendUntil("50ms")'}
  - {id: after, task: 'context.incr("after")'}
  - {id: e, type: end}
`

// A script suspends its node until a time with context.suspendUntil: the worker that
// saved the suspension schedules the wake-up, a worker queues it when due, and the
// node's second run finds the wait over, so the run goes on and completes.
func TestScriptSuspendUntilIsWokenByTheWorker(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	eng := flow.NewEngine()
	g, err := flow.LoadGraph("pause.yml", []byte(scriptWaitYAML))
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
	ctx := context.Background()
	start := time.Now()
	require.NoError(t, q.Submit(ctx, eng, "pause", "pause-1", nil))
	_, stop := startWorker(t, q, eng)
	waitCompleted(t, store, 1, 10*time.Second)
	require.NoError(t, stop())

	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "the node waited")
	snap, err := store.Load(ctx, "pause-1")
	require.NoError(t, err)
	assert.EqualValues(t, 1, snap.Vars["after"])
	assert.NotContains(t, snap.Vars, worker.WakeAtVar+"w", "the record is deleted once the wait is over")
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.Wakeups)
	assert.Zero(t, st.Depth)
}
