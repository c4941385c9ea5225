package flow_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// A fatal failure inside an inclusive split (which has no branch policy of its own)
// in a branch of a ContinueOnError parallel split withdraws that whole branch: the
// inclusive sibling that had not run yet does not run, the inner join does not fire,
// and the branch never arrives at the outer join. (Only the failing token was
// withdrawn before, so the sibling went on through the inner join to the outer one:
// the branch was listed as failed and counted as arrived, and a split whose every
// branch failed completed.)
func TestNestedSplitFailureWithdrawsTheWholeContinueBranch(t *testing.T) {
	for _, aFails := range []bool{false, true} {
		s := flow.NewSpec("nc")
		s.Start("s").LinkTo("p")
		s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("a").LinkTo("x")
		s.Activity("a").SetTask(`context.put("log", log + "a"); fail != true || raise("A", "a failed")`).LinkTo("j")
		s.Inclusive("x").LinkTo("y").LinkTo("z")
		s.Activity("y").SetTask(`raise("Y", "y failed")`).LinkTo("ij")
		s.Activity("z").SetTask(`context.put("log", log + "z")`).LinkTo("ij")
		s.Inclusive("ij").SetTask(`context.put("log", log + "I")`).LinkTo("j")
		s.Parallel("j").SetTask(`context.put("log", log + "J")`).LinkTo("e")
		s.End("e")
		fc := flow.NewContextWith("i", map[string]any{"log": "", "fail": aFails})
		res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), fc)
		if aFails {
			require.ErrorIs(t, err, flow.ErrAllBranchesFailed)
			assert.Equal(t, flow.StatusFailed, res.Status)
			assert.Equal(t, "a", fc.Value("log"))
			assert.Len(t, res.BranchFailures, 2)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "aJ", fc.Value("log"), "neither z, the inner join nor a second join")
		require.Len(t, res.BranchFailures, 1)
		assert.Equal(t, "y", res.BranchFailures[0].Node)
		assert.Equal(t, "e", fc.LastNode("nc"))
	}
}

// A frontier can hold a ContinueOnError split's failed branch and, parked, another
// token of that branch (its sibling had suspended while the failing node ran on
// another goroutine). Restored and resumed, that token ends without running: the
// branch stays withdrawn across the restart. Without the failure, the same frontier
// runs the suspended node again.
func TestRestoredFailedBranchStaysWithdrawn(t *testing.T) {
	g := loopInAContinueBranch(t)
	e := flow.NewEngine()
	for _, failed := range []bool{false, true} {
		fc := flow.NewContextWith("i", map[string]any{"log": ""})
		res, err := e.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusSuspended, res.Status)
		st := res.Frontier.State()
		// Branch a may be parked too (before or after its arrival at j): the frames
		// and tokens are found by what they are, not where they are.
		frame := func(kind, node string) *flow.FrameState {
			for i := range st.Frames {
				if f := &st.Frames[i]; f.Kind == kind && f.Split+f.Loop == node {
					return f
				}
			}
			t.Fatalf("no %s frame of %s in %+v", kind, node, st.Frames)
			return nil
		}
		x := slices.IndexFunc(st.Tokens, func(tk flow.TokenState) bool { return tk.Node == "x" })
		require.GreaterOrEqual(t, x, 0)
		if failed { // as if x had failed on its own goroutine while y suspended
			st.Tokens = slices.Delete(st.Tokens, x, x+1)
			frame("split", "q").Pending--
			frame("loop", "l").Closing = "l" // the loop was left
			frame("split", "p").Failed = []flow.FailedBranch{{Node: "x", Branch: "main/p:l/l[1]/q:x",
				Error: flow.StructuredError{Type: "business", Code: "BAD", Message: "bad item"}}}
		}
		fr, err := e.RestoreFrontier(g, st)
		require.NoError(t, err)
		fc.Set("ok", true)
		res, err = e.Resume(context.Background(), fr, fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		if failed {
			assert.Equal(t, "y1x1Qy2J", fc.Value("log"), "y2 does not run again")
		} else {
			assert.Equal(t, "y1x1Qy2y2x2", fc.Value("log").(string)[:11])
		}
	}
}

