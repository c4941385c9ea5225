package flow_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// An error policy is handed the run's context.Context and a view of its Context. A
// policy that keeps them must find the instance it was given, never another run's,
// and the run's context ended, however many runs follow.
func TestErrorPolicyMayKeepItsContext(t *testing.T) {
	var (
		kept    *flow.Context
		keptCtx context.Context
	)
	e := flow.NewEngine(flow.WithErrorPolicy(func(ctx context.Context, c *flow.Context, _ *flow.Node, _ error, def flow.ErrorDecision) flow.ErrorDecision {
		if kept == nil {
			kept, keptCtx = c, ctx
		}
		return def
	}))
	g, err := flow.LoadGraph("p.yml", []byte(`
id: p
layout:
  - {id: s, type: start}
  - {id: bad, task: 'raise("SOFT", "soft failure", true)'}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	for i := range 200 {
		who := "first"
		if i > 0 {
			who = "later"
		}
		res, err := e.EvalGraph(context.Background(), g, flow.NewContextWith("i", map[string]any{"who": who}))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		require.Len(t, res.ExecutionErrors, 1)
	}
	require.NotNil(t, kept)
	assert.Equal(t, "first", kept.Value("who"))
	assert.Equal(t, "main", kept.BranchID())
	assert.Error(t, keptCtx.Err(), "the run is over")
}

// A node whose task called Interrupt ended its branch, even when a sibling branch
// halted the run while it ran: it is not parked to run again on resume, and the join
// does not wait for its branch (it was parked, ran twice and reached the join).
func TestInterruptedNodeStaysEndedWhenASiblingHaltedTheRun(t *testing.T) {
	started, suspended := make(chan struct{}), make(chan struct{})
	interrupts := 0
	s := flow.NewSpec("halted")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("c")
	s.Activity("a").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("decided") != true {
			<-started
			c.Suspend("waiting")
			close(suspended)
		}
		return nil
	}).LinkTo("j")
	s.Activity("c").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if interrupts++; interrupts == 1 {
			close(started)
			<-suspended // the run is halted while this node runs
		}
		c.Interrupt()
		return nil
	}).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()

	rec := newJoinRec()
	fc := flow.NewContext("i")
	res := evalRec(t, e, g, fc, rec)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, []string{"halted:a"}, res.Frontier.Pending(), "the interrupted branch ended")

	fc.Set("decided", true)
	res = resumeRec(t, e, res.Frontier, fc, rec)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, interrupts, "the interrupted node ran once")
	assert.Equal(t, []int{1}, rec.arrivals["j"], "the join waited for the branch that was not interrupted")
}

// reasonRec records the suspend reason of each node's end.
type reasonRec struct {
	flow.NopInterceptor
	mu      sync.Mutex
	reasons map[string]string
}

func (r *reasonRec) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, end flow.NodeEnd) {
	if end.Status == trace.Suspended {
		r.mu.Lock()
		r.reasons[n.ID] = end.Reason
		r.mu.Unlock()
	}
}

// When parallel branches suspend together, the run keeps the first reason, but each
// node's end (and so its audit record) gives the reason that node suspended with,
// not the other branch's.
func TestBranchesSuspendingTogetherKeepTheirOwnReasons(t *testing.T) {
	started, suspended := make(chan struct{}), make(chan struct{})
	s := flow.NewSpec("both")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		<-started
		c.Suspend("manager approval")
		close(suspended)
		return nil
	}).LinkTo("j")
	s.Activity("b").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		close(started)
		<-suspended
		c.Suspend("budget check")
		return nil
	}).LinkTo("j")
	s.Parallel("j")
	rec := &reasonRec{reasons: map[string]string{}}
	res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), flow.NewContext("i"), flow.WithEvalInterceptor(rec, 0))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, "manager approval", res.Reason, "the run's reason is the first")
	assert.Equal(t, map[string]string{"a": "manager approval", "b": "budget check"}, rec.reasons)
}

// The branches of a parallel split that a resume continues run concurrently again, a
// sub-graph call re-entered on resume included: they ran one after the other on the
// resuming goroutine, so a branch that waits for its sibling waited for ever.
func TestResumedParallelBranchesRunConcurrently(t *testing.T) {
	defer goleak.VerifyNone(t)
	childSuspended, aStarted, wStarted := make(chan struct{}), make(chan struct{}), make(chan struct{})
	meet := func(mine, other chan struct{}, before func()) flow.TaskFunc {
		return func(ctx context.Context, c *flow.Context, n *flow.Node) error {
			if c.Value("decided") != true {
				before()
				c.Suspend("waiting at " + n.ID)
				return nil
			}
			close(mine)
			select {
			case <-other:
				return nil
			case <-ctx.Done(): // only if the sibling never runs
				return fmt.Errorf("%s: the sibling branch did not run meanwhile", n.ID)
			}
		}
	}
	e := flow.NewEngine()
	child := flow.NewSpec("child")
	child.Start("w").DoFunc(meet(wStarted, aStarted, func() {})).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("meet")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").DoFunc(meet(aStarted, wStarted, func() { <-childSuspended })).LinkTo("j")
	s.Activity("b").SetTask("#child").LinkTo("j")
	s.Parallel("j")
	g := build(t, s)
	// The child suspends first, then a: both branches are inside their tasks.
	watch := flow.WithEvalInterceptor(suspendWatch{"w": childSuspended}, 0)

	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc, watch)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.ElementsMatch(t, []string{"meet:a", "meet/b/child:w"}, res.Frontier.Pending())

	fc.Set("decided", true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err = e.Resume(ctx, res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
}

// suspendWatch closes a node's channel once that node has ended suspended.
type suspendWatch map[string]chan struct{}

func (suspendWatch) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	return inv.Invoke(ctx)
}
func (suspendWatch) OnNodeStart(context.Context, *flow.Context, *flow.Node) {}
func (w suspendWatch) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, end flow.NodeEnd) {
	if ch := w[n.ID]; ch != nil && end.Status == trace.Suspended {
		close(ch)
	}
}

// skipInvoke is an interceptor that returns without invoking the graph, the root
// graph's or a sub-graph call's.
type skipInvoke struct {
	flow.NopInterceptor
	calls bool
}

func (s skipInvoke) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	if (inv.Node != nil) == s.calls {
		return nil
	}
	return inv.Invoke(ctx)
}

// An InterceptFlow that returns without invoking the graph fails the run (or the
// calling node) instead of passing for a completed graph: a skipped sub-graph call
// ended its caller's branch and the run reported completed without the nodes after
// the call, and a skipped root graph completed without running anything.
func TestInterceptorThatDoesNotInvokeFails(t *testing.T) {
	e := flow.NewEngine()
	child := flow.NewSpec("child")
	child.Start("cs")
	g := registerAndCall(t, e, child)

	for _, tc := range []struct {
		calls   bool
		pending string
	}{{calls: true, pending: "root:call"}, {calls: false, pending: "root:s"}} {
		fc := flow.NewContext("i")
		res, err := e.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(skipInvoke{calls: tc.calls}, 0))
		require.Error(t, err, "calls %v", tc.calls)
		assert.Contains(t, err.Error(), "without invoking")
		assert.Equal(t, flow.StatusFailed, res.Status)
		assert.Equal(t, []string{tc.pending}, res.Frontier.Pending())

		res, err = e.Resume(context.Background(), res.Frontier, fc)
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "e", res.LastNode("root"))
	}
}
