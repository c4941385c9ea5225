package interceptor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// Metrics is a flow.Interceptor that counts, per run, the node executions by status,
// the retries, recovered failures, fallbacks and human rejections, and the run's
// duration. Run returns them for a run id (in progress or among the last
// WithRetention finished runs); WithRunMetrics hands them over when a run ends;
// WithRecorder hands each evaluation's and each node's figures to a MetricsRecorder
// as they are counted (package otelflow records them as OpenTelemetry metrics).
//
// Fallbacks count the recoveries an error policy sent to a fallback node
// (flow.NodeEnd.Goto) and the fallbacks code reports with trace.Count; rejections are
// events the engine does not see: the code that records a human rejection calls
// trace.Count with the run's context. A run started from a task's context counts
// what is reported in it for itself only, not for the run that started it too
// (trace.WithRunCounterSink).
//
// A run id names one run, as it does in the audit's records: evaluations given the
// same id (WithRunID, as for a run resumed under its own id, or a retried request
// that keeps its id) count for it together, whether one after the other or at the
// same time. Run reports the sum of their counts, with the outcome and duration of
// the one that ended last (as trace.Records.Metrics computes them from the records),
// while the recorder gets each evaluation once, when it ends.
type Metrics struct {
	cfg config

	mu    sync.Mutex
	live  map[string]*metricsRun   // evaluations in progress, by run id (see metricsRun.other)
	done  map[string]trace.Metrics // finished evaluations, their counts added up by run id
	order []string                 // finished run ids, oldest first
}

var _ flow.Interceptor = (*Metrics)(nil)

// A MetricsRecorder receives what a Metrics counts, as it counts it. Its methods are
// called from the goroutines that run the nodes, concurrently.
type MetricsRecorder interface {
	// RecordNode is called as a node execution of a run the Metrics tracks ends.
	RecordNode(ctx context.Context, n *flow.Node, end flow.NodeEnd)
	// RecordRun is called as an evaluation of a root graph ends, with its own counts,
	// outcome and duration (not added up with other evaluations of its run id), and
	// a context that is not cancelled.
	RecordRun(ctx context.Context, m trace.Metrics)
}

// NewMetrics returns a metrics interceptor. Options: WithRecorder, WithRetention,
// WithRunMetrics, WithClock. The error is nil: no option of this package can make
// building a Metrics fail.
func NewMetrics(opts ...Option) (*Metrics, error) {
	return &Metrics{cfg: newConfig(opts), live: map[string]*metricsRun{}, done: map[string]trace.Metrics{}}, nil
}

// execKey identifies a node execution in progress (a view runs one node at a time).
type execKey struct {
	c *flow.Context
	n *flow.Node
}

// metricsRun is a run in progress.
type metricsRun struct {
	runID, instance, graph, path string
	began                        time.Time
	inv                          *flow.Invocation
	// other is another evaluation in progress with the same run id (under
	// Metrics.mu): a list rather than a slice per id keeps a run's cost the same.
	other *metricsRun

	// dup is set when this Metrics wraps the run twice (registered on the engine and
	// for the evaluation): each hook is then called twice per event, and open keeps
	// the executions in progress so that only the first call counts.
	dup    atomic.Bool
	mu     sync.Mutex
	opened map[execKey]bool

	started, completed, failed, interrupted, suspended atomic.Int64
	retries, recovered, fallbacks, rejections          atomic.Int64
}

// Count implements trace.CounterSink for the run.
func (r *metricsRun) Count(c trace.Counter, n int) {
	switch c {
	case trace.CountFallback:
		r.fallbacks.Add(int64(n))
	case trace.CountRejection:
		r.rejections.Add(int64(n))
	case trace.CountRetry:
		r.retries.Add(int64(n))
	}
}

func (r *metricsRun) snapshot() trace.Metrics {
	return trace.Metrics{
		RunID: r.runID, InstanceID: r.instance, GraphID: r.graph,
		Started: int(r.started.Load()), Completed: int(r.completed.Load()), Failed: int(r.failed.Load()),
		Interrupted: int(r.interrupted.Load()), Suspended: int(r.suspended.Load()),
		Retries: int(r.retries.Load()), Recovered: int(r.recovered.Load()),
		Fallbacks: int(r.fallbacks.Load()), Rejections: int(r.rejections.Load()),
	}
}

type metricsKey struct{ m *Metrics }

// InterceptFlow tracks the root graph's evaluation as one run.
func (m *Metrics) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	if inv.Node != nil {
		return inv.Invoke(ctx)
	}
	if r, ok := ctx.Value(metricsKey{m}).(*metricsRun); ok && r.inv == inv {
		r.mu.Lock()
		r.opened = map[execKey]bool{}
		r.mu.Unlock()
		r.dup.Store(true)
		return inv.Invoke(ctx)
	}
	r := &metricsRun{runID: inv.RunID, instance: inv.Context.InstanceID(), graph: inv.Graph.ID, path: inv.Path, began: m.cfg.clock(), inv: inv}
	m.mu.Lock()
	r.other, m.live[r.runID] = m.live[r.runID], r
	m.mu.Unlock()
	ctx = trace.WithRunCounterSink(context.WithValue(ctx, metricsKey{m}, r), r.runID, r)
	defer func() {
		if p := recover(); p != nil {
			// A panic out of the engine or another interceptor: the run still ends (and
			// leaves the live runs), failed, as the audit records it.
			m.finish(ctx, inv, r, fmt.Errorf("panic: %v", p))
			panic(p)
		}
	}()
	err := inv.Invoke(ctx)
	m.finish(ctx, inv, r, err)
	return err
}

