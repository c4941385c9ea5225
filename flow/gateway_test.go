package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An inclusive split/join nested in one branch of a parallel split: the inner join
// waits for the inner branches it activated, the outer join for the two parallel
// branches; with no true inner link the first parallel branch is withdrawn.
func TestInclusiveNestedInParallel(t *testing.T) {
	s := flow.NewSpec("nest")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").LinkTo("i")
	s.Inclusive("i").LinkTo("x", flow.LinkWhen("n >= 1")).LinkTo("y", flow.LinkWhen("n >= 2"))
	s.Activity("x").SetTask(`context.incr("x")`).LinkTo("ij")
	s.Activity("y").SetTask(`context.incr("y")`).LinkTo("ij")
	s.Inclusive("ij").LinkTo("pj")
	s.Activity("b").SetTask(`context.incr("b")`).LinkTo("pj")
	s.Parallel("pj").SetTask(`context.incr("joined")`).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	for n, want := range map[int]struct {
		inner []int // arrivals of ij
		outer int   // arrivals of pj
	}{2: {[]int{2}, 2}, 1: {[]int{1}, 2}, 0: {nil, 1}} {
		rec := newJoinRec()
		fc := flow.NewContextWith("i", map[string]any{"n": n})
		res := evalRec(t, e, g, fc, rec)
		require.NoError(t, res.Err, "n=%d", n)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, want.inner, rec.arrivals["ij"], "n=%d", n)
		assert.Equal(t, []int{want.outer}, rec.arrivals["pj"], "n=%d", n)
		assert.Equal(t, int64(1), fc.Value("joined"), "n=%d", n)
		assert.Equal(t, 1, rec.starts["e"], "n=%d", n)
	}
}

func parallelPair(t *testing.T, policy, aTask, bTask string) *flow.Graph {
	s := flow.NewSpec("pair")
	if policy != "" {
		s.Meta = map[string]any{"branchPolicy": policy}
	}
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").SetTask(aTask).LinkTo("j")
	s.Activity("b").SetTask(bTask).LinkTo("j")
	s.Parallel("j").SetTask(`context.incr("joined")`).LinkTo("after")
	s.Activity("after").SetTask(`context.incr("after")`).LinkTo("e")
	s.End("e")
	return build(t, s)
}

// Under ContinueOnError, branch a fails while branch b suspends. Resumed, b interrupts
// itself: no branch reached the join and one failed, so the split fails with
// all_branches_failed, exactly as when b interrupts without the suspension in between
// (the frontier keeps the failures of its split).
func TestContinueSplitFailuresSurviveResume(t *testing.T) {
	aStarted := make(chan struct{})
	var once sync.Once
	e := flow.NewEngine(
		flow.WithTaskFunc("fail", func(context.Context, *flow.Context, *flow.Node) error {
			once.Do(func() { close(aStarted) })
			return errors.New("a is down")
		}),
		flow.WithTaskFunc("b", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
			<-aStarted // a is running: its failure is recorded whatever b does
			switch c.Value("decision") {
			case nil:
				c.Suspend("decide b")
			case "interrupt":
				c.Interrupt()
			}
			return nil
		}),
	)
	g := parallelPair(t, "continue", "@fail", "@b")

	// Without a suspension: b interrupts, a failed.
	direct, err := e.EvalGraph(context.Background(), g, flow.NewContextWith("i", map[string]any{"decision": "interrupt"}))
	require.Error(t, err)
	require.Equal(t, flow.StatusFailed, direct.Status)
	var ne *flow.NodeError
	require.ErrorAs(t, direct.Err, &ne)
	require.Equal(t, flow.CodeAllBranchesFailed, ne.Code)

	// With one.
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	fc.Set("decision", "interrupt")
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.Error(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, flow.CodeAllBranchesFailed, ne.Code)
	assert.Equal(t, "p", ne.Node)
	assert.Nil(t, fc.Value("joined"))
}

// TestContinueSplitFailuresSurviveRestore is TestContinueSplitFailuresSurviveResume
// through the frontier's serializable form, as a session store keeps it: the state
// lists the split's failed branch, and the run restored from it (frontier and context
// through JSON) fails with all_branches_failed naming that failure.
func TestContinueSplitFailuresSurviveRestore(t *testing.T) {
	aStarted := make(chan struct{})
	var once sync.Once
	e := flow.NewEngine(
		flow.WithTaskFunc("fail", func(context.Context, *flow.Context, *flow.Node) error {
			once.Do(func() { close(aStarted) })
			return &flow.Error{Code: "E1", Message: "bad"}
		}),
		flow.WithTaskFunc("b", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
			<-aStarted // a is running: its failure is recorded whatever b does
			if c.Value("decision") == nil {
				c.Suspend("wait")
			} else {
				c.Interrupt()
			}
			return nil
		}),
	)
	g := parallelPair(t, "continue", "@fail", "@b")
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)

	data, err := json.Marshal(res.Frontier.State())
	require.NoError(t, err)
	var st flow.FrontierState
	require.NoError(t, json.Unmarshal(data, &st))
	var failed []flow.FailedBranch
	for _, fs := range st.Frames {
		failed = append(failed, fs.Failed...)
	}
	require.Len(t, failed, 1, "%s", data)
	assert.Equal(t, "a", failed[0].Node)
	assert.Equal(t, "E1", failed[0].Error.Code)
	assert.Equal(t, "bad", failed[0].Error.Message)

	restored := restoreThroughJSON(t, fc, map[string]any{"decision": "interrupt"})
	fr, err := e.RestoreFrontier(g, st)
	require.NoError(t, err)
	res, err = e.Resume(context.Background(), fr, restored)
	require.Error(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	var ne *flow.NodeError
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, flow.CodeAllBranchesFailed, ne.Code)
	assert.Equal(t, "p", ne.Node)
	assert.ErrorIs(t, res.Err, flow.ErrAllBranchesFailed)
	assert.Contains(t, res.Err.Error(), `node "a" in graph "pair": E1: bad`)
	assert.Nil(t, restored.Value("joined"))

	// A failed branch naming a node the graph does not have does not fit.
	for i := range st.Frames {
		if len(st.Frames[i].Failed) > 0 {
			st.Frames[i].Failed = []flow.FailedBranch{{Node: "gone", Branch: "x", Error: failed[0].Error}}
		}
	}
	_, err = e.RestoreFrontier(g, st)
	assert.ErrorIs(t, err, flow.ErrBadFrontier)
}

