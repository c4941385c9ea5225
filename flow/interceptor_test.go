package flow_test

import (
	"context"
	"encoding/json"
	"maps"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// restoreThroughJSON returns fc's instance as a session store gives it back: its
// variables through JSON, with updates applied, and its trace.
func restoreThroughJSON(t *testing.T, fc *flow.Context, updates map[string]any) *flow.Context {
	t.Helper()
	data, err := json.Marshal(fc.Vars())
	require.NoError(t, err)
	var vars map[string]any
	require.NoError(t, json.Unmarshal(data, &vars))
	maps.Copy(vars, updates)
	return flow.RestoreContext(fc.InstanceID(), vars, fc.Trace())
}

// panicHook panics when the node it names starts.
type panicHook struct {
	flow.NopInterceptor
	node string
}

func (h panicHook) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	if n.ID == h.node {
		panic("hook start")
	}
}

// A hook that panics in a parallel branch's goroutine does not end the process: the
// run fails, its branches end, and Eval panics with a *BranchPanic in the caller's
// goroutine. The context is free for the next run.
func TestHookPanicInABranchReachesTheCaller(t *testing.T) {
	g, err := flow.LoadGraph("p.yml", []byte(`
id: p
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [b0, b1, b2, b3, b4, b5]}
  - {id: b0, link: j}
  - {id: b1, link: j}
  - {id: b2, link: j}
  - {id: b3, link: j}
  - {id: b4, link: j}
  - {id: b5, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	e := flow.NewEngine(flow.WithMaxConcurrency(8))
	fc := flow.NewContext("i")
	for range 20 { // b3 runs on a goroutine in most runs, inline in the others
		var got any
		func() {
			defer func() { got = recover() }()
			_, _ = e.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(panicHook{node: "b3"}, 0))
		}()
		require.NotNil(t, got, "the panic reaches the caller")
		if bp, ok := got.(*flow.BranchPanic); ok {
			assert.Equal(t, "hook start", bp.Value)
			assert.NotEmpty(t, bp.Stack)
		}
		res, err := e.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err, "the context is free again")
		require.Equal(t, flow.StatusCompleted, res.Status)
	}
}

// A hook that panics on the main branch reaches the caller as it always did, and the
// context is free for the next run.
func TestHookPanicOnTheMainBranchFreesTheContext(t *testing.T) {
	g, err := flow.LoadGraph("m.yml", []byte("id: m\nlayout:\n  - {id: s, type: start}\n  - {id: a}\n  - {id: e, type: end}\n"))
	require.NoError(t, err)
	e := flow.NewEngine()
	fc := flow.NewContext("i")
	var got any
	func() {
		defer func() { got = recover() }()
		_, _ = e.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(panicHook{node: "a"}, 0))
	}()
	require.Equal(t, "hook start", got)
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err, "the context is free again")
	require.Equal(t, flow.StatusCompleted, res.Status)
}

// A hook that panics on the calling goroutine inside a sub-graph call fails the calling
// node (the call is its task), and the call's parallel branches end before Eval
// returns: none is left running against a run that is over. The other branch, once
// cancelled, stays in its clean-up until the test has seen that Eval has not
// returned, so an engine that did not wait for it returns (or is about to) while
// the branch provably runs.
func TestHookPanicInASubGraphWaitsForItsBranches(t *testing.T) {
	var ended atomic.Bool
	started, cleaning, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	slow := flow.TaskFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		defer ended.Store(true)
		close(started)
		<-ctx.Done() // the failing call cancels its branches
		close(cleaning)
		<-release
		return ctx.Err()
	})
	e := flow.NewEngine(flow.WithMaxConcurrency(4), flow.WithTask("slow", slow))
	for _, def := range []string{`
id: sub
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [boom, wait]}
  - {id: boom, link: j}
  - {id: wait, task: "@slow", link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`, `
id: main
layout:
  - {id: s, type: start}
  - {id: call, task: "#sub"}
  - {id: e, type: end}
`} {
		g, err := flow.LoadGraph("g.yml", []byte(def))
		require.NoError(t, err)
		require.NoError(t, e.Register(g))
	}
	hook := &waitingPanicHook{node: "boom", before: started}
	type outcome struct {
		res   *flow.Result
		err   error
		ended bool
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.Eval(context.Background(), "main", flow.NewContext("i"), flow.WithEvalInterceptor(hook, 0))
		done <- outcome{res, err, ended.Load()}
	}()
	<-cleaning
	select {
	case <-done:
		t.Fatal("Eval returned while the sub-graph's other branch was still running")
	default:
	}
	close(release)
	out := <-done
	require.Error(t, out.err)
	assert.Equal(t, flow.StatusFailed, out.res.Status)
	assert.True(t, out.ended, "the sub-graph's other branch ended before Eval returned")
	var ne *flow.NodeError
	require.ErrorAs(t, out.err, &ne)
	assert.Equal(t, "call", ne.Node)
	assert.Equal(t, flow.CodePanic, ne.Code)
}

// waitingPanicHook panics when the node it names starts, once before is closed.
type waitingPanicHook struct {
	flow.NopInterceptor
	node   string
	before chan struct{}
}

func (h *waitingPanicHook) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	if n.ID == h.node {
		<-h.before
		panic("hook start")
	}
}

// outerWatch is an interceptor wrapping the whole run that notes, when a panic passes
// through it, whether the branch on another goroutine had already ended.
type outerWatch struct {
	flow.NopInterceptor
	ended   *atomic.Bool
	release chan struct{}
	seen    atomic.Bool // ended.Load() when the panic passed
}

func (w *outerWatch) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	defer func() {
		if p := recover(); p != nil {
			w.seen.Store(w.ended.Load())
			close(w.release) // lets the branch end if nothing else did
			panic(p)
		}
	}()
	return inv.Invoke(ctx)
}

// A hook panicking on the main branch fails the run and waits for its other branches
// before the panic passes back through the interceptors around the run, so an audit
// or a tracer sees every node end before the run does.
func TestHookPanicOnTheMainBranchWaitsBeforeTheInterceptors(t *testing.T) {
	var ended atomic.Bool
	started := make(chan struct{})
	watch := &outerWatch{ended: &ended, release: make(chan struct{})}
	wait := flow.TaskFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		defer ended.Store(true)
		close(started)
		select {
		case <-watch.release:
		case <-ctx.Done():
		}
		return ctx.Err()
	})
	e := flow.NewEngine(flow.WithMaxConcurrency(4), flow.WithTask("wait", wait))
	g, err := flow.LoadGraph("g.yml", []byte(`
id: g
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [boom, w]}
  - {id: boom, link: j}
  - {id: w, task: "@wait", link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	var got any
	func() {
		defer func() { got = recover() }()
		_, _ = e.EvalGraph(context.Background(), g, flow.NewContext("i"),
			flow.WithEvalInterceptor(watch, 0), flow.WithEvalInterceptor(&waitingPanicHook{node: "boom", before: started}, 1))
	}()
	require.Equal(t, "hook start", got)
	assert.True(t, watch.seen.Load(), "the other branch ended before the panic left the engine")
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

// order records hook calls to check interceptor ordering and InterceptFlow nesting.
type order struct {
	flow.NopInterceptor
	name string
	log  *[]string
	mu   *sync.Mutex
}

func (o order) add(s string) { o.mu.Lock(); *o.log = append(*o.log, s); o.mu.Unlock() }

func (o order) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	o.add(o.name + ">" + inv.Path)
	err := inv.Invoke(ctx)
	o.add(o.name + "<" + inv.Path)
	return err
}

func (o order) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	o.add(o.name + "+" + n.ID)
}

func TestInterceptorOrderAndSubgraphNesting(t *testing.T) {
	var log []string
	var mu sync.Mutex
	outer := order{name: "A", log: &log, mu: &mu}
	inner := order{name: "B", log: &log, mu: &mu}
	e := flow.NewEngine(flow.WithInterceptor(inner, 10), flow.WithInterceptor(outer, 1))
	c := flow.NewSpec("child")
	c.Start("cs")
	require.NoError(t, e.Register(build(t, c)))
	p := flow.NewSpec("parent")
	p.Start("call").SetTask("#child")
	_, err := e.EvalGraph(context.Background(), build(t, p), flow.NewContext("o"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"A>parent", "B>parent", "A+call", "B+call",
		"A>parent/call/child", "B>parent/call/child", "A+cs", "B+cs", "B<parent/call/child", "A<parent/call/child",
		"B<parent", "A<parent",
	}, log)
}

// endTimes records the Start and Duration of every NodeEnd; wants is its answer to
// NodeTimes.
type endTimes struct {
	flow.NopInterceptor
	wants bool
	mu    sync.Mutex
	ends  []flow.NodeEnd
}

func (e *endTimes) NodeTimes() bool { return e.wants }

func (e *endTimes) OnNodeEnd(_ context.Context, _ *flow.Context, _ *flow.Node, end flow.NodeEnd) {
	e.mu.Lock()
	e.ends = append(e.ends, end)
	e.mu.Unlock()
}

// plainEnds records every NodeEnd, and is no NodeTimer.
type plainEnds struct {
	flow.NopInterceptor
	mu   sync.Mutex
	ends []flow.NodeEnd
}

func (e *plainEnds) OnNodeEnd(_ context.Context, _ *flow.Context, _ *flow.Node, end flow.NodeEnd) {
	e.mu.Lock()
	e.ends = append(e.ends, end)
	e.mu.Unlock()
}

// The engine reads the clock around a node only when an interceptor wants node times
// (flow.NodeTimer); an interceptor that does not implement it wants them.
func TestNodeTimesOnlyWhenWanted(t *testing.T) {
	g := testkit.Chain(t, "chain", 3, func(context.Context, *flow.Context, *flow.Node) error { return nil })
	run := func(icpts ...flow.Interceptor) {
		var opts []flow.Option
		for i, ic := range icpts {
			opts = append(opts, flow.WithInterceptor(ic, i))
		}
		_, err := flow.NewEngine(opts...).EvalGraph(context.Background(), g, flow.NewContext("i"))
		require.NoError(t, err)
	}
	untimed := &endTimes{wants: false}
	run(untimed)
	require.Len(t, untimed.ends, 5)
	for _, end := range untimed.ends {
		assert.True(t, end.Start.IsZero())
		assert.Zero(t, end.Duration)
	}

	untimed, timed := &endTimes{wants: false}, &endTimes{wants: true}
	run(untimed, timed)
	require.Len(t, timed.ends, 5)
	for i, end := range timed.ends {
		assert.False(t, end.Start.IsZero())
		assert.Equal(t, end, untimed.ends[i], "every interceptor gets the same NodeEnd")
	}

	plain := &plainEnds{}
	run(plain)
	require.Len(t, plain.ends, 5)
	for _, end := range plain.ends {
		assert.False(t, end.Start.IsZero(), "an interceptor that is no NodeTimer gets times")
	}
}
