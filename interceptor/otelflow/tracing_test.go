package otelflow_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor/otelflow"
)

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestTracingSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	tracing := otelflow.NewTracing(tp)
	e := flow.NewEngine(flow.WithInterceptor(tracing, 0))

	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("fail")
	child.Activity("fail").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		return errors.New("remote said: api_key=k-9999 rejected")
	}).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("ok").LinkTo("ok2")
	s.Activity("ok").DoFunc(noop).LinkTo("j")
	s.Activity("ok2").DoFunc(noop).LinkTo("j")
	s.Parallel("j").LinkTo("call")
	s.Activity("call").SetTitle("Call child").SetTask("#child").LinkTo("e")
	s.End("e")
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContextWith("inst-9", map[string]any{"api_key": "k-9999"}), flow.WithRunID("run-1"))
	require.Error(t, err)

	spans := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		spans[sp.Name] = sp
	}
	root, sub := spans["flow root"], spans["flow child"]
	require.True(t, root.SpanContext.IsValid())
	require.True(t, sub.SpanContext.IsValid())
	assert.False(t, root.Parent.IsValid(), "the root evaluation span has no parent")
	assert.Equal(t, spans["node call"].SpanContext.SpanID(), sub.Parent.SpanID(), "a sub-graph evaluation nests under the calling node's span")
	assert.Equal(t, root.SpanContext.TraceID(), sub.SpanContext.TraceID())
	assert.Equal(t, "call", attrs(sub)[otelflow.AttrCallNode].AsString())
	assert.Equal(t, "root/call/child", attrs(sub)[otelflow.AttrCallPath].AsString())

	ra := attrs(root)
	assert.Equal(t, "root", ra[otelflow.AttrGraphID].AsString())
	assert.Equal(t, "inst-9", ra[otelflow.AttrInstanceID].AsString())
	assert.Equal(t, res.RunID(), ra[otelflow.AttrRunID].AsString())
	assert.Equal(t, "FAILED", ra[otelflow.AttrStatus].AsString())
	assert.Equal(t, codes.Error, root.Status.Code)

	for name, parent := range map[string]tracetest.SpanStub{"node s": root, "node ok": root, "node j": root, "node call": root, "node fail": sub, "node cs": sub} {
		sp, ok := spans[name]
		require.True(t, ok, name)
		assert.Equal(t, parent.SpanContext.SpanID(), sp.Parent.SpanID(), "%s's parent", name)
		assert.Equal(t, root.SpanContext.TraceID(), sp.SpanContext.TraceID())
	}
	call := attrs(spans["node call"])
	assert.Equal(t, "call", call[otelflow.AttrNodeID].AsString())
	assert.Equal(t, "activity", call[otelflow.AttrNodeType].AsString())
	assert.Equal(t, "Call child", call[otelflow.AttrNodeTitle].AsString())
	assert.Equal(t, "main", call[otelflow.AttrBranchID].AsString())
	assert.Equal(t, "inst-9", call[otelflow.AttrInstanceID].AsString())
	assert.Equal(t, "run-1", call[otelflow.AttrRunID].AsString())
	assert.Equal(t, "root", call[otelflow.AttrGraphID].AsString())
	assert.Equal(t, "FAILED", call[otelflow.AttrStatus].AsString())

	fail := spans["node fail"]
	assert.Equal(t, "child", attrs(fail)[otelflow.AttrGraphID].AsString())
	assert.Equal(t, "main/call/child", attrs(fail)[otelflow.AttrBranchID].AsString())
	assert.Equal(t, codes.Error, fail.Status.Code)
	assert.Equal(t, "remote said: api_key=*** rejected", fail.Status.Description)
	require.Len(t, fail.Events, 1)
	assert.Equal(t, "exception", fail.Events[0].Name)
	for _, sp := range exp.GetSpans() {
		for _, ev := range sp.Events {
			for _, kv := range ev.Attributes {
				assert.NotContains(t, kv.Value.Emit(), "k-9999", "secrets never reach a span")
			}
		}
		assert.NotContains(t, sp.Status.Description, "k-9999")
	}
	ok := attrs(spans["node ok"])
	assert.Equal(t, "COMPLETED", ok[otelflow.AttrStatus].AsString())
	assert.Equal(t, "main/p:ok", ok[otelflow.AttrBranchID].AsString())
	assert.Equal(t, int64(2), attrs(spans["node j"])[otelflow.AttrArrivals].AsInt64())
	assert.Zero(t, tracing.OpenSpans())
}

