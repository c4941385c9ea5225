package flow_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// A node whose task returns because the caller's context ended did not fail: the run
// fails with the cancellation (errors.Is tells which), the node ends INTERRUPTED and
// runs again on resume, and its error policy is not consulted. Before, the node ended
// FAILED and its policy took the cancellation for the node's failure: a recover
// policy applied its update, recorded a recoverable error and moved the run on to
// its goto node (which a resume then ran, skipping the node), and a fallback policy
// applied its fallback state.
func TestCallerCancelInterruptsTheNode(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, meta := range []string{`{onError: {goto: g, recover: true, set: {fell: true}}}`, `{onError: {fallback: {state: fb}}}`, `{}`} {
		t.Run(meta, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cr, res, err := runCancelled(t, ctx, meta, func(ctx context.Context) error {
				cancel()
				<-ctx.Done()
				return ctx.Err()
			})
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, flow.StatusFailed, res.Status)
			var ne *flow.NodeError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, flow.CodeCancelled, ne.Code)
			assert.Equal(t, "w", ne.Node)
			assert.Equal(t, trace.Interrupted, cr.h.end["w"])
			assert.Empty(t, res.ExecutionErrors, "a cancellation is not the node's error")
			assert.Nil(t, cr.fc.Value("fell"), "no recovery update")
			assert.Nil(t, cr.fc.Value("state"), "no fallback state")
			assert.Equal(t, []string{"w"}, cr.runs)
			cr.resumeRunsAgain(t, res)
		})
	}
}

// cancelledRun is a run of the graph s, w, n, g, e that a cancellation cut short at w.
type cancelledRun struct {
	e    *flow.Engine
	fc   *flow.Context
	h    *endStatuses
	runs []string // the nodes w, n and g in the order they ran
}

