package flow_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

func TestInclusiveZeroOneMany(t *testing.T) {
	s := flow.NewSpec("inc")
	s.Start("s").LinkTo("g")
	s.Inclusive("g").LinkTo("a", flow.LinkWhen("x >= 1")).LinkTo("b", flow.LinkWhen("x >= 2")).LinkTo("c", flow.LinkWhen("x >= 3"))
	for _, id := range []string{"a", "b", "c"} {
		s.Activity(id).SetTask(`context.incr("n")`).LinkTo("j")
	}
	s.Inclusive("j").SetTask(`context.put("joined", true)`).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	for x, want := range map[int]int64{1: 1, 2: 2, 3: 3} {
		res, fc, path := run(t, e, g, map[string]any{"x": x})
		require.NoError(t, res.Err)
		assert.Equal(t, want, fc.Value("n"), "x=%d", x)
		assert.Equal(t, true, fc.Value("joined"))
		assert.Equal(t, 1, count(path, "j"), "the join runs once: %v", path)
	}
	// Zero branches: the split activates nothing, the branch ends, the run completes.
	res, fc, path := run(t, e, g, map[string]any{"x": 0})
	require.NoError(t, res.Err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Nil(t, fc.Value("joined"))
	assert.NotContains(t, path, "j")
}

func count(path []string, id string) int {
	n := 0
	for _, p := range path {
		if p == id {
			n++
		}
	}
	return n
}

// TestInclusiveJoinAcrossLoopPasses: an inclusive split/join inside a cycle must count
// each pass separately (Solon never resets its counter).
func TestInclusiveJoinAcrossLoopPasses(t *testing.T) {
	s := flow.NewSpec("passes")
	s.Start("s").LinkTo("g")
	s.Inclusive("g").LinkTo("a", flow.LinkWhen("true")).LinkTo("b", flow.LinkWhen("round % 2 == 0"))
	s.Activity("a").SetTask(`context.incr("a")`).LinkTo("j")
	s.Activity("b").SetTask(`context.incr("b")`).LinkTo("j")
	s.Inclusive("j").SetTask(`context.incr("round")`).LinkTo("x")
	s.Exclusive("x").LinkTo("g", flow.LinkWhen("round < 4")).LinkTo("e")
	s.End("e")
	res, fc, path := run(t, flow.NewEngine(), build(t, s), map[string]any{"round": 0})
	require.NoError(t, res.Err)
	// rounds 0..3: a every pass (4), b on even rounds 0 and 2 (2); the join fires 4 times.
	assert.Equal(t, int64(4), fc.Value("a"))
	assert.Equal(t, int64(2), fc.Value("b"))
	assert.Equal(t, 4, count(path, "j"))
}

func TestParallelFailFastDoesNotWaitForSlowSibling(t *testing.T) {
	started := make(chan struct{})
	var slowErr error
	e := flow.NewEngine(
		flow.WithTaskFunc("slow", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
			close(started)
			select {
			case <-ctx.Done():
				slowErr = ctx.Err()
				return ctx.Err()
			case <-time.After(time.Minute):
				return nil
			}
		}),
		flow.WithTaskFunc("fail", func(context.Context, *flow.Context, *flow.Node) error {
			<-started
			return errors.New("inventory down")
		}),
	)
	s := flow.NewSpec("ff")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("slow").LinkTo("bad")
	s.Activity("slow").SetTask("@slow").LinkTo("j")
	s.Activity("bad").SetTask("@fail").LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	rec := &pathRec{}
	begin := time.Now()
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("ff"), flow.WithEvalInterceptor(rec, 0))
	require.Error(t, err)
	assert.Less(t, time.Since(begin), 30*time.Second, "fail-fast cancelled the slow sibling")
	assert.ErrorIs(t, slowErr, context.Canceled)
	assert.Equal(t, flow.StatusFailed, res.Status)
	var ne *flow.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "bad", ne.Node)
	assert.Len(t, res.Errors, 1, "the cancelled sibling is interrupted, not failed")
	assert.ElementsMatch(t, []flow.NodeStatus{"COMPLETED", "COMPLETED", "FAILED", "INTERRUPTED"}, rec.ends)
}

