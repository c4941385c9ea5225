// The batches of an audited run: its records in the forms the sinks take, their times,
// and how they are written.

package interceptor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flowteam/flowteam/trace"
)

// runBufs are the pooled buffers of a run: two batches (one filled while the other
// is written) and the JSON encoders.
type runBufs struct {
	batches [2]batch
	enc     trace.Encoder // encodes records as they are added (under the run's mu)
	times   trace.Encoder // writes their times when the batch is written (under flushMu)
}

// batch holds records of a run not yet written, in the forms the sinks take (lines
// and times hold no pointers: no GC write barriers).
type batch struct {
	recs  []trace.Record // for the sinks that take records (Audit.records)
	lines []byte         // the same records as JSON lines, for the JSONL sinks (Audit.lines)
	times []stamp        // per record, in seq order
}

// stamp is the time of a record in a batch, as an offset from the run's start.
type stamp struct {
	at  time.Duration
	pos int // offset of the record's time in lines; -1 when it is already written
	// pending marks a STARTED record whose time comes with the node's end.
	pending bool
}

// flush writes the buffered records, then, when sync is set, syncs the sinks that can
// be if a batch of the run was written since their last sync (by this flush or by
// another, which may have written this one's records): branches ending together share
// a sync. Writes of one run are serialized so batches reach the sinks in sequence
// order; records keep being added to the other batch meanwhile.
func (ar *auditRun) flush(ctx context.Context, sync bool) {
	ar.flushMu.Lock()
	defer ar.flushMu.Unlock()
	ar.writeCur(ctx)
	if !sync || ar.syncedGen == ar.gen { // gen changes only under flushMu
		return
	}
	if err := ar.a.syncSinks(); err != nil {
		if ar.err == nil {
			ar.err = err
		}
		return // the next sync tries again
	}
	ar.syncedGen = ar.gen
}

// writeCur writes the current batch, if it holds records. The caller holds flushMu.
func (ar *auditRun) writeCur(ctx context.Context) {
	ar.mu.Lock()
	b := ar.cur
	if b == nil || len(b.times) == 0 { // nothing new, or the run's buffers were released
		ar.mu.Unlock()
		return
	}
	ar.cur, ar.spare = ar.spare, nil
	ar.gen++ // the records of b are no longer for addEnd to touch
	ar.mu.Unlock()
	ar.stamp(b)
	if err := ar.a.writeBatch(ctx, b); err != nil && ar.err == nil {
		ar.err = err
	}
	clear(b.recs) // drop references to error messages and attributes
	b.recs, b.lines, b.times = b.recs[:0], b.lines[:0], b.times[:0]
	ar.mu.Lock()
	ar.spare = b
	ar.mu.Unlock()
}

// flushEvery writes the run's records every d until the returned function is called;
// that function returns once the goroutine has ended.
func (ar *auditRun) flushEvery(ctx context.Context, d time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				ar.flush(ctx, false)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// syncer is a sink whose writes can be flushed to stable storage (JSONL).
type syncer interface{ Sync() error }

// syncSinks syncs every sink that can be, counting failures as sink failures.
func (a *Audit) syncSinks() error {
	var errs []error
	for i, s := range a.cfg.sinks {
		if sy, ok := s.(syncer); ok {
			if err := sy.Sync(); err != nil {
				errs = append(errs, a.failed(i, s, err))
			}
		}
	}
	return errors.Join(errs...)
}

// stamp puts the times into the batch's records, in seq order and never going back
// (branches end concurrently). A STARTED record still pending (a mid-run batch) gets
// the current time. The caller holds flushMu.
func (ar *auditRun) stamp(b *batch) {
	now := time.Duration(-1)
	warned := false
	flushed := ar.flushed
	for i := range b.times {
		s := &b.times[i]
		at := s.at
		if s.pending {
			if now < 0 {
				now = ar.elapsed()
			}
			at = now
		}
		at = max(at, flushed)
		flushed = at
		if s.pos < 0 && len(b.recs) == 0 {
			continue
		}
		if s.pos >= 0 && !ar.bufs.times.PutUnix(b.lines[s.pos:], ar.beganSec, ar.beganNs+int64(at)) && !warned {
			// Out of the fixed-width years (a wrong system clock): the placeholder stays.
			ar.a.cfg.logger.Warn("flow audit: record time out of range", "run", ar.runID, "time", ar.began.Add(at))
			warned = true
		}
		if len(b.recs) > 0 {
			b.recs[i].Time = ar.began.Add(at)
		}
	}
	ar.flushed = flushed
}

// writeBatch gives a batch to every sink: JSON lines to a JSONL, records to the
// others, with a context that is not cancelled with a failed run.
func (a *Audit) writeBatch(ctx context.Context, b *batch) error {
	ctx = context.WithoutCancel(ctx)
	var errs []error
	for i, s := range a.cfg.sinks {
		var err error
		if j, ok := s.(*JSONL); ok {
			err = j.writeLines(b.lines)
		} else {
			err = callSink(ctx, s, b.recs)
		}
		if err != nil {
			errs = append(errs, a.failed(i, s, err))
		}
	}
	return errors.Join(errs...)
}

// callSink calls s.Write, turning a panic into an error: a sink that panics is a
// failing sink, which must neither crash the run nor lose the other sinks' records.
func callSink(ctx context.Context, s Sink, recs []trace.Record) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sink panicked: %v", p)
		}
	}()
	return s.Write(ctx, recs)
}

// failed counts a sink failure and logs the first one of each sink.
func (a *Audit) failed(i int, s Sink, err error) error {
	a.failures.Add(1)
	if a.reported[i].CompareAndSwap(false, true) {
		a.cfg.logger.Error("flow audit: sink failed; its later failures are counted, not logged",
			"sink", fmt.Sprintf("%T", s), "index", i, "error", err)
	}
	return err
}

// write gives records to every sink (see writeBatch).
func (a *Audit) write(ctx context.Context, recs []trace.Record) error {
	ctx = context.WithoutCancel(ctx)
	var errs []error
	for i, s := range a.cfg.sinks {
		if err := callSink(ctx, s, recs); err != nil {
			errs = append(errs, a.failed(i, s, err))
		}
	}
	return errors.Join(errs...)
}

// Bounds on the buffers kept for reuse, so one huge run does not pin its memory.
const (
	maxPooledRecords = 1 << 14
	maxPooledLines   = 1 << 20
)

func (a *Audit) getBufs() *runBufs {
	if p, ok := a.bufs.Get().(*runBufs); ok {
		return p
	}
	return &runBufs{}
}

func (a *Audit) putBufs(p *runBufs) {
	for i := range p.batches {
		b := &p.batches[i]
		if cap(b.recs) > maxPooledRecords || cap(b.lines) > maxPooledLines {
			return
		}
		clear(b.recs)
		b.recs, b.lines, b.times = b.recs[:0], b.lines[:0], b.times[:0]
	}
	a.bufs.Put(p)
}
