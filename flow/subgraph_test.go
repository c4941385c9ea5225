package flow_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// childEngine registers child: cs -> c1 -> c2 -> c3 -> ce, c1 running c1Task.
func childEngine(t *testing.T, c1Task string, c1Meta map[string]any, opts ...flow.Option) *flow.Engine {
	t.Helper()
	e := flow.NewEngine(opts...)
	c := flow.NewSpec("child")
	c.Start("cs").LinkTo("c1")
	n := c.Activity("c1").SetTask(c1Task)
	for k, v := range c1Meta {
		n.SetMeta(k, v)
	}
	n.LinkTo("c2")
	c.Activity("c2").SetTask(`context.incr("c2")`).LinkTo("c3")
	c.Activity("c3").SetTask(`context.incr("c3")`).LinkTo("ce")
	c.End("ce")
	require.NoError(t, e.Register(build(t, c)))
	return e
}

// parentGraph: ps -> call(#child) -> after -> pe, with fb (a fallback) -> pe.
func parentGraph(t *testing.T, callMeta map[string]any) *flow.Graph {
	p := flow.NewSpec("parent")
	p.Start("ps").LinkTo("call")
	n := p.Activity("call").SetTask("#child")
	for k, v := range callMeta {
		n.SetMeta(k, v)
	}
	n.LinkTo("after")
	p.Activity("after").SetTask(`context.incr("after")`).LinkTo("pe")
	p.Activity("fb").SetTask(`context.incr("fb")`).LinkTo("pe")
	p.End("pe")
	return build(t, p)
}

// Interrupt in a sub-graph ends the child's branch; with no branch left the call
// completes and the parent goes on.
func TestInterruptInChildEndsTheChildBranchOnly(t *testing.T) {
	e := childEngine(t, `context.interrupt()`, nil)
	rec := newJoinRec()
	fc := flow.NewContext("i")
	res := evalRec(t, e, parentGraph(t, nil), fc, rec)
	require.NoError(t, res.Err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Nil(t, fc.Value("c2"))
	assert.Equal(t, int64(1), fc.Value("after"))
	out, ok := fc.CallOutcome("parent/call/child")
	require.True(t, ok)
	assert.Equal(t, flow.StatusCompleted, out.Status)
	assert.Equal(t, "c1", res.LastNode("parent/call/child"))
	assert.Equal(t, "pe", res.LastNode("parent"))
}

// A fatal failure in the child applies the child's fallback state and fails the
// calling node with the child's code; the calling node's onError recovers and goes to
// its fallback node. Both failures are recorded and the caller can tell the child
// failed.
func TestFailingChildWithCallerFallback(t *testing.T) {
	e := childEngine(t, `raise("E_CHILD", "child broke")`, map[string]any{"onError": map[string]any{"fallback": map[string]any{"status": "degraded"}}})
	g := parentGraph(t, map[string]any{"onError": map[string]any{"goto": "fb", "recover": []any{"E_CHILD"}}})
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "degraded", fc.Value("status"))
	assert.Equal(t, int64(1), fc.Value("fb"))
	assert.Nil(t, fc.Value("after"))
	assert.Nil(t, fc.Value("c2"))
	require.Len(t, res.ExecutionErrors, 2)
	child, call := res.ExecutionErrors[0], res.ExecutionErrors[1]
	assert.Equal(t, flow.Fatal, child.Severity)
	assert.Equal(t, "parent/call/child", child.Path)
	assert.Equal(t, "c1", child.NodeID)
	assert.Equal(t, "E_CHILD", child.Error.Code)
	assert.Equal(t, map[string]any{"status": "degraded"}, child.Fallback)
	assert.Equal(t, flow.Recoverable, call.Severity)
	assert.Equal(t, "call", call.NodeID)
	assert.Equal(t, "E_CHILD", call.Error.Code)
	assert.Equal(t, "fb", call.Goto)
	assert.Equal(t, 1, res.Fallbacks)
	out, ok := fc.CallOutcome("parent/call/child")
	require.True(t, ok)
	assert.Equal(t, flow.StatusFailed, out.Status)
	assert.Equal(t, map[string]any{"status": "degraded"}, out.Fallback)
	require.NotNil(t, out.Error)
	assert.Equal(t, "E_CHILD", out.Error.Code)
}

