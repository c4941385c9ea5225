package interceptor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
)

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
	tracing := interceptor.NewTracing(tp)
	e := flow.NewEngine(flow.WithInterceptor(tracing, 0))
	g := chain(t, 2)
	_, err := e.EvalGraph(context.Background(), g, flow.NewContext("inst-1"), flow.WithRunID("run-1"))
	require.NoError(t, err)

	spans := exp.GetSpans()
	require.Len(t, spans, 4, "start, two activities, end; no evaluation span")
	for _, sp := range spans {
		a := attrs(sp)
		assert.Equal(t, "inst-1", a[interceptor.AttrInstanceID].AsString(), sp.Name)
		assert.Equal(t, "run-1", a[interceptor.AttrRunID].AsString(), sp.Name)
		assert.Equal(t, g.ID, a[interceptor.AttrGraphID].AsString(), sp.Name)
		assert.Equal(t, "COMPLETED", a[interceptor.AttrStatus].AsString(), sp.Name)
		assert.NotEmpty(t, a[interceptor.AttrNodeID].AsString(), sp.Name)
	}
	assert.Zero(t, interceptor.OpenSpans(tracing))
}