func TestTracingSuspend(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	e := flow.NewEngine(flow.WithInterceptor(otelflow.NewTracing(tp), 0))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error { c.Suspend("approve"); return nil }).LinkTo("j")
	s.Activity("b").DoFunc(noop).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	for _, sp := range exp.GetSpans() {
		switch sp.Name {
		case "flow g":
			assert.Equal(t, "SUSPENDED", attrs(sp)[otelflow.AttrStatus].AsString())
			assert.Equal(t, "approve", attrs(sp)[otelflow.AttrReason].AsString())
			assert.Equal(t, codes.Unset, sp.Status.Code)
		case "node a":
			assert.Equal(t, "SUSPENDED", attrs(sp)[otelflow.AttrStatus].AsString())
			assert.Equal(t, "approve", attrs(sp)[otelflow.AttrReason].AsString())
		}
	}
}

// A Tracing registered twice whose run closes (an interceptor gave up on it with a
// panic) between the two calls of one of node x's hooks, or in x's task: x has one
// span, ended when the run closed, and nothing is left open, whatever reaches the
// Tracing late. (The engine runs nothing after x: the run is over.)
func TestTracingRegisteredTwiceLateEvents(t *testing.T) {
	for _, where := range []string{"task", "start", "end"} {
		for _, twice := range []string{"engine and eval", "engine twice", "once"} {
			t.Run(where+"/"+twice, func(t *testing.T) {
				p := &asyncPanic{started: make(chan struct{}), done: make(chan struct{})}
				h := &holdAt{where: where, p: p, closed: make(chan struct{})}
				sr := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
				defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
				tr := otelflow.NewTracing(tp)
				opts := []flow.Option{flow.WithInterceptor(tr, 0), flow.WithInterceptor(p, 1), flow.WithInterceptor(h, 2)}
				var evalOpts []flow.EvalOption
				switch twice {
				case "engine twice":
					opts = append(opts, flow.WithInterceptor(tr, 3))
				case "engine and eval":
					evalOpts = append(evalOpts, flow.WithEvalInterceptor(tr, 3))
				}
				s := flow.NewSpec("g")
				s.Start("s").LinkTo("x")
				s.Activity("x").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
					h.hold(&flow.Node{ID: "x"}, "task")
					return nil
				}).LinkTo("e")
				s.End("e")
				g := build(t, s)
				assert.Panics(t, func() {
					_, _ = flow.NewEngine(opts...).EvalGraph(context.Background(), g, flow.NewContext("i"), evalOpts...)
				})
				close(h.closed)
				<-p.done
				started := map[string]int{}
				for _, s := range sr.Started() {
					started[s.Name()]++
				}
				assert.Equal(t, map[string]int{"flow g": 1, "node s": 1, "node x": 1}, started)
				assert.Len(t, sr.Ended(), len(sr.Started()), "every span ended")
				assert.Zero(t, tr.OpenSpans())
			})
		}
	}
}

// The same sub-graph called from two parallel branches: each call has its own
// evaluation span under its calling node's, and each call's nodes nest under their
// own call's span. One call
// fails, which fails the run fast: the spinning sibling's span ends INTERRUPTED, not
// as an error; every span carries its status, sub-graph evaluations included.
func TestTracingParallelSubgraphCalls(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	tr := otelflow.NewTracing(tp)
	e := flow.NewEngine(flow.WithInterceptor(tr, 0))

	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("work")
	aDone, spinning := make(chan struct{}), make(chan struct{})
	child.Activity("work").DoFunc(func(ctx context.Context, c *flow.Context, _ *flow.Node) error {
		if c.CallPath() == "root/b/child" {
			<-aDone // a's call completes, and spin runs, before b's fails the run
			<-spinning
			return errors.New("b's call failed")
		}
		return nil
	}).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b").LinkTo("spin")
	s.Activity("a").SetTask("#child").LinkTo("aok")
	s.Activity("aok").DoFunc(func(context.Context, *flow.Context, *flow.Node) error { close(aDone); return nil }).LinkTo("j")
	s.Activity("b").SetTask("#child").LinkTo("j")
	s.Activity("spin").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		close(spinning)
		<-ctx.Done()
		return ctx.Err()
	}).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.Error(t, err)
	require.Equal(t, flow.StatusFailed, res.Status)
	assert.Zero(t, tr.OpenSpans())

	byPath := map[string]tracetest.SpanStub{} // "call path:span name"
	for _, sp := range exp.GetSpans() {
		byPath[attrs(sp)[otelflow.AttrCallPath].AsString()+":"+sp.Name] = sp
	}
	root := byPath["root:flow root"]
	require.True(t, root.SpanContext.IsValid())
	for _, call := range []string{"a", "b"} {
		path := "root/" + call + "/child"
		sub, ok := byPath[path+":flow child"]
		require.True(t, ok, path)
		assert.Equal(t, byPath["root:node "+call].SpanContext.SpanID(), sub.Parent.SpanID(), "%s: the call nests under the calling node", path)
		assert.Equal(t, root.SpanContext.TraceID(), sub.SpanContext.TraceID())
		assert.Equal(t, call, attrs(sub)[otelflow.AttrCallNode].AsString())
		for _, n := range []string{"cs", "work"} {
			sp, ok := byPath[path+":node "+n]
			require.True(t, ok, path+":"+n)
			assert.Equal(t, sub.SpanContext.SpanID(), sp.Parent.SpanID(), "%s:%s nests under its own call", path, n)
		}
	}
	status := func(key string) string { return attrs(byPath[key])[otelflow.AttrStatus].AsString() }
	assert.Equal(t, "COMPLETED", status("root/a/child:flow child"))
	assert.Equal(t, "FAILED", status("root/b/child:flow child"))
	assert.Equal(t, codes.Error, byPath["root/b/child:flow child"].Status.Code)
	assert.Equal(t, "FAILED", status("root/b/child:node work"))
	assert.Equal(t, codes.Error, byPath["root/b/child:node work"].Status.Code)
	assert.Equal(t, "FAILED", status("root:node b"))
	assert.Equal(t, "INTERRUPTED", status("root:node spin"))
	assert.NotEqual(t, codes.Error, byPath["root:node spin"].Status.Code, "a sibling cancelled by fail-fast did not fail")
	assert.Equal(t, "FAILED", status("root:flow root"))
	assert.Equal(t, codes.Error, root.Status.Code)
}