// The step limit is hit inside the child: the run fails naming the child's node and
// call path; resumed with room to spare it goes on from there, running no node twice.
func TestStepLimitInsideChildThenResume(t *testing.T) {
	e := childEngine(t, `context.incr("c1")`, nil)
	g := parentGraph(t, nil)
	rec := newJoinRec()
	fc := flow.NewContext("i")
	// ps, call, cs, c1 take the four steps; c2 is refused.
	res := evalRec(t, e, g, fc, rec, flow.WithSteps(4))
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.Equal(t, 4, res.Steps)
	assert.ErrorIs(t, res.Err, flow.ErrStepLimit)
	var ne *flow.NodeError
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, "c2", ne.Node)
	assert.Equal(t, "parent/call/child", ne.Path)
	assert.Equal(t, flow.CodeStepLimit, ne.Code)
	require.NotNil(t, res.Frontier)
	assert.Equal(t, []string{"parent/call/child:c2"}, res.Frontier.Pending())

	res = resumeRec(t, e, res.Frontier, fc, rec)
	require.NoError(t, res.Err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	for _, k := range []string{"c1", "c2", "c3", "after"} {
		assert.Equal(t, int64(1), fc.Value(k), k)
	}
	for _, id := range []string{"ps", "cs", "c1", "c2", "c3", "ce", "after", "pe"} {
		assert.Equal(t, 1, rec.starts[id], id)
	}
}

