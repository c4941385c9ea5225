package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/worker"
)

// meterReader returns a meter provider and a func that collects its measurements by
// instrument name: the sum of a counter, the count of a histogram, the last value of a
// gauge. Every measurement must carry attribute queue with the value queue.
func meterReader(t *testing.T, queue string) (*sdkmetric.MeterProvider, func() map[string]int64) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	ofQueue := func(name string, attrs attribute.Set) {
		v, _ := attrs.Value("queue")
		assert.Equal(t, queue, v.AsString(), "%s: attribute queue", name)
	}
	return mp, func() map[string]int64 {
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(context.Background(), &rm))
		got := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Sum[int64]:
					for _, p := range d.DataPoints {
						ofQueue(m.Name, p.Attributes)
						got[m.Name] += p.Value
					}
				case metricdata.Gauge[int64]:
					for _, p := range d.DataPoints {
						ofQueue(m.Name, p.Attributes)
						got[m.Name] = p.Value
					}
				case metricdata.Histogram[float64]:
					for _, p := range d.DataPoints {
						ofQueue(m.Name, p.Attributes)
						got[m.Name] += int64(p.Count)
					}
				}
			}
		}
		return got
	}
}

func TestWorkerMetrics(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store, worker.WithName("orders"))
	eng := chainEngine(func() {})
	for i := range 5 {
		require.NoError(t, q.Submit(context.Background(), eng, "chain", fmt.Sprintf("m-%d", i), nil))
	}
	mp, collect := meterReader(t, "orders")
	_, stop := startWorker(t, q, eng, worker.WithMeterProvider(mp))
	waitCompleted(t, store, 5, 20*time.Second)
	require.NoError(t, stop())
	got := collect()
	assert.Equal(t, int64(5), got["flowteam.worker.claims"])
	assert.Equal(t, int64(5), got["flowteam.worker.run.duration"])
	assert.Zero(t, got["flowteam.worker.reclaims"])
	assert.Contains(t, got, "flowteam.worker.queue.depth")
}
