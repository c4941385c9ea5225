package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// suspendOnce suspends at its node the first time it runs in an instance.
func suspendOnce(_ context.Context, c *flow.Context, n *flow.Node) error {
	first := false
	c.Update("suspended."+n.ID, func(_ any, ok bool) any { first = !ok; return true })
	if first {
		c.Suspend("wait at " + n.ID)
	}
	return nil
}

// pendingGraph parks a frontier with a frame of every kind: an inclusive split whose
// branch a already arrived at the join while branch b is inside a loop, whose body
// suspended inside a sub-graph call.
func pendingGraph(t *testing.T) (*flow.Engine, *flow.Graph, flow.FrontierState) {
	e := flow.NewEngine(flow.WithTaskFunc("wait", suspendOnce))
	c := flow.NewSpec("child")
	c.Start("cs").LinkTo("cw")
	c.Activity("cw").SetTask("@wait").LinkTo("ce")
	c.End("ce")
	require.NoError(t, e.Register(build(t, c)))
	s := flow.NewSpec("pending")
	s.Start("s").LinkTo("p")
	s.Inclusive("p").LinkTo("a").LinkTo("l") // its branches run in order: a arrives first
	s.Activity("a").LinkTo("j")
	s.Loop("l", "i", "0:2").LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("lc")
	s.Loop("lc", "", nil).LinkTo("j")
	s.Inclusive("j").SetTask(`context.put("joined", true)`).LinkTo("e")
	s.End("e")
	g := build(t, s)
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("p"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	st := res.Frontier.State()
	kinds := map[string]int{}
	for _, fs := range st.Frames {
		kinds[fs.Kind]++
	}
	require.Equal(t, map[string]int{"call": 2, "split": 1, "loop": 1}, kinds, "%+v", st)
	return e, g, st
}

// frameOf returns the index of the first frame of st that matches.
func frameOf(t *testing.T, st *flow.FrontierState, match func(flow.FrameState) bool) int {
	for i, fs := range st.Frames {
		if match(fs) {
			return i
		}
	}
	t.Fatalf("no such frame in %+v", st)
	return -1
}

func isKind(kind string) func(flow.FrameState) bool {
	return func(fs flow.FrameState) bool { return fs.Kind == kind }
}

func isSubCall(fs flow.FrameState) bool { return fs.Kind == "call" && fs.Caller >= 0 }

func isRoot(fs flow.FrameState) bool { return fs.Kind == "call" && fs.Caller < 0 }

// A frame's pending count is what makes its join fire (or its loop go on, or its call
// return): a state whose count does not match the tokens and frames inside the frame
// would fire a join early or never, so it is rejected, naming the frame.
func TestRestoreFrontierChecksPendingCounts(t *testing.T) {
	e, g, base := pendingGraph(t)
	_, err := e.RestoreFrontier(g, base)
	require.NoError(t, err)

	cases := []struct {
		name   string
		mutate func(st *flow.FrontierState)
		want   string
	}{
		{"split waits for a branch that does not exist", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isKind("split"))].Pending++
		}, `split "p"`},
		{"split fires before its last branch arrives", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isKind("split"))].Pending--
		}, `split "p"`},
		{"loop counts two iterations at once", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isKind("loop"))].Pending++
		}, `loop "l"`},
		{"loop with nothing running", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isKind("loop"))].Pending = 0
		}, `loop "l"`},
		{"sub-graph call that never returns", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isSubCall)].Pending++
		}, `call of "child"`},
		{"root call", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isRoot)].Pending = 3
		}, `call of "pending"`},
		{"arrivals without a join", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isKind("split"))].Join = ""
		}, `split "p"`},
		{"a join without arrivals", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isKind("split"))].Arrived = 0
		}, `split "p"`},
		{"a frame nothing is in", func(st *flow.FrontierState) {
			fs := st.Frames[frameOf(t, st, isKind("split"))]
			fs.Pending, fs.Arrived, fs.Join = 0, 0, ""
			st.Frames = append(st.Frames, fs)
			st.Frames[fs.Parent].Pending++ // it counts in its parent
		}, `split "p"`},
		{"a second token in a loop iteration", func(st *flow.FrontierState) {
			li := frameOf(t, st, isKind("loop"))
			st.Frames[li].Pending++
			st.Tokens = append(st.Tokens, flow.TokenState{Node: "lc", Mode: "arrive", Frame: li, Branch: "x"})
		}, `loop "l"`},
		{"a split at a node that cannot split", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isKind("split"))].Split = "a"
		}, `"a" is not a split node`},
		{"more branches than the split has links", func(st *flow.FrontierState) {
			si := frameOf(t, st, isKind("split"))
			st.Frames[si].Pending += 2
			st.Tokens = append(st.Tokens, flow.TokenState{Node: "a", Mode: "arrive", Frame: si, Branch: "x"},
				flow.TokenState{Node: "a", Mode: "arrive", Frame: si, Branch: "y"})
		}, `split "p"`},
		{"a join at a node that does not join", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isKind("split"))].Join = "a"
		}, `"a" is not a join node`},
		{"a loop closing at a node that does not close a loop", func(st *flow.FrontierState) {
			st.Frames[frameOf(t, st, isKind("loop"))].Closing = "e"
		}, `"e" is not a closing loop node`},
		{"a loop body token outside its loop", func(st *flow.FrontierState) {
			root := st.Frames[frameOf(t, st, isRoot)]
			root.Pending = 1
			st.Frames = []flow.FrameState{root}
			st.Tokens = []flow.TokenState{{Node: "l", Mode: "body", Frame: 0, Branch: "main"}}
		}, `token 0`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(base)
			require.NoError(t, err)
			var st flow.FrontierState
			require.NoError(t, json.Unmarshal(data, &st))
			tc.mutate(&st)
			fr, err := e.RestoreFrontier(g, st)
			require.ErrorIs(t, err, flow.ErrBadFrontier, "restored %v", fr)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Without the check, a split whose count says one branch more than it has never
// joins: the run "completes" without running the join.
func TestRestoreFrontierRejectsJoinThatNeverFires(t *testing.T) {
	e, g, st := pendingGraph(t)
	st.Frames[frameOf(t, &st, isKind("split"))].Pending++
	fr, err := e.RestoreFrontier(g, st)
	if err == nil {
		res, rerr := e.Resume(context.Background(), fr, flow.NewContext("p"))
		t.Fatalf("corrupt frontier restored; resumed: %v %v", res.Status, rerr)
	}
	assert.ErrorIs(t, err, flow.ErrBadFrontier)
}

// A sub-graph call whose interceptor returns without invoking it fails its calling
// node before anything in the call ran. With a recovering error policy the run goes
// on, and the checkpoints after it must not still list the call's start token: the
// call stood for its caller, which went on, so such a checkpoint would run the call
// (and everything after the caller) a second time on resume, and its counts do not
// fit (RestoreFrontier rejects it).
func TestCheckpointAfterSkippedCallHoldsNoTokenOfTheCall(t *testing.T) {
	e := flow.NewEngine(flow.WithTaskFunc("count", countTask))
	child := flow.NewSpec("child")
	child.Start("cs").SetTask("@count").LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("call")
	s.Activity("call").SetTask("#child").SetMeta(flow.MetaOnError, map[string]any{"recover": true}).LinkTo("after")
	s.Activity("after").SetTask("@count").LinkTo("e")
	s.End("e")
	g := build(t, s)

	var cps []flow.Checkpoint
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"), flow.WithEvalInterceptor(skipInvoke{calls: true}, 0),
		flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
			cps = append(cps, cp)
			return nil
		}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	require.NotEmpty(t, cps)
	for _, cp := range cps {
		for _, tk := range cp.Frontier.Tokens {
			assert.NotEqual(t, "cs", tk.Node, "checkpoint after %s: %s", cp.Node, describeFrontier(cp.Frontier))
		}
		if len(cp.Frontier.Tokens) > 0 {
			_, err := e.RestoreFrontier(g, cp.Frontier)
			assert.NoError(t, err, "checkpoint after %s", cp.Node)
		}
	}
}

