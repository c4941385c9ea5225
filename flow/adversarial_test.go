package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// joinRec counts node starts and records the arrivals each join fired with.
type joinRec struct {
	flow.NopInterceptor
	mu       sync.Mutex
	starts   map[string]int
	arrivals map[string][]int
}

func newJoinRec() *joinRec { return &joinRec{starts: map[string]int{}, arrivals: map[string][]int{}} }

func (j *joinRec) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	j.mu.Lock()
	j.starts[n.ID]++
	j.mu.Unlock()
}

func (j *joinRec) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, end flow.NodeEnd) {
	if end.Arrivals == 0 {
		return
	}
	j.mu.Lock()
	j.arrivals[n.ID] = append(j.arrivals[n.ID], end.Arrivals)
	j.mu.Unlock()
}

// restoreThroughJSON returns fc's instance as a session store gives it back: its
// variables through JSON, with updates applied, and its trace.
func restoreThroughJSON(t *testing.T, fc *flow.Context, updates map[string]any) *flow.Context {
	t.Helper()
	data, err := json.Marshal(fc.Vars())
	require.NoError(t, err)
	var vars map[string]any
	require.NoError(t, json.Unmarshal(data, &vars))
	maps.Copy(vars, updates)
	return flow.RestoreContext(fc.InstanceID(), vars, fc.Trace())
}

func evalRec(t *testing.T, e *flow.Engine, g *flow.Graph, fc *flow.Context, rec *joinRec, opts ...flow.EvalOption) *flow.Result {
	t.Helper()
	res, _ := e.EvalGraph(context.Background(), g, fc, append(opts, flow.WithEvalInterceptor(rec, 0))...)
	require.NotNil(t, res)
	return res
}

func resumeRec(t *testing.T, e *flow.Engine, fr *flow.Frontier, fc *flow.Context, rec *joinRec, opts ...flow.EvalOption) *flow.Result {
	t.Helper()
	require.NotNil(t, fr)
	res, _ := e.Resume(context.Background(), fr, fc, append(opts, flow.WithEvalInterceptor(rec, 0))...)
	require.NotNil(t, res)
	return res
}

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

