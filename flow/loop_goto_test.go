package flow_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// An error policy's goto to a node outside the loop body leaves the loop, as a break
// would: the loop takes no further item and does not pass its closing node, the node
// gone to runs once, outside the loop (the item is no longer bound), and a suspension
// there is a frontier that restores and resumes.
func TestErrorGotoOutOfALoopLeavesTheLoop(t *testing.T) {
	s := flow.NewSpec("lg")
	s.Start("s").LinkTo("l")
	s.Loop("l", "it", []any{1, 2, 3}).LinkTo("body")
	s.Activity("body").SetTask(`context.put("log", log + string(it)); it != 2 || raise("BAD", "bad item", true)`).
		OnError("rescue", nil).LinkTo("close")
	s.Loop("close", "", nil).SetTask(`context.put("log", log + "C")`).LinkTo("e")
	s.Activity("rescue").SetTask(`context.put("log", log + "R" + string(it)); ok == true || context.suspend("check")`).LinkTo("e2")
	s.End("e")
	s.End("e2")
	g := build(t, s)
	e := flow.NewEngine()
	fc := flow.NewContextWith("i", map[string]any{"log": ""})
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, "12R<nil>", fc.Value("log"), "item 3 does not run, and rescue runs outside the loop")

	// The frontier goes through JSON, as a session stores it.
	b, err := json.Marshal(res.Frontier.State())
	require.NoError(t, err)
	var st flow.FrontierState
	require.NoError(t, json.Unmarshal(b, &st))
	fr, err := e.RestoreFrontier(g, st)
	require.NoError(t, err)
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), fr, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "12R<nil>R<nil>", fc.Value("log"), "neither the rest of the loop nor its closing node runs")
	assert.Equal(t, "e2", res.Last()["lg"])
}

// A goto from an inner loop's body to a node of the outer loop's body leaves the inner
// loop only: the outer loop goes on with its next item. A goto to a node of the body
// (here the closing node) stays in the loop.
func TestErrorGotoOutOfAnInnerLoop(t *testing.T) {
	s := flow.NewSpec("nl")
	s.Start("s").LinkTo("o")
	s.Loop("o", "a", []any{"x", "y"}).LinkTo("i")
	s.Loop("i", "b", []any{1, 2, 3}).LinkTo("body")
	s.Activity("body").SetTask(`context.put("log", log + a + string(b)); b != 2 || raise("BAD", "bad", true)`).
		OnError("next", nil).LinkTo("ic")
	s.Loop("ic", "", nil).SetTask(`context.put("log", log + "|")`).LinkTo("next")
	s.Activity("next").SetTask(`context.put("log", log + "N" + a + " ")`).LinkTo("oc")
	s.Loop("oc", "", nil).LinkTo("e")
	s.End("e")
	fc := flow.NewContextWith("i", map[string]any{"log": ""})
	res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "x1x2Nx y1y2Ny ", fc.Value("log"))

	s = flow.NewSpec("in")
	s.Start("s").LinkTo("l")
	s.Loop("l", "it", []any{1, 2, 3}).LinkTo("body")
	s.Activity("body").SetTask(`context.put("log", log + string(it)); it != 2 || raise("BAD", "bad", true)`).
		OnError("close", nil).LinkTo("more")
	s.Activity("more").SetTask(`context.put("log", log + "m")`).LinkTo("close")
	s.Loop("close", "", nil).SetTask(`context.put("log", log + "C")`).LinkTo("e")
	s.End("e")
	fc = flow.NewContextWith("i", map[string]any{"log": ""})
	res, err = flow.NewEngine().EvalGraph(context.Background(), build(t, s), fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "1m23mC", fc.Value("log"), "a goto inside the body skips to the closing node like continue")
}

// A goto out of the loop from one branch of a split inside the body: the other
// branch finishes its iteration and reaches the closing node, which does not run, as
// the flow left the loop; that holds across a suspension whose frontier goes through
// JSON while the other branch is still inside the left loop.
func TestErrorGotoOutOfALoopFromASplitBranch(t *testing.T) {
	s := flow.NewSpec("ls")
	s.Start("s").LinkTo("l")
	s.Loop("l", "it", []any{1, 2, 3}).LinkTo("p")
	s.Inclusive("p").LinkTo("a").LinkTo("b")
	s.Activity("a").SetTask(`context.put("log", log + "a" + string(it)); it != 2 || raise("BAD", "bad", true)`).
		OnError("rescue", nil).LinkTo("j")
	s.Activity("b").SetTask(`context.put("log", log + "b" + string(it)); it != 2 || ok == true || context.suspend("b")`).LinkTo("j")
	s.Inclusive("j").LinkTo("close")
	s.Loop("close", "", nil).SetTask(`context.put("log", log + "C")`).LinkTo("e")
	s.Activity("rescue").SetTask(`context.put("log", log + "R")`).LinkTo("e2")
	s.End("e")
	s.End("e2")
	g := build(t, s)
	fc := suspendThroughJSONAndResume(t, g)
	assert.Equal(t, "a1b1a2Rb2b2", fc.Value("log"), "b2 runs again on resume; the closing node never runs")
}