// Stop inside a child called from one parallel branch stops the whole run; resumed, the
// child goes on after the stopping node and the parallel join fires once with both
// branches.
func TestStopInChildUnderParallelThenResume(t *testing.T) {
	e := childEngine(t, `context.incr("c1"); resumed == true || context.stop()`, nil)
	p := flow.NewSpec("par")
	p.Start("s").LinkTo("p")
	p.Parallel("p").LinkTo("call").LinkTo("b")
	p.Activity("call").SetTask("#child").LinkTo("j")
	p.Activity("b").SetTask(`context.incr("b")`).LinkTo("j")
	p.Parallel("j").SetTask(`context.incr("joined")`).LinkTo("e")
	p.End("e")
	g := build(t, p)
	rec := newJoinRec()
	fc := flow.NewContext("i")
	res := evalRec(t, e, g, fc, rec)
	require.NoError(t, res.Err)
	require.Equal(t, flow.StatusStopped, res.Status)
	assert.Contains(t, res.Frontier.Pending(), "par/call/child:c2")
	assert.Nil(t, fc.Value("c2"))
	fc.Set("resumed", true)
	res = resumeRec(t, e, res.Frontier, fc, rec)
	require.NoError(t, res.Err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	for _, k := range []string{"c1", "c2", "c3", "b", "joined"} {
		assert.Equal(t, int64(1), fc.Value(k), k)
	}
	assert.Equal(t, []int{2}, rec.arrivals["j"])
	assert.Equal(t, 1, rec.starts["e"])
}

// Cancelling the caller's context while parallel branches block on it fails the run
// with context.Canceled, and every branch goroutine has ended when Eval returns.
func TestCancelDuringParallelFanOut(t *testing.T) {
	const n = 6
	started := make(chan struct{}, n)
	e := flow.NewEngine(flow.WithTaskFunc("block", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}))
	s := flow.NewSpec("fan")
	s.Start("s").LinkTo("p")
	p := s.Parallel("p")
	for i := range n {
		id := fmt.Sprintf("b%d", i)
		p.LinkTo(id)
		s.Activity(id).SetTask("@block").LinkTo("j")
	}
	s.Parallel("j").SetTask(`context.put("joined", true)`).LinkTo("e")
	s.End("e")
	g := build(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range n {
			<-started
		}
		cancel()
	}()
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(ctx, g, fc)
	require.Error(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Nil(t, fc.Value("joined"))
	goleak.VerifyNone(t)
}

// The same sub-graph called from two parallel branches at once: two call paths, two
// trace records and two outcomes, and the join waits for both calls.
func TestSameChildInParallelBranches(t *testing.T) {
	e := childEngine(t, `context.incr("c1")`, nil)
	p := flow.NewSpec("par")
	p.Start("s").LinkTo("p")
	p.Parallel("p").LinkTo("call1").LinkTo("call2")
	p.Activity("call1").SetTask("#child").LinkTo("j")
	p.Activity("call2").SetTask("#child").LinkTo("j")
	p.Parallel("j").SetTask(`context.incr("joined")`).LinkTo("e")
	p.End("e")
	g := build(t, p)
	for range 20 {
		rec := newJoinRec()
		fc := flow.NewContext("i")
		res := evalRec(t, e, g, fc, rec)
		require.NoError(t, res.Err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, int64(2), fc.Value("c1"))
		assert.Equal(t, int64(2), fc.Value("c3"))
		assert.Equal(t, int64(1), fc.Value("joined"))
		assert.Equal(t, []int{2}, rec.arrivals["j"])
		assert.Equal(t, map[string]string{"par": "e", "par/call1/child": "ce", "par/call2/child": "ce"}, res.Last())
		for _, path := range []string{"par/call1/child", "par/call2/child"} {
			out, ok := fc.CallOutcome(path)
			require.True(t, ok, path)
			assert.Equal(t, flow.StatusCompleted, out.Status, path)
		}
	}
}

// A graph that calls itself is stopped by the call depth limit, with a stable code
// that reaches the root through every calling node.
func TestRecursiveCallHitsTheDepthLimit(t *testing.T) {
	e := flow.NewEngine(flow.WithMaxCallDepth(3))
	s := flow.NewSpec("rec")
	s.Start("s").LinkTo("call")
	s.Activity("call").SetTask(`#rec`).LinkTo("e")
	s.End("e")
	require.NoError(t, e.Register(build(t, s)))
	fc := flow.NewContext("i")
	res, err := e.Eval(context.Background(), "rec", fc)
	require.Error(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.ErrorIs(t, err, flow.ErrCallDepth)
	var ne *flow.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, flow.CodeCallDepth, ne.Code)
	assert.Equal(t, "rec", ne.Path, "the root's calling node fails last")
	// One record per level: depth 3 refuses, then each caller fails in turn.
	require.Len(t, res.ExecutionErrors, 4)
	assert.Equal(t, "rec/call/rec/call/rec/call/rec", res.ExecutionErrors[0].Path)
	assert.Equal(t, "rec", res.ExecutionErrors[3].Path)
	// The root's error wraps the failure where it happened (whose call path names
	// every call between), not each level's error in turn.
	assert.Equal(t, `node "call" in graph "rec": subgraph_depth: sub-graph "rec": node "call" in graph "rec" `+
		`(call path rec/call/rec/call/rec/call/rec): subgraph_depth: sub-graph call depth exceeded (3) calling "rec"`, err.Error())
}

// A calling node with a retry policy retries a failed sub-graph call by calling the
// sub-graph again, also when the failed call was one a resume re-entered (re-entering
// the aborted call would fail again without running anything).
func TestRetryOfAResumedCallCallsTheSubGraphAgain(t *testing.T) {
	calls := 0
	e := flow.NewEngine(flow.WithClock(&fakeClock{}))
	child := flow.NewSpec("child")
	child.Start("cs").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("approved") != true {
			c.Suspend("waiting for approval")
			return nil
		}
		calls++
		if calls == 1 {
			return &flow.Error{Code: "BUSY", Message: "busy", Retry: true}
		}
		return nil
	}).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("parent")
	s.Start("s").LinkTo("call")
	s.Activity("call").SetTask("#child").SetRetry(flow.RetryPolicy{Max: 3}).LinkTo("e")
	s.End("e")
	g := build(t, s)

	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	fc.Set("approved", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 2, calls, "the retry ran the child again")
	assert.Equal(t, 1, res.Retries)
	assert.Equal(t, "e", res.LastNode("parent"))
}

// callWatch counts node starts and closes interrupted once the node of that name has
// ended interrupted.
type callWatch struct {
	flow.NopInterceptor
	node        string
	interrupted chan struct{}
	mu          sync.Mutex
	starts      map[string]int
}

func (w *callWatch) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	w.mu.Lock()
	w.starts[n.ID]++
	w.mu.Unlock()
}