// A failed branch withdraws only itself, also when a sibling's node id starts with
// the failed node's id and "/": the failure of branch "a/x" of split p is not inside
// branch "a" (their ids, main/p:a/x and main/p:a, looked like a branch and one
// nested in it). The hold branch takes the engine's only goroutine, so p's branches
// run in order on one goroutine: a/x fails before a's second node.
func TestWithdrawnBranchIsTheFailedOneWhenNodeIDsHoldASlash(t *testing.T) {
	release := make(chan struct{})
	e := flow.NewEngine(flow.WithMaxConcurrency(1),
		flow.WithTaskFunc("hold", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}),
		flow.WithTaskFunc("release", func(context.Context, *flow.Context, *flow.Node) error {
			close(release)
			return nil
		}))
	s := flow.NewSpec("sl")
	s.Start("s").LinkTo("o")
	s.Parallel("o").LinkTo("p").LinkTo("hold")
	s.Activity("hold").SetTask("@hold").LinkTo("oj")
	s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("a/x").LinkTo("a")
	s.Activity("a/x").SetTask(`raise("X", "a/x failed")`).LinkTo("j")
	s.Activity("a").SetTask(`context.put("log", log + "a")`).LinkTo("a2")
	s.Activity("a2").SetTask(`context.put("log", log + "2")`).LinkTo("j")
	s.Parallel("j").SetTask("@release").LinkTo("oj")
	s.Parallel("oj").LinkTo("e")
	s.End("e")
	fc := flow.NewContextWith("i", map[string]any{"log": ""})
	res, err := e.EvalGraph(context.Background(), build(t, s), fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "a2", fc.Value("log"))
	require.Len(t, res.BranchFailures, 1)
	assert.Equal(t, "a/x", res.BranchFailures[0].Node)
}

// The same after a restart: a frontier state keeps the failing token's branch only,
// and a restored failure of branch a/x still withdraws a/x alone, so the parked
// token of branch a runs on. The frontier is the suspended one of a run in which
// a/x arrived, edited as if a/x had failed instead. As in the test above, the hold
// branch takes the engine's only goroutine until a2 runs, so p's branches run in
// order on one goroutine: a/x has arrived at j when a2 suspends. (With a goroutine
// for branch a, a2 could suspend first, and a/x would not have arrived.)
func TestRestoredFailureWithdrawsTheFailedBranchWhenNodeIDsHoldASlash(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	s := flow.NewSpec("sl")
	s.Start("s").LinkTo("o")
	s.Parallel("o").LinkTo("p").LinkTo("hold")
	s.Activity("hold").SetTask("@hold").LinkTo("oj")
	s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("a/x").LinkTo("a")
	s.Activity("a/x").LinkTo("j")
	s.Activity("a").LinkTo("a2")
	s.Activity("a2").SetTask("@a2").LinkTo("j")
	s.Parallel("j").SetTask(`context.put("joined", true)`).LinkTo("oj")
	s.Parallel("oj").LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine(flow.WithMaxConcurrency(1),
		flow.WithTaskFunc("hold", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}),
		flow.WithTaskFunc("a2", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
			once.Do(func() { close(release) })
			if ok, _ := c.GetBool("ok"); !ok {
				c.Suspend("wait")
			}
			return nil
		}))
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	st := res.Frontier.State()
	i := slices.IndexFunc(st.Frames, func(f flow.FrameState) bool { return f.Split == "p" })
	require.GreaterOrEqual(t, i, 0)
	require.Equal(t, 1, st.Frames[i].Arrived)
	st.Frames[i].Arrived, st.Frames[i].Join = 0, ""
	st.Frames[i].Failed = []flow.FailedBranch{{Node: "a/x", Branch: "main/p:a/x",
		Error: flow.StructuredError{Type: "business", Code: "X", Message: "a/x failed"}}}
	fr, err := e.RestoreFrontier(g, st)
	require.NoError(t, err)
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), fr, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, true, fc.Value("joined"))
}

