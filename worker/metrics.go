package worker

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// instruments are a worker's OpenTelemetry instruments.
type instruments struct {
	depth    metric.Int64Gauge
	claims   metric.Int64Counter
	reclaims metric.Int64Counter
	runDur   metric.Float64Histogram
	// deadLetters counts the entries moved to the dead letters.
	deadLetters metric.Int64Counter
}

func newInstruments(mp metric.MeterProvider) (*instruments, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	mt := mp.Meter("github.com/flowteam/flowteam/worker")
	var (
		in   instruments
		errs [5]error
	)
	in.depth, errs[0] = mt.Int64Gauge("flowteam.worker.queue.depth", metric.WithUnit("{entry}"),
		metric.WithDescription("Entries of the queue not acknowledged yet, as a worker last read it."))
	in.claims, errs[1] = mt.Int64Counter("flowteam.worker.claims", metric.WithUnit("{entry}"),
		metric.WithDescription("Queue entries a worker took to run."))
	in.reclaims, errs[2] = mt.Int64Counter("flowteam.worker.reclaims", metric.WithUnit("{entry}"),
		metric.WithDescription("Queue entries a worker took over from a worker whose lease expired."))
	in.runDur, errs[3] = mt.Float64Histogram("flowteam.worker.run.duration", metric.WithUnit("s"),
		metric.WithDescription("Wall time of the runs of queued instances, by outcome."))
	in.deadLetters, errs[4] = mt.Int64Counter("flowteam.worker.dead_letters", metric.WithUnit("{entry}"),
		metric.WithDescription("Queue entries moved to the dead letters after too many deliveries."))
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return &in, nil
}

func (in *instruments) run(ctx context.Context, queue, outcome string, d time.Duration) {
	in.runDur.Record(ctx, d.Seconds(), metric.WithAttributes(
		attribute.String("queue", queue), attribute.String("outcome", outcome)))
}
