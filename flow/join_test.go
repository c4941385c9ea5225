package flow_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// An activity with two true links opens a (sequential) split inside a parallel
// branch, and all the branches meet at the same parallel join: the join has three
// incoming links and runs once, with three arrivals.
func TestNestedFanOutsMeetingAtOneJoin(t *testing.T) {
	for _, xTask := range []string{`context.incr("n")`, `context.interrupt()`} {
		res, fc, rec := meetAtOneJoin(t, xTask)
		require.NoError(t, res.Err)
		want := 3
		if xTask == `context.interrupt()` {
			want = 2 // x withdrawn: y and b arrive
		}
		assert.Equal(t, int64(want), fc.Value("n"))
		assert.Equal(t, int64(1), fc.Value("joined"), "the join waits for all its incoming links")
		assert.Equal(t, []int{want}, rec.arrivals["j"])
		assert.Equal(t, 1, rec.starts["e"])
	}
}

func meetAtOneJoin(t *testing.T, xTask string) (*flow.Result, *flow.Context, *joinRec) {
	s := flow.NewSpec("meet")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").LinkTo("x").LinkTo("y")
	s.Activity("x").SetTask(xTask).LinkTo("j")
	s.Activity("y").SetTask(`context.incr("n")`).LinkTo("j")
	s.Activity("b").SetTask(`context.incr("n")`).LinkTo("j")
	s.Parallel("j").SetTask(`context.incr("joined")`).LinkTo("e")
	s.End("e")
	rec := newJoinRec()
	fc := flow.NewContext("i")
	return evalRec(t, flow.NewEngine(), build(t, s), fc, rec), fc, rec
}

// A branch of the nested fan-out suspends; the frontier goes through its plain-data
// form and back, and is resumed twice (a Frontier is not consumed): each time the
// suspended node runs again and the join fires once with all three arrivals.
func TestNestedFanOutResumedFromRestoredFrontier(t *testing.T) {
	s := flow.NewSpec("meet")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").LinkTo("x").LinkTo("y")
	s.Activity("x").SetTask(`context.incr("x"); ok == true || context.suspend("x waits")`).LinkTo("j")
	s.Activity("y").SetTask(`context.incr("y")`).LinkTo("j")
	s.Activity("b").SetTask(`context.incr("b")`).LinkTo("j")
	s.Parallel("j").SetTask(`context.incr("joined")`).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	fc := flow.NewContext("i")
	res := evalRec(t, e, g, fc, newJoinRec())
	require.NoError(t, res.Err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	fr, err := e.RestoreFrontier(g, res.Frontier.State())
	require.NoError(t, err)
	for range 2 {
		vars := fc.Vars()
		vars["ok"] = true
		again := flow.NewContextWith("i", vars)
		rec := newJoinRec()
		res := resumeRec(t, e, fr, again, rec)
		require.NoError(t, res.Err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, int64(2), again.Value("x"), "the suspended node runs again")
		assert.Equal(t, int64(1), again.Value("y"))
		assert.Equal(t, int64(1), again.Value("b"))
		assert.Equal(t, int64(1), again.Value("joined"))
		assert.Equal(t, []int{3}, rec.arrivals["j"])
	}
}

// The nested fan-out meeting at one join, all sequential (an inclusive outer split),
// checkpointed after every node: resuming from any checkpoint's state, as a new
// process would, runs every node exactly as often as the uninterrupted run.
func TestNestedFanOutCheckpointsAreExact(t *testing.T) {
	s := flow.NewSpec("meetc")
	s.Start("s").DoFunc(countTask).LinkTo("p")
	s.Inclusive("p").LinkTo("a", flow.LinkWhen("true")).LinkTo("b", flow.LinkWhen("true"))
	s.Activity("a").DoFunc(countTask).LinkTo("x").LinkTo("y")
	s.Activity("x").DoFunc(countTask).LinkTo("j")
	s.Activity("y").DoFunc(countTask).LinkTo("j")
	s.Activity("b").DoFunc(countTask).LinkTo("j")
	s.Inclusive("j").DoFunc(countTask).LinkTo("e")
	s.End("e").DoFunc(countTask)
	g := build(t, s)
	e := flow.NewEngine()
	var cps []flow.Checkpoint
	full := flow.NewContext("d")
	res, err := e.EvalGraph(context.Background(), g, full, flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
		cps = append(cps, cp)
		return nil
	}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	want := full.Vars()
	for _, id := range []string{"s", "a", "x", "y", "b", "j", "e"} {
		require.Equal(t, 1, want["ran."+id], id)
	}
	for _, cp := range cps[:len(cps)-1] {
		fr, err := e.RestoreFrontier(g, cp.Frontier)
		require.NoError(t, err, "after %s", cp.Node)
		fc := flow.NewContextWith("d", cp.Vars)
		res, err := e.Resume(context.Background(), fr, fc)
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, want, fc.Vars(), "resumed after %s", cp.Node)
	}
}

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