// A sub-graph call parked in a branch that a restored failure withdrew is not
// re-entered on resume, and its parked tokens leave the checkpoints with it: a
// checkpoint still listing them (inside frames whose counts no longer have them)
// could not be restored. The frontier is that of a run suspended inside the call,
// edited as if the call's inclusive sibling x had failed meanwhile.
func TestWithdrawnResumedCallLeavesTheCheckpoints(t *testing.T) {
	e := flow.NewEngine()
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("w")
	child.Activity("w").SetTask(`ok == true || context.suspend("wait")`).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("p")
	s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("b").LinkTo("a")
	s.Inclusive("b").LinkTo("c").LinkTo("x")
	s.Activity("c").SetTask("#child").LinkTo("bj")
	s.Activity("x").LinkTo("bj")
	s.Inclusive("bj").LinkTo("j")
	s.Activity("a").LinkTo("j")
	s.Parallel("j").SetTask(`context.put("joined", true)`).LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	st := res.Frontier.State()
	x := slices.IndexFunc(st.Tokens, func(tk flow.TokenState) bool { return tk.Node == "x" })
	require.GreaterOrEqual(t, x, 0)
	st.Frames[st.Tokens[x].Frame].Pending--
	st.Tokens = slices.Delete(st.Tokens, x, x+1)
	p := slices.IndexFunc(st.Frames, func(f flow.FrameState) bool { return f.Split == "p" })
	require.GreaterOrEqual(t, p, 0)
	st.Frames[p].Failed = []flow.FailedBranch{{Node: "x", Branch: "main/p:b/b:x",
		Error: flow.StructuredError{Type: "business", Code: "X", Message: "x failed"}}}
	fr, err := e.RestoreFrontier(g, st)
	require.NoError(t, err)
	fc.Set("ok", true)
	var cps []flow.FrontierState
	res, err = e.Resume(context.Background(), fr, fc, flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
		cps = append(cps, cp.Frontier)
		return nil
	}))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, true, fc.Value("joined"))
	require.NotEmpty(t, cps)
	for i, cp := range cps {
		for _, tk := range cp.Tokens {
			assert.NotEqual(t, "w", tk.Node, "checkpoint %d lists the withdrawn call's token", i)
		}
		if len(cp.Tokens) > 0 {
			_, err := e.RestoreFrontier(g, cp)
			assert.NoError(t, err, "checkpoint %d", i)
		}
	}
}

// arrivalsHook records the arrivals each join's end reports.
type arrivalsHook struct {
	flow.NopInterceptor
	mu       sync.Mutex
	arrivals map[string]int
}

func (h *arrivalsHook) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, end flow.NodeEnd) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.arrivals[n.ID] = end.Arrivals
}

// An inclusive split of a ContinueOnError branch whose branches meet at the outer
// join itself (no inner join) brings no arrival of a withdrawn branch there: y had
// arrived at j when its sibling x failed, and that arrival counted as branch b's,
// so j ran for b, listed as failed, and, when a failed too, ran instead of the
// split failing with all_branches_failed.
func TestWithdrawnBranchArrivalAtASharedJoinDoesNotCount(t *testing.T) {
	for _, aFails := range []bool{false, true} {
		s := flow.NewSpec("sj")
		s.Start("s").LinkTo("p")
		s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("b").LinkTo("a")
		s.Activity("a").SetTask(`fail != true || raise("A", "a failed")`).LinkTo("j")
		s.Inclusive("b").LinkTo("y").LinkTo("x")
		s.Activity("y").LinkTo("j")
		s.Activity("x").SetTask(`raise("X", "x failed")`).LinkTo("j")
		s.Parallel("j").SetTask(`context.put("joined", true)`).LinkTo("e")
		s.End("e")
		hook := &arrivalsHook{arrivals: map[string]int{}}
		fc := flow.NewContextWith("i", map[string]any{"fail": aFails})
		res, err := flow.NewEngine(flow.WithInterceptor(hook, 0)).EvalGraph(context.Background(), build(t, s), fc)
		if aFails {
			require.ErrorIs(t, err, flow.ErrAllBranchesFailed)
			assert.Nil(t, fc.Value("joined"))
			assert.Len(t, res.BranchFailures, 2)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, true, fc.Value("joined"))
		assert.Equal(t, 1, hook.arrivals["j"], "a alone arrived")
		require.Len(t, res.BranchFailures, 1)
	}
}

