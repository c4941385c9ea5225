package interceptor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// A task that runs another graph on the same engine with its own context starts a
// separate run: both runs are audited completely, under their own run ids, and each
// run's metrics count its own nodes.
func TestNestedRunFromTask(t *testing.T) {
	mem := interceptor.NewMemory()
	m, err := interceptor.NewMetrics()
	require.NoError(t, err)
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithBatchSize(2)), 0),
		flow.WithInterceptor(m, 1))
	inner := chain(t, 2)
	var innerID string
	s := flow.NewSpec("outer")
	s.Start("s").LinkTo("x")
	s.Activity("x").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		res, err := e.EvalGraph(ctx, inner, flow.NewContext("inner"))
		if err == nil {
			innerID = res.RunID()
		}
		return err
	}).LinkTo("e")
	s.End("e")
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("outer"))
	require.NoError(t, err)
	require.NotEmpty(t, innerID)
	require.NoError(t, mem.Verify())
	assert.Len(t, mem.ByRun(res.RunID()), 2+2*3)
	assert.Len(t, mem.ByRun(innerID), 2+2*4)
	for id, n := range map[string]int{res.RunID(): 3, innerID: 4} {
		got, ok := m.Run(id)
		require.True(t, ok)
		assert.Equal(t, n, got.Started, id)
		assert.Equal(t, trace.Completed, got.Status)
	}
}

// A WithAttrs function that panics, in parallel branches: the run is not taken
// down (nor the process), and the records say what happened.
func TestAuditAttrsPanic(t *testing.T) {
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithAttrs(func(_ *flow.Context, n *flow.Node, _ *flow.NodeEnd) map[string]any {
		if n.ID == "b1" {
			panic("bad attrs password=hunter2")
		}
		return nil
	}))
	res, err := flow.NewEngine(flow.WithInterceptor(a, 0)).EvalGraph(context.Background(), parGraph(t, "g", 4, noop),
		flow.NewContextWith("i", map[string]any{"password": "hunter2"}))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	require.NoError(t, mem.Verify())
	b1 := mem.ByNode("b1")
	require.Len(t, b1, 2)
	for _, r := range b1 {
		assert.Equal(t, map[string]any{"!error": "attrs panicked: bad attrs password=***"}, r.Attrs)
	}
}

// countSink counts what trace.Count reports to it.
type countSink struct {
	mu sync.Mutex
	n  map[trace.Counter]int
}

func (c *countSink) Count(k trace.Counter, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[trace.Counter]int{}
	}
	c.n[k] += n
}

// A run started from a task, in the task's context, is a run of its own: what its
// code reports with trace.Count counts for it, as its nodes do, and not for the run
// that started it as well (which would count it twice where both runs' metrics are
// added up, as the OpenTelemetry counters are). Two Metrics on one run both count,
// and a sink put in the context by the application sees every event.
func TestNestedRunCountsOnce(t *testing.T) {
	m1, err := interceptor.NewMetrics()
	require.NoError(t, err)
	m2, err := interceptor.NewMetrics()
	require.NoError(t, err)
	e := flow.NewEngine(flow.WithInterceptor(m1, 0), flow.WithInterceptor(m2, 1))
	is := flow.NewSpec("inner")
	is.Start("s").LinkTo("x")
	is.Activity("x").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		trace.Count(ctx, trace.CountFallback, 1)
		trace.Count(ctx, trace.CountRejection, 1)
		return nil
	}).LinkTo("e")
	is.End("e")
	inner := build(t, is)
	// A run on an engine without metrics: what it reports counts for the run around it.
	bare := flow.NewEngine()
	var innerID string
	s := flow.NewSpec("outer")
	s.Start("s").LinkTo("x")
	s.Activity("x").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		trace.Count(ctx, trace.CountRejection, 1)
		res, err := e.EvalGraph(ctx, inner, flow.NewContext("inner"))
		if err != nil {
			return err
		}
		innerID = res.RunID()
		_, err = bare.EvalGraph(ctx, inner, flow.NewContext("bare"))
		return err
	}).LinkTo("e")
	s.End("e")
	app := &countSink{}
	res, err := e.EvalGraph(trace.WithCounterSink(context.Background(), app), build(t, s), flow.NewContext("outer"))
	require.NoError(t, err)
	require.NotEmpty(t, innerID)
	for _, m := range []*interceptor.Metrics{m1, m2} {
		outer, ok := m.Run(res.RunID())
		require.True(t, ok)
		assert.Equal(t, 2, outer.Rejections, "its own, and the bare run's")
		assert.Equal(t, 1, outer.Fallbacks, "the bare run's")
		in, ok := m.Run(innerID)
		require.True(t, ok)
		assert.Equal(t, 1, in.Rejections)
		assert.Equal(t, 1, in.Fallbacks)
	}
	assert.Equal(t, map[trace.Counter]int{trace.CountRejection: 3, trace.CountFallback: 2}, app.n)
}
