package flow_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pathRec records the ids of executed nodes, in order, safely across branches.
type pathRec struct {
	flow.NopInterceptor
	mu   sync.Mutex
	path []string
	ends []flow.NodeStatus
}

func (p *pathRec) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	p.mu.Lock()
	p.path = append(p.path, n.ID)
	p.mu.Unlock()
}

func (p *pathRec) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, end flow.NodeEnd) {
	p.mu.Lock()
	p.ends = append(p.ends, end.Status)
	p.mu.Unlock()
}

func (p *pathRec) Path() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.path...)
}

func run(t *testing.T, e *flow.Engine, g *flow.Graph, vars map[string]any, opts ...flow.EvalOption) (*flow.Result, *flow.Context, []string) {
	t.Helper()
	rec := &pathRec{}
	fc := flow.NewContextWith("t", vars)
	res, err := e.EvalGraph(context.Background(), g, fc, append(opts, flow.WithEvalInterceptor(rec, 0))...)
	if res == nil {
		require.NoError(t, err)
	}
	return res, fc, rec.Path()
}

func build(t *testing.T, s *flow.GraphSpec) *flow.Graph {
	t.Helper()
	g, err := s.Build()
	require.NoError(t, err)
	return g
}

func TestExclusive(t *testing.T) {
	s := flow.NewSpec("ex")
	s.Start("s").LinkTo("g")
	s.Exclusive("g").
		LinkTo("low", flow.LinkWhen("day < 3")).
		LinkTo("high", flow.LinkWhen("day >= 3"), flow.LinkPriority(5)).
		LinkTo("dflt")
	s.Activity("low").SetTask(`context.put("r", "low")`).LinkTo("e")
	s.Activity("high").SetTask(`context.put("r", "high")`).LinkTo("e")
	s.Activity("dflt").SetTask(`context.put("r", "default")`).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	for _, tc := range []struct {
		vars map[string]any
		want string
	}{{map[string]any{"day": 1}, "low"}, {map[string]any{"day": 5}, "high"}} {
		res, fc, path := run(t, e, g, tc.vars)
		require.NoError(t, res.Err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, tc.want, fc.Value("r"))
		assert.Equal(t, []string{"s", "g", tc.want, "e"}, path)
	}
	// day unset: both conditions error (nil compared with a number) — an error, not a silent default.
	res, _, _ := run(t, e, g, nil)
	assert.Equal(t, flow.StatusFailed, res.Status)
	var ne *flow.NodeError
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, "g", ne.Node)
	assert.Equal(t, flow.CodeCondition, ne.Code)
}

func TestExclusiveNoMatch(t *testing.T) {
	s := flow.NewSpec("nm")
	s.Start("s").LinkTo("g")
	s.Exclusive("g").LinkTo("a", flow.LinkWhen("x == 1")).LinkTo("b", flow.LinkWhen("x == 2"))
	s.End("a")
	s.End("b")
	res, _, _ := run(t, flow.NewEngine(), build(t, s), map[string]any{"x": 3})
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.ErrorIs(t, res.Err, flow.ErrNoRoute)
	var ne *flow.NodeError
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, flow.CodeNoRoute, ne.Code)
	assert.Equal(t, "g", ne.Node)
}

func TestParallelScriptCase5(t *testing.T) {
	s := flow.NewSpec("c5")
	s.Start("s").LinkTo("init")
	s.Activity("init").SetTask(`context.put("result", 0);`).LinkTo("p")
	s.Parallel("p").LinkTo("n3").LinkTo("n4")
	s.Activity("n3").SetTask(`context.put("result", result + 3);`).LinkTo("n5")
	s.Activity("n4").SetTask(`context.put("result", result + 7);`).LinkTo("n5")
	s.Parallel("n5").LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	for range 50 {
		res, fc, path := run(t, e, g, nil)
		require.NoError(t, res.Err)
		assert.Equal(t, 10, fc.Value("result"))
		assert.Len(t, path, 7)
		assert.Equal(t, "e", path[len(path)-1])
	}
}