// Branch failures recorded before a suspension survive a context restored from JSON
// (as a session store keeps it): a failure after the resume is added to them, and
// BranchFailuresOf reads them all.
func TestBranchFailuresSurviveARestoredContext(t *testing.T) {
	g, err := flow.LoadGraph("bf.yml", []byte(`
id: bf
meta: {branchPolicy: continue}
layout:
  - {id: s, type: start}
  - {id: p1, type: parallel, link: [ok1, ko1]}
  - {id: ok1, task: 'context.put("ok1", 1)', link: j1}
  - {id: ko1, task: 'raise("E1", "first split")', link: j1}
  - {id: j1, type: parallel, link: wait}
  - {id: wait, task: 'go == true || context.suspend("wait")'}
  - {id: p2, type: parallel, link: [ok2, ko2]}
  - {id: ok2, task: 'context.put("ok2", 1)', link: j2}
  - {id: ko2, task: 'raise("E2", "second split")', link: j2}
  - {id: j2, type: parallel, link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	e := flow.NewEngine()
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)

	restored := restoreThroughJSON(t, fc, map[string]any{"go": true})
	fr, err := e.RestoreFrontier(g, res.Frontier.State())
	require.NoError(t, err)
	res, err = e.Resume(context.Background(), fr, restored)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	got := flow.BranchFailuresOf(restored.Value(flow.KeyBranchFailures))
	require.Len(t, got, 2)
	assert.Equal(t, []string{"ko1", "ko2"}, []string{got[0].Node, got[1].Node})
	assert.Equal(t, []string{"E1", "E2"}, []string{got[0].Code, got[1].Code})
	assert.Equal(t, "p1", got[0].Split)
}

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

// A node whose task called Interrupt ended its branch, even when a sibling branch
// halted the run while it ran: it is not parked to run again on resume, and the join
// does not wait for its branch (it was parked, ran twice and reached the join).
func TestInterruptedNodeStaysEndedWhenASiblingHaltedTheRun(t *testing.T) {
	started, suspended := make(chan struct{}), make(chan struct{})
	interrupts := 0
	s := flow.NewSpec("halted")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("c")
	s.Activity("a").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("decided") != true {
			<-started
			c.Suspend("waiting")
			close(suspended)
		}
		return nil
	}).LinkTo("j")
	s.Activity("c").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if interrupts++; interrupts == 1 {
			close(started)
			<-suspended // the run is halted while this node runs
		}
		c.Interrupt()
		return nil
	}).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()

	rec := newJoinRec()
	fc := flow.NewContext("i")
	res := evalRec(t, e, g, fc, rec)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, []string{"halted:a"}, res.Frontier.Pending(), "the interrupted branch ended")

	fc.Set("decided", true)
	res = resumeRec(t, e, res.Frontier, fc, rec)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, interrupts, "the interrupted node ran once")
	assert.Equal(t, []int{1}, rec.arrivals["j"], "the join waited for the branch that was not interrupted")
}

// The branches of a parallel split run concurrently: each of these waits until every
// one has started, which no branch could do if any waited for another to end first.
// It holds when the engine's bound leaves one goroutine for each branch but the first
// (which runs on the splitting goroutine), run after run, and with the default bound.
func TestParallelBranchesRunConcurrently(t *testing.T) {
	const n = 8
	bounded, unbounded := flow.NewEngine(flow.WithMaxConcurrency(n-1)), flow.NewEngine()
	// Twice with the same engine: the first run gave back every goroutine slot.
	for _, e := range []*flow.Engine{bounded, bounded, unbounded} {
		var started sync.WaitGroup
		started.Add(n)
		all := make(chan struct{})
		go func() { started.Wait(); close(all) }()
		s := flow.NewSpec("meet")
		s.Start("s").LinkTo("p")
		p := s.Parallel("p")
		for i := range n {
			id := fmt.Sprintf("b%d", i)
			p.LinkTo(id)
			s.Activity(id).DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
				started.Done()
				select {
				case <-all:
					return nil
				case <-ctx.Done():
					return fmt.Errorf("%s waited for the others in vain: %w", id, ctx.Err())
				}
			}).LinkTo("j")
		}
		s.Parallel("j").LinkTo("e")
		s.End("e")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := e.EvalGraph(ctx, build(t, s), flow.NewContext("i"))
		cancel()
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
	}
}