func (w *callWatch) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, end flow.NodeEnd) {
	if n.ID == w.node && end.Status == trace.Interrupted {
		close(w.interrupted)
	}
}

// When a sub-graph call fails while the run is halted by a failure elsewhere, the
// tokens the halt parked inside the call do not stay in the frontier: the calling node
// is resumed and runs the call again, so with them the rest of the failed call, and
// everything after the calling node, ran twice on resume.
func TestFailedCallLeavesNoTokensInTheFrontier(t *testing.T) {
	defer goleak.VerifyNone(t)
	c1Started, c2Started := make(chan struct{}), make(chan struct{})
	watch := &callWatch{node: "c2", interrupted: make(chan struct{}), starts: map[string]int{}}
	e := flow.NewEngine()
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("cp")
	child.Parallel("cp").LinkTo("c1").LinkTo("c2")
	child.Activity("c1").DoFunc(func(ctx context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("fixed") == true {
			return nil
		}
		close(c1Started)
		<-ctx.Done()        // the run failed at a
		<-watch.interrupted // and c2 was parked
		return errors.New("c1 broke")
	}).LinkTo("cj")
	child.Activity("c2").DoFunc(func(ctx context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("fixed") == true {
			return nil
		}
		close(c2Started)
		<-ctx.Done()
		return ctx.Err()
	}).LinkTo("cj")
	child.Parallel("cj").LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("fixed") == true {
			return nil
		}
		<-c1Started
		<-c2Started
		return errors.New("a broke")
	}).LinkTo("j")
	s.Activity("b").SetTask("#child").LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g := build(t, s)

	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(watch, 0))
	require.Error(t, err)
	require.Equal(t, flow.StatusFailed, res.Status)
	assert.ElementsMatch(t, []string{"root:a", "root:b"}, res.Frontier.Pending(), "both failed nodes, nothing inside the failed call")

	fc.Set("fixed", true)
	watch.starts = map[string]int{}
	res, err = e.Resume(context.Background(), res.Frontier, fc, flow.WithEvalInterceptor(watch, 0))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, map[string]int{"a": 1, "b": 1, "cs": 1, "cp": 1, "c1": 1, "c2": 1, "cj": 1, "ce": 1, "j": 1, "e": 1}, watch.starts)
}

// failingCallInterceptor runs a sub-graph call, then fails it, until told otherwise.
type failingCallInterceptor struct {
	flow.NopInterceptor
	fail   bool
	mu     sync.Mutex
	starts map[string]int
}

func (f *failingCallInterceptor) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	err := inv.Invoke(ctx)
	if inv.Node != nil && f.fail {
		return errors.New("span export failed")
	}
	return err
}

func (f *failingCallInterceptor) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	f.mu.Lock()
	f.starts[n.ID]++
	f.mu.Unlock()
}

// A sub-graph call that its interceptor fails after the run stopped inside it leaves
// no token of the call in the frontier either: the failed calling node runs the call
// again on resume.
func TestCallFailedByItsInterceptorLeavesNoTokensInTheFrontier(t *testing.T) {
	e := flow.NewEngine()
	child := flow.NewSpec("child")
	child.Start("cs").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("resumed") != true {
			c.Stop()
		}
		return nil
	}).LinkTo("c1")
	child.Activity("c1").LinkTo("ce")
	child.End("ce")
	g := registerAndCall(t, e, child)

	icpt := &failingCallInterceptor{fail: true, starts: map[string]int{}}
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(icpt, 0))
	require.Error(t, err)
	assert.Equal(t, []string{"root:call"}, res.Frontier.Pending())

	icpt.fail, icpt.starts = false, map[string]int{}
	fc.Set("resumed", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc, flow.WithEvalInterceptor(icpt, 0))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, map[string]int{"call": 1, "cs": 1, "c1": 1, "ce": 1, "e": 1}, icpt.starts)
}

// stopThenPanicHook panics when c1 starts, once c2 has stopped the run.
type stopThenPanicHook struct {
	flow.NopInterceptor
	started, stopped chan struct{}
	armed            bool
}

func (h *stopThenPanicHook) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	if n.ID == "c1" && h.armed {
		close(h.started)
		<-h.stopped
		panic("hook start")
	}
}

