package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
)

// Worker runs the instances of a Queue, at most Concurrency at once, each with
// per-node checkpoints and an owner lease its Runner renews. It is one consumer of the
// queue's consumer group: start one per process (or several, with other names).
type Worker struct {
	q        *Queue
	runner   *session.Runner
	name     string
	host     string
	conc     int
	renew    time.Duration
	ttl      time.Duration
	grace    time.Duration
	maxDel   int64
	log      *slog.Logger
	meter    metric.MeterProvider
	inst     *instruments
	runOpts  []session.Option
	evalOpts []flow.EvalOption
	redactor func(*session.Snapshot) (*redact.Redactor, error)
	cipher   *session.Cipher

	mu      sync.Mutex
	running map[string]int64 // stream entry id -> its delivery count
	done    atomic.Int64
	started time.Time
	cursor  string // where the next reclaim reads the pending entries from
}

// Option configures a Worker.
type Option func(*Worker)

// WithConcurrency sets the most runs the worker has at once (default 4, at least 1).
func WithConcurrency(n int) Option { return func(w *Worker) { w.conc = max(n, 1) } }

// WithWorkerName names the worker's consumer (default host-pid). Names must be unique
// among the live workers of a queue.
func WithWorkerName(name string) Option { return func(w *Worker) { w.name = name } }

// WithLease sets how often the worker renews the leases of its runs and its heartbeat
// (renew, default session.DefaultLeaseRenew) and how long each renewal lasts (ttl,
// default session.DefaultLeaseTTL): a dead worker's runs are taken over by another
// once ttl has passed.
func WithLease(renew, ttl time.Duration) Option {
	return func(w *Worker) { w.renew, w.ttl = renew, ttl }
}

// WithGrace sets how long the runs in progress may go on once Run's context is done
// (default 10s); then they are cancelled, saved where they are and queued again.
func WithGrace(d time.Duration) Option { return func(w *Worker) { w.grace = d } }

// WithLogger sets the worker's logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(w *Worker) { w.log = l } }

// WithMeterProvider sets the OpenTelemetry meter provider (default the global one).
// Every measurement of the worker carries the queue's name as attribute "queue".
func WithMeterProvider(mp metric.MeterProvider) Option { return func(w *Worker) { w.meter = mp } }

// WithRunnerOptions configures the session.Runner of the worker's runs (redaction,
// cipher, sources). The worker adds session.WithDurability(session.PerNode) and its
// lease timing.
func WithRunnerOptions(opts ...session.Option) Option {
	return func(w *Worker) { w.runOpts = append(w.runOpts, opts...) }
}

// WithCipher gives the worker the key of the instances and of the queued updates:
// its runs open and seal the snapshots with c (as WithRunnerOptions with
// session.WithCipher(c)), and it opens the updates an entry carries sealed
// (WithSealedUpdates). An entry whose sealed updates the worker cannot open (it has
// no cipher, or another key) is not run without them: the worker logs why and moves
// it to the dead letters at once, sealed updates and all.
func WithCipher(c *session.Cipher) Option {
	return func(w *Worker) {
		w.cipher = c
		w.runOpts = append(w.runOpts, session.WithCipher(c))
	}
}

// WithRedaction gives the Redactor of each run from its instance's stored snapshot
// (session.RedactorFor): the rules the instance records, such as those Submit
// recorded with WithMeta, plus the worker's own. The run's saves (the claim, every
// checkpoint, the outcome) are masked with it in place of the Redactor of
// WithRunnerOptions, and so are the error messages the worker logs about the run, so
// that a secret given at Submit does not reach Redis or the logs in clear, whichever
// worker runs the instance. fn may return nil: the saves are then those of
// WithRunnerOptions. An error from fn (a rule the instance records that is bad) runs
// nothing: the entry is left pending, and a reclaim tries again until it goes to the
// dead letters (WithMaxDeliveries).
//
// Masked variables are not restored (session.WithRedactor): a run has a masked
// variable only when the entry's updates (Enqueue) supply it again.
func WithRedaction(fn func(*session.Snapshot) (*redact.Redactor, error)) Option {
	return func(w *Worker) { w.redactor = fn }
}

