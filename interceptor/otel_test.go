package interceptor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
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
	tracing := interceptor.NewTracing(tp)
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
	assert.Equal(t, "call", attrs(sub)[interceptor.AttrCallNode].AsString())
	assert.Equal(t, "root/call/child", attrs(sub)[interceptor.AttrCallPath].AsString())

	ra := attrs(root)
	assert.Equal(t, "root", ra[interceptor.AttrGraphID].AsString())
	assert.Equal(t, "inst-9", ra[interceptor.AttrInstanceID].AsString())
	assert.Equal(t, res.RunID(), ra[interceptor.AttrRunID].AsString())
	assert.Equal(t, "FAILED", ra[interceptor.AttrStatus].AsString())
	assert.Equal(t, codes.Error, root.Status.Code)

	for name, parent := range map[string]tracetest.SpanStub{"node s": root, "node ok": root, "node j": root, "node call": root, "node fail": sub, "node cs": sub} {
		sp, ok := spans[name]
		require.True(t, ok, name)
		assert.Equal(t, parent.SpanContext.SpanID(), sp.Parent.SpanID(), "%s's parent", name)
		assert.Equal(t, root.SpanContext.TraceID(), sp.SpanContext.TraceID())
	}
	call := attrs(spans["node call"])
	assert.Equal(t, "call", call[interceptor.AttrNodeID].AsString())
	assert.Equal(t, "activity", call[interceptor.AttrNodeType].AsString())
	assert.Equal(t, "Call child", call[interceptor.AttrNodeTitle].AsString())
	assert.Equal(t, "main", call[interceptor.AttrBranchID].AsString())
	assert.Equal(t, "inst-9", call[interceptor.AttrInstanceID].AsString())
	assert.Equal(t, "run-1", call[interceptor.AttrRunID].AsString())
	assert.Equal(t, "root", call[interceptor.AttrGraphID].AsString())
	assert.Equal(t, "FAILED", call[interceptor.AttrStatus].AsString())

	fail := spans["node fail"]
	assert.Equal(t, "child", attrs(fail)[interceptor.AttrGraphID].AsString())
	assert.Equal(t, "main/call/child", attrs(fail)[interceptor.AttrBranchID].AsString())
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
	assert.Equal(t, "COMPLETED", ok[interceptor.AttrStatus].AsString())
	assert.Equal(t, "main/p:ok", ok[interceptor.AttrBranchID].AsString())
	assert.Equal(t, int64(2), attrs(spans["node j"])[interceptor.AttrArrivals].AsInt64())
	assert.Zero(t, interceptor.OpenSpans(tracing))
}

func TestTracingSuspend(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewTracing(tp), 0))
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
			assert.Equal(t, "SUSPENDED", attrs(sp)[interceptor.AttrStatus].AsString())
			assert.Equal(t, "approve", attrs(sp)[interceptor.AttrReason].AsString())
			assert.Equal(t, codes.Unset, sp.Status.Code)
		case "node a":
			assert.Equal(t, "SUSPENDED", attrs(sp)[interceptor.AttrStatus].AsString())
			assert.Equal(t, "approve", attrs(sp)[interceptor.AttrReason].AsString())
		}
	}
}
