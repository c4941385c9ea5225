package otelflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// Attribute keys of the spans the Tracing interceptor opens.
const (
	AttrGraphID    = attribute.Key("flow.graph.id")
	AttrNodeID     = attribute.Key("flow.node.id")
	AttrNodeType   = attribute.Key("flow.node.type")
	AttrNodeTitle  = attribute.Key("flow.node.title")
	AttrInstanceID = attribute.Key("flow.instance.id")
	AttrRunID      = attribute.Key("flow.run.id")
	AttrBranchID   = attribute.Key("flow.branch.id")
	AttrCallPath   = attribute.Key("flow.call.path")
	AttrCallNode   = attribute.Key("flow.call.node")
	AttrStatus     = attribute.Key("flow.status")
	AttrStep       = attribute.Key("flow.step")
	AttrAttempt    = attribute.Key("flow.attempt")
	AttrArrivals   = attribute.Key("flow.arrivals")
	AttrReason     = attribute.Key("flow.reason")
	AttrResumed    = attribute.Key("flow.resumed")
	AttrAgent      = attribute.Key("flow.agent")
	AttrErrorCode  = attribute.Key("flow.error.code")
	AttrErrorType  = attribute.Key("flow.error.type")
)

// Tracing is a flow.Interceptor that opens OpenTelemetry spans: one per graph
// evaluation ("flow <graph id>", the root graph and each sub-graph call) and one per
// node execution ("node <node id>"), a child of its graph's evaluation span. A
// sub-graph's evaluation span is a child of its calling node's span. Tracing is a
// flow.NodeStarter: a node's task runs with the node's span in its context, so the
// spans the task starts are its children. Where the calling node runs in several
// branches at once, the call's span starts when the call's first node does, whose
// branch tells which one called.
//
// Spans carry the graph, node, node type, instance, run and branch ids and, when they
// end, the status (COMPLETED, FAILED, INTERRUPTED, SUSPENDED). A failure is an
// "exception" event with the redacted message and the span status Error. Should a
// panic escape the run, the node spans left open end as FAILED.
type Tracing struct {
	tracer oteltrace.Tracer
	cfg    config

	openSpans atomic.Int64 // node spans open, in every run (OpenSpans)

	// stray holds the node spans of hooks that come without a run this Tracing
	// intercepted; a run's own spans are in its runSpans.
	stray runSpans
}

var _ flow.Interceptor = (*Tracing)(nil)

// spanKey identifies a node execution in progress (a view runs one node at a time).
type spanKey struct {
	c *flow.Context
	n *flow.Node
}

// NewTracing returns a tracing interceptor using tp. Options: WithRedactor, WithRedactKeys, WithAgentName.
func NewTracing(tp oteltrace.TracerProvider, opts ...Option) *Tracing {
	return &Tracing{tracer: tp.Tracer(ScopeName), cfg: newConfig(opts)}
}

// tracingRun marks, in the context of an evaluation, the invocation this Tracing
// opened a span for (registered twice, it opens one span) and holds the run's node
// spans, shared by the root evaluation and its sub-graph calls.
type tracingRun struct {
	inv   *flow.Invocation
	spans *runSpans
	// call is the evaluation span of a call to start when its branch is known, or nil.
	call *pendingCall
}

// pendingCall is the evaluation span of a sub-graph call made by a node running in
// more than one branch. It starts when a node of the call starts, whose branch id is
// the calling branch's id, then "/<node id>/<graph id>".
type pendingCall struct {
	t       *Tracing
	parent  context.Context // the calling graph's evaluation
	name    string
	start   time.Time
	attrs   []attribute.KeyValue
	suffix  string // "/<node id>/<graph id>"
	callers []caller

	once sync.Once
	span oteltrace.Span
}

// caller is a node execution that may have made a sub-graph call: its branch and span.
type caller struct {
	branch string
	span   oteltrace.Span
}

