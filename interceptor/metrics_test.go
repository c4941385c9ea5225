package interceptor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

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

func TestMetricsPerRun(t *testing.T) {
	var ended []trace.Metrics
	m, err := interceptor.NewMetrics(interceptor.WithRunMetrics(func(x trace.Metrics) { ended = append(ended, x) }), interceptor.WithRetention(2))
	require.NoError(t, err)
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(m, 0), flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 1), flow.WithClock(nopClock{}))
	g := metricsGraph(t)
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, 2, res.Retries)

	got, ok := m.Run(res.RunID())
	require.True(t, ok)
	assert.Positive(t, got.Duration)
	got.Duration = 0
	assert.Equal(t, trace.Metrics{RunID: res.RunID(), InstanceID: "i", GraphID: "m", Status: trace.Completed,
		Started: 7, Completed: 4, Failed: 3, Retries: 2, Recovered: 1, Fallbacks: 1, Rejections: 1}, got)
	require.Len(t, ended, 1)
	assert.Equal(t, res.RunID(), ended[0].RunID)

	// The audit's records give the same counts, but for the events the engine does not
	// report.
	fromRecs := mem.Metrics(res.RunID())
	fromRecs.Duration, fromRecs.Fallbacks, fromRecs.Rejections = 0, 1, 1
	assert.Equal(t, got, fromRecs)
	flaky := mem.ByNode("flaky").Terminal()
	require.Len(t, flaky, 3)
	assert.True(t, flaky[0].Retrying)
	assert.Equal(t, 0, flaky[0].Attempt)
	assert.Equal(t, 2, flaky[1].Attempt)
	assert.Equal(t, 3, flaky[2].Attempt)
	assert.True(t, mem.ByNode("soft").Terminal()[0].Recovered)

	// Retention keeps the last two runs.
	var ids []string
	for range 3 {
		res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
		require.NoError(t, err)
		ids = append(ids, res.RunID())
	}
	_, ok = m.Run(ids[0])
	assert.False(t, ok)
	_, ok = m.Run(ids[2])
	assert.True(t, ok)
	_, ok = m.Run("nope")
	assert.False(t, ok)
}

func TestMetricsOpenTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	m, err := interceptor.NewMetrics(interceptor.WithMeterProvider(mp))
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

// A recovery the error policy sends to a fallback node is a fallback taken: the run's
// metrics count it as flow.Result.Fallbacks does, and its FAILED record names the
// node, so the metrics computed from the records agree.
func TestMetricsCountGotoFallbacks(t *testing.T) {
	g, err := flow.LoadGraph("f.yml", []byte(`
id: f
layout:
  - {id: s, type: start}
  - {id: fail, task: 'raise("E2", "recoverable", true)', meta: {onError: {goto: fb, recover: true}}, link: e}
  - {id: fb, task: 'context.put("fb", 1)', link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	m, err := interceptor.NewMetrics()
	require.NoError(t, err)
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(m, 0), flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 1))
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, 1, res.Fallbacks)
	got, ok := m.Run(res.RunID())
	require.True(t, ok)
	assert.Equal(t, 1, got.Fallbacks)
	assert.Equal(t, 1, got.Recovered)
	failed := mem.ByNode("fail").Terminal()
	require.Len(t, failed, 1)
	assert.Equal(t, "fb", failed[0].Goto)
	fromRecs := mem.Metrics(res.RunID())
	assert.Equal(t, 1, fromRecs.Fallbacks)
}
