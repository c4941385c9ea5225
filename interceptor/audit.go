package interceptor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/trace"
)

// Audit is a flow.Interceptor that writes the audit log of every run it observes: a
// run STARTED record, a STARTED and a terminal record per node execution, and a
// terminal run record (see trace.Record), redacted, to its sinks.
//
// Records are numbered and buffered per run and written when the root graph's
// evaluation ends, or earlier in batches of WithBatchSize, every WithFlushInterval, or
// node by node with WithDurableNodes (an audit that agrees with per-node checkpoints
// after a crash). A failing sink does not
// fail the run unless WithStrict is set: its first failure is logged, every failure
// counted (Failures). Registered twice (engine-wide and per evaluation), it records
// each event once. It is safe for concurrent runs.
type Audit struct {
	cfg      config
	failures atomic.Int64
	reported []atomic.Bool // per sink: its first failure was logged
	lines    bool          // a sink is a *JSONL: runs encode their records as they go
	records  bool          // a sink takes trace.Records: runs keep them
	bufs     sync.Pool     // *runBufs
}

var _ flow.Interceptor = (*Audit)(nil)

// NewAudit returns an audit interceptor. Options: WithSink, WithRedactor, WithRedactKeys,
// WithStrict, WithLogger, WithBatchSize, WithFlushInterval, WithDurableNodes,
// WithAgentName, WithAttrs, WithClock.
func NewAudit(opts ...Option) *Audit {
	a := &Audit{cfg: newConfig(opts)}
	a.reported = make([]atomic.Bool, len(a.cfg.sinks))
	for _, s := range a.cfg.sinks {
		if _, ok := s.(*JSONL); ok {
			a.lines = true
		} else {
			a.records = true
		}
	}
	return a
}

// Failures returns how many sink writes failed since the audit was created.
func (a *Audit) Failures() int64 { return a.failures.Load() }

// auditKey finds a run's state in the context, per Audit.
type auditKey struct{ a *Audit }

// auditRun is the state of one run in progress.
type auditRun struct {
	a        *Audit
	instance string
	runID    string
	path     string    // root call path
	began    time.Time // the clock at the run's start; record times are offsets from it
	beganSec int64     // began as Unix seconds and nanoseconds, for encoding times without time.Time
	beganNs  int64

	mu     sync.Mutex
	seq    int64
	bufs   *runBufs
	cur    *batch // records being added
	spare  *batch // the other batch, while cur is written; nil during a write
	gen    int    // batches swapped out so far: which batch an openExec's record is in (also under flushMu)
	last   time.Duration
	open   []openExec // node executions started and not ended
	closed bool
	// dup is set when this Audit wraps the run twice: its hooks are then called
	// twice per event, and the second call must add nothing. Read without mu.
	dup atomic.Bool
	// calls holds, while dup, the events whose first hook call was handled.
	calls map[hookEvent]struct{}
	// Where node records are built when no sink takes records (see slot): a STARTED
	// and a terminal one, each setting every field it uses.
	scratch [2]trace.Record

	flushMu   sync.Mutex    // one write of this run at a time, in order
	flushed   time.Duration // time of the last record written: times never go back in seq order
	syncedGen int           // gen when the sinks were last synced: a sync with no batch written since is skipped
	err       error         // first sink error, for WithStrict

	inv *flow.Invocation // the root evaluation: a second registration sees it again

	stopTicker func() // ends the WithFlushInterval goroutine; nil without one
}

// openExec is a node execution in progress, identified by (view, node); a run has
// few, so a slice scanned from the end beats a map.
type openExec struct {
	c     *flow.Context
	n     *flow.Node
	agent string // its agent name, for the terminal record
	gen   int    // the batch of its STARTED record, if it is still ar.gen
	idx   int    // the index of that record in the batch
	ident [2]int // its identity fields in the batch's lines, for the terminal record to copy
}

