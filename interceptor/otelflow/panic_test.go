package otelflow_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor/otelflow"
)

// panicHook is an interceptor whose hook panics at node n3 (OnNodeStart or
// OnNodeEnd), or whose InterceptFlow panics after the run.
type panicHook struct {
	flow.NopInterceptor
	where string
}

func (p panicHook) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	if p.where == "start" && n.ID == "n3" {
		panic("hook start")
	}
}

func (p panicHook) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, _ flow.NodeEnd) {
	if p.where == "end" && n.ID == "n3" {
		panic("hook end")
	}
}

func (p panicHook) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	err := inv.Invoke(ctx)
	if p.where == "flow" {
		panic("flow after")
	}
	return err
}

// A panic out of another interceptor's hook: the Tracing interceptor ends the node
// spans the engine left open, as failed, and marks the run's span failed, instead of
// keeping those spans forever.
func TestTracingPanicEscapingRun(t *testing.T) {
	for _, where := range []string{"start", "end"} {
		t.Run(where, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
			tr := otelflow.NewTracing(tp)
			e := flow.NewEngine(flow.WithInterceptor(tr, 0), flow.WithInterceptor(panicHook{where: where}, 1))
			assert.Panics(t, func() { _, _ = e.EvalGraph(context.Background(), chain(t, 5), flow.NewContext("i")) })
			assert.Zero(t, tr.OpenSpans())
			spans := map[string]tracetest.SpanStub{}
			for _, sp := range exp.GetSpans() {
				spans[sp.Name] = sp
			}
			for _, name := range []string{"node n3", "flow chain5"} {
				sp, ok := spans[name]
				require.True(t, ok, name)
				assert.Equal(t, "FAILED", attrs(sp)[otelflow.AttrStatus].AsString(), name)
				assert.Equal(t, codes.Error, sp.Status.Code, name)
			}
		})
	}
}

// A hook panicking in a parallel branch's goroutine: the engine fails the run, lets
// the root InterceptFlow return, and raises the panic afterwards, so no panic goes
// through the Tracing otelflow. The span of the node whose hooks never ended must
// still end, as FAILED, rather than stay open forever.
func TestTracingBranchHookPanic(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	tr := otelflow.NewTracing(tp)
	// n3 runs on a goroutine of its own: the engine spawns every branch but the first
	// while it has room.
	e := flow.NewEngine(flow.WithMaxConcurrency(8), flow.WithInterceptor(tr, 0), flow.WithInterceptor(panicHook{where: "start"}, 1))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("p")
	par := s.Parallel("p")
	for i := range 4 {
		id := fmt.Sprintf("n%d", i)
		par.LinkTo(id)
		s.Activity(id).DoFunc(noop).LinkTo("j")
	}
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g := build(t, s)
	var p any
	func() {
		defer func() { p = recover() }()
		_, _ = e.EvalGraph(context.Background(), g, flow.NewContext("i"))
	}()
	bp, ok := p.(*flow.BranchPanic)
	require.True(t, ok, "the panic came from a branch goroutine: %v", p)
	assert.Equal(t, "hook start", bp.Value)
	assert.Zero(t, tr.OpenSpans())
	spans := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		spans[sp.Name] = sp
	}
	sp, ok := spans["node n3"]
	require.True(t, ok, "the span of n3 ended")
	assert.Equal(t, "FAILED", attrs(sp)[otelflow.AttrStatus].AsString())
	assert.Equal(t, "node_end_missing", attrs(sp)[otelflow.AttrErrorCode].AsString())
	assert.Equal(t, codes.Error, sp.Status.Code)
}

// asyncPanic is an interceptor that runs the graph on another goroutine and panics
// once node "x" has started, leaving that run going: the panic path then finds "x"
// open, and the node can end after the run was closed.
type asyncPanic struct {
	flow.NopInterceptor
	started   chan struct{} // closed by x's task
	done      chan struct{} // closed when the run on the other goroutine returns
	panicking atomic.Bool
}

func (p *asyncPanic) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	if inv.Node != nil {
		return inv.Invoke(ctx)
	}
	go func() {
		defer close(p.done)
		_ = inv.Invoke(ctx)
	}()
	<-p.started
	p.panicking.Store(true)
	panic("interceptor gave up")
}

// holdAt is an interceptor whose hook for node x (OnNodeStart or OnNodeEnd, by where)
// lets the asyncPanic interceptor give up on the run, and waits until the test has
// seen the run close: registered between two registrations of one Tracing, it makes
// the run close between the two calls of one event.
type holdAt struct {
	flow.NopInterceptor
	where  string
	p      *asyncPanic
	closed chan struct{}
}

func (h *holdAt) hold(n *flow.Node, where string) {
	if h.where == where && n.ID == "x" {
		close(h.p.started)
		<-h.closed
	}
}

func (h *holdAt) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) { h.hold(n, "start") }

func (h *holdAt) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, _ flow.NodeEnd) {
	h.hold(n, "end")
}

// secretPanicHook panics at node n3 with the value of the run's apiKey variable.
type secretPanicHook struct{ flow.NopInterceptor }

func (secretPanicHook) OnNodeStart(_ context.Context, c *flow.Context, n *flow.Node) {
	if n.ID == "n3" {
		v, _ := c.GetString("apiKey")
		panic("bad key " + v)
	}
}

// A panic's text is masked as the audit masks it: with the secret values of the
// run's variables too, on the run's span and on the node spans it left open.
func TestTracingPanicMasksVariables(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	tr := otelflow.NewTracing(tp)
	e := flow.NewEngine(flow.WithInterceptor(tr, 0), flow.WithInterceptor(secretPanicHook{}, 1))
	fc := flow.NewContext("i")
	fc.Set("apiKey", "k-1234567890")
	assert.Panics(t, func() { _, _ = e.EvalGraph(context.Background(), chain(t, 5), fc) })
	spans := exp.GetSpans()
	require.NotEmpty(t, spans)
	failed := 0
	for _, sp := range spans {
		if sp.Status.Code != codes.Error {
			continue
		}
		failed++
		assert.NotContains(t, sp.Status.Description, "k-1234567890", sp.Name)
		assert.Contains(t, sp.Status.Description, "bad key ***", sp.Name)
		for _, ev := range sp.Events {
			for _, kv := range ev.Attributes {
				assert.NotContains(t, kv.Value.Emit(), "k-1234567890", sp.Name)
			}
		}
	}
	assert.Equal(t, 2, failed, "the run's span and node n3's")
}
