package interceptor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// Audit is a flow.Interceptor that writes the audit log of every run it observes: a
// run STARTED record, a STARTED and a terminal record per node execution, and a
// terminal run record (see trace.Record), redacted, to its sinks.
//
// Records are numbered per run and buffered per run; they are written when the root
// graph's evaluation ends (InterceptFlow returns), or earlier in batches of
// WithBatchSize for long runs. A failing sink does not fail the run unless WithStrict
// is set: the first failure of each sink is logged, every failure is counted
// (Failures).
//
// Register it engine-wide with flow.WithInterceptor(a, index) or per evaluation with
// flow.WithEvalInterceptor(a, index). It is safe for concurrent runs.
type Audit struct {
	cfg      config
	failures atomic.Int64
	reported []atomic.Bool // per sink: its first failure was logged
	bufs     sync.Pool     // *[]trace.Record
}

var _ flow.Interceptor = (*Audit)(nil)

// NewAudit returns an audit interceptor. Options: WithSink (one or more), WithRedactor
// or WithRedactKeys, WithStrict, WithLogger, WithBatchSize, WithAgentName, WithAttrs,
// WithClock.
func NewAudit(opts ...Option) *Audit {
	a := &Audit{cfg: newConfig(opts)}
	a.reported = make([]atomic.Bool, len(a.cfg.sinks))
	return a
}

// Failures returns how many sink writes failed since the audit was created.
func (a *Audit) Failures() int64 { return a.failures.Load() }

// auditKey finds a run's state in the context; it holds the Audit so that two audits
// in one chain do not see each other's runs.
type auditKey struct{ a *Audit }

// auditRun is the state of one run in progress.
type auditRun struct {
	a        *Audit
	instance string
	runID    string
	path     string // root call path
	began    time.Time

	mu     sync.Mutex
	seq    int64
	last   time.Time // time of the last record, so times never go back in seq order
	recs   []trace.Record
	spare  []trace.Record
	open   []openExec // node executions started and not ended
	closed bool

	flushMu sync.Mutex // one write of this run at a time, in order
	err     error      // first sink error, for WithStrict

}

// openExec is a node execution in progress. A branch view runs one node at a time, so
// (view, node) identifies it; runs rarely have more than a few in progress, so a slice
// scanned from the end beats a map.
type openExec struct {
	c     *flow.Context
	n     *flow.Node
	start time.Time
}

// InterceptFlow writes the run records around the root graph's evaluation and
// flushes the run's records when it ends. Sub-graph evaluations pass through.
func (a *Audit) InterceptFlow(ctx context.Context, inv *flow.Invocation) (err error) {
	if inv.Node != nil {
		return inv.Invoke(ctx)
	}
	ar := &auditRun{a: a, instance: inv.Context.InstanceID(), runID: inv.RunID, path: inv.Path}
	ar.recs = a.getBuf()
	ar.began = a.cfg.clock()
	ar.mu.Lock()
	ar.append(&trace.Record{Status: trace.Started, GraphID: inv.Graph.ID, Path: inv.Path, Title: inv.Graph.Title, Resumed: inv.Resumed}, ar.began)
	ar.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			// A panic in the chain (an interceptor hook) must not lose the run's records.
			_ = ar.finish(ctx, inv, fmt.Errorf("panic: %v", p))
			panic(p)
		}
	}()
	err = inv.Invoke(context.WithValue(ctx, auditKey{a}, ar))
	ferr := ar.finish(ctx, inv, err)
	if err != nil {
		return err
	}
	if ferr != nil && a.cfg.strict {
		return fmt.Errorf("audit: %w", ferr)
	}
	return nil
}

// finish writes the terminal run record and flushes the run. Node executions the
// engine never ended (a panic escaping the engine) get a FAILED record first, so the
// audit stays complete even then.
func (ar *auditRun) finish(ctx context.Context, inv *flow.Invocation, invokeErr error) error {
	a := ar.a
	ar.mu.Lock()
	open := slices.Clone(ar.open)
	ar.mu.Unlock()
	for _, o := range open {
		msg := "the engine did not report how the node ended"
		if invokeErr != nil {
			msg += ": " + invokeErr.Error()
		}
		rec := trace.Record{Status: trace.Failed, Path: o.c.CallPath(), NodeID: o.n.ID, NodeType: o.n.Type.String(),
			Title: o.n.Title, BranchID: o.c.BranchID(), Agent: a.cfg.agentOf(o.c, o.n),
			Error: &trace.ErrorInfo{Type: flow.ErrorTypeFlow, Code: "node_end_missing", Message: a.cfg.redact.String(msg)}}
		if g := o.n.Graph(); g != nil {
			rec.GraphID = g.ID
		}
		ar.mu.Lock()
		if _, open := ar.close(o.c, o.n, 0); open && !ar.closed {
			ar.append(&rec, ar.now()) // unless it ended meanwhile: one terminal record
		}
		ar.mu.Unlock()
		a.cfg.logger.Warn("flow audit: a node execution had no end; recorded it as FAILED",
			"run", ar.runID, "node", rec.Qualified(), "branch", rec.BranchID)
	}
	st, reason, info := runOutcome(inv, invokeErr, a.cfg.redact)
	rec := trace.Record{Status: st, GraphID: inv.Graph.ID, Path: inv.Path, Title: inv.Graph.Title, Resumed: inv.Resumed,
		Error: info, Reason: reason}
	ar.mu.Lock()
	if !ar.closed {
		now := ar.now()
		rec.Duration = now.Sub(ar.began)
		ar.append(&rec, now)
		ar.closed = true
	}
	ar.mu.Unlock()
	ar.flush(ctx)
	ar.flushMu.Lock()
	defer ar.flushMu.Unlock()
	ar.mu.Lock()
	a.putBuf(ar.recs)
	a.putBuf(ar.spare)
	ar.recs, ar.spare, ar.open = nil, nil, nil
	ar.mu.Unlock()
	return ar.err
}