// An inclusive split in a $for loop activates a different number of branches on each
// pass; its join fires once per pass with exactly that pass's branches.
func TestInclusiveJoinPerLoopItem(t *testing.T) {
	s := flow.NewSpec("li")
	s.Start("s").LinkTo("l")
	s.Loop("l", "k", []any{3, 1, 0, 2}).LinkTo("g")
	s.Inclusive("g").LinkTo("a", flow.LinkWhen("k >= 1")).LinkTo("b", flow.LinkWhen("k >= 2")).LinkTo("c", flow.LinkWhen("k >= 3"))
	for _, id := range []string{"a", "b", "c"} {
		s.Activity(id).SetTask(`context.incr("hits")`).LinkTo("j")
	}
	s.Inclusive("j").SetTask(`context.incr("joins")`).LinkTo("close")
	s.Loop("close", "", nil).LinkTo("e")
	s.End("e")
	rec := newJoinRec()
	fc := flow.NewContext("i")
	res := evalRec(t, flow.NewEngine(), build(t, s), fc, rec)
	require.NoError(t, res.Err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	// k=3: 3 branches, k=1: 1, k=0: none (the iteration ends at the split), k=2: 2.
	assert.Equal(t, []int{3, 1, 2}, rec.arrivals["j"])
	assert.Equal(t, int64(6), fc.Value("hits"))
	assert.Equal(t, int64(3), fc.Value("joins"))
	assert.Equal(t, 1, rec.starts["close"])
	assert.Equal(t, 1, rec.starts["e"])
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

// stop(), suspend() and interrupt() in one parallel branch, under both branch
// policies; the run is resumed from its frontier until it completes. Over all
// evaluations every node runs once, except the suspended node, which runs again, and
// the join fires once with the arrivals of the branches that reached it.
func TestParallelBranchControlsAndResume(t *testing.T) {
	cases := []struct {
		name, aTask  string
		aRuns        int
		joinArrivals int
		evals        int
		first        flow.Status
	}{
		{"stop", `context.incr("a"); stopped == true || context.stop(); context.put("stopped", true)`, 1, 2, 2, flow.StatusStopped},
		{"suspend", `context.incr("a"); approved == true || context.suspend("approve a")`, 2, 2, 2, flow.StatusSuspended},
		{"interrupt", `context.incr("a"); context.interrupt()`, 1, 1, 1, flow.StatusCompleted},
	}
	for _, policy := range []string{"fail-fast", "continue"} {
		for _, tc := range cases {
			t.Run(policy+"/"+tc.name, func(t *testing.T) {
				g := parallelPair(t, policy, tc.aTask, `context.incr("b")`)
				e := flow.NewEngine()
				rec := newJoinRec()
				fc := flow.NewContext("i")
				res := evalRec(t, e, g, fc, rec)
				require.NoError(t, res.Err)
				require.Equal(t, tc.first, res.Status)
				evals := 1
				for res.Status != flow.StatusCompleted {
					require.Less(t, evals, 5)
					fc.Set("approved", true)
					res = resumeRec(t, e, res.Frontier, fc, rec)
					require.NoError(t, res.Err)
					evals++
				}
				assert.Equal(t, tc.evals, evals)
				assert.Equal(t, int64(tc.aRuns), fc.Value("a"))
				assert.Equal(t, int64(1), fc.Value("b"))
				assert.Equal(t, int64(1), fc.Value("joined"))
				assert.Equal(t, int64(1), fc.Value("after"))
				assert.Equal(t, []int{tc.joinArrivals}, rec.arrivals["j"])
				assert.Equal(t, map[string]int{"s": 1, "p": 1, "a": tc.aRuns, "b": 1, "j": 1, "after": 1, "e": 1}, rec.starts)
			})
		}
	}
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

// Fail-fast: branch a fails while branch b suspends. The failure outranks the
// suspension; resumed once a works, both a and b run again (a failed, b was
// suspended) and the join fires once with both.
func TestFailFastFailureAndSuspensionThenResume(t *testing.T) {
	aStarted, bStarted := make(chan struct{}, 1), make(chan struct{}, 1)
	e := flow.NewEngine(
		flow.WithTaskFunc("a", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
			c.Update("a", func(old any, _ bool) any { n, _ := old.(int); return n + 1 })
			if c.Value("fixed") == nil {
				<-bStarted // both branches are running before a fails
				aStarted <- struct{}{}
				return errors.New("a is down")
			}
			return nil
		}),
		flow.WithTaskFunc("b", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
			c.Update("b", func(old any, _ bool) any { n, _ := old.(int); return n + 1 })
			if c.Value("fixed") == nil {
				bStarted <- struct{}{}
				<-aStarted
				c.Suspend("b waits")
			}
			return nil
		}),
	)
	g := parallelPair(t, "fail-fast", "@a", "@b")
	rec := newJoinRec()
	fc := flow.NewContext("i")
	res := evalRec(t, e, g, fc, rec)
	require.Equal(t, flow.StatusFailed, res.Status)
	var ne *flow.NodeError
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, "a", ne.Node)
	assert.ElementsMatch(t, []string{"pair:a", "pair:b"}, res.Frontier.Pending())
	fc.Set("fixed", true)
	res = resumeRec(t, e, res.Frontier, fc, rec)
	require.NoError(t, res.Err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 2, fc.Value("a"))
	assert.Equal(t, 2, fc.Value("b"))
	assert.Equal(t, int64(1), fc.Value("joined"))
	assert.Equal(t, []int{2}, rec.arrivals["j"])
}

// A loop suspended in its second iteration resumes in that iteration, with its item,
// and finishes the remaining items.
func TestLoopSuspendedMidwayResumesItsIteration(t *testing.T) {
	s := flow.NewSpec("ls")
	s.Start("s").LinkTo("l")
	s.Loop("l", "it", []any{"a", "b", "c"}).LinkTo("body")
	s.Activity("body").SetTask(`context.put("log", log + it); it != "b" || ok == true || context.suspend("at b")`).LinkTo("close")
	s.Loop("close", "", nil).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	fc := flow.NewContextWith("i", map[string]any{"log": ""})
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, "ab", fc.Value("log"))
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "abbc", fc.Value("log"), "b runs again, then c")
	_, set := fc.Get("it")
	assert.False(t, set, "the loop item is not left in the shared variables")
}

// A parallel split inside a loop body: each iteration's branches see that iteration's
// item, the join fires once per iteration, and nested parallel splits on an engine
// bounded to one goroutine (the rest run inline) complete from several runs at once.
func TestParallelInsideLoopBoundedConcurrency(t *testing.T) {
	s := flow.NewSpec("pl")
	s.Start("s").LinkTo("l")
	s.Loop("l", "it", "0:5").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("q")
	s.Activity("a").SetTask(`context.put("sum", sum + it)`).LinkTo("j")
	s.Parallel("q").LinkTo("b").LinkTo("c")
	s.Activity("b").SetTask(`context.put("sum", sum + it * 10)`).LinkTo("qj")
	s.Activity("c").SetTask(`context.put("sum", sum + it * 100)`).LinkTo("qj")
	s.Parallel("qj").LinkTo("j")
	s.Parallel("j").SetTask(`context.incr("joins")`).LinkTo("close")
	s.Loop("close", "", nil).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine(flow.WithMaxConcurrency(1))
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				fc := flow.NewContextWith("i", map[string]any{"sum": 0})
				res, err := e.EvalGraph(context.Background(), g, fc)
				if !assert.NoError(t, err) || !assert.Equal(t, flow.StatusCompleted, res.Status) {
					return
				}
				// 0+1+2+3+4 = 10, times 1 + 10 + 100.
				assert.Equal(t, 1110, fc.Value("sum"))
				assert.Equal(t, int64(5), fc.Value("joins"))
			}
		}()
	}
	wg.Wait()
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

