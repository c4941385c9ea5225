package worker

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
)

// process runs the instance of entry d and acknowledges the entry when the run
// halted, or when the instance cannot be run at all; it leaves the entry pending when
// the instance is held by a live owner or the store failed, for a worker to reclaim.
// An entry delivered more than the worker's maximum, or whose sealed updates the
// worker cannot open, goes to the dead letters instead.
func (w *Worker) process(ctx context.Context, d delivery) {
	m, reclaimed := d.XMessage, d.from != ""
	id, _ := m.Values["instance"].(string)
	if d.count > w.maxDel {
		// An entry whose instance runs under a fresh lease is a queued resume waiting
		// for that run, not a dead one: it is processed as usual (left pending).
		if snap, err := w.runner.Load(context.WithoutCancel(ctx), id); err != nil || !leased(snap) {
			w.deadLetter(ctx, d, snap, err, tooManyDeliveries(d))
			return
		}
	}
	updates, err := entryUpdates(m.Values, id, w.cipher)
	switch {
	case errors.Is(err, errBadUpdates):
		w.log.Error("worker: drop entry with bad updates", "entry", m.ID, "instance", id, "err", err)
		w.ack(ctx, m.ID)
		return
	case err != nil:
		// Running the instance without the updates would go on without what the
		// resume supplied; a retry by this worker would fail the same way.
		w.log.Error("worker: updates cannot be opened, entry goes to the dead letters", "entry", m.ID,
			"instance", id, "err", err)
		snap, lerr := w.runner.Load(context.WithoutCancel(ctx), id)
		w.deadLetter(ctx, d, snap, lerr, "its updates could not be opened ("+err.Error()+")")
		return
	}
	w.track(m.ID, d.count)
	defer w.untrack(m.ID)
	start := time.Now()
	res, red, err := w.resume(ctx, id, updates, reclaimed)
	outcome := w.settle(ctx, m.ID, id, len(updates) > 0, res, shown(red, updates, res, err))
	if outcome == "held" && d.count > 1 {
		// Left pending to wait for another run, not because a worker died: the
		// delivery it had does not count towards the dead letters (WithMaxDeliveries).
		// Untracked first, so that a heartbeat does not put the count back.
		w.untrack(m.ID)
		if err := w.q.touch(context.WithoutCancel(ctx), w.name, d.count-1, []string{m.ID}); err != nil {
			w.log.Warn("worker: reset delivery count", "entry", m.ID, "err", err)
		}
	}
	w.inst.run(ctx, outcome, time.Since(start))
}

// resume resumes instance id; a reclaimed entry whose instance's lease is still fresh
// (its owner renewed it a little after the entry) is tried again once it expires. It
// returns the Redactor WithRedaction gave the run (nil without it).
func (w *Worker) resume(ctx context.Context, id string, updates map[string]any, reclaimed bool) (*session.Result,
	*redact.Redactor, error) {
	var red *redact.Redactor
	opts := []session.ResumeOption{session.Recover(), session.WithEvalOptions(w.evalOpts...)}
	if w.redactor != nil {
		opts = append(opts, session.RedactorFor(func(snap *session.Snapshot) (*redact.Redactor, error) {
			r, err := w.redactor(snap)
			red = r
			return r, err
		}))
	}
	for {
		res, err := w.runner.Resume(ctx, id, updates, opts...)
		var held *session.LeaseHeldError
		if !reclaimed || !errors.As(err, &held) {
			return res, red, err
		}
		wait := time.Until(held.Lease.Expiry) + 10*time.Millisecond
		if wait > w.ttl {
			return res, red, err // renewed since: its owner is alive
		}
		select {
		case <-ctx.Done():
			return res, red, err
		case <-time.After(wait):
		}
		reclaimed = false // one more try
	}
}

// shownErr is the error of a run as the worker logs it: its text masked by the run's
// Redactor, which has learned the secret values of the run's variables. errors.Is
// and errors.As see through it (Unwrap).
type shownErr struct {
	err error
	red *redact.Redactor
}

// shown returns err as the worker logs it (see shownErr): masked by red, with the
// secret values of the updates and of the run's variables (res, if any).
func shown(red *redact.Redactor, updates map[string]any, res *session.Result, err error) error {
	if err == nil || red == nil {
		return err
	}
	red = red.ForVars(updates)
	if res != nil {
		red = red.ForVars(res.Context.Vars())
	}
	return shownErr{err: err, red: red}
}

func (e shownErr) Error() string { return e.red.String(e.err.Error()) }
func (e shownErr) Unwrap() error { return e.err }

