package otelflow

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// Instruments records what an interceptor.Metrics counts as OpenTelemetry metrics
// (pass it with interceptor.WithRecorder):
//
//	flowteam.runs            counter    {run}   flow.graph.id, flow.status
//	flowteam.run.duration    histogram  s       flow.graph.id, flow.status
//	flowteam.nodes           counter    {node}  flow.graph.id, flow.status
//	flowteam.node.duration   histogram  s       flow.graph.id, flow.node.type, flow.status
//	flowteam.retries         counter    {retry}     flow.graph.id
//	flowteam.recovered       counter    {error}     flow.graph.id
//	flowteam.fallbacks       counter    {fallback}  flow.graph.id
//	flowteam.rejections      counter    {rejection} flow.graph.id
//
// Node counts are added when the run ends (one call per status), node durations as
// nodes end. flow.graph.id is the root graph's id, except for node durations, which
// carry the node's own graph. Each evaluation counts once, when it ends, also where
// several share a run id (interceptor.Metrics.Run adds those up).
type Instruments struct {
	runs, nodes, retries, recovered, fallbacks, rejections metric.Int64Counter
	runDur, nodeDur                                        metric.Float64Histogram
	sets                                                   sync.Map // attrKey -> *attrOpts
}

var _ interceptor.MetricsRecorder = (*Instruments)(nil)

type attrKey struct {
	graph, typ string
	status     trace.Status
}

// NewInstruments creates the instruments with a meter of mp. The error reports an
// instrument the meter provider could not create.
func NewInstruments(mp metric.MeterProvider) (*Instruments, error) {
	mt := mp.Meter(ScopeName)
	var (
		in   Instruments
		errs [8]error
	)
	in.runs, errs[0] = mt.Int64Counter("flowteam.runs", metric.WithUnit("{run}"), metric.WithDescription("Runs that ended, by outcome."))
	in.nodes, errs[1] = mt.Int64Counter("flowteam.nodes", metric.WithUnit("{node}"), metric.WithDescription("Node executions that ended, by status."))
	in.retries, errs[2] = mt.Int64Counter("flowteam.retries", metric.WithUnit("{retry}"), metric.WithDescription("Failed node attempts that were retried."))
	in.recovered, errs[3] = mt.Int64Counter("flowteam.recovered", metric.WithUnit("{error}"), metric.WithDescription("Node failures the error policy recovered from."))
	in.fallbacks, errs[4] = mt.Int64Counter("flowteam.fallbacks", metric.WithUnit("{fallback}"), metric.WithDescription("Fallback paths taken."))
	in.rejections, errs[5] = mt.Int64Counter("flowteam.rejections", metric.WithUnit("{rejection}"), metric.WithDescription("Decisions a human rejected."))
	in.runDur, errs[6] = mt.Float64Histogram("flowteam.run.duration", metric.WithUnit("s"), metric.WithDescription("Wall time of runs."))
	in.nodeDur, errs[7] = mt.Float64Histogram("flowteam.node.duration", metric.WithUnit("s"), metric.WithDescription("Wall time of node executions."))
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("flowteam metrics: %w", err)
		}
	}
	return &in, nil
}

// attrOpts are the options that give a measurement a combination of attributes, as
// the slices Add and Record take: passing them with ... allocates nothing, where a
// single option would be put in a new slice at every call (the instruments are
// interfaces, so the compiler cannot keep it on the stack).
type attrOpts struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

// attrs returns the options for a combination of attributes, built once.
func (in *Instruments) attrs(k attrKey) *attrOpts {
	if o, ok := in.sets.Load(k); ok {
		return o.(*attrOpts)
	}
	kv := []attribute.KeyValue{AttrGraphID.String(k.graph)}
	if k.typ != "" {
		kv = append(kv, AttrNodeType.String(k.typ))
	}
	if k.status != "" {
		kv = append(kv, AttrStatus.String(string(k.status)))
	}
	set := metric.WithAttributeSet(attribute.NewSet(kv...))
	o, _ := in.sets.LoadOrStore(k, &attrOpts{add: []metric.AddOption{set}, rec: []metric.RecordOption{set}})
	return o.(*attrOpts)
}

// RecordRun records an evaluation's outcome, duration and counts.
func (in *Instruments) RecordRun(ctx context.Context, m trace.Metrics) {
	run := in.attrs(attrKey{graph: m.GraphID, status: m.Status})
	in.runs.Add(ctx, 1, run.add...)
	in.runDur.Record(ctx, m.Duration.Seconds(), run.rec...)
	for _, c := range []struct {
		s trace.Status
		n int
	}{{trace.Completed, m.Completed}, {trace.Failed, m.Failed}, {trace.Interrupted, m.Interrupted}, {trace.Suspended, m.Suspended}} {
		if c.n > 0 {
			in.nodes.Add(ctx, int64(c.n), in.attrs(attrKey{graph: m.GraphID, status: c.s}).add...)
		}
	}
	graph := in.attrs(attrKey{graph: m.GraphID})
	for _, c := range []struct {
		ctr metric.Int64Counter
		n   int
	}{{in.retries, m.Retries}, {in.recovered, m.Recovered}, {in.fallbacks, m.Fallbacks}, {in.rejections, m.Rejections}} {
		if c.n > 0 {
			c.ctr.Add(ctx, int64(c.n), graph.add...)
		}
	}
}

// RecordNode records a node execution's duration.
func (in *Instruments) RecordNode(ctx context.Context, n *flow.Node, end flow.NodeEnd) {
	k := attrKey{typ: n.Type.String(), status: end.Status}
	if g := n.Graph(); g != nil {
		k.graph = g.ID
	}
	in.nodeDur.Record(ctx, end.Duration.Seconds(), in.attrs(k).rec...)
}