// A join whose own task suspends says how many branches it waited for when it runs
// again on resume, in memory and from a restored frontier.
func TestSuspendedJoinKeepsItsArrivals(t *testing.T) {
	g, err := flow.LoadGraph("j.yml", []byte(`
id: j
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [a, b, c]}
  - {id: a, link: join}
  - {id: b, link: join}
  - {id: c, link: join}
  - {id: join, type: parallel, task: 'approved == true || context.suspend("wait")', link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	e := flow.NewEngine()
	for _, restored := range []bool{false, true} {
		rec := newJoinRec()
		fc := flow.NewContext("i")
		res := evalRec(t, e, g, fc, rec)
		require.Equal(t, flow.StatusSuspended, res.Status)
		fr := res.Frontier
		if restored {
			data, err := json.Marshal(fr.State())
			require.NoError(t, err)
			var st flow.FrontierState
			require.NoError(t, json.Unmarshal(data, &st))
			require.Len(t, st.Tokens, 1)
			assert.Equal(t, 3, st.Tokens[0].Arrivals)
			fr, err = e.RestoreFrontier(g, st)
			require.NoError(t, err)
		}
		fc.Set("approved", true)
		res, err = e.Resume(context.Background(), fr, fc, flow.WithEvalInterceptor(rec, 0))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, []int{3, 3}, rec.arrivals["join"], "restored %v: the suspended run and the resumed one", restored)
		assert.Equal(t, 2, rec.starts["join"], "restored %v", restored)
	}
}

// panicHook panics when the node it names starts.
type panicHook struct {
	flow.NopInterceptor
	node string
}

func (h panicHook) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	if n.ID == h.node {
		panic("hook start")
	}
}

// A hook that panics in a parallel branch's goroutine does not end the process: the
// run fails, its branches end, and Eval panics with a *BranchPanic in the caller's
// goroutine. The context is free for the next run.
func TestHookPanicInABranchReachesTheCaller(t *testing.T) {
	g, err := flow.LoadGraph("p.yml", []byte(`
id: p
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [b0, b1, b2, b3, b4, b5]}
  - {id: b0, link: j}
  - {id: b1, link: j}
  - {id: b2, link: j}
  - {id: b3, link: j}
  - {id: b4, link: j}
  - {id: b5, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	e := flow.NewEngine(flow.WithMaxConcurrency(8))
	fc := flow.NewContext("i")
	for range 20 { // b3 runs on a goroutine in most runs, inline in the others
		var got any
		func() {
			defer func() { got = recover() }()
			_, _ = e.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(panicHook{node: "b3"}, 0))
		}()
		require.NotNil(t, got, "the panic reaches the caller")
		if bp, ok := got.(*flow.BranchPanic); ok {
			assert.Equal(t, "hook start", bp.Value)
			assert.NotEmpty(t, bp.Stack)
		}
		res, err := e.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err, "the context is free again")
		require.Equal(t, flow.StatusCompleted, res.Status)
	}
}

// A hook that panics on the main branch reaches the caller as it always did, and the
// context is free for the next run.
func TestHookPanicOnTheMainBranchFreesTheContext(t *testing.T) {
	g, err := flow.LoadGraph("m.yml", []byte("id: m\nlayout:\n  - {id: s, type: start}\n  - {id: a}\n  - {id: e, type: end}\n"))
	require.NoError(t, err)
	e := flow.NewEngine()
	fc := flow.NewContext("i")
	var got any
	func() {
		defer func() { got = recover() }()
		_, _ = e.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(panicHook{node: "a"}, 0))
	}()
	require.Equal(t, "hook start", got)
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err, "the context is free again")
	require.Equal(t, flow.StatusCompleted, res.Status)
}