// runCancelled evaluates that graph under ctx, w with the given meta and a task that
// returns first(ctx) unless it is resumed (then it succeeds).
func runCancelled(t *testing.T, ctx context.Context, meta string, first func(context.Context) error, opts ...flow.Option) (*cancelledRun, *flow.Result, error) {
	t.Helper()
	cr := &cancelledRun{fc: flow.NewContext("i"), h: &endStatuses{end: map[string]flow.NodeStatus{}, callEnded: make(chan struct{})}}
	cr.e = flow.NewEngine(append(opts,
		flow.WithTaskFunc("first", func(ctx context.Context, c *flow.Context, n *flow.Node) error {
			cr.runs = append(cr.runs, n.ID)
			if c.Resumed() {
				return nil
			}
			return first(ctx)
		}),
		flow.WithTaskFunc("note", func(_ context.Context, _ *flow.Context, n *flow.Node) error {
			cr.runs = append(cr.runs, n.ID)
			return nil
		}))...)
	g, err := flow.LoadGraph("c.yml", []byte(`
id: c
layout:
  - {id: s, type: start}
  - {id: w, task: '@first', meta: `+meta+`}
  - {id: n, task: '@note'}
  - {id: g, task: '@note'}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	res, err := cr.e.EvalGraph(ctx, g, cr.fc, flow.WithEvalInterceptor(cr.h, 0))
	return cr, res, err
}

// resumeRunsAgain resumes the run that ended with res: w runs again, then its links.
func (cr *cancelledRun) resumeRunsAgain(t *testing.T, res *flow.Result) {
	t.Helper()
	res, err := cr.e.Resume(context.Background(), res.Frontier, cr.fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{"w", "w", "n", "g"}, cr.runs, "the resume runs the cancelled node again, then its links")
}

// Every branch a caller's cancel cuts short ends INTERRUPTED, whichever notices
// first: before, the first node to return ended FAILED and the others INTERRUPTED.
func TestCallerCancelInterruptsEveryBranch(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ready sync.WaitGroup
	ready.Add(3)
	go func() { ready.Wait(); cancel() }()
	e := flow.NewEngine(flow.WithMaxConcurrency(4), flow.WithTaskFunc("block", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		ready.Done()
		<-ctx.Done()
		return ctx.Err()
	}))
	s := flow.NewSpec("p")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b").LinkTo("c")
	for _, id := range []string{"a", "b", "c"} {
		s.Activity(id).SetTask("@block").LinkTo("j")
	}
	s.Parallel("j").LinkTo("e")
	s.End("e")
	h := &endStatuses{end: map[string]flow.NodeStatus{}, callEnded: make(chan struct{})}
	res, err := e.EvalGraph(ctx, build(t, s), flow.NewContext("i"), flow.WithEvalInterceptor(h, 0))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, flow.StatusFailed, res.Status)
	for _, id := range []string{"a", "b", "c"} {
		assert.Equal(t, trace.Interrupted, h.end[id], id)
	}
	assert.Empty(t, res.ExecutionErrors)
	assert.Len(t, res.Frontier.State().Tokens, 3, "each branch runs its node again on resume")
}

// A retry whose backoff the caller's cancel cuts short is put off, not given up: the
// node's error policy is not asked (a recover goto moved the run on, and a resume then
// skipped the node), the run fails with the cancellation, and the resume runs the
// node again. Before, the last failure stood and the policy decided on it.
func TestCallerCancelDuringRetryBackoffPutsTheRetryOff(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	blocking := clockFunc(func(time.Duration) <-chan time.Time { cancel(); return make(chan time.Time) })
	cr, res, err := runCancelled(t, ctx, `{retry: {max: 3, backoff: 1h}, idempotent: true, onError: {goto: g, recover: true, set: {fell: true}}}`,
		func(context.Context) error { return flow.MarkRetryable(errors.New("busy")) }, flow.WithClock(blocking))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.Empty(t, res.ExecutionErrors, "the policy did not decide on the put-off retry")
	assert.Nil(t, cr.fc.Value("fell"))
	assert.Equal(t, []string{"w"}, cr.runs)
	cr.resumeRunsAgain(t, res)
}

// The same when a sibling's failure cancels the backoff (fail-fast): the run fails
// with the sibling's error alone, and the node waiting to retry runs again on resume.
// Before, its last failure was recorded as a second error of the run.
func TestFailFastDuringRetryBackoffPutsTheRetryOff(t *testing.T) {
	defer goleak.VerifyNone(t)
	waiting := make(chan struct{})
	var once sync.Once
	blocking := clockFunc(func(time.Duration) <-chan time.Time {
		once.Do(func() { close(waiting) })
		return make(chan time.Time)
	})
	var mu sync.Mutex
	runs := map[string]int{}
	e := flow.NewEngine(flow.WithClock(blocking), flow.WithMaxConcurrency(4),
		flow.WithTaskFunc("flaky", func(_ context.Context, c *flow.Context, n *flow.Node) error {
			mu.Lock()
			runs[n.ID]++
			mu.Unlock()
			if c.Resumed() {
				return nil
			}
			return flow.MarkRetryable(errors.New("busy"))
		}),
		flow.WithTaskFunc("bad", func(_ context.Context, c *flow.Context, n *flow.Node) error {
			mu.Lock()
			runs[n.ID]++
			mu.Unlock()
			if c.Resumed() {
				return nil
			}
			<-waiting
			return errors.New("b failed")
		}))
	s := flow.NewSpec("ff")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("r").LinkTo("b")
	s.Activity("r").SetTask("@flaky").SetRetry(flow.RetryPolicy{Max: 3, Backoff: time.Hour}).SetMeta(flow.MetaIdempotent, true).LinkTo("j")
	s.Activity("b").SetTask("@bad").LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.Error(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	require.Len(t, res.ExecutionErrors, 1, "b's failure alone")
	assert.Equal(t, "b", res.ExecutionErrors[0].NodeID)

	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, map[string]int{"r": 2, "b": 2}, runs)
}

// A task that calls Interrupt and then returns the caller's cancellation has ended its
// branch, as Interrupt says: the cancellation is not the node's failure, so it decides
// nothing about the node, and the run ends as it would had the task returned nil (a
// branch left to run notices the cancellation at its next step and runs again on
// resume). Before, the node halted the run with the cancellation and ended its branch
// all the same: the run failed, naming a node that would not run again, with no
// frontier to resume from.
func TestInterruptThenCallerCancelEndsTheBranch(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runs []string
	e := flow.NewEngine(
		flow.WithTaskFunc("quit", func(ctx context.Context, c *flow.Context, n *flow.Node) error {
			runs = append(runs, n.ID)
			c.Interrupt()
			cancel()
			return ctx.Err()
		}),
		flow.WithTaskFunc("note", func(_ context.Context, _ *flow.Context, n *flow.Node) error {
			runs = append(runs, n.ID)
			return nil
		}))
	g, err := flow.LoadGraph("q.yml", []byte(`
id: q
layout:
  - {id: s, type: start}
  - {id: w, task: '@quit'}
  - {id: n, task: '@note'}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	h := &endStatuses{end: map[string]flow.NodeStatus{}, callEnded: make(chan struct{})}
	res, err := e.EvalGraph(ctx, g, flow.NewContext("i"), flow.WithEvalInterceptor(h, 0))
	require.NoError(t, err, "nothing was left to run: the interrupted branch was the last")
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Nil(t, res.Frontier)
	assert.Equal(t, trace.Interrupted, h.end["w"])
	assert.Equal(t, []string{"w"}, runs, "the branch ended at w")
}

// A link condition that returns the caller's cancellation did not fail the node
// either: its error policy is not asked, the run fails with the cancellation and the
// node decides its links again on resume. Before, the policy took the cancellation
// for a routing failure: a recover policy recorded it as a recoverable error and
// ended the branch (a routing failure has no links to follow), so the run completed,
// although the caller had cancelled it, without ever running n. That held for a
// node whose task completed (it runs again on resume, as a node whose task the
// cancellation cut short) and for one whose failure the policy had recovered, which
// goes on along its links (the resume follows them without running it again).
func TestCallerCancelInALinkConditionInterruptsTheNode(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name     string
		fail     bool // w's task fails and its policy recovers: w goes on along its links
		want     []string
		wantErrs int // the recovered failure's record
	}{
		{"completed", false, []string{"w", "w", "n"}, 0},
		{"recovered", true, []string{"w", "n"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			resuming := false
			var runs []string
			e := flow.NewEngine(
				flow.WithCondition("ask", flow.ConditionFunc(func(ctx context.Context, _ *flow.Context) (bool, error) {
					if resuming {
						return true, nil
					}
					cancel()
					return false, ctx.Err()
				})),
				flow.WithTaskFunc("note", func(_ context.Context, _ *flow.Context, n *flow.Node) error {
					runs = append(runs, n.ID)
					if tc.fail && !resuming && n.ID == "w" {
						return errors.New("soft")
					}
					return nil
				}))
			g, err := flow.LoadGraph("l.yml", []byte(`
id: l
layout:
  - {id: s, type: start}
  - {id: w, task: '@note', meta: {onError: {recover: true}}, link: [{nextId: n, when: '@ask'}]}
  - {id: n, task: '@note', link: [e]}
  - {id: e, type: end}
`))
			require.NoError(t, err)
			fc := flow.NewContext("i")
			res, err := e.EvalGraph(ctx, g, fc)
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, flow.StatusFailed, res.Status)
			var ne *flow.NodeError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, flow.CodeCancelled, ne.Code)
			assert.Equal(t, "w", ne.Node)
			assert.Len(t, res.ExecutionErrors, tc.wantErrs, "a cancellation is not the node's error")
			require.NotNil(t, res.Frontier)
			assert.Equal(t, []string{"l:w"}, res.Frontier.Pending())

			resuming = true
			res, err = e.Resume(context.Background(), res.Frontier, fc)
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, tc.want, runs)
		})
	}
}