// A join whose own task suspends says how many branches it waited for when it runs
// again on resume, in memory and from a restored frontier.
func TestSuspendedJoinKeepsItsArrivals(t *testing.T) {
	g, err := flow.LoadGraph("j.yml", []byte(threeBranchJoin("j", `approved == true || context.suspend("wait")`)))
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

// count returns how many times id is in path.
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

// A checkpoint taken while a join's node runs (another branch of an enclosing split
// completed a node meanwhile) keeps the join's token as it is: at the join's node,
// with the arrivals the join waited for, as a suspended join's frontier does. A
// process that resumes from that checkpoint runs the join's node once, and its
// NodeEnd (the audit's record of the join) says how many branches it waited for.
func TestCheckpointWhileAJoinRunsKeepsItsArrivals(t *testing.T) {
	joinRunning, xDone := make(chan struct{}), make(chan struct{})
	e := flow.NewEngine()
	s := flow.NewSpec("j")
	s.Start("s").LinkTo("outer")
	s.Parallel("outer").LinkTo("x").LinkTo("p")
	s.Activity("x").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		select {
		case <-joinRunning:
		case <-ctx.Done():
		}
		return nil
	}).LinkTo("outerJoin")
	s.Parallel("p").LinkTo("a").LinkTo("b").LinkTo("c")
	for _, id := range []string{"a", "b", "c"} {
		s.Activity(id).LinkTo("join")
	}
	first := true
	s.Parallel("join").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		if first { // the first run only: the resumed one goes straight on
			first = false
			close(joinRunning)
			select {
			case <-xDone:
			case <-ctx.Done():
			}
		}
		return nil
	}).LinkTo("outerJoin")
	s.Parallel("outerJoin").LinkTo("e")
	s.End("e")
	g := build(t, s)

	var st flow.FrontierState
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"), flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
		if cp.Node == "x" {
			data, err := json.Marshal(cp.Frontier)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &st))
			close(xDone)
		}
		return nil
	}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)

	var joinTok *flow.TokenState
	for i := range st.Tokens {
		if st.Tokens[i].Node == "join" {
			joinTok = &st.Tokens[i]
		}
	}
	require.NotNil(t, joinTok, "the join's token is in the checkpoint: %+v", st.Tokens)
	assert.Equal(t, 3, joinTok.Arrivals, "%+v", *joinTok)

	fr, err := e.RestoreFrontier(g, st)
	require.NoError(t, err)
	rec := newJoinRec()
	res, err = e.Resume(context.Background(), fr, flow.NewContext("i"), flow.WithEvalInterceptor(rec, 0))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, rec.starts["join"], "the join's node runs once")
	assert.Equal(t, []int{3}, rec.arrivals["join"])
}

