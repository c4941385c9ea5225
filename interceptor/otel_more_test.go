package interceptor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
)

// The same sub-graph called from two parallel branches: each call has its own
// evaluation span under its calling node's, and each call's nodes nest under their
// own call's span. One call
// fails, which fails the run fast: the spinning sibling's span ends INTERRUPTED, not
// as an error; every span carries its status, sub-graph evaluations included.
func TestTracingParallelSubgraphCalls(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	tr := interceptor.NewTracing(tp)
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
	assert.Zero(t, interceptor.OpenSpans(tr))

	byPath := map[string]tracetest.SpanStub{} // "call path:span name"
	for _, sp := range exp.GetSpans() {
		byPath[attrs(sp)[interceptor.AttrCallPath].AsString()+":"+sp.Name] = sp
	}
	root := byPath["root:flow root"]
	require.True(t, root.SpanContext.IsValid())
	for _, call := range []string{"a", "b"} {
		path := "root/" + call + "/child"
		sub, ok := byPath[path+":flow child"]
		require.True(t, ok, path)
		assert.Equal(t, byPath["root:node "+call].SpanContext.SpanID(), sub.Parent.SpanID(), "%s: the call nests under the calling node", path)
		assert.Equal(t, root.SpanContext.TraceID(), sub.SpanContext.TraceID())
		assert.Equal(t, call, attrs(sub)[interceptor.AttrCallNode].AsString())
		for _, n := range []string{"cs", "work"} {
			sp, ok := byPath[path+":node "+n]
			require.True(t, ok, path+":"+n)
			assert.Equal(t, sub.SpanContext.SpanID(), sp.Parent.SpanID(), "%s:%s nests under its own call", path, n)
		}
	}
	status := func(key string) string { return attrs(byPath[key])[interceptor.AttrStatus].AsString() }
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
	tr := interceptor.NewTracing(tp)
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
	assert.Zero(t, interceptor.OpenSpans(tr))
	spans := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		spans[sp.Name] = sp
	}
	for name, want := range map[string]string{"node work": "INTERRUPTED", "node a": "INTERRUPTED", "flow child": "INTERRUPTED",
		"node b": "FAILED", "flow root": "FAILED"} {
		sp, ok := spans[name]
		require.True(t, ok, name)
		assert.Equal(t, want, attrs(sp)[interceptor.AttrStatus].AsString(), name)
		if want == "FAILED" {
			assert.Equal(t, codes.Error, sp.Status.Code, name)
		} else {
			assert.NotEqual(t, codes.Error, sp.Status.Code, name)
			assert.Empty(t, sp.Events, name)
		}
	}
}