func (m *Metrics) finish(ctx context.Context, inv *flow.Invocation, r *metricsRun, invokeErr error) {
	st, _, _ := RunOutcome(inv, invokeErr, nil)
	res := r.snapshot()
	res.Status, res.Duration = st, m.cfg.since(r.began).Sub(r.began)
	// Executions the engine never ended (a panic escaping it) count as failed, as the
	// audit's "node_end_missing" records do.
	res.Failed += max(res.Started-res.Ended(), 0)
	total := res // the run's metrics, with those of the id's other evaluations
	m.mu.Lock()
	// Another evaluation with the id may be in progress (WithRunID given twice): it
	// stays live, and its counts are not this one's.
	if p := m.live[r.runID]; p == r && r.other == nil {
		delete(m.live, r.runID)
	} else if p == r {
		m.live[r.runID] = r.other
	} else {
		for ; p != nil; p = p.other {
			if p.other == r {
				p.other = r.other
				break
			}
		}
	}
	if prev, ok := m.done[r.runID]; ok {
		total = addCounts(prev, res)
		// The id finished before (WithRunID reused): it is the newest now, and must not
		// be forgotten first.
		m.order = slices.DeleteFunc(m.order, func(id string) bool { return id == r.runID })
	}
	m.order = append(m.order, r.runID)
	m.done[r.runID] = total
	for len(m.order) > max(m.cfg.retention, 0) {
		delete(m.done, m.order[0])
		m.order = m.order[1:]
	}
	if m.live[r.runID] != nil {
		total, _ = m.runLocked(r.runID)
	}
	m.mu.Unlock()
	if m.cfg.recorder != nil {
		m.cfg.recorder.RecordRun(context.WithoutCancel(ctx), res)
	}
	if m.cfg.onRun != nil {
		m.cfg.onRun(total)
	}
}

// addCounts returns the metrics of a run whose evaluations a and then b ended: their
// counts added up, b's outcome and duration.
func addCounts(a, b trace.Metrics) trace.Metrics {
	a.Started += b.Started
	a.Completed += b.Completed
	a.Failed += b.Failed
	a.Interrupted += b.Interrupted
	a.Suspended += b.Suspended
	a.Retries += b.Retries
	a.Recovered += b.Recovered
	a.Fallbacks += b.Fallbacks
	a.Rejections += b.Rejections
	a.Status, a.Duration = b.Status, b.Duration
	return a
}

// OnNodeStart counts a node execution.
func (m *Metrics) OnNodeStart(ctx context.Context, c *flow.Context, n *flow.Node) {
	if r, ok := ctx.Value(metricsKey{m}).(*metricsRun); ok && r.first(c, n, true) {
		r.started.Add(1)
	}
}

// first reports whether a hook call is the first for its event: always, unless the
// Metrics wraps the run twice.
func (r *metricsRun) first(c *flow.Context, n *flow.Node, start bool) bool {
	if !r.dup.Load() {
		return true
	}
	k := execKey{c, n}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opened[k] == start {
		return false
	}
	r.opened[k] = start
	if !start {
		delete(r.opened, k)
	}
	return true
}

// OnNodeEnd counts how the node execution ended.
func (m *Metrics) OnNodeEnd(ctx context.Context, c *flow.Context, n *flow.Node, end flow.NodeEnd) {
	r, ok := ctx.Value(metricsKey{m}).(*metricsRun)
	if !ok || !r.first(c, n, false) {
		return
	}
	switch end.Status {
	case trace.Completed:
		r.completed.Add(1)
	case trace.Interrupted:
		r.interrupted.Add(1)
	case trace.Suspended:
		r.suspended.Add(1)
	case trace.Failed:
		r.failed.Add(1)
		if end.Retrying {
			r.retries.Add(1)
		}
		if end.Recovered {
			r.recovered.Add(1)
			if end.Goto != "" {
				r.fallbacks.Add(1) // the error policy took a fallback path
			}
		}
	}
	if m.cfg.recorder != nil {
		m.cfg.recorder.RecordNode(ctx, n, end)
	}
}

// Run returns the metrics of a run in progress or among the last finished ones: of
// every evaluation with that run id (see Metrics). While one is in progress, Status
// is empty and Duration is the time since the earliest of those in progress began.
func (m *Metrics) Run(runID string) (trace.Metrics, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runLocked(runID)
}

// runLocked returns what Run returns; m.mu is held.
func (m *Metrics) runLocked(runID string) (trace.Metrics, bool) {
	res, ok := m.done[runID]
	live := m.live[runID]
	if live == nil {
		return res, ok
	}
	if !ok {
		res = trace.Metrics{RunID: runID, InstanceID: live.instance, GraphID: live.graph}
	}
	began := live.began
	for r := live; r != nil; r = r.other {
		res = addCounts(res, r.snapshot())
		if r.began.Before(began) {
			began = r.began
		}
	}
	res.Status, res.Duration = "", m.cfg.since(began).Sub(began)
	return res, true
}