// WithEvalOptions passes options to every run (interceptors, step limit).
func WithEvalOptions(opts ...flow.EvalOption) Option {
	return func(w *Worker) { w.evalOpts = append(w.evalOpts, opts...) }
}

// New returns a worker of q that runs the graphs registered in eng.
func New(q *Queue, eng *flow.Engine, opts ...Option) (*Worker, error) {
	host, _ := os.Hostname()
	w := &Worker{q: q, host: host, conc: 4, renew: session.DefaultLeaseRenew, ttl: session.DefaultLeaseTTL,
		grace: 10 * time.Second, maxDel: DefaultMaxDeliveries, log: slog.Default(), running: map[string]int64{},
		cursor: "0-0"}
	w.name = fmt.Sprintf("%s-%d", host, os.Getpid())
	for _, o := range opts {
		o(w)
	}
	if w.renew <= 0 || w.ttl <= w.renew {
		return nil, fmt.Errorf("worker: lease renew %v and ttl %v: want 0 < renew < ttl", w.renew, w.ttl)
	}
	inst, err := newInstruments(w.meter, q.name)
	if err != nil {
		return nil, fmt.Errorf("worker: metrics: %w", err)
	}
	w.inst = inst
	ropts := append(append([]session.Option{}, w.runOpts...),
		session.WithDurability(session.PerNode), session.WithLease(w.renew, w.ttl))
	w.runner = session.NewRunner(eng, q.store, ropts...)
	return w, nil
}

// Name returns the worker's consumer name.
func (w *Worker) Name() string { return w.name }

// errShutdown is the cause of the cancellation of the runs still going on when the
// grace period after shutdown ended.
var errShutdown = errors.New("worker shutting down")

// Run consumes the queue until ctx is done, then stops taking work, lets the runs in
// progress go on for the grace period, cancels the rest (each is saved at its last
// checkpoint and queued again) and returns nil once every run has ended. It returns
// an error at once if the queue's consumer group cannot be created (Redis
// unreachable); later read errors are logged and the reads retried. Run a Worker
// once: for more consumers in one process, make more Workers with other names.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.q.ensureGroup(ctx); err != nil {
		return err
	}
	w.started = time.Now()
	runCtx, cancelRuns := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelRuns(nil)
	beatCtx, stopBeat := context.WithCancel(context.WithoutCancel(ctx))
	beatDone := make(chan struct{})
	go func() { defer close(beatDone); w.heartbeat(beatCtx) }()

	var wg sync.WaitGroup
	w.consume(ctx, runCtx, &wg)

	grace := time.AfterFunc(w.grace, func() { cancelRuns(errShutdown) })
	wg.Wait()
	grace.Stop()
	stopBeat()
	<-beatDone
	w.q.leaveGroup(context.WithoutCancel(ctx), w.name)
	if uerr := w.q.unpublish(context.WithoutCancel(ctx), w.name); uerr != nil {
		w.log.Warn("worker: leave registry", "worker", w.name, "err", uerr)
	}
	return nil
}

// consume takes entries while ctx lasts, starting a run for each on runCtx.
func (w *Worker) consume(ctx, runCtx context.Context, wg *sync.WaitGroup) {
	slots := make(chan struct{}, w.conc)
	lastReclaim := time.Time{}
	// Reads block for at most this long, so that a shutdown is seen soon; they are not
	// cancelled by ctx, which would lose entries Redis delivered to an aborted read.
	block := min(time.Second, w.renew)
	readCtx := context.WithoutCancel(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case slots <- struct{}{}:
		}
		free := 1
		for free < w.conc && len(slots) < cap(slots) {
			slots <- struct{}{}
			free++
		}
		var msgs []delivery
		if time.Since(lastReclaim) >= w.renew {
			lastReclaim = time.Now()
			msgs = w.reclaim(readCtx, free)
		}
		if len(msgs) < free && ctx.Err() == nil {
			got, err := w.read(readCtx, free-len(msgs), block)
			if err != nil {
				// Redis restarting or a network blip: keep the runs going and try
				// again after a while, rather than leaving the queue for good.
				w.log.Warn("worker: read queue", "worker", w.name, "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(w.renew):
				}
			}
			msgs = append(msgs, got...)
		}
		for i := len(msgs); i < free; i++ {
			<-slots
		}
		for _, d := range msgs {
			wg.Add(1)
			go func() {
				defer func() { <-slots; wg.Done() }()
				w.process(runCtx, d)
			}()
		}
	}
}