// While a sub-graph call runs, the call's tokens stand for the calling node in
// checkpoints. When the call fails, the calling node is live again: here it fails the
// run, and the checkpoint a parallel sibling takes as it finishes afterwards must list
// it to run again (exec) on resume: it listed it as completed (follow), so resuming
// went on past the failed call as if it had succeeded.
func TestCheckpointAfterFailedCallKeepsTheCallingNode(t *testing.T) {
	started := make(chan struct{})
	e := flow.NewEngine(flow.WithMaxConcurrency(2),
		flow.WithTaskFunc("boom", func(context.Context, *flow.Context, *flow.Node) error {
			<-started // b is running on its goroutine
			return errors.New("boom")
		}),
		flow.WithTaskFunc("slow", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
			close(started)
			<-ctx.Done() // the run failed: finish after the calling node failed it
			return nil
		}))
	child := flow.NewSpec("child")
	child.Start("cs").SetTask("@boom").LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("call").LinkTo("b")
	s.Activity("call").SetTask("#child").LinkTo("j")
	s.Activity("b").SetTask("@slow").LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g := build(t, s)

	var cps []flow.Checkpoint
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"), flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
		cps = append(cps, cp)
		return nil
	}))
	require.Error(t, err)
	require.Equal(t, flow.StatusFailed, res.Status)
	last := cps[len(cps)-1]
	require.Equal(t, "b", last.Node)
	assert.Contains(t, describeFrontier(last.Frontier), "call exec main/p:call < split p p2 a0 i0 < call root p1 a0 i0")
	_, err = e.RestoreFrontier(g, last.Frontier)
	assert.NoError(t, err)
}