// A sub-graph call halted because a sibling branch failed the run was interrupted,
// like its nodes: its span is not an error and does not carry the sibling's error.
func TestTracingCallHaltedBySibling(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	tr := otelflow.NewTracing(tp)
	e := flow.NewEngine(flow.WithInterceptor(tr, 0))
	spinning := make(chan struct{})
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("work")
	child.Activity("work").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		close(spinning)
		<-ctx.Done()
		return ctx.Err()
	}).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").SetTask("#child").LinkTo("j")
	s.Activity("b").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		<-spinning
		return errors.New("b failed")
	}).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	_, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.Error(t, err)
	assert.Zero(t, tr.OpenSpans())
	spans := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		spans[sp.Name] = sp
	}
	for name, want := range map[string]string{"node work": "INTERRUPTED", "node a": "INTERRUPTED", "flow child": "INTERRUPTED",
		"node b": "FAILED", "flow root": "FAILED"} {
		sp, ok := spans[name]
		require.True(t, ok, name)
		assert.Equal(t, want, attrs(sp)[otelflow.AttrStatus].AsString(), name)
		if want == "FAILED" {
			assert.Equal(t, codes.Error, sp.Status.Code, name)
		} else {
			assert.NotEqual(t, codes.Error, sp.Status.Code, name)
			assert.Empty(t, sp.Events, name)
		}
	}
}

// What a node's task traces with the context it is given (a span of its own, as an
// instrumented HTTP client starts; a run of another graph it evaluates) nests under
// the node's span, and a sub-graph call under the calling node's span, found from
// the context (Tracing is a flow.NodeStarter).
func TestTracingTaskSpansNestUnderTheNode(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	e := flow.NewEngine(flow.WithInterceptor(otelflow.NewTracing(tp), 0))
	var _ flow.NodeStarter = otelflow.NewTracing(tp)

	other := flow.NewSpec("other")
	other.Start("os").LinkTo("oe")
	other.End("oe")
	og := build(t, other)
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("fetch")
	s.Activity("fetch").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		_, sp := tp.Tracer("http").Start(ctx, "GET /quote")
		sp.End()
		return nil
	}).LinkTo("nested")
	s.Activity("nested").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		_, err := e.EvalGraph(ctx, og, flow.NewContext("inner"))
		return err
	}).LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("e")
	s.End("e")
	_, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("outer"))
	require.NoError(t, err)

	spans := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		spans[sp.Name] = sp
	}
	for child, parent := range map[string]string{"GET /quote": "node fetch", "flow other": "node nested", "flow child": "node call"} {
		c, p := spans[child], spans[parent]
		require.True(t, c.SpanContext.IsValid(), child)
		require.True(t, p.SpanContext.IsValid(), parent)
		assert.Equal(t, p.SpanContext.SpanID(), c.Parent.SpanID(), "%s nests under %s", child, parent)
		assert.Equal(t, p.SpanContext.TraceID(), c.SpanContext.TraceID())
	}
	assert.Equal(t, spans["flow other"].SpanContext.SpanID(), spans["node os"].Parent.SpanID())
}