// startSpan returns the call's evaluation span, started if need be as a child of the
// span of the caller whose branch the call's branch is under (else of the calling
// graph's evaluation span).
func (p *pendingCall) startSpan(branch string) oteltrace.Span {
	p.once.Do(func() {
		ctx := p.parent
		for _, c := range p.callers {
			if b := c.branch + p.suffix; strings.HasPrefix(branch, b) && (len(branch) == len(b) || branch[len(b)] == '/') {
				ctx = oteltrace.ContextWithSpan(ctx, c.span)
				break
			}
		}
		_, p.span = p.t.tracer.Start(ctx, p.name, oteltrace.WithAttributes(p.attrs...), oteltrace.WithTimestamp(p.start))
	})
	return p.span
}

// runSpans are the node spans open in one run.
type runSpans struct {
	mu sync.Mutex
	m  map[spanKey]oteltrace.Span
	// closed is set when the run returned and its open spans were ended (endOpen):
	// a node start that comes later opens no span.
	closed bool
}

type tracingKey struct{ t *Tracing }

// spansOf returns the node spans of the run ctx belongs to.
func (t *Tracing) spansOf(ctx context.Context) *runSpans {
	if r, ok := ctx.Value(tracingKey{t}).(*tracingRun); ok {
		return r.spans
	}
	return &t.stray
}

// InterceptFlow opens the evaluation span and runs the graph under it.
func (t *Tracing) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	outer, _ := ctx.Value(tracingKey{t}).(*tracingRun)
	if outer != nil && outer.inv == inv {
		return inv.Invoke(ctx)
	}
	run := &tracingRun{inv: inv}
	if inv.Node != nil && outer != nil {
		run.spans = outer.spans // a sub-graph call: the calling run's spans
	} else {
		run.spans = &runSpans{m: make(map[spanKey]oteltrace.Span)}
	}
	ctx, span := t.startEval(ctx, inv, outer, run)
	defer func() {
		if span == nil {
			span = run.call.startSpan("")
		}
		span.End()
	}()
	ctx = context.WithValue(ctx, tracingKey{t}, run)
	if inv.Node == nil {
		defer func() {
			if p := recover(); p != nil {
				t.panicked(span, run, p)
				panic(p)
			}
		}()
	}
	err := inv.Invoke(ctx)
	if span == nil {
		span = run.call.startSpan("")
	}
	t.endEval(span, run, err)
	return err
}

// startEval starts the evaluation span of inv, or leaves it to start later
// (run.call, with a nil span) when the calling node runs in several branches.
func (t *Tracing) startEval(ctx context.Context, inv *flow.Invocation, outer, run *tracingRun) (context.Context, oteltrace.Span) {
	attrs := []attribute.KeyValue{
		AttrGraphID.String(inv.Graph.ID), AttrRunID.String(inv.RunID),
		AttrInstanceID.String(inv.Context.InstanceID()), AttrCallPath.String(inv.Path),
	}
	if inv.Resumed {
		attrs = append(attrs, AttrResumed.Bool(true))
	}
	if outer != nil && outer.call != nil {
		// Evaluated inside a call whose span started late: that span is the parent
		// to fall back on, not the one in ctx.
		ctx = oteltrace.ContextWithSpan(ctx, outer.call.startSpan(""))
	}
	if inv.Node != nil {
		attrs = append(attrs, AttrCallNode.String(inv.Node.ID))
		callers := t.callers(run.spans, inv)
		own := oteltrace.SpanFromContext(ctx).SpanContext()
		switch {
		case own.IsValid() && slices.ContainsFunc(callers, func(c caller) bool { return c.span.SpanContext().Equal(own) }):
			// StartNode put the calling node's span in the context: the parent is known.
		case len(callers) == 0:
		case len(callers) == 1:
			ctx = oteltrace.ContextWithSpan(ctx, callers[0].span)
		default:
			run.call = &pendingCall{t: t, parent: ctx, name: "flow " + inv.Graph.ID, start: time.Now(), attrs: attrs,
				suffix: "/" + inv.Node.ID + "/" + inv.Graph.ID, callers: callers}
			return ctx, nil
		}
	}
	return t.tracer.Start(ctx, "flow "+inv.Graph.ID, oteltrace.WithAttributes(attrs...))
}