func TestParallelContinueOnError(t *testing.T) {
	e := flow.NewEngine(flow.WithTaskFunc("fail", func(_ context.Context, _ *flow.Context, n *flow.Node) error {
		return fmt.Errorf("%s unavailable", n.ID)
	}))
	s := flow.NewSpec("cc")
	s.Start("s").LinkTo("p")
	s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("ok").LinkTo("bad1").LinkTo("bad2")
	s.Activity("ok").SetTask(`context.put("ok", true)`).LinkTo("j")
	s.Activity("bad1").SetTask("@fail").LinkTo("j")
	s.Activity("bad2").SetTask("@fail").LinkTo("j")
	s.Parallel("j").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		f, _ := flow.GetAs[[]flow.BranchFailure](c, flow.KeyBranchFailures)
		c.Set("failedBranches", len(f))
		return nil
	}).LinkTo("e")
	s.End("e")
	res, fc, path := run(t, e, build(t, s), nil)
	require.NoError(t, res.Err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, true, fc.Value("ok"))
	assert.Equal(t, 2, fc.Value("failedBranches"), "the join reads every failure")
	assert.Len(t, res.BranchFailures, 2)
	assert.Len(t, res.Errors, 2)
	assert.Contains(t, path, "e")
}

func TestLoopItemsAreBranchScoped(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]any{}
	e := flow.NewEngine(flow.WithTaskFunc("see", func(_ context.Context, c *flow.Context, n *flow.Node) error {
		v, _ := c.Get("item")
		mu.Lock()
		seen[n.ID] = append(seen[n.ID], v)
		mu.Unlock()
		time.Sleep(time.Millisecond) // let the branches interleave
		return nil
	}))
	s := flow.NewSpec("scoped")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("l1").LinkTo("l2")
	s.Loop("l1", "item", []any{"a", "b", "c"}).LinkTo("x1")
	s.Activity("x1").SetTask("@see").LinkTo("c1")
	s.Loop("c1", "", nil).LinkTo("j")
	s.Loop("l2", "item", []any{1, 2, 3}).LinkTo("x2")
	s.Activity("x2").SetTask("@see").LinkTo("c2")
	s.Loop("c2", "", nil).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	res, _, path := run(t, e, build(t, s), nil)
	require.NoError(t, res.Err)
	assert.Equal(t, []any{"a", "b", "c"}, seen["x1"])
	assert.Equal(t, []any{1, 2, 3}, seen["x2"])
	assert.Equal(t, 1, count(path, "e"))
}

func TestLoopOverContextVariableAndEmpty(t *testing.T) {
	s := flow.NewSpec("lv")
	s.Start("s").LinkTo("l")
	s.Loop("l", "x", "items").LinkTo("b")
	s.Activity("b").SetTask(`context.put("sum", sum + x)`).LinkTo("c")
	s.Loop("c", "", nil).SetTask(`context.put("closed", true)`).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	res, fc, _ := run(t, e, g, map[string]any{"items": []int{1, 2, 3, 4}, "sum": 0})
	require.NoError(t, res.Err)
	assert.Equal(t, 10, fc.Value("sum"))
	assert.Equal(t, true, fc.Value("closed"))
	// No items: the flow still passes the closing node once.
	res, fc, path := run(t, e, g, map[string]any{"items": []int{}, "sum": 0})
	require.NoError(t, res.Err)
	assert.Equal(t, true, fc.Value("closed"))
	assert.NotContains(t, path, "b")
	// Not a list: an error with a stable code naming the loop node.
	res, _, _ = run(t, e, g, map[string]any{"items": 5})
	var ne *flow.NodeError
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, flow.CodeLoopItems, ne.Code)
	assert.Equal(t, "l", ne.Node)
}

func TestSubgraphCalledTwiceKeepsTwoTraceRecords(t *testing.T) {
	e := flow.NewEngine()
	c := flow.NewSpec("child")
	c.Start("cs").LinkTo("ce")
	c.End("ce")
	require.NoError(t, e.Register(build(t, c)))
	p := flow.NewSpec("parent")
	p.Start("s").LinkTo("call1")
	p.Activity("call1").SetTask("#child").LinkTo("call2")
	p.Activity("call2").SetTask("#child").LinkTo("e")
	p.End("e")
	res, _, _ := run(t, e, build(t, p), nil)
	require.NoError(t, res.Err)
	assert.Equal(t, map[string]string{"parent": "e", "parent/call1/child": "ce", "parent/call2/child": "ce"}, res.Last())
}

