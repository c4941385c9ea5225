package otelflow_test

import (
	"context"
	"fmt"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/interceptor/otelflow"
	"github.com/flowteam/flowteam/testkit"
)

// discardSpans is a span exporter that keeps nothing, so a benchmark measures the
// spans' making, not a growing in-memory list.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

func noop(context.Context, *flow.Context, *flow.Node) error { return nil }

// chain is the n-node linear chain of no-op Go tasks the interceptors are measured on.
func chain(tb testing.TB, n int) *flow.Graph {
	return testkit.Chain(tb, fmt.Sprintf("chain%d", n), n, noop)
}

// benchChain runs g on e in a loop and reports the time per node.
func benchChain(b *testing.B, e *flow.Engine, g *flow.Graph, nodes int) {
	ctx := context.Background()
	fc := flow.NewContext("bench")
	if _, err := e.EvalGraph(ctx, g, fc); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer testkit.ReportCPU(b, nodes)()
	for b.Loop() {
		if _, err := e.EvalGraph(ctx, g, fc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
}

// BenchmarkTracingChain measures the OpenTelemetry tracing interceptor on the 100-node
// chain: a span per node and per run, with the SDK (sampling every span, exported to
// nothing) and with a no-op tracer provider (the cost when tracing is switched off).
func BenchmarkTracingChain(b *testing.B) {
	const n = 100
	g := chain(b, n)
	b.Run("sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(discardSpans{}))
		defer tp.Shutdown(context.Background())
		benchChain(b, flow.NewEngine(flow.WithInterceptor(otelflow.NewTracing(tp), 0)), g, n+2)
	})
	b.Run("noop", func(b *testing.B) {
		benchChain(b, flow.NewEngine(flow.WithInterceptor(otelflow.NewTracing(nooptrace.NewTracerProvider()), 0)), g, n+2)
	})
}

// BenchmarkMetricsChain measures the run-metrics interceptor recording to the
// Instruments of an SDK meter provider, on the 100-node chain.
func BenchmarkMetricsChain(b *testing.B) {
	const n = 100
	g := chain(b, n)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	in, err := otelflow.NewInstruments(mp)
	if err != nil {
		b.Fatal(err)
	}
	m, err := interceptor.NewMetrics(interceptor.WithRecorder(in))
	if err != nil {
		b.Fatal(err)
	}
	benchChain(b, flow.NewEngine(flow.WithInterceptor(m, 0)), g, n+2)
}