// OnNodeStart records a STARTED record.
func (a *Audit) OnNodeStart(ctx context.Context, c *flow.Context, n *flow.Node) {
	agent := a.cfg.agentOf(c, n)
	var attrs map[string]any
	if a.cfg.attrs != nil {
		attrs = a.cfg.redact.Map(a.cfg.attrs(c, n, nil))
	}
	if ar, ok := ctx.Value(auditKey{a}).(*auditRun); ok && ar.addStart(ctx, c, n, agent, attrs) {
		return
	}
	rec := trace.Record{Status: trace.Started}
	fillNode(&rec, c, n, agent)
	rec.Attrs = attrs
	a.orphan(ctx, c, &rec)
}

// fillNode sets the fields that say which node execution a record is about.
func fillNode(r *trace.Record, c *flow.Context, n *flow.Node, agent string) {
	r.Path, r.NodeID, r.NodeType, r.Title, r.BranchID, r.Agent = c.CallPath(), n.ID, n.Type.String(), n.Title, c.BranchID(), agent
	if g := n.Graph(); g != nil {
		r.GraphID = g.ID
	}
}

// OnNodeEnd records the terminal record of the node execution.
func (a *Audit) OnNodeEnd(ctx context.Context, c *flow.Context, n *flow.Node, end flow.NodeEnd) {
	x := endExtra{agent: a.cfg.agentOf(c, n)}
	switch end.Status {
	case trace.Failed:
		x.err = errorInfo(end.Err, a.cfg.redact)
	case trace.Suspended:
		x.reason = a.cfg.redact.String(end.Reason)
	}
	if a.cfg.attrs != nil {
		e := end
		x.attrs = a.cfg.redact.Map(a.cfg.attrs(c, n, &e))
	}
	if ar, ok := ctx.Value(auditKey{a}).(*auditRun); ok && ar.addEnd(ctx, c, n, &end, &x) {
		return
	}
	var rec trace.Record
	fillEnd(&rec, c, n, &end, &x)
	a.orphan(ctx, c, &rec)
}

// endExtra holds what a terminal record carries besides the engine's NodeEnd, worked
// out before the run's lock is taken.
type endExtra struct {
	agent  string
	err    *trace.ErrorInfo
	reason string
	attrs  map[string]any
}

// fillEnd sets the fields of a terminal node record but its number and time.
func fillEnd(r *trace.Record, c *flow.Context, n *flow.Node, end *flow.NodeEnd, x *endExtra) {
	r.Status = end.Status
	fillNode(r, c, n, x.agent)
	r.Step, r.Duration, r.Arrivals, r.Retrying, r.Recovered = end.Step, end.Duration, end.Arrivals, end.Retrying, end.Recovered
	if end.Attempt > 1 {
		r.Attempt = end.Attempt
	}
	r.Error, r.Reason, r.Attrs = x.err, x.reason, x.attrs
}

// orphan writes a node record alone, when its run is unknown (an interceptor earlier
// in the chain replaced the context) or already over.
func (a *Audit) orphan(ctx context.Context, c *flow.Context, rec *trace.Record) {
	rec.Time, rec.InstanceID, rec.RunID = a.cfg.clock(), c.InstanceID(), c.RunID()
	_ = a.write(ctx, []trace.Record{*rec})
}

// now returns the time of a new record: the run's start plus the monotonic time since
// (one clock read), never before the previous record's. The caller holds mu.
func (ar *auditRun) now() time.Time {
	t := ar.a.cfg.since(ar.began)
	if t.Before(ar.last) {
		t = ar.last
	}
	return t
}

// append numbers rec, stamps it with t and appends it to the buffer. The caller holds
// mu.
func (ar *auditRun) append(rec *trace.Record, t time.Time) {
	r := ar.next(t)
	seq := r.Seq
	*r = *rec
	r.Seq, r.Time, r.InstanceID, r.RunID = seq, t, ar.instance, ar.runID
}

