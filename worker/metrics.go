package worker

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// instruments are a worker's OpenTelemetry instruments. Every measurement carries
// the queue's name (attribute "queue"), so that the workers of several queues in one
// process, sharing a meter provider, are told apart.
type instruments struct {
	depth       metric.Int64Gauge
	claims      metric.Int64Counter
	reclaims    metric.Int64Counter
	deadLetters metric.Int64Counter
	runDur      metric.Float64Histogram
	queue       attribute.KeyValue
	ofQueue     metric.MeasurementOption // attribute queue alone, made once
}

func newInstruments(mp metric.MeterProvider, queue string) (*instruments, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	mt := mp.Meter("github.com/flowteam/flowteam/worker")
	in := instruments{queue: attribute.String("queue", queue)}
	in.ofQueue = metric.WithAttributes(in.queue)
	var errs [5]error
	in.depth, errs[0] = mt.Int64Gauge("flowteam.worker.queue.depth", metric.WithUnit("{entry}"),
		metric.WithDescription("Entries of the queue not acknowledged yet, as a worker last read it."))
	in.claims, errs[1] = mt.Int64Counter("flowteam.worker.claims", metric.WithUnit("{entry}"),
		metric.WithDescription("Queue entries a worker took to run."))
	in.reclaims, errs[2] = mt.Int64Counter("flowteam.worker.reclaims", metric.WithUnit("{entry}"),
		metric.WithDescription("Queue entries a worker took over from a worker whose lease expired."))
	in.runDur, errs[3] = mt.Float64Histogram("flowteam.worker.run.duration", metric.WithUnit("s"),
		metric.WithDescription("Wall time of the runs of queued instances, by outcome."))
	in.deadLetters, errs[4] = mt.Int64Counter("flowteam.worker.dead_letters", metric.WithUnit("{entry}"),
		metric.WithDescription("Queue entries moved to the dead letters: delivered too many times, "+
			"or with updates the worker could not open."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return &in, nil
}

func (in *instruments) run(ctx context.Context, outcome string, d time.Duration) {
	in.runDur.Record(ctx, d.Seconds(), metric.WithAttributes(in.queue, attribute.String("outcome", outcome)))
}
