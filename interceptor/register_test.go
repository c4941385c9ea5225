package interceptor_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/interceptor/otelflow"
	"github.com/flowteam/flowteam/trace"
)

// twiceGraph is s -> p -> {a: #child (cs, work, ce), b: recoverable failure} -> j -> e:
// 9 node executions (s, p, a, cs, work, ce, b, j, e), b FAILED and recovered.
func twiceGraph(t *testing.T, e *flow.Engine) *flow.Graph {
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("work")
	child.Activity("work").DoFunc(noop).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").SetTask("#child").LinkTo("j")
	s.Activity("b").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		return flow.NewRecoverableError("soft")
	}).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	return build(t, s)
}

// An Audit, a Metrics and a Tracing each registered on the engine and for the
// evaluation too: the run is recorded once, not twice under one run id.
func TestInterceptorsRegisteredTwice(t *testing.T) {
	mem := interceptor.NewMemory()
	var lines bytes.Buffer
	a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithSink(interceptor.NewJSONL(&lines)), interceptor.WithBatchSize(3))
	m, err := interceptor.NewMetrics()
	require.NoError(t, err)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tr := otelflow.NewTracing(tp)

	e := flow.NewEngine(flow.WithInterceptor(a, 0), flow.WithInterceptor(m, 0), flow.WithInterceptor(tr, 0))
	g := twiceGraph(t, e)
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"),
		flow.WithEvalInterceptor(a, 1), flow.WithEvalInterceptor(m, 2), flow.WithEvalInterceptor(tr, 3))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)

	recs := mem.ByRun(res.RunID())
	require.NoError(t, recs.Verify())
	assert.Len(t, recs, 2+2*9)
	assert.Equal(t, len(recs), bytes.Count(lines.Bytes(), []byte("\n")), "the JSONL sink got the same records")
	want := trace.Metrics{RunID: res.RunID(), InstanceID: "i", GraphID: "root", Status: trace.Completed,
		Started: 9, Completed: 8, Failed: 1, Recovered: 1}

	got, ok := m.Run(res.RunID())
	require.True(t, ok)
	got.Duration = 0
	assert.Equal(t, want, got)
	fromRecs := recs.Metrics(res.RunID())
	fromRecs.Duration = 0
	assert.Equal(t, want, fromRecs)

	assert.Zero(t, tr.OpenSpans())
	var evals, nodes int
	for _, s := range exp.GetSpans() {
		switch {
		case strings.HasPrefix(s.Name, "flow "):
			evals++
		case strings.HasPrefix(s.Name, "node "):
			nodes++
		}
	}
	assert.Equal(t, 2, evals, "one span for the root eval, one for the sub-graph call")
	assert.Equal(t, 9, nodes)
}

// A run audited twice that fails: still one terminal record per execution.
func TestAuditRegisteredTwiceFailing(t *testing.T) {
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem), quiet())
	e := flow.NewEngine(flow.WithInterceptor(a, 0))
	s := flow.NewSpec("f")
	s.Start("s").LinkTo("x")
	s.Activity("x").DoFunc(func(context.Context, *flow.Context, *flow.Node) error { return errors.New("fatal") }).LinkTo("e")
	s.End("e")
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"), flow.WithEvalInterceptor(a, 1))
	require.Error(t, err)
	recs := mem.ByRun(res.RunID())
	require.NoError(t, recs.Verify())
	assert.Equal(t, []string{"<run>:STARTED", "s:STARTED", "s:COMPLETED", "x:STARTED", "x:FAILED", "<run>:FAILED"}, statuses(recs))
}