// A hook that panics on the calling goroutine inside a sub-graph call fails the calling
// node (the call is its task), and the call's parallel branches end before Eval
// returns: none is left running against a run that is over. The other branch, once
// cancelled, stays in its clean-up until the test has seen that Eval has not
// returned, so an engine that did not wait for it returns (or is about to) while
// the branch provably runs.
func TestHookPanicInASubGraphWaitsForItsBranches(t *testing.T) {
	var ended atomic.Bool
	started, cleaning, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	slow := flow.TaskFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		defer ended.Store(true)
		close(started)
		<-ctx.Done() // the failing call cancels its branches
		close(cleaning)
		<-release
		return ctx.Err()
	})
	e := flow.NewEngine(flow.WithMaxConcurrency(4), flow.WithTask("slow", slow))
	for _, def := range []string{`
id: sub
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [boom, wait]}
  - {id: boom, link: j}
  - {id: wait, task: "@slow", link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`, `
id: main
layout:
  - {id: s, type: start}
  - {id: call, task: "#sub"}
  - {id: e, type: end}
`} {
		g, err := flow.LoadGraph("g.yml", []byte(def))
		require.NoError(t, err)
		require.NoError(t, e.Register(g))
	}
	hook := &waitingPanicHook{node: "boom", before: started}
	type outcome struct {
		res   *flow.Result
		err   error
		ended bool
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.Eval(context.Background(), "main", flow.NewContext("i"), flow.WithEvalInterceptor(hook, 0))
		done <- outcome{res, err, ended.Load()}
	}()
	<-cleaning
	select {
	case <-done:
		t.Fatal("Eval returned while the sub-graph's other branch was still running")
	default:
	}
	close(release)
	out := <-done
	require.Error(t, out.err)
	assert.Equal(t, flow.StatusFailed, out.res.Status)
	assert.True(t, out.ended, "the sub-graph's other branch ended before Eval returned")
	var ne *flow.NodeError
	require.ErrorAs(t, out.err, &ne)
	assert.Equal(t, "call", ne.Node)
	assert.Equal(t, flow.CodePanic, ne.Code)
}

// waitingPanicHook panics when the node it names starts, once before is closed.
type waitingPanicHook struct {
	flow.NopInterceptor
	node   string
	before chan struct{}
}

func (h *waitingPanicHook) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	if n.ID == h.node {
		<-h.before
		panic("hook start")
	}
}

// outerWatch is an interceptor wrapping the whole run that notes, when a panic passes
// through it, whether the branch on another goroutine had already ended.
type outerWatch struct {
	flow.NopInterceptor
	ended   *atomic.Bool
	release chan struct{}
	seen    atomic.Bool // ended.Load() when the panic passed
}

func (w *outerWatch) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	defer func() {
		if p := recover(); p != nil {
			w.seen.Store(w.ended.Load())
			close(w.release) // lets the branch end if nothing else did
			panic(p)
		}
	}()
	return inv.Invoke(ctx)
}

// A hook panicking on the main branch fails the run and waits for its other branches
// before the panic passes back through the interceptors around the run, so an audit
// or a tracer sees every node end before the run does.
func TestHookPanicOnTheMainBranchWaitsBeforeTheInterceptors(t *testing.T) {
	var ended atomic.Bool
	started := make(chan struct{})
	watch := &outerWatch{ended: &ended, release: make(chan struct{})}
	wait := flow.TaskFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		defer ended.Store(true)
		close(started)
		select {
		case <-watch.release:
		case <-ctx.Done():
		}
		return ctx.Err()
	})
	e := flow.NewEngine(flow.WithMaxConcurrency(4), flow.WithTask("wait", wait))
	g, err := flow.LoadGraph("g.yml", []byte(`
id: g
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [boom, w]}
  - {id: boom, link: j}
  - {id: w, task: "@wait", link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	var got any
	func() {
		defer func() { got = recover() }()
		_, _ = e.EvalGraph(context.Background(), g, flow.NewContext("i"),
			flow.WithEvalInterceptor(watch, 0), flow.WithEvalInterceptor(&waitingPanicHook{node: "boom", before: started}, 1))
	}()
	require.Equal(t, "hook start", got)
	assert.True(t, watch.seen.Load(), "the other branch ended before the panic left the engine")
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

// throughJSON returns fr as a process restores it from a session store: its state
// through JSON, restored onto g.
func throughJSON(t *testing.T, e *flow.Engine, g *flow.Graph, fr *flow.Frontier) *flow.Frontier {
	t.Helper()
	data, err := json.Marshal(fr.State())
	require.NoError(t, err)
	var st flow.FrontierState
	require.NoError(t, json.Unmarshal(data, &st))
	restored, err := e.RestoreFrontier(g, st)
	require.NoError(t, err)
	return restored
}

// threeBranchJoin is a graph whose parallel split's three branches meet at a join
// node running task.
func threeBranchJoin(id, task string) string {
	return `
id: ` + id + `
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [a, b, c]}
  - {id: a, link: join}
  - {id: b, link: join}
  - {id: c, link: join}
  - {id: join, type: parallel, task: '` + task + `', link: e}
  - {id: e, type: end}
`
}
