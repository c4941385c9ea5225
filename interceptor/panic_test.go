package interceptor_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
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

// A panic out of another interceptor: the audit stays complete, and the Metrics
// interceptor ends the run too (failed, counting the execution left open as failed,
// as the audit does) instead of keeping it live forever without a status.
func TestPanicEscapingRun(t *testing.T) {
	for _, where := range []string{"start", "end", "flow"} {
		for _, idx := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s@%d", where, idx), func(t *testing.T) {
				mem := interceptor.NewMemory()
				var ended []trace.Metrics
				m, err := interceptor.NewMetrics(interceptor.WithRunMetrics(func(x trace.Metrics) { ended = append(ended, x) }))
				require.NoError(t, err)
				e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem), quiet()), 1),
					flow.WithInterceptor(m, 1), flow.WithInterceptor(panicHook{where: where}, idx))
				assert.Panics(t, func() { _, _ = e.EvalGraph(context.Background(), chain(t, 5), flow.NewContext("i")) })
				require.NoError(t, mem.Verify())
				ids := mem.RunIDs()
				require.Len(t, ids, 1)
				require.Len(t, ended, 1, "the run ended")
				got, ok := m.Run(ids[0])
				require.True(t, ok)
				want := mem.Metrics(ids[0])
				if where == "flow" && idx == 0 {
					// The panic comes after the run ended inside the audit and the metrics.
					assert.Equal(t, trace.Completed, got.Status)
				} else {
					assert.Equal(t, trace.Failed, got.Status)
				}
				got.Duration, want.Duration = 0, 0
				assert.Equal(t, want, got)
				assert.Equal(t, got.Started, got.Ended())
			})
		}
	}
}

// asyncPanic is an interceptor that runs the graph on another goroutine and panics
// once node "x" has started, leaving that run going: the audit's panic path then
// finds "x" open, and the node can end while the audit finishes the run.
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

// The audit's panic path warns "a node execution had no end" only for the executions
// it records as FAILED (node_end_missing), not for one that ended meanwhile, whose own
// terminal record the audit kept.
func TestPanicPathWarnsOnlyForRecorded(t *testing.T) {
	p := &asyncPanic{started: make(chan struct{}), done: make(chan struct{})}
	release := make(chan struct{})
	var released atomic.Bool
	releaseX := func() {
		if released.CompareAndSwap(false, true) {
			close(release)
		}
	}
	var logs bytes.Buffer
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		interceptor.WithAgentName(func(_ *flow.Context, n *flow.Node) string {
			if n.ID == "x" && p.panicking.Load() && !released.Load() {
				// Asked while the audit finishes the run: let x end now, and wait until
				// the run on the other goroutine is over.
				releaseX()
				<-p.done
			}
			return ""
		}))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("x")
	s.Activity("x").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		close(p.started)
		<-release
		return nil
	}).LinkTo("e")
	s.End("e")
	e := flow.NewEngine(flow.WithInterceptor(a, 0), flow.WithInterceptor(p, 1))
	assert.Panics(t, func() { _, _ = e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i")) })
	releaseX()
	<-p.done

	var missing []string
	for _, r := range mem.Records() {
		if r.Error != nil && r.Error.Code == "node_end_missing" {
			missing = append(missing, r.NodeID)
		}
	}
	warned := strings.Count(logs.String(), "had no end")
	assert.Equal(t, len(missing), warned, "one warning per node_end_missing record %v:\n%s", missing, logs.String())
}