// A loop frame closes at one of its own closing nodes only: a state naming another
// loop's closing node would make the flow go on from there after the loop.
func TestRestoreFrontierRejectsAnotherLoopsClosingNode(t *testing.T) {
	e := flow.NewEngine(flow.WithTaskFunc("wait", suspendOnce))
	s := flow.NewSpec("twoloops")
	s.Start("s").LinkTo("l1")
	s.Loop("l1", "i", "0:2").LinkTo("w")
	s.Activity("w").SetTask("@wait").LinkTo("c1")
	s.Loop("c1", "", nil).LinkTo("l2")
	s.Loop("l2", "j", "0:2").LinkTo("x")
	s.Loop("c2", "", nil).LinkTo("e")
	s.Activity("x").LinkTo("c2")
	s.End("e")
	g := build(t, s)
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("p"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	st := res.Frontier.State()
	li := frameOf(t, &st, isKind("loop"))
	require.Equal(t, "c1", st.Frames[li].Closing)
	_, err = e.RestoreFrontier(g, st)
	require.NoError(t, err)

	st.Frames[li].Closing = "c2"
	fr, err := e.RestoreFrontier(g, st)
	require.ErrorIs(t, err, flow.ErrBadFrontier, "restored %v", fr)
	assert.Contains(t, err.Error(), `"c2" does not close loop "l1"`)
}

// Only a ContinueOnError parallel split withdraws failed branches: a state listing
// failed branches on a fail-fast split, or on an inclusive one, was not written by
// the engine, and restoring it would fail the split with all_branches_failed for a
// branch that never failed there. It is rejected.
func TestRestoreRejectsFailedBranchesWhereNoneCanBe(t *testing.T) {
	failure := flow.FailedBranch{Node: "a", Branch: "main/x:a", Error: flow.StructuredError{Code: "E1", Message: "bad"}}

	// A fail-fast parallel split, from a state the engine wrote for a continue one.
	aStarted := make(chan struct{})
	var once sync.Once
	e := flow.NewEngine(
		flow.WithTaskFunc("fail", func(context.Context, *flow.Context, *flow.Node) error {
			once.Do(func() { close(aStarted) })
			return &flow.Error{Code: "E1", Message: "bad"}
		}),
		flow.WithTaskFunc("b", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
			<-aStarted
			c.Suspend("wait")
			return nil
		}),
	)
	g := parallelPair(t, "continue", "@fail", "@b")
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	st := res.Frontier.State()
	_, err = e.RestoreFrontier(g, st)
	require.NoError(t, err, "the engine's own state")
	for i := range st.Frames {
		if len(st.Frames[i].Failed) > 0 {
			st.Frames[i].Policy = "fail-fast"
		}
	}
	_, err = e.RestoreFrontier(g, st)
	assert.ErrorIs(t, err, flow.ErrBadFrontier, "failed branches on a fail-fast split")

	// An inclusive split.
	s := flow.NewSpec("incl")
	s.Start("s").LinkTo("x")
	s.Inclusive("x").LinkTo("a").LinkTo("b")
	s.Activity("a").DoFunc(func(context.Context, *flow.Context, *flow.Node) error { return nil }).LinkTo("j")
	s.Activity("b").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		c.Suspend("wait")
		return nil
	}).LinkTo("j")
	s.Inclusive("j").LinkTo("e")
	s.End("e")
	ig := build(t, s)
	res, err = e.EvalGraph(context.Background(), ig, flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	st = res.Frontier.State()
	_, err = e.RestoreFrontier(ig, st)
	require.NoError(t, err, "the engine's own state")
	n := 0
	for i := range st.Frames {
		if st.Frames[i].Kind == "split" {
			st.Frames[i].Failed = []flow.FailedBranch{failure}
			n++
		}
	}
	require.Equal(t, 1, n)
	_, err = e.RestoreFrontier(ig, st)
	assert.ErrorIs(t, err, flow.ErrBadFrontier, "failed branches on an inclusive split")
}