func TestScriptTypeErrorNamesNode(t *testing.T) {
	s := flow.NewSpec("te")
	s.Start("s").LinkTo("add")
	s.Activity("add").SetTask(`context.put("r", name + 1)`).LinkTo("e")
	s.End("e")
	res, _, _ := run(t, flow.NewEngine(), build(t, s), map[string]any{"name": "x"})
	var ne *flow.NodeError
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, "add", ne.Node)
	assert.Equal(t, flow.CodeScript, ne.Code)
	assert.Contains(t, res.Err.Error(), `node "add" in graph "te"`)
}

func TestNullSemantics(t *testing.T) {
	s := flow.NewSpec("null")
	s.Start("s").LinkTo("g")
	s.Exclusive("g").LinkTo("wait", flow.LinkWhen("approved != true")).LinkTo("go")
	s.End("wait")
	s.End("go")
	g := build(t, s)
	_, _, path := run(t, flow.NewEngine(), g, nil)
	assert.Contains(t, path, "wait", "an unset variable reads as null")
	_, _, path = run(t, flow.NewEngine(), g, map[string]any{"approved": true})
	assert.Contains(t, path, "go")
}

func TestScriptsAreAtomicAcrossParallelBranches(t *testing.T) {
	const n = 40
	s := flow.NewSpec("atomic")
	s.Start("s").LinkTo("p")
	p := s.Parallel("p")
	for i := range n {
		id := fmt.Sprintf("b%d", i)
		p.LinkTo(id)
		s.Activity(id).SetTask(`context.put("count", count + 1)`).LinkTo("j")
	}
	s.Parallel("j").LinkTo("e")
	s.End("e")
	res, fc, _ := run(t, flow.NewEngine(flow.WithMaxConcurrency(8)), build(t, s), map[string]any{"count": 0})
	require.NoError(t, res.Err)
	assert.Equal(t, n, fc.Value("count"))
}

func TestLoadErrors(t *testing.T) {
	s := flow.NewSpec("bad")
	s.Start("s").LinkTo("a")
	s.Activity("a").SetTask("@nosuch").LinkTo("b")
	s.Activity("b").SetTask(`context.put("x", `).LinkTo("e")
	s.End("e").SetWhen("@nocond")
	err := flow.NewEngine().Register(build(t, s))
	require.Error(t, err)
	assert.ErrorIs(t, err, flow.ErrUnknownTask)
	assert.ErrorIs(t, err, flow.ErrCompile)
	assert.ErrorIs(t, err, flow.ErrUnknownCond)
	assert.Contains(t, err.Error(), `"nosuch"`)

	sp := flow.NewSpec("dangling")
	sp.Start("s").LinkTo("nowhere")
	_, err = sp.Build()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `link from "s" to missing node "nowhere"`)

	dup := flow.NewSpec("dup")
	dup.Start("s")
	dup.End("s")
	_, err = dup.Build()
	assert.ErrorContains(t, err, "duplicate node id")
}

// order records hook calls to check interceptor ordering and InterceptFlow nesting.
type order struct {
	flow.NopInterceptor
	name string
	log  *[]string
	mu   *sync.Mutex
}

func (o order) add(s string) { o.mu.Lock(); *o.log = append(*o.log, s); o.mu.Unlock() }
func (o order) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	o.add(o.name + ">" + inv.Path)
	err := inv.Invoke(ctx)
	o.add(o.name + "<" + inv.Path)
	return err
}
func (o order) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	o.add(o.name + "+" + n.ID)
}

func TestInterceptorOrderAndSubgraphNesting(t *testing.T) {
	var log []string
	var mu sync.Mutex
	outer := order{name: "A", log: &log, mu: &mu}
	inner := order{name: "B", log: &log, mu: &mu}
	e := flow.NewEngine(flow.WithInterceptor(inner, 10), flow.WithInterceptor(outer, 1))
	c := flow.NewSpec("child")
	c.Start("cs")
	require.NoError(t, e.Register(build(t, c)))
	p := flow.NewSpec("parent")
	p.Start("call").SetTask("#child")
	_, err := e.EvalGraph(context.Background(), build(t, p), flow.NewContext("o"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"A>parent", "B>parent", "A+call", "B+call",
		"A>parent/call/child", "B>parent/call/child", "A+cs", "B+cs", "B<parent/call/child", "A<parent/call/child",
		"B<parent", "A<parent",
	}, log)
}

