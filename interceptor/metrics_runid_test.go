package interceptor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// Three evaluations given one run id (WithRunID: a request id reused by a retry) run
// at the same time: none may drop another's counts. The id names one run, as its
// audit records do: Run reports the sum of all, live and finished, and matches
// what the records give once all ended; the OpenTelemetry counters count each
// execution once.
func TestMetricsConcurrentRunsSharingRunID(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	var (
		mu     sync.Mutex
		handed []trace.Metrics
	)
	m, err := interceptor.NewMetrics(interceptor.WithMeterProvider(mp), interceptor.WithRunMetrics(func(x trace.Metrics) {
		mu.Lock()
		handed = append(handed, x)
		mu.Unlock()
	}))
	require.NoError(t, err)
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(m, 0), flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 1))

	// Each run blocks in "wait" until its instance's channel is closed.
	entered := make(chan string, 3)
	release := map[string]chan struct{}{"i1": make(chan struct{}), "i2": make(chan struct{}), "i3": make(chan struct{})}
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("wait")
	s.Activity("wait").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		entered <- c.InstanceID()
		<-release[c.InstanceID()]
		return nil
	}).LinkTo("e")
	s.End("e")
	g := build(t, s)

	var wg sync.WaitGroup
	ended := make(chan string, 3)
	for _, inst := range []string{"i1", "i2", "i3"} {
		wg.Go(func() {
			_, err := e.EvalGraph(context.Background(), g, flow.NewContext(inst), flow.WithRunID("same"))
			assert.NoError(t, err)
			ended <- inst
		})
	}
	for range 3 {
		<-entered
	}
	live, ok := m.Run("same")
	require.True(t, ok)
	assert.Equal(t, 6, live.Started, "every run's start and wait executions")
	assert.Equal(t, 3, live.Completed)

	close(release["i1"])
	require.Equal(t, "i1", <-ended)
	got, ok := m.Run("same")
	require.True(t, ok)
	assert.Equal(t, trace.Status(""), got.Status, "a run with that id is still in progress")
	assert.Equal(t, 7, got.Started)
	assert.Equal(t, 5, got.Completed)
	mu.Lock()
	require.Len(t, handed, 1)
	assert.Equal(t, trace.Status(""), handed[0].Status, "WithRunMetrics gets what Run reports")
	assert.Equal(t, 7, handed[0].Started)
	mu.Unlock()

	close(release["i3"])
	require.Equal(t, "i3", <-ended)
	got, ok = m.Run("same")
	require.True(t, ok)
	assert.Equal(t, 8, got.Started)
	assert.Equal(t, 7, got.Completed)

	close(release["i2"])
	wg.Wait()
	got, ok = m.Run("same")
	require.True(t, ok)
	assert.Equal(t, trace.Completed, got.Status)
	assert.Equal(t, 9, got.Started)
	assert.Equal(t, 9, got.Completed)
	fromRecs := mem.Metrics("same")
	got.Duration, fromRecs.Duration = 0, 0
	got.InstanceID, fromRecs.InstanceID = "", ""
	assert.Equal(t, fromRecs, got)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	sums := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			if s, ok := md.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range s.DataPoints {
					sums[md.Name] += dp.Value
				}
			}
		}
	}
	assert.Equal(t, int64(3), sums["flowteam.runs"])
	assert.Equal(t, int64(9), sums["flowteam.nodes"], "each execution counted once")
}

// A run resumed with its own run id (WithRunID) continues its metrics: Run adds the
// resumed evaluation's counts to those of the evaluation that suspended, as the
// audit's records of that id add up, and reports the last evaluation's outcome.
func TestMetricsResumedRunContinues(t *testing.T) {
	var ended []trace.Metrics
	m, err := interceptor.NewMetrics(interceptor.WithRunMetrics(func(x trace.Metrics) { ended = append(ended, x) }))
	require.NoError(t, err)
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(m, 0), flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 1))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("approve")
	s.Activity("approve").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("ok") != true {
			c.Suspend("waiting")
		}
		return nil
	}).LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc, flow.WithRunID("r1"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc, flow.WithRunID("r1"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)

	got, ok := m.Run("r1")
	require.True(t, ok)
	assert.Equal(t, trace.Completed, got.Status)
	assert.Equal(t, 4, got.Started, "s and approve, then approve again and e")
	assert.Equal(t, 1, got.Suspended)
	assert.Equal(t, 3, got.Completed)
	fromRecs := mem.Metrics("r1")
	got.Duration, fromRecs.Duration = 0, 0
	assert.Equal(t, fromRecs, got)
	require.Len(t, ended, 2)
	ended[1].Duration = 0
	assert.Equal(t, got, ended[1], "WithRunMetrics gets what Run reports")
}
