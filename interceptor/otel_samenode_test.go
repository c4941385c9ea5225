package interceptor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
)

// One calling node reached by two parallel branches (it has two incoming links and no
// join) calls its sub-graph in both at once: the call path and node are the same, the
// branch is not. Each call's evaluation span is a child of the calling node's span in
// its own branch, and its nodes nest under it; a nested call inside nests under its
// calling node too.
func TestTracingSameNodeCallsInParallel(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	tr := interceptor.NewTracing(tp)
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
	assert.Zero(t, interceptor.OpenSpans(tr))

	// Spans by "branch id:name" (an evaluation span by the branch of a node under it).
	byBranch := map[string]tracetest.SpanStub{}
	byID := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		byID[sp.SpanContext.SpanID().String()] = sp
		if b := attrs(sp)[interceptor.AttrBranchID].AsString(); b != "" {
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