// A sub-graph call in a ContinueOnError branch that another part of the branch
// withdraws while the call runs (on its own goroutine, as a parallel branch inside the
// withdrawn one) ends like the branch's other tokens: the child's nodes after the one
// that was running do not run, and neither do the joins the call would have reached.
// (The call's tokens went on to the child's end before, and only the calling node's
// token was withdrawn after it.)
func TestWithdrawnBranchEndsTheSubGraphCallInIt(t *testing.T) {
	defer goleak.VerifyNone(t)
	var (
		mu  sync.Mutex
		log []string
	)
	note := func(_ context.Context, _ *flow.Context, n *flow.Node) error {
		mu.Lock()
		log = append(log, n.ID)
		mu.Unlock()
		return nil
	}
	started := make(chan struct{})
	e := flow.NewEngine(flow.WithMaxConcurrency(4),
		flow.WithTaskFunc("note", note),
		flow.WithTaskFunc("fail", func(context.Context, *flow.Context, *flow.Node) error {
			<-started // the call is running
			return errors.New("f failed")
		}),
		flow.WithTaskFunc("wait", func(ctx context.Context, c *flow.Context, n *flow.Node) error {
			close(started)
			// Until f's failure withdrew the branch: the engine records it before it
			// publishes it in the variables.
			for len(flow.BranchFailuresOf(c.Value(flow.KeyBranchFailures))) == 0 {
				runtime.Gosched()
			}
			return note(ctx, c, n)
		}))
	for _, def := range []string{`
id: sub
layout:
  - {id: cs, type: start}
  - {id: n1, task: "@wait"}
  - {id: n2, task: "@note"}
  - {id: n3, task: "@note"}
  - {id: ce, type: end}
`, `
id: main
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, meta: {branchPolicy: continue}, link: [x, b]}
  - {id: x, type: inclusive, link: [q, f]}
  - {id: q, type: parallel, link: [y, call]}
  - {id: y, task: "@note", link: qj}
  - {id: call, task: "#sub", link: qj}
  - {id: qj, type: parallel, task: "@note", link: ij}
  - {id: f, task: "@fail", link: ij}
  - {id: ij, type: inclusive, task: "@note", link: j}
  - {id: b, task: "@note", link: j}
  - {id: j, type: parallel, task: "@note", link: e}
  - {id: e, type: end}
`} {
		g, err := flow.LoadGraph("g.yml", []byte(def))
		require.NoError(t, err)
		require.NoError(t, e.Register(g))
	}
	res, err := e.Eval(context.Background(), "main", flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	require.Len(t, res.BranchFailures, 1)
	assert.Equal(t, "f", res.BranchFailures[0].Node)
	slices.Sort(log)
	assert.Equal(t, []string{"b", "j", "n1", "y"}, log, "n2, n3 and the joins qj and ij do not run")
}

// endStatuses records each node's last end status, and closes callEnded when the
// node "call" ends.
type endStatuses struct {
	flow.NopInterceptor
	mu        sync.Mutex
	end       map[string]flow.NodeStatus
	callEnded chan struct{}
}

func (h *endStatuses) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, end flow.NodeEnd) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.end[n.ID] = end.Status
	if n.ID == "call" {
		close(h.callEnded)
	}
}