// An Audit registered on the engine and for the evaluation asks its WithAttrs and
// WithAgentName functions once per event, as when registered once: they are the
// application's code, and may be costly or count what they see.
func TestAuditRegisteredTwiceCallbacksOnce(t *testing.T) {
	calls := func(twice bool) (attrs, agents int64) {
		var na, ng atomic.Int64
		a := interceptor.NewAudit(interceptor.WithSink(interceptor.NewMemory()), quiet(),
			interceptor.WithAttrs(func(*flow.Context, *flow.Node, *flow.NodeEnd) map[string]any {
				na.Add(1)
				return map[string]any{"k": "v"}
			}),
			interceptor.WithAgentName(func(*flow.Context, *flow.Node) string {
				ng.Add(1)
				return "agent"
			}))
		e := flow.NewEngine(flow.WithInterceptor(a, 0))
		var opts []flow.EvalOption
		if twice {
			opts = append(opts, flow.WithEvalInterceptor(a, 1))
		}
		res, err := e.EvalGraph(context.Background(), twiceGraph(t, e), flow.NewContext("i"), opts...)
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		return na.Load(), ng.Load()
	}
	attrs, agents := calls(false)
	assert.Equal(t, int64(2*9), attrs, "one call per record of the 9 node executions")
	attrs2, agents2 := calls(true)
	assert.Equal(t, attrs, attrs2, "WithAttrs")
	assert.Equal(t, agents, agents2, "WithAgentName")
}

// holdAt is an interceptor whose hook for node x (OnNodeStart or OnNodeEnd, by where)
// lets the asyncPanic interceptor give up on the run, and waits until the audit has
// closed it: registered between two registrations of one Audit, it makes the run
// close between the two calls of one event.
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

// Events that reach an Audit registered twice after its run closed (an interceptor
// gave up on the run while its node x went on) are written once, as with one
// registration, and not at all when the first call for the event came before the
// run closed and recorded it there. (The engine runs nothing after x: the run is
// over.)
func TestAuditRegisteredTwiceLateEvents(t *testing.T) {
	for _, c := range []struct {
		where string // where the run closes: in x's task, between two calls of x's start or end
		want  []string
	}{
		{"task", []string{"<run>:STARTED", "s:STARTED", "s:COMPLETED", "x:STARTED", "x:FAILED", "<run>:FAILED", "x:COMPLETED"}},
		{"start", []string{"<run>:STARTED", "s:STARTED", "s:COMPLETED", "x:STARTED", "x:FAILED", "<run>:FAILED", "x:COMPLETED"}},
		{"end", []string{"<run>:STARTED", "s:STARTED", "s:COMPLETED", "x:STARTED", "x:COMPLETED", "<run>:FAILED"}},
	} {
		for _, twice := range []string{"engine and eval", "engine twice"} {
			t.Run(c.where+"/"+twice, func(t *testing.T) {
				p := &asyncPanic{started: make(chan struct{}), done: make(chan struct{})}
				h := &holdAt{where: c.where, p: p, closed: make(chan struct{})}
				mem := interceptor.NewMemory()
				a := interceptor.NewAudit(interceptor.WithSink(mem), quiet())
				opts := []flow.Option{flow.WithInterceptor(a, 0), flow.WithInterceptor(p, 1), flow.WithInterceptor(h, 2)}
				var evalOpts []flow.EvalOption
				if twice == "engine twice" {
					opts = append(opts, flow.WithInterceptor(a, 3))
				} else {
					evalOpts = append(evalOpts, flow.WithEvalInterceptor(a, 3))
				}
				s := flow.NewSpec("g")
				s.Start("s").LinkTo("x")
				s.Activity("x").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
					h.hold(&flow.Node{ID: "x"}, "task")
					return nil
				}).LinkTo("e")
				s.End("e")
				g := build(t, s)
				assert.Panics(t, func() {
					_, _ = flow.NewEngine(opts...).EvalGraph(context.Background(), g, flow.NewContext("i"), evalOpts...)
				})
				close(h.closed)
				<-p.done
				assert.Equal(t, c.want, statuses(mem.Records()))
				// The late record is an orphan (Seq 0), which Verify accepts, of the run
				// it came late for (the engine has let go of the run by then).
				assert.NoError(t, mem.Verify())
				recs := mem.Records()
				assert.Equal(t, []string{recs[0].RunID}, recs.RunIDs())
				assert.NotEmpty(t, recs[0].RunID)
				// The run's metrics count x once, as the run recorded it.
				m := recs.Metrics(recs[0].RunID)
				assert.Equal(t, 2, m.Started)
				assert.Equal(t, m.Started, m.Ended())
			})
		}
	}
}