// delivery is a queue entry this worker took, with the number of times the consumer
// group delivered it (this time included) and the consumer it took it over from (""
// for a new entry).
type delivery struct {
	redis.XMessage
	count int64
	from  string
}

// read takes up to n new entries, waiting up to block for one.
func (w *Worker) read(ctx context.Context, n int, block time.Duration) ([]delivery, error) {
	res, err := w.q.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: w.name,
		Streams: []string{w.q.stream, ">"}, Count: int64(n), Block: block}).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case isNoGroup(err):
		// The stream was deleted under us (a flushed database): make it again.
		return nil, w.q.ensureGroup(ctx)
	case err != nil:
		return nil, fmt.Errorf("worker: read queue: %w", err)
	}
	var ds []delivery
	for _, s := range res {
		for _, m := range s.Messages {
			ds = append(ds, delivery{XMessage: m, count: 1})
		}
	}
	w.inst.claims.Add(ctx, int64(len(ds)), w.inst.ofQueue)
	return ds, nil
}

// reclaim takes over up to n entries idle for longer than the lease: their worker
// stopped renewing them (it died or hangs). It is XAUTOCLAIM in two steps, XPENDING
// then XCLAIM, to learn each entry's delivery count and last consumer, which a dead
// letter records; XCLAIM's minimum idle time lets one of several workers claim an
// entry. Errors are logged: reading goes on.
func (w *Worker) reclaim(ctx context.Context, n int) []delivery {
	pend, err := w.q.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: w.q.stream, Group: group,
		Idle: w.ttl, Start: w.cursor, End: "+", Count: int64(n)}).Result()
	if err != nil {
		if !isNoGroup(err) {
			w.log.Warn("worker: reclaim", "worker", w.name, "err", err)
		}
		return nil
	}
	if len(pend) < n {
		w.cursor = "0-0" // the end: start again from the oldest next time
	} else {
		w.cursor = nextID(pend[len(pend)-1].ID)
	}
	if len(pend) == 0 {
		return nil
	}
	ids := make([]string, len(pend))
	for i, p := range pend {
		ids[i] = p.ID
	}
	msgs, err := w.q.rdb.XClaim(ctx, &redis.XClaimArgs{Stream: w.q.stream, Group: group, Consumer: w.name,
		MinIdle: w.ttl, Messages: ids}).Result()
	if err != nil {
		w.log.Warn("worker: reclaim", "worker", w.name, "err", err)
		return nil
	}
	var ds []delivery
	for _, m := range msgs {
		if i := slices.IndexFunc(pend, func(p redis.XPendingExt) bool { return p.ID == m.ID }); i >= 0 && m.Values != nil {
			// XCLAIM counted this delivery.
			ds = append(ds, delivery{XMessage: m, count: pend[i].RetryCount + 1, from: pend[i].Consumer})
		}
	}
	if len(ds) > 0 {
		w.inst.reclaims.Add(ctx, int64(len(ds)), w.inst.ofQueue)
		w.log.Info("worker: reclaimed entries idle for longer than the lease", "worker", w.name, "entries", len(ds))
	}
	return ds
}

// nextID returns the stream id that follows id ("ms-seq"), the start of the next
// range after one that ended at id.
func nextID(id string) string {
	ms, seq, _ := strings.Cut(id, "-")
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return "0-0"
	}
	return ms + "-" + strconv.FormatUint(n+1, 10)
}