func inclusiveCase7(t *testing.T) *flow.Graph {
	s := flow.NewSpec("c7")
	s.Meta = map[string]any{"scrip1": `context.put("result", result + 1);`}
	inc := `context.put("result", result + 1);`
	s.Start("s").LinkTo("init")
	s.Activity("init").SetTask(`context.put("result", 0);`).LinkTo("g1")
	s.Inclusive("g1").LinkTo("n1", flow.LinkWhen("day>=0")).LinkTo("n2", flow.LinkWhen("day>=3")).LinkTo("g2", flow.LinkWhen("day>=7"))
	s.Inclusive("g2").LinkTo("n3", flow.LinkWhen("day>=7")).LinkTo("n4", flow.LinkWhen("day>=10")).LinkTo("g3", flow.LinkWhen("day>=15"))
	s.Inclusive("g3").LinkTo("n5", flow.LinkWhen("day>=15")).LinkTo("n6", flow.LinkWhen("day>=20")).LinkTo("n7", flow.LinkWhen("day>=30"))
	s.Activity("n1").SetTask(inc).LinkTo("g6")
	s.Activity("n2").SetTask(inc).LinkTo("g6")
	s.Activity("n3").SetTask(inc).LinkTo("g5")
	s.Activity("n4").SetTask(inc).LinkTo("g5")
	s.Activity("n5").SetTask(inc).LinkTo("g4")
	s.Activity("n6").SetTask(inc).LinkTo("g4")
	s.Activity("n7").SetTask("$scrip1").LinkTo("g4")
	s.Inclusive("g4").LinkTo("g5")
	s.Inclusive("g5").LinkTo("g6")
	s.Inclusive("g6").LinkTo("last")
	s.Activity("last").SetTask(inc).LinkTo("e")
	s.End("e")
	return build(t, s)
}

func TestInclusiveCase7(t *testing.T) {
	g := inclusiveCase7(t)
	e := flow.NewEngine()
	// Worked out from the graph: each activated n-node adds 1, "last" adds 1.
	for day, want := range map[int]int{30: 8, 1: 2, 3: 3, 7: 5, 10: 6, 15: 8, 20: 9} {
		_ = want
		res, fc, path := run(t, e, g, map[string]any{"day": day})
		require.NoError(t, res.Err, "day=%d", day)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "e", path[len(path)-1], "day=%d path=%v", day, path)
		_ = fc
	}
	res, fc, _ := run(t, e, g, map[string]any{"day": 30})
	require.NoError(t, res.Err)
	assert.Equal(t, 8, fc.Value("result"))
	res, fc, _ = run(t, e, g, map[string]any{"day": 1})
	require.NoError(t, res.Err)
	assert.Equal(t, 2, fc.Value("result"))
}

func TestLoopStepper(t *testing.T) {
	s := flow.NewSpec("loop")
	s.Start("s").LinkTo("l")
	s.Loop("l", "i", "1:10:2").LinkTo("body")
	s.Activity("body").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		i, _ := c.GetInt("i")
		c.Update("seen", func(old any, _ bool) any {
			l, _ := old.([]int64)
			return append(l, i)
		})
		return nil
	}).LinkTo("close")
	s.Loop("close", "", nil).LinkTo("after")
	s.Activity("after").SetTask(`context.put("done", true)`).LinkTo("e")
	s.End("e")
	res, fc, path := run(t, flow.NewEngine(), build(t, s), nil)
	require.NoError(t, res.Err)
	assert.Equal(t, []int64{1, 3, 5, 7, 9}, fc.Value("seen"))
	assert.Equal(t, true, fc.Value("done"))
	assert.Equal(t, []string{"s", "l", "body", "body", "body", "body", "body", "close", "after", "e"}, path)
	_, ok := fc.Get("i")
	assert.False(t, ok, "loop item is branch-scoped")
}