// One calling node reached by two parallel branches (it has two incoming links and no
// join) calls its sub-graph in both at once: the call path and node are the same, the
// branch is not. Each call's evaluation span is a child of the calling node's span in
// its own branch, and its nodes nest under it; a nested call inside nests under its
// calling node too.
func TestTracingSameNodeCallsInParallel(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	tr := otelflow.NewTracing(tp)
	e := flow.NewEngine(flow.WithInterceptor(tr, 0))

	// Both calls are in progress when either goes on: the second call starts while
	// the first call's node span is open.
	arrived, both := make(chan struct{}, 2), make(chan struct{})
	leaf := flow.NewSpec("leaf")
	leaf.Start("ls").LinkTo("le")
	leaf.End("le")
	require.NoError(t, e.Register(build(t, leaf)))
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("work")
	child.Activity("work").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		arrived <- struct{}{}
		<-both
		return nil
	}).LinkTo("nested")
	child.Activity("nested").SetTask("#leaf").LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").DoFunc(noop).LinkTo("call")
	s.Activity("b").DoFunc(noop).LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("e")
	s.End("e")
	go func() {
		<-arrived
		<-arrived
		close(both)
	}()
	_, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.NoError(t, err)
	assert.Zero(t, tr.OpenSpans())

	// Spans by "branch id:name" (an evaluation span by the branch of a node under it).
	byBranch := map[string]tracetest.SpanStub{}
	byID := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		byID[sp.SpanContext.SpanID().String()] = sp
		if b := attrs(sp)[otelflow.AttrBranchID].AsString(); b != "" {
			byBranch[b+":"+sp.Name] = sp
		}
	}
	for _, br := range []string{"main/p:a", "main/p:b"} {
		call, ok := byBranch[br+":node call"]
		require.True(t, ok, br)
		work, ok := byBranch[br+"/call/child:node work"]
		require.True(t, ok, br)
		eval := byID[work.Parent.SpanID().String()]
		require.Equal(t, "flow child", eval.Name, br)
		assert.Equal(t, call.SpanContext.SpanID(), eval.Parent.SpanID(), "%s: the call nests under its own branch's calling node", br)
		assert.Equal(t, eval.SpanContext.SpanID(), byBranch[br+"/call/child:node cs"].Parent.SpanID(), br)
		assert.False(t, eval.StartTime.After(work.StartTime), "%s: the call's span starts before its nodes", br)

		nested, ok := byBranch[br+"/call/child:node nested"]
		require.True(t, ok, br)
		ls, ok := byBranch[br+"/call/child/nested/leaf:node ls"]
		require.True(t, ok, br)
		leafEval := byID[ls.Parent.SpanID().String()]
		require.Equal(t, "flow leaf", leafEval.Name, br)
		assert.Equal(t, nested.SpanContext.SpanID(), leafEval.Parent.SpanID(), "%s: the nested call nests under its calling node", br)
	}
}

// nodesOnly samples node spans and drops evaluation spans.
type nodesOnly struct{}

func (nodesOnly) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	if strings.HasPrefix(p.Name, "node ") {
		return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
	}
	return sdktrace.SamplingResult{Decision: sdktrace.Drop}
}

func (nodesOnly) Description() string { return "nodesOnly" }

// A node span recorded below an evaluation span that is not gets its attributes all
// the same: the Tracing skips building them only for spans that do not record.
func TestTracingNodeSpanUnderUnsampledRun(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(nodesOnly{}))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	tracing := otelflow.NewTracing(tp)
	e := flow.NewEngine(flow.WithInterceptor(tracing, 0))
	g := chain(t, 2)
	_, err := e.EvalGraph(context.Background(), g, flow.NewContext("inst-1"), flow.WithRunID("run-1"))
	require.NoError(t, err)

	spans := exp.GetSpans()
	require.Len(t, spans, 4, "start, two activities, end; no evaluation span")
	for _, sp := range spans {
		a := attrs(sp)
		assert.Equal(t, "inst-1", a[otelflow.AttrInstanceID].AsString(), sp.Name)
		assert.Equal(t, "run-1", a[otelflow.AttrRunID].AsString(), sp.Name)
		assert.Equal(t, g.ID, a[otelflow.AttrGraphID].AsString(), sp.Name)
		assert.Equal(t, "COMPLETED", a[otelflow.AttrStatus].AsString(), sp.Name)
		assert.NotEmpty(t, a[otelflow.AttrNodeID].AsString(), sp.Name)
	}
	assert.Zero(t, tracing.OpenSpans())
}