// A sub-graph call cut short because its branch was withdrawn did not complete: its
// calling node ends INTERRUPTED and CallOutcome says interrupted. It ended COMPLETED,
// and an audit said the call had run to its end. A call in the same kind of branch
// that returned before the withdrawal still completes.
func TestWithdrawnSubGraphCallEndsInterrupted(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, cut := range []bool{true, false} {
		h := &endStatuses{end: map[string]flow.NodeStatus{}, callEnded: make(chan struct{})}
		started := make(chan struct{})
		e := flow.NewEngine(flow.WithMaxConcurrency(4),
			flow.WithTaskFunc("fail", func(context.Context, *flow.Context, *flow.Node) error {
				if cut {
					<-started // the call is running
				} else {
					<-h.callEnded
				}
				return errors.New("f failed")
			}),
			flow.WithTaskFunc("wait", func(ctx context.Context, c *flow.Context, n *flow.Node) error {
				close(started)
				for cut && len(flow.BranchFailuresOf(c.Value(flow.KeyBranchFailures))) == 0 {
					runtime.Gosched()
				}
				return nil
			}))
		for _, def := range []string{`
id: sub
layout:
  - {id: cs, type: start}
  - {id: n1, task: "@wait"}
  - {id: n2}
  - {id: ce, type: end}
`, `
id: main
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, meta: {branchPolicy: continue}, link: [x, b]}
  - {id: x, type: inclusive, link: [q, f]}
  - {id: q, type: parallel, link: [y, call]}
  - {id: y, link: qj}
  - {id: call, task: "#sub", link: qj}
  - {id: qj, type: parallel, link: ij}
  - {id: f, task: "@fail", link: ij}
  - {id: ij, type: inclusive, link: j}
  - {id: b, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`} {
			g, err := flow.LoadGraph("g.yml", []byte(def))
			require.NoError(t, err)
			require.NoError(t, e.Register(g))
		}
		fc := flow.NewContext("i")
		res, err := e.Eval(context.Background(), "main", fc, flow.WithEvalInterceptor(h, 0))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		require.Len(t, res.BranchFailures, 1)
		out, ok := fc.CallOutcome("main/call/sub")
		require.True(t, ok)
		if cut {
			assert.Equal(t, flow.StatusInterrupted, out.Status, "the call was cut short")
			assert.Equal(t, trace.Interrupted, h.end["call"])
			assert.NotContains(t, h.end, "n2", "the child's next node does not run")
			assert.NotContains(t, h.end, "qj", "the withdrawn branch's joins do not run")
		} else {
			assert.Equal(t, flow.StatusCompleted, out.Status, "the call had returned")
			assert.Equal(t, trace.Completed, h.end["call"])
			assert.Equal(t, trace.Completed, h.end["n2"])
		}
		assert.NotContains(t, h.end, "ij", "the withdrawn branch's join does not run")
	}
}

// A sub-graph call inside a call that a failure aborts is cut short with it: its
// calling node ends INTERRUPTED and its CallOutcome says interrupted. It ended
// COMPLETED, though its node was interrupted and its end node never ran.
func TestCallInsideAnAbortedCallEndsInterrupted(t *testing.T) {
	defer goleak.VerifyNone(t)
	started := make(chan struct{})
	e := flow.NewEngine(flow.WithMaxConcurrency(4),
		flow.WithTaskFunc("block", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}),
		flow.WithTaskFunc("fail", func(context.Context, *flow.Context, *flow.Node) error {
			<-started
			return errors.New("f failed")
		}))
	for _, def := range []string{`
id: inner
layout:
  - {id: is, type: start}
  - {id: w, task: "@block"}
  - {id: ie, type: end}
`, `
id: outer
layout:
  - {id: os, type: start}
  - {id: p, type: parallel, link: [cb, f]}
  - {id: cb, task: "#inner", link: j}
  - {id: f, task: "@fail", link: j}
  - {id: j, type: parallel, link: oe}
  - {id: oe, type: end}
`, `
id: main
layout:
  - {id: s, type: start}
  - {id: ca, task: "#outer"}
  - {id: e, type: end}
`} {
		g, err := flow.LoadGraph("g.yml", []byte(def))
		require.NoError(t, err)
		require.NoError(t, e.Register(g))
	}
	h := &endStatuses{end: map[string]flow.NodeStatus{}, callEnded: make(chan struct{})}
	fc := flow.NewContext("i")
	res, err := e.Eval(context.Background(), "main", fc, flow.WithEvalInterceptor(h, 0))
	require.Error(t, err)
	require.Equal(t, flow.StatusFailed, res.Status)
	assert.Equal(t, trace.Failed, h.end["ca"])
	assert.Equal(t, trace.Failed, h.end["f"])
	assert.Equal(t, trace.Interrupted, h.end["w"])
	assert.Equal(t, trace.Interrupted, h.end["cb"], "its call was cut short")
	assert.NotContains(t, h.end, "ie")
	out, ok := fc.CallOutcome("main/ca/outer/cb/inner")
	require.True(t, ok)
	assert.Equal(t, flow.StatusInterrupted, out.Status)
	out, ok = fc.CallOutcome("main/ca/outer")
	require.True(t, ok)
	assert.Equal(t, flow.StatusFailed, out.Status)
}