// A fatal error in a loop body inside a branch of a ContinueOnError parallel split
// withdraws the whole branch, loop included: the loop takes no further item and does
// not pass its closing node, so the failed branch never also arrives at the join; when
// the other branch failed too, the split fails with all_branches_failed.
func TestFatalErrorInALoopWithdrawsTheContinueBranch(t *testing.T) {
	for _, aFails := range []bool{false, true} {
		s := flow.NewSpec("cl")
		s.Start("s").LinkTo("p")
		s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("a").LinkTo("l")
		s.Activity("a").SetTask(`fail != true || raise("A", "a failed")`).LinkTo("j")
		s.Loop("l", "it", []any{1, 2, 3}).LinkTo("body")
		s.Activity("body").SetTask(`context.put("log", log + string(it)); it != 2 || raise("BAD", "bad item")`).LinkTo("lc")
		s.Loop("lc", "", nil).SetTask(`context.put("log", log + "C")`).LinkTo("j")
		s.Parallel("j").SetTask(`context.put("log", log + "J")`).LinkTo("e")
		s.End("e")
		fc := flow.NewContextWith("i", map[string]any{"log": "", "fail": aFails})
		res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), fc)
		if aFails {
			require.ErrorIs(t, err, flow.ErrAllBranchesFailed)
			assert.Equal(t, flow.StatusFailed, res.Status)
			assert.Equal(t, "12", fc.Value("log"), "neither item 3, the closing node nor the join runs")
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "12J", fc.Value("log"), "item 3 and the closing node do not run; the join runs for branch a")
		require.Len(t, res.BranchFailures, 1)
		assert.Equal(t, "body", res.BranchFailures[0].Node)
	}
}

// A goto from an outer loop's body into an inner loop's body stays in the outer
// iteration (the target is a node of its body) but opens no inner iteration: the inner
// closing node is then an ordinary node of the outer body, never the outer loop's
// closing node. (Recorded as the outer loop's closing, it made the flow go on from
// there after the outer loop, without the item, and run the real closing node as an
// ordinary node.) export.Validate warns about such a goto.
func TestErrorGotoIntoAnInnerLoopBody(t *testing.T) {
	s := flow.NewSpec("ng")
	s.Start("s").LinkTo("o")
	s.Loop("o", "a", []any{1, 2}).LinkTo("pre")
	s.Activity("pre").SetTask(`context.put("log", log + "P" + string(a)); a != 2 || raise("BAD", "bad", true)`).
		OnError("body", nil).LinkTo("i")
	s.Loop("i", "b", []any{1, 2}).LinkTo("body")
	s.Activity("body").SetTask(`context.put("log", log + "B" + string(a) + string(b))`).LinkTo("ic")
	s.Loop("ic", "", nil).SetTask(`context.put("log", log + "I ")`).LinkTo("post")
	s.Activity("post").SetTask(`context.put("log", log + "Q" + string(a) + " ")`).LinkTo("oc")
	s.Loop("oc", "", nil).SetTask(`context.put("log", log + "O")`).LinkTo("e")
	s.End("e")
	fc := flow.NewContextWith("i", map[string]any{"log": ""})
	res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "P1B11B12I Q1 P2B2<nil>I Q2 O", fc.Value("log"))
}

// A failure after a resume withdraws the branch as in one run: y2 suspends before
// x2 fails; resumed (through JSON), y2 runs again and reaches the inner join, then x2
// fails, and neither the inner join, item 3 nor the closing node runs, while the join
// runs for the other branch. (TestRestoredFailedBranchStaysWithdrawn covers a frontier
// that already holds the failure.)
func TestFatalErrorInALoopWithdrawsTheContinueBranchAcrossResume(t *testing.T) {
	fc := suspendThroughJSONAndResume(t, loopInAContinueBranch(t))
	assert.Equal(t, "y1x1Qy2y2x2J", fc.Value("log"), "neither the inner join, item 3 nor the closing node runs after x2")
	assert.Equal(t, int64(1), fc.Value("a"))
}

// loopInAContinueBranch is a ContinueOnError split whose branch l loops over 1, 2, 3,
// each iteration an inclusive split: y suspends at item 2 until ok is set, then x
// fails at item 2; the other branch a counts its runs. Each node logs its run.
func loopInAContinueBranch(t *testing.T) *flow.Graph {
	s := flow.NewSpec("clr")
	s.Start("s").LinkTo("p")
	s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("a").LinkTo("l")
	s.Activity("a").SetTask(`context.incr("a")`).LinkTo("j")
	s.Loop("l", "it", []any{1, 2, 3}).LinkTo("q")
	s.Inclusive("q").LinkTo("y").LinkTo("x")
	s.Activity("x").SetTask(`context.put("log", log + "x" + string(it)); it != 2 || raise("BAD", "bad item")`).LinkTo("qj")
	s.Activity("y").SetTask(`context.put("log", log + "y" + string(it)); it != 2 || ok == true || context.suspend("y")`).LinkTo("qj")
	s.Inclusive("qj").SetTask(`context.put("log", log + "Q")`).LinkTo("lc")
	s.Loop("lc", "", nil).SetTask(`context.put("log", log + "C")`).LinkTo("j")
	s.Parallel("j").SetTask(`context.put("log", log + "J")`).LinkTo("e")
	s.End("e")
	return build(t, s)
}

// suspendThroughJSONAndResume runs g with log "" until it suspends, restores its
// frontier from JSON, sets ok and resumes it to completion; it returns the context.
func suspendThroughJSONAndResume(t *testing.T, g *flow.Graph) *flow.Context {
	t.Helper()
	e := flow.NewEngine()
	fc := flow.NewContextWith("i", map[string]any{"log": ""})
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	b, err := json.Marshal(res.Frontier.State())
	require.NoError(t, err)
	var st flow.FrontierState
	require.NoError(t, json.Unmarshal(b, &st))
	fr, err := e.RestoreFrontier(g, st)
	require.NoError(t, err, "%s", b)
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), fr, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	return fc
}