func TestContinueOnErrorAllBranchesFailIsAnError(t *testing.T) {
	e := flow.NewEngine(flow.WithTaskFunc("fail", func(_ context.Context, _ *flow.Context, n *flow.Node) error {
		return fmt.Errorf("%s down", n.ID)
	}))
	s := flow.NewSpec("allfail")
	s.Start("s").LinkTo("p")
	s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("a").LinkTo("b")
	s.Activity("a").SetTask("@fail").LinkTo("j")
	s.Activity("b").SetTask("@fail").LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	res, _, path := run(t, e, build(t, s), nil)
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.ErrorIs(t, res.Err, flow.ErrAllBranchesFailed)
	var ne *flow.NodeError
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, "p", ne.Node)
	assert.Equal(t, flow.CodeAllBranchesFailed, ne.Code)
	assert.Contains(t, res.Err.Error(), "a down")
	assert.Contains(t, res.Err.Error(), "b down")
	assert.NotContains(t, path, "e")
}

func TestUnknownScriptFunctionFailsAtLoad(t *testing.T) {
	s := flow.NewSpec("fn")
	s.Start("s").SetTask(`nosuchfn(1)`)
	err := flow.NewEngine().Register(build(t, s))
	require.ErrorIs(t, err, flow.ErrCompile)
	assert.Contains(t, err.Error(), `unknown function "nosuchfn"`)
	ok := flow.NewSpec("fn2")
	ok.Start("s").SetTask(`context.put("n", len("abc") + abs(-1))`)
	require.NoError(t, flow.NewEngine().Register(build(t, ok)), "builtins still work")
}

func TestRunContextEndsWithTheRun(t *testing.T) {
	var kept context.Context
	s := flow.NewSpec("keep")
	s.Start("s").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		kept = ctx
		return nil
	})
	res, _, _ := run(t, flow.NewEngine(), build(t, s), nil)
	require.NoError(t, res.Err)
	select {
	case <-kept.Done():
	default:
		t.Fatal("a task's context must be done once the run is over")
	}
	assert.ErrorIs(t, kept.Err(), context.Canceled)
}

func TestForgetDropsTheCompiledGraph(t *testing.T) {
	// A compiled graph binds the task registered when it was compiled; only after
	// Forget does EvalGraph compile again and see a task registered since.
	e := flow.NewEngine(flow.WithTaskFunc("t", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		c.Set("by", "first")
		return nil
	}))
	s := flow.NewSpec("once")
	s.Start("s").SetTask("@t")
	g := build(t, s)
	fc := flow.NewContext("f")
	_, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	e.RegisterTask("t", flow.TaskFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		c.Set("by", "second")
		return nil
	}))
	_, err = e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, "first", fc.Value("by"), "still the compiled form")
	e.Forget(g)
	_, err = e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, "second", fc.Value("by"), "compiled again after Forget")
}

// A parallel node takes every outgoing link whatever its condition, also when it has
// only one (a join, or a split of one branch).
func TestParallelIgnoresConditionsOnASingleLink(t *testing.T) {
	g, err := flow.LoadGraph("p.yml", []byte(`
id: p
layout:
  - {id: s, type: start}
  - {id: split, type: parallel, link: [a, b]}
  - {id: a, task: 'context.put("a", 1)', link: join}
  - {id: b, task: 'context.put("b", 1)', link: join}
  - {id: join, type: parallel, link: [{nextId: one, when: "false"}]}
  - {id: one, type: parallel, link: [{nextId: after, when: "1 > 2"}]}
  - {id: after, task: 'context.put("after", true)', link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	fc := flow.NewContext("i")
	res, err := flow.NewEngine().EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	v, _ := fc.Get("after")
	require.Equal(t, true, v)
	require.Equal(t, "e", res.LastNode("p"))
}