// A caller's context that ended with a cause (context.WithCancelCause,
// WithDeadlineCause) fails the run with an error that errors.Is tells both from:
// context.Canceled or context.DeadlineExceeded, as the doc promises, and the cause.
// Before, the NodeError held the cause alone, so errors.Is(err, context.Canceled) was
// false for a cancelled run.
func TestCallerCancelCauseKeepsTheContextError(t *testing.T) {
	defer goleak.VerifyNone(t)
	errBudget := errors.New("budget spent")
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, func())
		want error
	}{
		{"cancelled in a task", func() (context.Context, func()) {
			ctx, cancel := context.WithCancelCause(context.Background())
			return ctx, func() { cancel(errBudget) }
		}, context.Canceled},
		{"deadline passed before a node", func() (context.Context, func()) {
			ctx, cancel := context.WithDeadlineCause(context.Background(), time.Unix(0, 0), errBudget)
			return ctx, cancel
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, end := tc.ctx()
			defer end()
			e := flow.NewEngine(flow.WithTaskFunc("block", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
				end()
				<-ctx.Done()
				return ctx.Err()
			}))
			s := flow.NewSpec("c")
			s.Start("s").LinkTo("w")
			s.Activity("w").SetTask("@block").LinkTo("e")
			s.End("e")
			res, err := e.EvalGraph(ctx, build(t, s), flow.NewContext("i"))
			assert.Equal(t, flow.StatusFailed, res.Status)
			var ne *flow.NodeError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, flow.CodeCancelled, ne.Code)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorIs(t, err, errBudget)
		})
	}
}