// A join whose node fails the run is parked to run again on resume, as a suspended
// one is: its NodeEnd must then say how many branches it waited for, whether the
// node's own task failed or its sub-graph call did (a checkpoint taken while the
// failed call's node was live again already said so).
func TestFailedJoinKeepsItsArrivals(t *testing.T) {
	e := flow.NewEngine()
	for _, def := range []string{`
id: sub
layout:
  - {id: s, type: start}
  - {id: w, task: 'approved == true || raise("E1", "not yet")'}
  - {id: e, type: end}
`, threeBranchJoin("own", `approved == true || raise("E1", "not yet")`), threeBranchJoin("call", "#sub")} {
		g, err := flow.LoadGraph("g.yml", []byte(def))
		require.NoError(t, err)
		require.NoError(t, e.Register(g))
	}
	for _, id := range []string{"own", "call"} {
		g, _ := e.Graph(id)
		for _, restored := range []bool{false, true} {
			rec := newJoinRec()
			fc := flow.NewContext("i")
			res := evalRec(t, e, g, fc, rec)
			require.Equal(t, flow.StatusFailed, res.Status)
			fr := res.Frontier
			require.NotNil(t, fr)
			if restored {
				fr = throughJSON(t, e, g, fr)
			}
			fc.Set("approved", true)
			res, err := e.Resume(context.Background(), fr, fc, flow.WithEvalInterceptor(rec, 0))
			require.NoError(t, err)
			require.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, []int{3, 3}, rec.arrivals["join"], "%s, restored %v: the failed run and the resumed one", id, restored)
		}
	}
}

// A join whose task is a sub-graph call that suspends is resumed by re-entering the
// call: its NodeEnd must still say how many branches the join waited for, as when the
// join's own task suspends (TestSuspendedJoinKeepsItsArrivals).
func TestSuspendedJoinCallKeepsItsArrivals(t *testing.T) {
	e, g := joinCallingSuspender(t)
	for _, restored := range []bool{false, true} {
		rec := newJoinRec()
		fc := flow.NewContext("i")
		res := evalRec(t, e, g, fc, rec)
		require.Equal(t, flow.StatusSuspended, res.Status)
		fr := res.Frontier
		if restored {
			fr = throughJSON(t, e, g, fr)
		}
		fc.Set("approved", true)
		res, err := e.Resume(context.Background(), fr, fc, flow.WithEvalInterceptor(rec, 0))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, []int{3, 3}, rec.arrivals["join"], "restored %v: the suspended run and the resumed one", restored)
	}
}

// joinCallingSuspender registers a graph whose three-branch join calls sub-graph "sub",
// which suspends until approved is true, and returns it.
func joinCallingSuspender(t *testing.T) (*flow.Engine, *flow.Graph) {
	t.Helper()
	e := flow.NewEngine()
	for _, def := range []string{`
id: sub
layout:
  - {id: s, type: start}
  - {id: w, task: 'approved == true || context.suspend("wait")'}
  - {id: e, type: end}
`, threeBranchJoin("j", "#sub")} {
		g, err := flow.LoadGraph("g.yml", []byte(def))
		require.NoError(t, err)
		require.NoError(t, e.Register(g))
	}
	g, _ := e.Graph("j")
	return e, g
}

// The call frame of a join's sub-graph call stores the join's arrivals ("arrived").
// A frontier stored before call frames kept them still restores and resumes: the join
// then reports no arrivals when it runs again. Negative arrivals are refused.
func TestJoinCallFrameArrivalsInState(t *testing.T) {
	e, g := joinCallingSuspender(t)
	res := evalRec(t, e, g, flow.NewContext("i"), newJoinRec())
	require.Equal(t, flow.StatusSuspended, res.Status)
	st := res.Frontier.State()
	call := slices.IndexFunc(st.Frames, func(f flow.FrameState) bool { return f.Kind == "call" && f.Node == "join" })
	require.GreaterOrEqual(t, call, 0, "%+v", st.Frames)
	assert.Equal(t, 3, st.Frames[call].Arrived)

	old := st
	old.Frames = slices.Clone(st.Frames)
	old.Frames[call].Arrived = 0
	fr, err := e.RestoreFrontier(g, old)
	require.NoError(t, err)
	rec := newJoinRec()
	fc := flow.NewContext("i")
	fc.Set("approved", true)
	res, err = e.Resume(context.Background(), fr, fc, flow.WithEvalInterceptor(rec, 0))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Empty(t, rec.arrivals["join"], "no arrivals recorded")
	assert.Equal(t, 1, rec.starts["join"])

	st.Frames[call].Arrived = -1
	_, err = e.RestoreFrontier(g, st)
	require.Error(t, err)
}