// next numbers and stamps a new record at the end of the buffer and returns it, for
// the caller to fill in place (which saves building a record and copying it). The
// buffer's unused capacity is always zeroed (flush clears what it wrote), so the
// record starts out empty. The caller holds mu.
func (ar *auditRun) next(t time.Time) *trace.Record {
	ar.seq++
	ar.last = t
	if len(ar.recs) == cap(ar.recs) {
		ar.recs = append(ar.recs, trace.Record{})
	} else {
		ar.recs = ar.recs[:len(ar.recs)+1]
	}
	r := &ar.recs[len(ar.recs)-1]
	r.Seq, r.Time, r.InstanceID, r.RunID = ar.seq, t, ar.instance, ar.runID
	return r
}

// addStart adds a STARTED record and opens the execution. It reports false when the
// run is over.
func (ar *auditRun) addStart(ctx context.Context, c *flow.Context, n *flow.Node, agent string, attrs map[string]any) bool {
	ar.mu.Lock()
	if ar.closed {
		ar.mu.Unlock()
		return false
	}
	t := ar.now()
	r := ar.next(t)
	r.Status = trace.Started
	fillNode(r, c, n, agent)
	r.Attrs = attrs
	ar.open = append(ar.open, openExec{c: c, n: n, start: t})
	full := len(ar.recs) >= ar.a.cfg.batch
	ar.mu.Unlock()
	if full {
		ar.flush(ctx)
	}
	return true
}

// addEnd adds a terminal record and closes the execution. Its time is the start's
// plus the node's duration, which saves a clock read per node (with a configured
// clock, the clock's time). It reports false when the run is over.
func (ar *auditRun) addEnd(ctx context.Context, c *flow.Context, n *flow.Node, end *flow.NodeEnd, x *endExtra) bool {
	ar.mu.Lock()
	if ar.closed {
		ar.mu.Unlock()
		return false
	}
	t, found := ar.close(c, n, end.Duration)
	if !found || ar.a.cfg.now != nil || t.Before(ar.last) {
		t = ar.now()
	}
	fillEnd(ar.next(t), c, n, end, x)
	full := len(ar.recs) >= ar.a.cfg.batch
	ar.mu.Unlock()
	if full {
		ar.flush(ctx)
	}
	return true
}

// close removes the execution (c, n) from the open ones and returns its start plus d.
// The caller holds mu.
func (ar *auditRun) close(c *flow.Context, n *flow.Node, d time.Duration) (time.Time, bool) {
	for i := len(ar.open) - 1; i >= 0; i-- {
		if o := &ar.open[i]; o.c == c && o.n == n {
			t := o.start.Add(d)
			last := len(ar.open) - 1
			ar.open[i] = ar.open[last]
			ar.open[last] = openExec{}
			ar.open = ar.open[:last]
			return t, true
		}
	}
	return time.Time{}, false
}

// flush writes the buffered records. Writes of one run are serialized so batches reach
// the sinks in sequence order; records keep being added to the other buffer meanwhile.
func (ar *auditRun) flush(ctx context.Context) {
	ar.flushMu.Lock()
	defer ar.flushMu.Unlock()
	ar.mu.Lock()
	batch := ar.recs
	ar.recs = ar.spare[:0]
	ar.mu.Unlock()
	if len(batch) > 0 {
		if err := ar.a.write(ctx, batch); err != nil && ar.err == nil {
			ar.err = err
		}
	}
	clear(batch) // drop references to error messages and attributes
	ar.mu.Lock()
	ar.spare = batch[:0]
	ar.mu.Unlock()
}

// write gives a batch to every sink. The run's context may be cancelled (a failed
// run): the records of such a run matter most, so sinks get a context without it.
func (a *Audit) write(ctx context.Context, recs []trace.Record) error {
	ctx = context.WithoutCancel(ctx)
	var errs []error
	for i, s := range a.cfg.sinks {
		if err := s.Write(ctx, recs); err != nil {
			a.failures.Add(1)
			if a.reported[i].CompareAndSwap(false, true) {
				a.cfg.logger.Error("flow audit: sink failed; its later failures are counted, not logged",
					"sink", fmt.Sprintf("%T", s), "index", i, "error", err)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (a *Audit) getBuf() []trace.Record {
	if p, ok := a.bufs.Get().(*[]trace.Record); ok {
		return (*p)[:0]
	}
	return make([]trace.Record, 0, 64)
}

// maxPooledRecords bounds the record buffers kept for reuse.
const maxPooledRecords = 1 << 14

func (a *Audit) putBuf(b []trace.Record) {
	if b == nil || cap(b) > maxPooledRecords {
		return
	}
	b = b[:0]
	a.bufs.Put(&b)
}