// endEval sets how the evaluation ended on its span: for a sub-graph call, how the
// call ended (Invoke reports no failure of the graph).
func (t *Tracing) endEval(span oteltrace.Span, run *tracingRun, err error) {
	inv := run.inv
	st, reason, info := interceptor.RunOutcome(inv, err, t.cfg.redact)
	if inv.Node == nil {
		// A hook that panicked in a parallel branch's goroutine left its node's span
		// open: the engine fails the run and raises the panic only once this returns.
		msg := "the engine did not report how the node ended"
		if info != nil {
			msg += ": " + info.Message
		}
		t.endOpen(run.spans, msg)
	}
	if inv.Node != nil && st == trace.Failed && err == nil && haltedFromOutside(inv) {
		// The run failed elsewhere and cancelled this call: like its nodes, the call
		// was interrupted, and the error is not its own.
		st, info = trace.Interrupted, nil
	}
	span.SetAttributes(AttrStatus.String(string(st)))
	if reason != "" {
		span.SetAttributes(AttrReason.String(reason))
	}
	if info != nil {
		t.fail(span, info)
	}
}

// callers returns the executions of inv's calling node, one per branch it runs in,
// found by node and call path among the run's spans (InterceptFlow is not given the
// calling branch). Their branch ids are read while their nodes run.
func (t *Tracing) callers(rs *runSpans, inv *flow.Invocation) []caller {
	path, ok := strings.CutSuffix(inv.Path, "/"+inv.Node.ID+"/"+inv.Graph.ID)
	if !ok {
		return nil
	}
	var found []caller
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for k, s := range rs.m {
		if k.n == inv.Node && k.c.RunID() == inv.RunID && k.c.CallPath() == path {
			found = append(found, caller{branch: k.c.BranchID(), span: s})
		}
	}
	return found
}

// haltedFromOutside reports whether a failed sub-graph call was halted by a node failing outside it.
func haltedFromOutside(inv *flow.Invocation) bool {
	_, _, err := inv.Outcome()
	var ne *flow.NodeError
	if !errors.As(err, &ne) {
		return false
	}
	return ne.Path != inv.Path && !strings.HasPrefix(ne.Path, inv.Path+"/")
}

// panicked ends the node spans a panic left open as FAILED, and records it on span,
// its text masked as the audit masks it: with the secret values of the run's
// variables too.
func (t *Tracing) panicked(span oteltrace.Span, run *tracingRun, p any) {
	msg := t.cfg.redactor(run.inv.Context).String(fmt.Sprintf("panic: %v", p))
	t.endOpen(run.spans, "the engine did not report how the node ended: "+msg)
	span.SetAttributes(AttrStatus.String(string(trace.Failed)))
	t.fail(span, &trace.ErrorInfo{Type: flow.ErrorTypeFlow, Code: flow.CodeTask, Message: msg})
}

// endOpen ends the node spans the engine never ended as FAILED with the message msg,
// redacted already.
func (t *Tracing) endOpen(rs *runSpans, msg string) {
	rs.mu.Lock()
	open := make([]oteltrace.Span, 0, len(rs.m))
	for _, s := range rs.m {
		open = append(open, s)
	}
	clear(rs.m)
	rs.closed = true
	rs.mu.Unlock()
	if len(open) == 0 {
		return
	}
	t.openSpans.Add(-int64(len(open)))
	info := &trace.ErrorInfo{Type: flow.ErrorTypeFlow, Code: "node_end_missing", Message: msg}
	for _, s := range open {
		s.SetAttributes(AttrStatus.String(string(trace.Failed)))
		t.fail(s, info)
		s.End()
	}
}

// fail records a failure on a span.
func (t *Tracing) fail(span oteltrace.Span, info *trace.ErrorInfo) {
	span.AddEvent("exception", oteltrace.WithAttributes(
		attribute.String("exception.type", info.Type+"/"+info.Code),
		attribute.String("exception.message", info.Message)))
	span.SetAttributes(AttrErrorCode.String(info.Code), AttrErrorType.String(info.Type))
	span.SetStatus(codes.Error, info.Message)
}

// OnNodeStart opens the node's span. The attributes are built only when the span
// records, so an unsampled node costs little more than the span's start.
func (t *Tracing) OnNodeStart(ctx context.Context, c *flow.Context, n *flow.Node) {
	t.startNode(ctx, c, n)
}