func (h *stopThenPanicHook) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, _ flow.NodeEnd) {
	if n.ID == "c2" && h.armed {
		close(h.stopped)
	}
}

// A sub-graph call that fails because a hook panicked inside it, after a branch of it
// stopped the run, leaves no token of the call in the frontier either.
func TestCallFailedByAHookPanicLeavesNoTokensInTheFrontier(t *testing.T) {
	defer goleak.VerifyNone(t)
	hook := &stopThenPanicHook{started: make(chan struct{}), stopped: make(chan struct{}), armed: true}
	e := flow.NewEngine()
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("cp")
	child.Parallel("cp").LinkTo("c1").LinkTo("c2")
	child.Activity("c1").LinkTo("cj")
	child.Activity("c2").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("resumed") != true {
			<-hook.started // c1 runs when the run stops
			c.Stop()
		}
		return nil
	}).LinkTo("cj")
	child.Parallel("cj").LinkTo("ce")
	child.End("ce")
	g := registerAndCall(t, e, child)

	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(hook, 0))
	require.ErrorIs(t, err, flow.ErrTaskPanic)
	assert.Equal(t, []string{"root:call"}, res.Frontier.Pending())

	hook.armed = false
	fc.Set("resumed", true)
	starts := &callWatch{starts: map[string]int{}}
	res, err = e.Resume(context.Background(), res.Frontier, fc, flow.WithEvalInterceptor(starts, 0))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, map[string]int{"call": 1, "cs": 1, "cp": 1, "c1": 1, "c2": 1, "cj": 1, "ce": 1, "e": 1}, starts.starts)
}

// registerAndCall registers child on e and returns the graph "root": s -> call (a
// task "#child") -> e.
func registerAndCall(t *testing.T, e *flow.Engine, child *flow.GraphSpec) *flow.Graph {
	t.Helper()
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("e")
	s.End("e")
	return build(t, s)
}

// A design limit, pinned: a fatal failure inside a sub-graph ends the call and fails
// the calling node, so the frontier holds the calling node, and a resume calls the
// sub-graph again from its start. The child's nodes that completed before the failure
// run again (c1 twice); the same failure in the root graph resumes at the failed node.
func TestResumeAfterAFailureInASubGraphRunsTheCallAgain(t *testing.T) {
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("c1")
	child.Activity("c1").SetTask(`context.incr("c1")`).LinkTo("c2")
	child.Activity("c2").SetTask(`fixed == true || raise("E_C2", "broken")`).LinkTo("ce")
	child.End("ce")
	e := flow.NewEngine()
	g := registerAndCall(t, e, child)
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.Error(t, err)
	require.Equal(t, flow.StatusFailed, res.Status)
	assert.Equal(t, []string{"root:call"}, res.Frontier.Pending(), "the calling node, not c2")
	fc.Set("fixed", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, int64(2), fc.Value("c1"), "the call ran again from its start")

	root := flow.NewSpec("flat")
	root.Start("s").LinkTo("c1")
	root.Activity("c1").SetTask(`context.incr("c1")`).LinkTo("c2")
	root.Activity("c2").SetTask(`fixed == true || raise("E_C2", "broken")`).LinkTo("e")
	root.End("e")
	g = build(t, root)
	fc = flow.NewContext("i")
	res, err = e.EvalGraph(context.Background(), g, fc)
	require.Error(t, err)
	assert.Equal(t, []string{"flat:c2"}, res.Frontier.Pending())
	fc.Set("fixed", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, int64(1), fc.Value("c1"))
}

func TestSubgraphCalledTwiceKeepsTwoTraceRecords(t *testing.T) {
	e := flow.NewEngine()
	c := flow.NewSpec("child")
	c.Start("cs").LinkTo("ce")
	c.End("ce")
	require.NoError(t, e.Register(build(t, c)))
	p := flow.NewSpec("parent")
	p.Start("s").LinkTo("call1")
	p.Activity("call1").SetTask("#child").LinkTo("call2")
	p.Activity("call2").SetTask("#child").LinkTo("e")
	p.End("e")
	res, _, _ := run(t, e, build(t, p), nil)
	require.NoError(t, res.Err)
	assert.Equal(t, map[string]string{"parent": "e", "parent/call1/child": "ce", "parent/call2/child": "ce"}, res.Last())
}