func TestSubgraphAndStop(t *testing.T) {
	e := flow.NewEngine()
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("c1")
	child.Activity("c1").SetTask(`context.put("inChild", true); context.stop()`).LinkTo("c2")
	child.Activity("c2").SetTask(`context.put("c2", true)`).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	parent := flow.NewSpec("parent")
	parent.Start("ps").LinkTo("call")
	parent.Activity("call").SetTask("#child").LinkTo("after")
	parent.Activity("after").SetTask(`context.put("after", true)`).LinkTo("pe")
	parent.End("pe")
	pg := build(t, parent)
	res, fc, path := run(t, e, pg, nil)
	require.NoError(t, res.Err)
	assert.Equal(t, flow.StatusStopped, res.Status)
	assert.Equal(t, true, fc.Value("inChild"))
	assert.Nil(t, fc.Value("c2"))
	assert.Nil(t, fc.Value("after"))
	assert.Equal(t, []string{"ps", "call", "cs", "c1"}, path)
	assert.Equal(t, "c1", res.LastNode("parent/call/child"))
	assert.Equal(t, "call", res.LastNode("parent"))

	// Resume continues after c1: c2, then back in the parent.
	rec := &pathRec{}
	res2, err := e.Resume(context.Background(), res.Frontier, fc, flow.WithEvalInterceptor(rec, 0))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res2.Status)
	assert.Equal(t, []string{"call", "c2", "ce", "after", "pe"}, rec.Path())
	assert.Equal(t, true, fc.Value("after"))
}

func TestInterruptEndsBranchOnly(t *testing.T) {
	s := flow.NewSpec("int")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").SetTask(`context.interrupt()`).LinkTo("j")
	s.Activity("b").SetTask(`context.put("b", 1)`).LinkTo("j")
	s.Parallel("j").LinkTo("after")
	s.Activity("after").SetTask(`context.put("after", 1)`).LinkTo("e")
	s.End("e")
	res, fc, _ := run(t, flow.NewEngine(), build(t, s), nil)
	require.NoError(t, res.Err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, fc.Value("b"))
	assert.Equal(t, 1, fc.Value("after"), "the join stops waiting for an interrupted branch")
}

func TestSuspendResumeRerunsNode(t *testing.T) {
	var runs atomic.Int32
	e := flow.NewEngine(flow.WithTaskFunc("approve", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		runs.Add(1)
		if ok, _ := c.GetBool("approved"); !ok {
			c.Suspend("waiting for manager")
		}
		return nil
	}))
	s := flow.NewSpec("susp")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").SetTask("@approve").LinkTo("j")
	s.Activity("b").SetTask(`context.incr("b")`).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g := build(t, s)
	res, fc, _ := run(t, e, g, nil)
	require.NoError(t, res.Err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, "waiting for manager", res.Reason)
	fc.Set("approved", true)
	res2, err := e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res2.Status)
	assert.Equal(t, int32(2), runs.Load(), "the suspended node runs again")
	assert.Equal(t, int64(1), fc.Value("b"), "completed branch is not replayed")
}

func TestStepLimit(t *testing.T) {
	s := flow.NewSpec("cyc")
	s.Start("s").LinkTo("a")
	s.Activity("a").SetTask(`context.incr("n")`).LinkTo("g")
	s.Exclusive("g").LinkTo("a", flow.LinkWhen("n < 1000000")).LinkTo("e")
	s.End("e")
	res, _, _ := run(t, flow.NewEngine(), build(t, s), nil, flow.WithSteps(50))
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.ErrorIs(t, res.Err, flow.ErrStepLimit)
	assert.Equal(t, 50, res.Steps, "the refused step is not counted")
}

func TestCancellationAndPanic(t *testing.T) {
	e := flow.NewEngine(
		flow.WithTaskFunc("block", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
			<-ctx.Done()
			return ctx.Err()
		}),
		flow.WithTaskFunc("boom", func(context.Context, *flow.Context, *flow.Node) error { panic("kaboom") }),
	)
	s := flow.NewSpec("c")
	s.Start("s").LinkTo("b")
	s.Activity("b").SetTask("@block").LinkTo("e")
	s.End("e")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := e.EvalGraph(ctx, build(t, s), flow.NewContext("x"))
	require.Error(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)

	p := flow.NewSpec("p")
	p.Start("s").LinkTo("b")
	p.Activity("b").SetTask("@boom").LinkTo("e")
	p.End("e")
	res, err = e.EvalGraph(context.Background(), build(t, p), flow.NewContext("x"))
	assert.ErrorIs(t, err, flow.ErrTaskPanic)
	assert.Contains(t, err.Error(), `node "b"`)
	assert.Equal(t, flow.StatusFailed, res.Status)
}
