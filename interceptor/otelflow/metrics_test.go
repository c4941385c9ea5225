package otelflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/interceptor/otelflow"
	"github.com/flowteam/flowteam/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func build(t testing.TB, s *flow.GraphSpec) *flow.Graph {
	t.Helper()
	g, err := s.Build()
	require.NoError(t, err)
	return g
}

type nopClock struct{}

func (nopClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

// metricsGraph: a retried node that fails twice then succeeds, a recovered failure, a
// task reporting a fallback and a human rejection.
func metricsGraph(t *testing.T) *flow.Graph {
	attempts := 0
	s := flow.NewSpec("m")
	s.Start("s").LinkTo("flaky")
	s.Activity("flaky").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		attempts++
		if attempts%3 != 0 {
			return &flow.Error{Code: "BUSY", Message: "busy", Retry: true}
		}
		return nil
	}).SetMeta(flow.MetaRetry, flow.RetryPolicy{Max: 3, Backoff: time.Millisecond}).SetMeta(flow.MetaIdempotent, true).LinkTo("soft")
	s.Activity("soft").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		trace.Count(ctx, trace.CountFallback, 1)
		return flow.NewRecoverableError("soft timeout")
	}).LinkTo("review")
	s.Activity("review").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		trace.Count(ctx, trace.CountRejection, 1)
		return nil
	}).LinkTo("e")
	s.End("e")
	return build(t, s)
}

func TestInstruments(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	in, err := otelflow.NewInstruments(mp)
	require.NoError(t, err)
	m, err := interceptor.NewMetrics(interceptor.WithRecorder(in))
	require.NoError(t, err)
	e := flow.NewEngine(flow.WithInterceptor(m, 0), flow.WithClock(nopClock{}))
	g := metricsGraph(t)
	for range 2 {
		_, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
		require.NoError(t, err)
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	sums := map[string]map[string]int64{} // metric -> "graph/status" -> value
	hist := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, otelflow.ScopeName, sm.Scope.Name)
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					g, _ := dp.Attributes.Value(attribute.Key("flow.graph.id"))
					st, _ := dp.Attributes.Value(attribute.Key("flow.status"))
					if sums[mt.Name] == nil {
						sums[mt.Name] = map[string]int64{}
					}
					sums[mt.Name][g.AsString()+"/"+st.AsString()] += dp.Value
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					hist[mt.Name] += dp.Count
				}
			}
		}
	}
	assert.Equal(t, map[string]int64{"m/COMPLETED": 2}, sums["flowteam.runs"])
	assert.Equal(t, map[string]int64{"m/COMPLETED": 8, "m/FAILED": 6}, sums["flowteam.nodes"])
	assert.Equal(t, map[string]int64{"m/": 4}, sums["flowteam.retries"])
	assert.Equal(t, map[string]int64{"m/": 2}, sums["flowteam.recovered"])
	assert.Equal(t, map[string]int64{"m/": 2}, sums["flowteam.fallbacks"])
	assert.Equal(t, map[string]int64{"m/": 2}, sums["flowteam.rejections"])
	assert.Equal(t, uint64(2), hist["flowteam.run.duration"])
	assert.Equal(t, uint64(14), hist["flowteam.node.duration"])
}