// A task that calls Suspend and then returns the caller's cancellation suspended its
// node, as Suspend says: the cancellation is not the node's failure, and the run,
// suspended first, stays suspended with the node's reason. Its end says SUSPENDED, so
// the audit holds the node's suspension the run reports. Before, it said
// INTERRUPTED.
func TestSuspendThenCallerCancelSuspendsTheNode(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	e := flow.NewEngine(flow.WithTaskFunc("ask", func(ctx context.Context, c *flow.Context, _ *flow.Node) error {
		runs++
		if c.Resumed() {
			return nil
		}
		c.Suspend("waiting for approval")
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}))
	s := flow.NewSpec("a")
	s.Start("s").LinkTo("w")
	s.Activity("w").SetTask("@ask").LinkTo("e")
	s.End("e")
	h := &endStatuses{end: map[string]flow.NodeStatus{}, callEnded: make(chan struct{})}
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(ctx, build(t, s), fc, flow.WithEvalInterceptor(h, 0))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, "waiting for approval", res.Reason)
	assert.Equal(t, trace.Suspended, h.end["w"])

	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 2, runs)
}

// cancelOnCall is an interceptor that, like one waiting for a slot before each
// sub-graph call, gives up when the caller cancels: armed, it cancels the caller's
// context before a call and returns the cancellation without invoking the call.
type cancelOnCall struct {
	flow.NopInterceptor
	cancel context.CancelFunc // nil: disarmed
}

func (c *cancelOnCall) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	if c.cancel != nil && inv.Node != nil {
		c.cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	return inv.Invoke(ctx)
}

// A resumed sub-graph call that the caller's cancellation stops before it is entered
// again keeps its place, as a cancellation inside the call does: the next resume goes
// on inside the child. Before, the calling node was parked to call the sub-graph
// afresh, and the child's nodes that had completed ran again.
func TestCallerCancelBeforeAResumedCallKeepsItsPlace(t *testing.T) {
	defer goleak.VerifyNone(t)
	runs := map[string]int{}
	e := flow.NewEngine(flow.WithTaskFunc("note", func(_ context.Context, c *flow.Context, n *flow.Node) error {
		runs[n.ID]++
		if n.ID == "b" && runs[n.ID] == 1 {
			c.Suspend("wait")
		}
		return nil
	}))
	c := flow.NewSpec("child")
	c.Start("cs").LinkTo("a")
	c.Activity("a").SetTask("@note").LinkTo("b")
	c.Activity("b").SetTask("@note").LinkTo("ce")
	c.End("ce")
	require.NoError(t, e.Register(build(t, c)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")
	gate := &cancelOnCall{}
	res, err := e.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(gate, 0))
	require.NoError(t, err)
	require.Equal(t, []string{"root/call/child:b"}, res.Frontier.Pending())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gate.cancel = cancel
	res, err = e.Resume(ctx, res.Frontier, fc, flow.WithEvalInterceptor(gate, 0))
	require.ErrorIs(t, err, context.Canceled)
	var ne *flow.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, flow.CodeCancelled, ne.Code)
	assert.Equal(t, []string{"root/call/child:b"}, res.Frontier.Pending(), "the call's place")

	gate.cancel = nil
	res, err = e.Resume(context.Background(), res.Frontier, fc, flow.WithEvalInterceptor(gate, 0))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, map[string]int{"a": 1, "b": 2}, runs, "a completed before the suspension and does not run again")
}