// settle acknowledges, queues again or leaves the entry after a resume, and returns
// the outcome for the metrics. updates tells an entry that carries updates (a queued
// resume), which must not be dropped because another run of its instance was going
// on: left pending, it is resumed after that run.
func (w *Worker) settle(ctx context.Context, entry, id string, updates bool, res *session.Result, err error) string {
	ackCtx := context.WithoutCancel(ctx)
	var held *session.LeaseHeldError
	switch {
	case res != nil && errors.Is(err, session.ErrConflict):
		// The outcome could not be saved: another worker took the instance over (this
		// one stalled past its lease) and its entry with it; that worker acks it.
		w.log.Warn("worker: lost the instance to another worker", "instance", id, "err", err)
		return "lost"
	case errors.Is(context.Cause(ctx), errShutdown) &&
		(res == nil || errors.Is(err, context.Canceled) || errors.Is(err, errShutdown)):
		// Cut short by the shutdown: its outcome is saved; another worker goes on.
		w.requeue(ackCtx, entry, id)
		return "requeued"
	case res != nil:
		w.done.Add(1)
		w.halted(ackCtx, entry, id, res)
		return string(res.Status)
	case errors.As(err, &held), updates && errors.Is(err, session.ErrConflict) && !errors.Is(err, session.ErrCompleted):
		w.log.Info("worker: instance running elsewhere, entry left pending", "instance", id, "err", err)
		return "held"
	case errors.Is(err, session.ErrCompleted), errors.Is(err, session.ErrNotFound),
		errors.Is(err, session.ErrDefinitionChanged), errors.Is(err, session.ErrNoFrontier),
		errors.Is(err, session.ErrSealed), errors.Is(err, session.ErrInvalidID),
		errors.Is(err, session.ErrConflict):
		// Nothing to run, or nothing a retry would change (ErrConflict: another claim
		// won): drop the entry.
		w.log.Warn("worker: dropped entry", "instance", id, "err", err)
		w.ack(ackCtx, entry)
		return "dropped"
	default:
		w.log.Error("worker: resume failed, left pending", "instance", id, "err", err)
		return "error"
	}
}

// halted acknowledges the entry of a run that halted and, in the same transaction,
// schedules the wake-up of an instance that suspended until a time, or cancels that of
// one that did not (it went on before its time: the variable a WaitTask waited for
// came), so that it is not woken for nothing. If the transaction fails, the entry
// stays pending and a reclaim resumes the instance, whose suspended node schedules its
// wake-up again.
func (w *Worker) halted(ctx context.Context, entry, id string, res *session.Result) {
	at, wake := time.Time{}, false
	if res.Status == flow.StatusSuspended {
		at, wake = wakeAt(res.Context.Vars())
	}
	_, err := w.q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if wake {
			p.ZAdd(ctx, w.q.wake, redis.Z{Score: float64(at.UnixMilli()), Member: id})
		} else {
			p.ZRem(ctx, w.q.wake, id)
		}
		p.XAck(ctx, w.q.stream, group, entry)
		p.XDel(ctx, w.q.stream, entry)
		return nil
	})
	if err != nil {
		w.log.Error("worker: ack", "entry", entry, "instance", id, "err", err)
	}
}

// ack acknowledges and deletes an entry, so that the stream's length is the queue's
// depth.
func (w *Worker) ack(ctx context.Context, entry string) {
	_, err := w.q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAck(ctx, w.q.stream, group, entry)
		p.XDel(ctx, w.q.stream, entry)
		return nil
	})
	if err != nil {
		w.log.Error("worker: ack", "entry", entry, "err", err)
	}
}

// requeue queues the instance of entry again and acknowledges the entry, atomically.
func (w *Worker) requeue(ctx context.Context, entry, id string) {
	_, err := w.q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: w.q.stream, Values: map[string]any{"instance": id}})
		p.XAck(ctx, w.q.stream, group, entry)
		p.XDel(ctx, w.q.stream, entry)
		return nil
	})
	if err != nil {
		w.log.Error("worker: requeue", "entry", entry, "err", err)
	}
}

func (w *Worker) track(entry string, deliveries int64) {
	w.mu.Lock()
	w.running[entry] = deliveries
	w.mu.Unlock()
}

func (w *Worker) untrack(entry string) {
	w.mu.Lock()
	delete(w.running, entry)
	w.mu.Unlock()
}

// heartbeat, every renew period until ctx is done: keeps the entries of the runs in
// progress from looking idle (XCLAIM to itself resets their idle time, so a reclaim
// leaves them alone), publishes the worker's Info, queues the due wake-ups and
// records the queue's depth.
func (w *Worker) heartbeat(ctx context.Context) {
	t := time.NewTicker(w.renew)
	defer t.Stop()
	for {
		w.beat(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *Worker) beat(ctx context.Context) {
	w.mu.Lock()
	running := len(w.running)
	byCount := map[int64][]string{}
	for e, n := range w.running {
		byCount[n] = append(byCount[n], e)
	}
	w.mu.Unlock()
	for n, entries := range byCount {
		if err := w.q.touch(ctx, w.name, n, entries); err != nil && ctx.Err() == nil {
			w.log.Warn("worker: renew entries", "worker", w.name, "err", err)
		}
	}
	now := time.Now()
	info := Info{Name: w.name, Host: w.host, PID: os.Getpid(), Running: running, Done: w.done.Load(),
		Concurrency: w.conc, Started: w.started, Heartbeat: now, Expires: now.Add(w.ttl)}
	if err := w.q.publish(ctx, info); err != nil && ctx.Err() == nil {
		w.log.Warn("worker: heartbeat", "worker", w.name, "err", err)
	}
	if _, err := w.q.WakeDue(ctx, now); err != nil && ctx.Err() == nil {
		w.log.Warn("worker: wake-ups", "worker", w.name, "err", err)
	}
	// The depth alone (Stats.Depth), not the five other reads of Stats.
	if depth, err := w.q.rdb.XLen(ctx, w.q.stream).Result(); err == nil {
		w.inst.depth.Record(ctx, depth, w.inst.ofQueue)
	}
	w.q.pruneConsumers(ctx, 10*w.ttl)
}
