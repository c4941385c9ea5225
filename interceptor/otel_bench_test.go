package interceptor_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
)

// discardSpans is a span exporter that keeps nothing, so a benchmark measures the
// spans' making, not a growing in-memory list.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkTracingChain measures the OpenTelemetry tracing interceptor on the 100-node
// chain: a span per node and per run, with the SDK (sampling every span, exported to
// nothing) and with a no-op tracer provider (the cost when tracing is switched off).
func BenchmarkTracingChain(b *testing.B) {
	const n = 100
	g := chain(b, n)
	b.Run("sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(discardSpans{}))
		defer tp.Shutdown(context.Background())
		benchChain(b, flow.NewEngine(flow.WithInterceptor(interceptor.NewTracing(tp), 0)), g, n+2)
	})
	b.Run("noop", func(b *testing.B) {
		benchChain(b, flow.NewEngine(flow.WithInterceptor(interceptor.NewTracing(nooptrace.NewTracerProvider()), 0)), g, n+2)
	})
}

// BenchmarkMetricsChain measures the run-metrics interceptor, recording to an SDK
// meter provider, on the 100-node chain.
func BenchmarkMetricsChain(b *testing.B) {
	const n = 100
	g := chain(b, n)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	m, err := interceptor.NewMetrics(interceptor.WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	benchChain(b, flow.NewEngine(flow.WithInterceptor(m, 0)), g, n+2)
}
