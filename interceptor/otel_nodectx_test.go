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

// What a node's task traces with the context it is given (a span of its own, as an
// instrumented HTTP client starts; a run of another graph it evaluates) nests under
// the node's span, and a sub-graph call under the calling node's span, found from
// the context (Tracing is a flow.NodeStarter).
func TestTracingTaskSpansNestUnderTheNode(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewTracing(tp), 0))
	var _ flow.NodeStarter = interceptor.NewTracing(tp)

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
