package flow_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

func oneNode(t *testing.T, task string) *flow.Graph {
	s := flow.NewSpec("sc")
	s.Start("s").LinkTo("x")
	s.Activity("x").SetTask(task).LinkTo("next")
	s.Activity("next").SetTask(`context.incr("next")`).LinkTo("e")
	s.End("e")
	return build(t, s)
}

// Several statements separated by ";" run in order, each seeing what the one before
// put; unset variables read as null.
func TestScriptStatementsAndNulls(t *testing.T) {
	e := flow.NewEngine()
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), oneNode(t, `context.put("a", 1); context.put("b", a + 1); context.put("c", b * 2);;`), fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, fc.Value("a"))
	assert.Equal(t, 2, fc.Value("b"))
	assert.Equal(t, 4, fc.Value("c"))

	fc = flow.NewContext("i")
	_, err = e.EvalGraph(context.Background(), oneNode(t, `context.put("isNil", u == nil); context.put("notTrue", u != true); context.put("got", context.get("u") == nil); context.put("dflt", context.getOrDefault("u", 5)); context.put("has", context.containsKey("u"))`), fc)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"isNil": true, "notTrue": true, "got": true, "dflt": 5, "has": false, "next": int64(1)}, fc.Vars())
}

// An operation that cannot apply fails the node with script_error, naming the node;
// nothing after the failing statement runs and the next node does not run.
func TestScriptOperationErrors(t *testing.T) {
	e := flow.NewEngine()
	for _, src := range []string{
		`context.put("before", 1); context.put("r", str + 1); context.put("after", 1)`,
		`context.put("before", 1); context.put("r", missing + 1); context.put("after", 1)`,
		`context.put("before", 1); context.put("r", 1 - str); context.put("after", 1)`,
	} {
		fc := flow.NewContextWith("i", map[string]any{"str": "a"})
		res, err := e.EvalGraph(context.Background(), oneNode(t, src), fc)
		require.Error(t, err, src)
		assert.Equal(t, flow.StatusFailed, res.Status)
		var ne *flow.NodeError
		require.ErrorAs(t, err, &ne)
		assert.Equal(t, "x", ne.Node, src)
		assert.Equal(t, flow.CodeScript, ne.Code, src)
		assert.Contains(t, err.Error(), `node "x" in graph "sc"`)
		assert.Equal(t, 1, fc.Value("before"), src)
		assert.Nil(t, fc.Value("after"), src)
		assert.Nil(t, fc.Value("next"), src)
	}
	// With literals the mismatch is known when the graph is loaded.
	err := e.Register(oneNode(t, `context.put("r", "a" + 1)`))
	assert.ErrorIs(t, err, flow.ErrCompile)
	assert.ErrorContains(t, err, `node "x"`)
}

// context.stop(), suspend() and interrupt() from scripts: the rest of the script runs
// (the node finishes); stop and suspend halt the run before the next node, and a
// resume goes on from there (suspend runs the node again); interrupt ends the branch.
func TestScriptRunControls(t *testing.T) {
	e := flow.NewEngine()

	g := oneNode(t, `context.incr("x"); context.stop(); context.put("rest", true)`)
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusStopped, res.Status)
	assert.Equal(t, true, fc.Value("rest"))
	assert.Nil(t, fc.Value("next"))
	assert.Equal(t, []string{"sc:next"}, res.Frontier.Pending())
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, int64(1), fc.Value("x"), "the stopping node does not run again")
	assert.Equal(t, int64(1), fc.Value("next"))

	g = oneNode(t, `context.incr("x"); ok == true || context.suspend("need ok"); context.put("rest", true)`)
	fc = flow.NewContext("i")
	res, err = e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, "need ok", res.Reason)
	assert.Equal(t, []string{"sc:x"}, res.Frontier.Pending())
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, int64(2), fc.Value("x"), "the suspended node runs again")
	assert.Equal(t, int64(1), fc.Value("next"))

	g = oneNode(t, `context.interrupt(); context.put("rest", true)`)
	fc = flow.NewContext("i")
	res, err = e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, true, fc.Value("rest"))
	assert.Nil(t, fc.Value("next"))
	assert.Nil(t, res.Frontier)
}

// Exclusive links are tried by priority, higher first, document order among equals;
// the link without a condition is the default whatever its priority; no match and no
// default fails with exclusive_no_match naming the gateway.
func TestExclusivePriorityAndDefault(t *testing.T) {
	s := flow.NewSpec("ex")
	s.Start("s").LinkTo("g")
	s.Exclusive("g").
		LinkTo("dflt", flow.LinkPriority(100)).
		LinkTo("low", flow.LinkWhen("a > 0"), flow.LinkPriority(1)).
		LinkTo("high", flow.LinkWhen("a > 5"), flow.LinkPriority(5)).
		LinkTo("twin1", flow.LinkWhen("a == 3"), flow.LinkPriority(2)).
		LinkTo("twin2", flow.LinkWhen("a == 3"), flow.LinkPriority(2))
	for _, id := range []string{"dflt", "low", "high", "twin1", "twin2"} {
		s.Activity(id).SetTask(`context.put("r", "` + id + `")`).LinkTo("e")
	}
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	for a, want := range map[int]string{10: "high", 3: "twin1", 2: "low", 0: "dflt"} {
		fc := flow.NewContextWith("i", map[string]any{"a": a})
		res, err := e.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, want, fc.Value("r"), "a=%d", a)
	}

	n := flow.NewSpec("nm")
	n.Start("s").LinkTo("g")
	n.Exclusive("g").LinkTo("x", flow.LinkWhen("a > 0"))
	n.End("x")
	res, err := e.EvalGraph(context.Background(), build(t, n), flow.NewContextWith("i", map[string]any{"a": 0}))
	require.ErrorIs(t, err, flow.ErrNoRoute)
	assert.Equal(t, flow.StatusFailed, res.Status)
	var ne *flow.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "exclusive_no_match", ne.Code)
	assert.Equal(t, "g", ne.Node)
	require.Len(t, res.ExecutionErrors, 1)
	assert.Equal(t, "exclusive_no_match", res.ExecutionErrors[0].Error.Code)
}

// Empty statements, which Java accepts, are skipped; a ";" inside a string is text,
// and an error still points at its place in the source.
func TestScriptEmptyStatements(t *testing.T) {
	e := flow.NewEngine()
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), oneNode(t, `; context.put("a", ";;"); ; context.put("b", 2) ;;; context.put("c", a + ";");`), fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, ";;", fc.Value("a"))
	assert.Equal(t, 2, fc.Value("b"))
	assert.Equal(t, ";;;", fc.Value("c"))

	g, err := flow.LoadGraph("x.yml", []byte("id: x\nlayout:\n  - {type: start}\n  - {id: t, task: 'context.put(\"a\", 1);; a + ) 2'}\n  - {type: end}\n"))
	require.NoError(t, err)
	err = flow.NewEngine().Register(g)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unexpected token Bracket(")") (1:27)`, "the position is the one in the source")
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