// StartNode starts the node's span, as OnNodeStart does, and returns ctx with it (see
// flow.NodeStarter), so the spans the node's task starts are its children.
func (t *Tracing) StartNode(ctx context.Context, c *flow.Context, n *flow.Node) context.Context {
	// A span with no trace to belong to would add a context per node for nothing.
	if span := t.startNode(ctx, c, n); span != nil && (span.SpanContext().IsValid() || span.IsRecording()) {
		return oteltrace.ContextWithSpan(ctx, span)
	}
	return ctx
}

// startNode starts and returns the node's span; nil if it has one already or its run is over.
func (t *Tracing) startNode(ctx context.Context, c *flow.Context, n *flow.Node) oteltrace.Span {
	rs := &t.stray
	if r, ok := ctx.Value(tracingKey{t}).(*tracingRun); ok {
		rs = r.spans
		if r.call != nil {
			ctx = oteltrace.ContextWithSpan(ctx, r.call.startSpan(c.BranchID()))
		}
	}
	k := spanKey{c, n}
	rs.mu.Lock()
	_, open := rs.m[k]
	closed := rs.closed
	rs.mu.Unlock()
	if open || closed {
		// Registered twice (replacing the span would leave it never ended), or over.
		return nil
	}
	var span oteltrace.Span
	if oteltrace.SpanFromContext(ctx).IsRecording() {
		_, span = t.tracer.Start(ctx, "node "+n.ID, oteltrace.WithAttributes(t.nodeAttrs(c, n)...))
	} else if _, span = t.tracer.Start(ctx, "node "+n.ID); span.IsRecording() {
		span.SetAttributes(t.nodeAttrs(c, n)...)
	}
	rs.mu.Lock()
	if rs.m == nil {
		rs.m = make(map[spanKey]oteltrace.Span)
	}
	rs.m[k] = span
	rs.mu.Unlock()
	t.openSpans.Add(1)
	return span
}

// nodeAttrs returns the attributes a node span starts with.
func (t *Tracing) nodeAttrs(c *flow.Context, n *flow.Node) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 9)
	if g := n.Graph(); g != nil {
		attrs = append(attrs, AttrGraphID.String(g.ID))
	}
	attrs = append(attrs, AttrNodeID.String(n.ID), AttrNodeType.String(n.Type.String()),
		AttrInstanceID.String(c.InstanceID()), AttrRunID.String(c.RunID()),
		AttrBranchID.String(c.BranchID()), AttrCallPath.String(c.CallPath()))
	if n.Title != "" {
		attrs = append(attrs, AttrNodeTitle.String(n.Title))
	}
	if a := t.cfg.agentOf(c, n); a != "" {
		attrs = append(attrs, AttrAgent.String(a))
	}
	return attrs
}

// OnNodeEnd ends the node's span with its status.
func (t *Tracing) OnNodeEnd(ctx context.Context, c *flow.Context, n *flow.Node, end flow.NodeEnd) {
	rs := t.spansOf(ctx)
	k := spanKey{c, n}
	rs.mu.Lock()
	span, ok := rs.m[k]
	delete(rs.m, k)
	rs.mu.Unlock()
	if !ok {
		return
	}
	t.openSpans.Add(-1)
	defer span.End()
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{AttrStatus.String(string(end.Status)), AttrStep.Int(end.Step)}
	if end.Attempt > 1 {
		attrs = append(attrs, AttrAttempt.Int(end.Attempt))
	}
	if end.Arrivals > 0 {
		attrs = append(attrs, AttrArrivals.Int(end.Arrivals))
	}
	switch end.Status {
	case trace.Suspended:
		attrs = append(attrs, AttrReason.String(t.cfg.redactor(c).String(end.Reason)))
	case trace.Failed:
		if end.Retrying {
			attrs = append(attrs, attribute.Bool("flow.retrying", true))
		}
		if end.Recovered {
			attrs = append(attrs, attribute.Bool("flow.recovered", true))
		}
	}
	span.SetAttributes(attrs...)
	if end.Status == trace.Failed {
		t.fail(span, interceptor.ErrorInfo(end.Err, t.cfg.redactor(c)))
	}
}

// OpenSpans returns how many node spans t holds open, in every run: zero when no
// run is in progress, as every span ends with its run.
func (t *Tracing) OpenSpans() int { return int(t.openSpans.Load()) }