// InterceptFlow writes the run records around the root graph's evaluation and
// flushes the run's records when it ends. Sub-graph evaluations pass through.
func (a *Audit) InterceptFlow(ctx context.Context, inv *flow.Invocation) (err error) {
	if inv.Node != nil {
		return inv.Invoke(ctx)
	}
	if ar, ok := ctx.Value(auditKey{a}).(*auditRun); ok && ar.inv == inv {
		ar.dup.Store(true)
		return inv.Invoke(ctx)
	}
	ar := &auditRun{a: a, instance: inv.Context.InstanceID(), runID: inv.RunID, path: inv.Path, inv: inv}
	ar.bufs = a.getBufs()
	ar.cur, ar.spare = &ar.bufs.batches[0], &ar.bufs.batches[1]
	ar.began = a.cfg.clock()
	ar.beganSec, ar.beganNs = ar.began.Unix(), int64(ar.began.Nanosecond())
	ar.mu.Lock()
	ar.seq++
	ar.add(&trace.Record{Seq: ar.seq, Status: trace.Started, GraphID: inv.Graph.ID, Path: inv.Path, Title: inv.Graph.Title,
		Resumed: inv.Resumed}, 0)
	ar.mu.Unlock()
	if a.cfg.every > 0 {
		ar.stopTicker = ar.flushEvery(ctx, a.cfg.every)
	}
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
// engine never ended (a panic escaping the engine) get a FAILED record first.
func (ar *auditRun) finish(ctx context.Context, inv *flow.Invocation, invokeErr error) error {
	a := ar.a
	st, reason, info := RunOutcome(inv, invokeErr, a.cfg.redact)
	run := trace.Record{Status: st, GraphID: inv.Graph.ID, Path: inv.Path, Title: inv.Graph.Title, Resumed: inv.Resumed,
		Error: info, Reason: reason}
	// The executions still open are recorded, and the run closed, under one lock: one
	// that ends later is an orphan. No application code runs under the lock.
	var missing []trace.Record
	ar.mu.Lock()
	if !ar.closed {
		if len(ar.open) > 0 {
			msg := "the engine did not report how the node ended"
			if invokeErr != nil {
				msg += ": " + invokeErr.Error()
			}
			msg = a.cfg.redactor(inv.Context).String(msg)
			for _, o := range ar.open {
				rec := trace.Record{Status: trace.Failed,
					Error: &trace.ErrorInfo{Type: flow.ErrorTypeFlow, Code: "node_end_missing", Message: msg}}
				fillNode(&rec, o.c, o.n, o.agent)
				ar.seq++
				rec.Seq = ar.seq
				ar.add(&rec, ar.elapsed())
				missing = append(missing, rec)
			}
			clear(ar.open)
			ar.open = ar.open[:0]
		}
		d := ar.elapsed()
		ar.seq++
		run.Seq, run.Duration = ar.seq, d
		ar.add(&run, d)
		ar.closed = true
	}
	ar.mu.Unlock()
	for i := range missing {
		a.cfg.logger.Warn("flow audit: a node execution had no end; recorded it as FAILED",
			"run", ar.runID, "node", missing[i].Qualified(), "branch", missing[i].BranchID)
	}
	if ar.stopTicker != nil {
		ar.stopTicker()
	}
	ar.flush(ctx, a.cfg.durable)
	ar.flushMu.Lock()
	defer ar.flushMu.Unlock()
	ar.mu.Lock()
	ar.a.putBufs(ar.bufs)
	ar.bufs, ar.cur, ar.spare, ar.open = nil, nil, nil, nil
	ar.mu.Unlock()
	return ar.err
}

// OnNodeStart records a STARTED record.
func (a *Audit) OnNodeStart(ctx context.Context, c *flow.Context, n *flow.Node) {
	ar, _ := ctx.Value(auditKey{a}).(*auditRun)
	if ar != nil && ar.repeat(c, n, true) {
		return
	}
	agent := a.cfg.agentOf(c, n)
	var attrs map[string]any
	if a.cfg.attrs != nil {
		attrs = a.attrsOf(c, n, nil, nil)
	}
	if ar != nil && ar.addStart(ctx, c, n, agent, attrs) {
		return
	}
	rec := trace.Record{Status: trace.Started}
	fillNode(&rec, c, n, agent)
	rec.Attrs = attrs
	a.orphan(ctx, ar, c, &rec)
}

// attrsOf returns the redacted WithAttrs attributes of a record; red is
// a.cfg.redactor(c) when the caller has built it already, else nil. A panic in the
// application's function becomes the record's "!error" attribute rather than ending
// the process.
func (a *Audit) attrsOf(c *flow.Context, n *flow.Node, end *flow.NodeEnd, red *redact.Redactor) (attrs map[string]any) {
	defer func() {
		if p := recover(); p != nil {
			if red == nil {
				red = a.cfg.redactor(c)
			}
			attrs = map[string]any{"!error": red.String(fmt.Sprintf("attrs panicked: %v", p))}
		}
	}()
	m := a.cfg.attrs(c, n, end)
	if m == nil {
		return nil // no text: spare the copy and walk of the node's variables
	}
	if red == nil {
		red = a.cfg.redactor(c)
	}
	return red.Map(m)
}

// fillNode sets the fields that say which node execution a record is about.
func fillNode(r *trace.Record, c *flow.Context, n *flow.Node, agent string) {
	r.Path, r.NodeID, r.NodeType, r.Title, r.BranchID, r.Agent = c.CallPath(), n.ID, n.Type.String(), n.Title, c.BranchID(), agent
	r.GraphID = ""
	if g := n.Graph(); g != nil {
		r.GraphID = g.ID
	}
}

// OnNodeEnd records the terminal record of the node execution.
func (a *Audit) OnNodeEnd(ctx context.Context, c *flow.Context, n *flow.Node, end flow.NodeEnd) {
	ar, _ := ctx.Value(auditKey{a}).(*auditRun)
	if ar != nil && ar.repeat(c, n, false) {
		return
	}
	var x endExtra
	if a.cfg.agent != nil {
		// Asked anew, outside the run's lock; the default name is the STARTED record's.
		x.agent = a.cfg.agent(c, n)
	}
	var red *redact.Redactor // built once, where there is text to mask: it copies the variables
	switch end.Status {
	case trace.Failed:
		red = a.cfg.redactor(c)
		x.err = ErrorInfo(end.Err, red)
	case trace.Suspended:
		red = a.cfg.redactor(c)
		x.reason = red.String(end.Reason)
	}
	if a.cfg.attrs != nil {
		e := end
		x.attrs = a.attrsOf(c, n, &e, red)
	}
	if ar != nil && ar.addEnd(ctx, c, n, &end, &x) {
		return
	}
	if a.cfg.agent == nil {
		x.agent = AgentName(n)
	}
	var rec trace.Record
	fillNode(&rec, c, n, x.agent)
	fillEnd(&rec, &end, &x)
	a.orphan(ctx, ar, c, &rec)
}

// endExtra holds what a terminal record carries besides the engine's NodeEnd.
type endExtra struct {
	agent  string
	err    *trace.ErrorInfo
	reason string
	attrs  map[string]any
}

// fillEnd sets the fields of a terminal node record but its identity, number and time.
func fillEnd(r *trace.Record, end *flow.NodeEnd, x *endExtra) {
	r.Status = end.Status
	r.Step, r.Duration, r.Arrivals, r.Retrying, r.Recovered = end.Step, end.Duration, end.Arrivals, end.Retrying, end.Recovered
	if end.Recovered {
		r.Goto = end.Goto
	} else if r.Goto != "" { // compared first: a reused record seldom holds one
		r.Goto = ""
	}
	r.Attempt = 0
	if end.Attempt > 1 {
		r.Attempt = end.Attempt
	}
	r.Error, r.Reason, r.Attrs = x.err, x.reason, x.attrs
}

// orphan writes a node record alone (Seq 0), when its run is unknown or already over
// (ar, closed: its ids are ar's, as the Context may no longer know them).
func (a *Audit) orphan(ctx context.Context, ar *auditRun, c *flow.Context, rec *trace.Record) {
	rec.Time, rec.InstanceID, rec.RunID = a.cfg.clock(), c.InstanceID(), c.RunID()
	if ar != nil {
		rec.InstanceID, rec.RunID = ar.instance, ar.runID
	}
	_ = a.write(ctx, []trace.Record{*rec})
}

// elapsed returns the time since the run's start, by the monotonic or configured clock.
func (ar *auditRun) elapsed() time.Duration {
	if ar.a.cfg.now != nil {
		return ar.a.cfg.now().Sub(ar.began)
	}
	return time.Since(ar.began)
}

// add appends a run record at the time offset at (see addLike).
func (ar *auditRun) add(rec *trace.Record, at time.Duration) { ar.addLike(rec, at, false, nil) }

// addLike appends a numbered record, at the time offset at unless pending, to the
// current batch in the forms the sinks take, and returns its index there and where its
// identity fields are in the lines (ident, if not nil, is its STARTED record's). The
// caller holds mu.
func (ar *auditRun) addLike(rec *trace.Record, at time.Duration, pending bool, ident []byte) (int, [2]int) {
	b := ar.cur
	var sp trace.Spans
	rec.InstanceID, rec.RunID = ar.instance, ar.runID
	st := stamp{at: at, pos: -1, pending: pending}
	fixed := ar.a.cfg.now != nil
	if fixed {
		st.at = max(at, ar.last)
		ar.last = st.at
	}
	if ar.a.lines {
		if fixed {
			rec.Time = ar.began.Add(st.at)
			b.lines = ar.bufs.enc.Append(b.lines, rec)
		} else {
			b.lines, sp = ar.bufs.enc.AppendUntimed(b.lines, rec, ident)
			st.pos = sp.Time
		}
		b.lines = append(b.lines, '\n')
	}
	if ar.a.records && (len(b.recs) == 0 || rec != &b.recs[len(b.recs)-1]) { // unless built in its slot
		b.recs = append(b.recs, *rec)
	}
	b.times = append(b.times, st)
	return len(b.times) - 1, sp.Ident
}

// slot returns where to build a node's record: in place in the batch's records when
// sinks take them (their unused capacity is zeroed), else in scratch[i] (0 for
// STARTED, 1 for terminal records). The caller holds mu and adds the record.
func (ar *auditRun) slot(i int) *trace.Record {
	if !ar.a.records {
		return &ar.scratch[i]
	}
	b := ar.cur
	if len(b.recs) < cap(b.recs) {
		b.recs = b.recs[:len(b.recs)+1]
	} else {
		b.recs = append(b.recs, trace.Record{})
	}
	return &b.recs[len(b.recs)-1]
}

// addStart adds a STARTED record and opens the execution; false if the run is over.
func (ar *auditRun) addStart(ctx context.Context, c *flow.Context, n *flow.Node, agent string, attrs map[string]any) bool {
	ar.mu.Lock()
	if ar.closed {
		ar.mu.Unlock()
		return false
	}
	rec := ar.slot(0)
	rec.Status, rec.Attrs = trace.Started, attrs
	fillNode(rec, c, n, agent)
	ar.seq++
	rec.Seq = ar.seq
	var o openExec
	if ar.a.cfg.now != nil {
		o.idx, o.ident = ar.addLike(rec, ar.elapsed(), false, nil)
	} else {
		o.idx, o.ident = ar.addLike(rec, 0, true, nil)
	}
	o.c, o.n, o.agent, o.gen = c, n, agent, ar.gen
	ar.open = append(ar.open, o)
	full := len(ar.cur.times) >= ar.a.cfg.batch
	ar.mu.Unlock()
	if full || ar.a.cfg.durable {
		// Written, not synced: a STARTED record only has to outlive the process
		// (a checkpoint never counts the node done before its terminal record syncs).
		ar.flush(ctx, false)
	}
	return true
}

// addEnd adds a terminal record and closes the execution; false if the run is over.
// Its time, and its STARTED record's, come from the engine's NodeEnd.
func (ar *auditRun) addEnd(ctx context.Context, c *flow.Context, n *flow.Node, end *flow.NodeEnd, x *endExtra) bool {
	ar.mu.Lock()
	if ar.closed {
		ar.mu.Unlock()
		return false
	}
	rec := ar.slot(1)
	o, found := ar.close(c, n)
	if ar.a.cfg.agent == nil {
		if found {
			x.agent = o.agent
		} else {
			x.agent = AgentName(n)
		}
	}
	var start, at time.Duration
	switch {
	case ar.a.cfg.now != nil:
		at = ar.elapsed()
	case !end.Start.IsZero():
		start = end.Start.Sub(ar.began)
		at = start + end.Duration
	default: // a NodeEnd not from the engine
		at = ar.elapsed()
		start = at - end.Duration
	}
	var ident []byte
	if found && o.gen == ar.gen {
		if s := &ar.cur.times[o.idx]; s.pending {
			s.at, s.pending = start, false
		}
		// Its identity has not changed (WithAgentName's function may answer anew).
		if o.ident[1] > 0 && ar.a.cfg.agent == nil {
			ident = ar.cur.lines[o.ident[0]:o.ident[1]]
		}
	}
	if ident == nil || ar.a.records {
		fillNode(rec, c, n, x.agent)
	}
	fillEnd(rec, end, x)
	ar.seq++
	rec.Seq = ar.seq
	ar.addLike(rec, at, false, ident)
	full := len(ar.cur.times) >= ar.a.cfg.batch
	ar.mu.Unlock()
	if full || ar.a.cfg.durable {
		ar.flush(ctx, ar.a.cfg.durable)
	}
	return true
}

// hookEvent is a node execution's start or end, as the hooks see it.
type hookEvent struct {
	c     *flow.Context
	n     *flow.Node
	start bool
}

// repeat reports whether a hook call is the second registration's for an event (see
// dup): the first call of an event marks it, the next one for it is the second and
// adds nothing. The marks outlive the run, so a late event writes one orphan.
func (ar *auditRun) repeat(c *flow.Context, n *flow.Node, start bool) bool {
	if !ar.dup.Load() {
		return false
	}
	k := hookEvent{c, n, start}
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if _, ok := ar.calls[k]; ok {
		delete(ar.calls, k)
		return true
	}
	if ar.calls == nil {
		ar.calls = make(map[hookEvent]struct{})
	}
	ar.calls[k] = struct{}{}
	return false
}

// close removes the execution (c, n) from the open ones and returns it (under mu).
func (ar *auditRun) close(c *flow.Context, n *flow.Node) (openExec, bool) {
	last := len(ar.open) - 1
	for i := last; i >= 0; i-- {
		if o := &ar.open[i]; o.c == c && o.n == n {
			found := *o
			if i != last {
				*o = ar.open[last]
			}
			ar.open[last] = openExec{}
			ar.open = ar.open[:last]
			return found, true
		}
	}
	return openExec{}, false
}
