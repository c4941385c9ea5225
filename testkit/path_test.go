package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeTB captures the failures an assertion reports instead of failing the test.
// Methods other than Helper and Errorf are not expected to be called (they would
// panic on the nil embedded interface).
type fakeTB struct {
	testing.TB
	errs []string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func build(t *testing.T, s *flow.GraphSpec) *flow.Graph {
	t.Helper()
	g, err := s.Build()
	require.NoError(t, err)
	return g
}

// record runs g on a fresh engine with a fresh recorder and returns the recorder.
func record(t *testing.T, e *flow.Engine, g *flow.Graph, vars map[string]any) (*testkit.PathRecorder, *flow.Result) {
	t.Helper()
	rec := testkit.NewPathRecorder()
	res, err := e.EvalGraph(context.Background(), g, flow.NewContextWith("t", vars), flow.WithEvalInterceptor(rec, 0))
	require.NotNil(t, res, "run did not start: %v", err)
	return rec, res
}

// leaveGraph: day >= 3 needs the director's approval as well as the manager's.
func leaveGraph(t *testing.T) *flow.Graph {
	s := flow.NewSpec("leave")
	s.Start("s").LinkTo("manager")
	s.Activity("manager").SetTask(`context.put("manager", "ok")`).LinkTo("g")
	s.Exclusive("g").
		LinkTo("director", flow.LinkWhen("day >= 3")).
		LinkTo("e")
	s.Activity("director").SetTask(`context.put("director", "ok")`).LinkTo("e")
	s.End("e")
	return build(t, s)
}

// loopGraph runs "x" once per item of [1, 2, 3].
func loopGraph(t *testing.T) *flow.Graph {
	s := flow.NewSpec("loop")
	s.Start("s").LinkTo("l")
	s.Loop("l", "i", []any{1, 2, 3}).LinkTo("x")
	s.Activity("x").LinkTo("close")
	s.Loop("close", "", nil).LinkTo("e")
	s.End("e")
	return build(t, s)
}

// assertionCase is one call of an assertion on a recording.
type assertionCase struct {
	name   string
	rec    *testkit.PathRecorder
	assert func(testing.TB, *testkit.PathRecorder) bool
	want   []string // substrings of the failure message; nil means the assertion passes
}

// checkAssertions runs each case against a fake testing.TB: a passing case reports
// nothing, a failing one reports exactly one failure containing every wanted string.
func checkAssertions(t *testing.T, tests []assertionCase) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTB{}
			ok := tc.assert(ft, tc.rec)
			if tc.want == nil {
				assert.True(t, ok)
				assert.Empty(t, ft.errs)
				return
			}
			assert.False(t, ok)
			require.Len(t, ft.errs, 1, "one failure per failing assertion")
			for _, w := range tc.want {
				assert.Contains(t, ft.errs[0], w)
			}
		})
	}
}

// recordings are the paths the assertion tests check.
type recordings struct {
	leave *testkit.PathRecorder // s -> manager -> g -> director -> e
	short *testkit.PathRecorder // s -> manager -> g -> e
	loop  *testkit.PathRecorder // s -> l -> x -> x -> x -> close -> e
	empty *testkit.PathRecorder // no node ran
}

// recordPaths runs the leave graph (day 5 and day 1) and the loop graph, recording each.
func recordPaths(t *testing.T) recordings {
	e := flow.NewEngine()
	leave, _ := record(t, e, leaveGraph(t), map[string]any{"day": 5})
	short, _ := record(t, e, leaveGraph(t), map[string]any{"day": 1})
	loop, _ := record(t, e, loopGraph(t), nil)
	return recordings{leave: leave, short: short, loop: loop, empty: testkit.NewPathRecorder()}
}

const leavePath = "path: s -> manager -> g -> director -> e"

func TestAssertVisited(t *testing.T) {
	p := recordPaths(t)
	checkAssertions(t, []assertionCase{
		{"visited", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisited(t, r, "manager", "director")
		}, nil},
		{"visited qualified", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisited(t, r, "leave:director")
		}, nil},
		{"visited missing", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisited(t, r, "manager", "hr", "ceo")
		}, []string{`not visited: "hr", "ceo"`, leavePath}},
		{"visited wrong call path", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisited(t, r, "other:director")
		}, []string{`not visited: "other:director"`, leavePath}},
		{"visited on empty recorder", p.empty, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisited(t, r, "s")
		}, []string{`not visited: "s"`, "path: (no node ran)"}},
	})
}

func TestAssertNotVisited(t *testing.T) {
	p := recordPaths(t)
	checkAssertions(t, []assertionCase{
		{"not visited", p.short, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertNotVisited(t, r, "director", "leave:director")
		}, nil},
		{"not visited fails", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertNotVisited(t, r, "g", "director")
		}, []string{`should not have been: "g" (1 times), "director" (1 times)`, leavePath}},
		{"not visited, no such node", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertNotVisited(t, r, "hr", "director", "ceo")
		}, []string{`no graph that ran has a node "hr", "ceo" (graphs: leave): a misspelt id?`, leavePath}},
	})
}

func TestAssertVisitedInOrder(t *testing.T) {
	p := recordPaths(t)
	checkAssertions(t, []assertionCase{
		{"in order", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisitedInOrder(t, r, "s", "g", "e")
		}, nil},
		{"in order adjacent", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisitedInOrder(t, r, "manager", "g", "director")
		}, nil},
		{"in order reversed", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisitedInOrder(t, r, "director", "manager")
		}, []string{`not visited in order "director", "manager": "manager" was not visited after "director" (position 4)`, leavePath}},
		{"in order missing", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisitedInOrder(t, r, "s", "hr", "e")
		}, []string{`"hr" was not visited`, leavePath}},
		{"in order repeated node", p.loop, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisitedInOrder(t, r, "l", "x", "x", "x", "close")
		}, nil},
		{"in order one repetition too many", p.loop, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisitedInOrder(t, r, "x", "x", "x", "x")
		}, []string{`"x" was not visited after "x" (position 5)`, "path: s -> l -> x -> x -> x -> close -> e"}},
	})
}

func TestAssertVisitedTimes(t *testing.T) {
	p := recordPaths(t)
	checkAssertions(t, []assertionCase{
		{"times", p.loop, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisitedTimes(t, r, "x", 3)
		}, nil},
		{"times zero", p.short, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisitedTimes(t, r, "director", 0)
		}, nil},
		{"times zero, no such node", p.loop, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisitedTimes(t, r, "y", 0)
		}, []string{`no graph that ran has a node "y" (graphs: loop)`}},
		{"times wrong", p.loop, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertVisitedTimes(t, r, "x", 2)
		}, []string{`"x" visited 3 times, want 2`, "path: s -> l -> x -> x -> x -> close -> e"}},
	})
}

func TestAssertPath(t *testing.T) {
	p := recordPaths(t)
	checkAssertions(t, []assertionCase{
		{"path", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertPath(t, r, "s", "manager", "g", "director", "e")
		}, nil},
		{"path qualified", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertPath(t, r, "leave:s", "manager", "g", "leave:director", "e")
		}, nil},
		{"path differs", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertPath(t, r, "s", "manager", "g", "e")
		}, []string{`want "e" at position 4, got "director"`, "want: s -> manager -> g -> e", leavePath}},
		{"path too short", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertPath(t, r, "s", "manager")
		}, []string{`want the path to end, got "g" at position 3`, leavePath}},
		{"path too long", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertPath(t, r, "s", "manager", "g", "director", "e", "archive")
		}, []string{`want "archive" at position 6, the path ends`, leavePath}},
		{"empty path", p.empty, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.AssertPath(t, r)
		}, nil},
	})
}

func TestExpect(t *testing.T) {
	p := recordPaths(t)
	checkAssertions(t, []assertionCase{
		{"fluent", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.Expect(t, r).Visited("manager", "director").Times("director", 1).
				InOrder("s", "director", "e").Times("g", 1).Path("s", "manager", "g", "director", "e").OK()
		}, nil},
		{"fluent failure", p.leave, func(t testing.TB, r *testkit.PathRecorder) bool {
			return testkit.Expect(t, r).Visited("manager").NotVisited("director").InOrder("s", "e").OK()
		}, []string{`should not have been: "director"`, leavePath}},
	})
}

func TestExpectRunsEveryAssertion(t *testing.T) {
	rec, _ := record(t, flow.NewEngine(), leaveGraph(t), map[string]any{"day": 1})
	ft := &fakeTB{}
	ok := testkit.Expect(ft, rec).Visited("director").NotVisited("manager").Visited("e").OK()
	assert.False(t, ok)
	require.Len(t, ft.errs, 2)
	assert.Contains(t, ft.errs[0], `not visited: "director"`)
	assert.Contains(t, ft.errs[1], `should not have been: "manager"`)
}

func TestExclusiveRoute(t *testing.T) {
	g := leaveGraph(t)
	e := flow.NewEngine()
	tests := []struct {
		day      int
		path     []string
		director any
	}{
		{day: 1, path: []string{"s", "manager", "g", "e"}, director: nil},
		{day: 3, path: []string{"s", "manager", "g", "director", "e"}, director: "ok"},
		{day: 5, path: []string{"s", "manager", "g", "director", "e"}, director: "ok"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("day=%d", tc.day), func(t *testing.T) {
			rec := testkit.NewPathRecorder()
			fc := flow.NewContextWith("leave-1", map[string]any{"day": tc.day})
			res, err := e.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(rec, 0))
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, tc.director, fc.Value("director"))

			testkit.AssertPath(t, rec, tc.path...)
			testkit.AssertVisited(t, rec, "manager", "g")
			if tc.director != nil {
				testkit.Expect(t, rec).Visited("director").InOrder("manager", "g", "director", "e")
			} else {
				testkit.AssertNotVisited(t, rec, "director")
			}
			assert.Equal(t, tc.path, rec.Path())
			assert.Equal(t, map[string][]string{"main": tc.path}, rec.ByBranch())
			for _, s := range rec.Steps() {
				assert.Equal(t, trace.Completed, s.Status, s.Node)
				assert.Equal(t, "leave", s.Graph)
				assert.Equal(t, "leave", s.Path)
				assert.Equal(t, res.RunID(), s.RunID)
				assert.Positive(t, s.RunStep)
			}
		})
	}
}

// forkGraph: s -> p -> {a1 -> a2, b1 -> b2} -> j -> e, with p and j parallel.
func forkGraph(t *testing.T, tasks map[string]flow.TaskFunc) *flow.Graph {
	s := flow.NewSpec("fork")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a1").LinkTo("b1")
	s.Activity("a1").DoFunc(tasks["a1"]).LinkTo("a2")
	s.Activity("a2").DoFunc(tasks["a2"]).LinkTo("j")
	s.Activity("b1").DoFunc(tasks["b1"]).LinkTo("b2")
	s.Activity("b2").DoFunc(tasks["b2"]).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	return build(t, s)
}

func noop(context.Context, *flow.Context, *flow.Node) error { return nil }

// assertFork checks what holds however the branches of forkGraph are scheduled.
func assertFork(t *testing.T, rec *testkit.PathRecorder) {
	t.Helper()
	testkit.Expect(t, rec).
		Visited("a1", "a2", "b1", "b2").
		Times("j", 1).
		InOrder("s", "p", "a1", "a2", "j", "e").
		InOrder("s", "p", "b1", "b2", "j", "e")
	assert.Equal(t, map[string][]string{
		"main":      {"s", "p", "j", "e"},
		"main/p:a1": {"a1", "a2"},
		"main/p:b1": {"b1", "b2"},
	}, rec.ByBranch())
}

func TestParallelCompletionOrder(t *testing.T) {
	// Gates force each interleaving in turn (no sleeps): one branch's first node
	// waits until the other branch's last node ran.
	gate := func(wait <-chan struct{}) flow.TaskFunc {
		return func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
			select {
			case <-wait:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	signal := func(done chan struct{}) flow.TaskFunc {
		return func(context.Context, *flow.Context, *flow.Node) error { close(done); return nil }
	}
	tests := []struct {
		name          string
		first, second string // the branch ends in completion order
	}{
		{"a finishes first", "a2", "b2"},
		{"b finishes first", "b2", "a2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			tasks := map[string]flow.TaskFunc{"a1": noop, "a2": noop, "b1": noop, "b2": noop}
			tasks[tc.first] = signal(done)
			tasks[map[string]string{"a2": "b1", "b2": "a1"}[tc.first]] = gate(done)

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rec := testkit.NewPathRecorder()
			res, err := flow.NewEngine().EvalGraph(ctx, forkGraph(t, tasks), flow.NewContext("f"), flow.WithEvalInterceptor(rec, 0))
			require.NoError(t, err)
			require.Equal(t, flow.StatusCompleted, res.Status)

			assertFork(t, rec)
			testkit.AssertVisitedInOrder(t, rec, tc.first, tc.second)

			// The other order does not hold, and the failure shows every branch.
			ft := &fakeTB{}
			assert.False(t, testkit.AssertVisitedInOrder(ft, rec, tc.second, tc.first))
			require.Len(t, ft.errs, 1)
			for _, w := range []string{"path: s -> p -> ", "branches:", "main/p:a1: a1 -> a2", "main/p:b1: b1 -> b2", "main: s -> p -> j -> e"} {
				assert.Contains(t, ft.errs[0], w)
			}
		})
	}

	t.Run("unforced", func(t *testing.T) {
		e := flow.NewEngine()
		g := forkGraph(t, map[string]flow.TaskFunc{"a1": noop, "a2": noop, "b1": noop, "b2": noop})
		seen := map[string]bool{}
		for range 50 {
			rec, res := record(t, e, g, nil)
			require.Equal(t, flow.StatusCompleted, res.Status)
			assertFork(t, rec)
			seen[strings.Join(rec.Path(), " ")] = true
		}
		t.Logf("%d distinct start orders in 50 runs", len(seen))
	})
}

func TestWideFanOutRecordsEveryBranch(t *testing.T) {
	const n = 40
	s := flow.NewSpec("wide")
	s.Start("s").LinkTo("p")
	p := s.Parallel("p")
	for i := range n {
		id := fmt.Sprintf("w%02d", i)
		p.LinkTo(id)
		s.Activity(id).DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
			c.Update("hits", func(old any, _ bool) any { v, _ := old.(int); return v + 1 })
			return nil
		}).LinkTo("j")
	}
	s.Parallel("j").LinkTo("e")
	s.End("e")
	rec, res := record(t, flow.NewEngine(), build(t, s), nil)
	require.Equal(t, flow.StatusCompleted, res.Status)

	assert.Len(t, rec.Steps(), n+4)
	branches := rec.ByBranch()
	assert.Len(t, branches, n+1)
	for i := range n {
		id := fmt.Sprintf("w%02d", i)
		testkit.AssertVisitedTimes(t, rec, id, 1)
		testkit.AssertVisitedInOrder(t, rec, "p", id, "j")
		assert.Equal(t, []string{id}, branches["main/p:"+id])
	}
	for i, s := range rec.Steps() {
		assert.Equal(t, i, s.Seq)
		assert.Equal(t, trace.Completed, s.Status, s.Node)
	}
}

func TestSubGraphQualifiedPath(t *testing.T) {
	e := flow.NewEngine()
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("x")
	child.Activity("x").LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	parent := flow.NewSpec("parent")
	parent.Start("s").LinkTo("call1")
	parent.Activity("call1").SetTask("#child").LinkTo("call2")
	parent.Activity("call2").SetTask("#child").LinkTo("e")
	parent.End("e")

	rec, res := record(t, e, build(t, parent), nil)
	require.Equal(t, flow.StatusCompleted, res.Status)

	assert.Equal(t, []string{"s", "call1", "cs", "x", "ce", "call2", "cs", "x", "ce", "e"}, rec.Path())
	assert.Equal(t, []string{
		"parent:s", "parent:call1",
		"parent/call1/child:cs", "parent/call1/child:x", "parent/call1/child:ce",
		"parent:call2",
		"parent/call2/child:cs", "parent/call2/child:x", "parent/call2/child:ce",
		"parent:e",
	}, rec.QualifiedPath())
	assert.Equal(t, 2, rec.Count("x"))
	assert.Equal(t, 1, rec.Count("parent/call2/child:x"))
	assert.Equal(t, 0, rec.Count("parent:x"))

	testkit.Expect(t, rec).
		Times("x", 2).
		Times("parent/call1/child:x", 1).
		NotVisited("parent:x", "child:x").
		InOrder("parent/call1/child:x", "call2", "parent/call2/child:x")
	for _, s := range rec.Steps() {
		if strings.HasPrefix(s.Path, "parent/") {
			assert.Equal(t, "child", s.Graph, s.Qualified())
			// A sub-graph's branch is named under its call, so ids are unique in the run.
			assert.Equal(t, "main/"+strings.Split(s.Path, "/")[1]+"/child", s.Branch, s.Qualified())
		} else {
			assert.Equal(t, "parent", s.Graph, s.Qualified())
			assert.Equal(t, "main", s.Branch, s.Qualified())
		}
	}

	// With a sub-graph in the path, failure messages show qualified ids.
	ft := &fakeTB{}
	testkit.AssertNotVisited(ft, rec, "x")
	require.Len(t, ft.errs, 1)
	assert.Contains(t, ft.errs[0], `"x" (2 times)`)
	assert.Contains(t, ft.errs[0], "path: parent:s -> parent:call1 -> parent/call1/child:cs -> parent/call1/child:x")

	// A qualified id that differs only in its call path is told apart in the message:
	// not 'want "parent/call2/child:x", got "x"'.
	ft = &fakeTB{}
	testkit.AssertPath(ft, rec, "s", "call1", "cs", "parent/call2/child:x")
	require.Len(t, ft.errs, 1)
	assert.Contains(t, ft.errs[0], `want "parent/call2/child:x" at position 4, got "parent/call1/child:x"`)
}

func TestEngineWideRecorderAndReset(t *testing.T) {
	rec := testkit.NewPathRecorder()
	e := flow.NewEngine(flow.WithInterceptor(rec, 0))
	g := leaveGraph(t)
	r1, err := e.EvalGraph(context.Background(), g, flow.NewContextWith("1", map[string]any{"day": 1}))
	require.NoError(t, err)
	r2, err := e.EvalGraph(context.Background(), g, flow.NewContextWith("2", map[string]any{"day": 9}))
	require.NoError(t, err)

	testkit.AssertPath(t, rec, "s", "manager", "g", "e", "s", "manager", "g", "director", "e")
	testkit.AssertVisitedTimes(t, rec, "manager", 2)
	runs := map[string]int{}
	for _, s := range rec.Steps() {
		runs[s.RunID]++
	}
	assert.Equal(t, map[string]int{r1.RunID(): 4, r2.RunID(): 5}, runs)

	rec.Reset()
	assert.Empty(t, rec.Steps())
	assert.Empty(t, rec.Path())
	assert.Empty(t, rec.ByBranch())
	testkit.AssertPath(t, rec)

	_, err = e.EvalGraph(context.Background(), g, flow.NewContextWith("3", map[string]any{"day": 1}))
	require.NoError(t, err)
	testkit.AssertPath(t, rec, "s", "manager", "g", "e")
	assert.Equal(t, 0, rec.Steps()[0].Seq)
}

// A recorder registered both on the engine and for the evaluation records each
// execution once, in parallel branches as on the main one.
func TestRecorderRegisteredTwice(t *testing.T) {
	rec := testkit.NewPathRecorder()
	e := flow.NewEngine(flow.WithInterceptor(rec, 0), flow.WithMaxConcurrency(4))
	g, err := flow.LoadGraph("p.yml", []byte(`
id: p
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [a, b]}
  - {id: a, link: j}
  - {id: b, link: j}
  - {id: j, type: parallel}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	_, err = e.EvalGraph(context.Background(), g, flow.NewContext("i"), flow.WithEvalInterceptor(rec, 1))
	require.NoError(t, err)
	assert.Len(t, rec.Steps(), 6)
	for _, id := range []string{"s", "p", "a", "b", "j", "e"} {
		testkit.AssertVisitedTimes(t, rec, id, 1)
	}
	for _, s := range rec.Steps() {
		assert.Equal(t, trace.Completed, s.Status, s.Node)
	}
}

func TestZeroRecorder(t *testing.T) {
	var rec testkit.PathRecorder
	_, err := flow.NewEngine().EvalGraph(context.Background(), leaveGraph(t), flow.NewContextWith("z", map[string]any{"day": 1}),
		flow.WithEvalInterceptor(&rec, 0))
	require.NoError(t, err)
	testkit.AssertPath(t, &rec, "s", "manager", "g", "e")
	assert.Equal(t, "s -> manager -> g -> e", rec.String())
}

func TestStatuses(t *testing.T) {
	errBoom := errors.New("boom")
	s := flow.NewSpec("st")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").SetTask(`context.interrupt()`).LinkTo("j")
	s.Activity("b").LinkTo("j")
	s.Parallel("j").LinkTo("pay")
	s.Activity("pay").DoFunc(func(context.Context, *flow.Context, *flow.Node) error { return errBoom }).LinkTo("e")
	s.End("e")
	rec, res := record(t, flow.NewEngine(), build(t, s), nil)
	require.Equal(t, flow.StatusFailed, res.Status)

	status := map[string]flow.NodeStatus{}
	for _, st := range rec.Steps() {
		status[st.Node] = st.Status
		if st.Node == "pay" {
			assert.ErrorIs(t, st.Err, errBoom)
		} else {
			assert.NoError(t, st.Err, st.Node)
		}
	}
	assert.Equal(t, map[string]flow.NodeStatus{
		"s": trace.Completed, "p": trace.Completed, "a": trace.Interrupted, "b": trace.Completed,
		"j": trace.Completed, "pay": trace.Failed,
	}, status)

	ft := &fakeTB{}
	testkit.AssertVisited(ft, rec, "e")
	require.Len(t, ft.errs, 1)
	assert.Contains(t, ft.errs[0], "a [INTERRUPTED]")
	assert.Contains(t, ft.errs[0], "j -> pay [FAILED]")
}

func TestSuspendedStatus(t *testing.T) {
	s := flow.NewSpec("sus")
	s.Start("s").LinkTo("approve")
	s.Activity("approve").SetTask(`context.suspend("waiting for a manager")`).LinkTo("e")
	s.End("e")
	rec, res := record(t, flow.NewEngine(), build(t, s), nil)
	require.Equal(t, flow.StatusSuspended, res.Status)
	testkit.Expect(t, rec).Path("s", "approve").NotVisited("e")
	steps := rec.Steps()
	require.Len(t, steps, 2)
	last := steps[1]
	assert.Equal(t, trace.Suspended, last.Status)
	assert.Equal(t, "waiting for a manager", last.Reason)
}

// An assertion that cannot fail proves nothing: no ids, a recorder that saw no node
// (not installed), a nil recorder, or a misspelt id asserted not visited all fail, with
// a message that says why.
func TestAssertionsNeverPassVacuously(t *testing.T) {
	rec, _ := record(t, flow.NewEngine(), leaveGraph(t), map[string]any{"day": 1})
	empty := testkit.NewPathRecorder()
	for _, tc := range []struct {
		name   string
		assert func(t testing.TB) bool
		msg    string
	}{
		{"visited nothing", func(t testing.TB) bool { return testkit.AssertVisited(t, rec) }, "no node ids given"},
		{"not visited nothing", func(t testing.TB) bool { return testkit.AssertNotVisited(t, rec) }, "no node ids given"},
		{"in order nothing", func(t testing.TB) bool { return testkit.AssertVisitedInOrder(t, rec) }, "no node ids given"},
		{"chain", func(t testing.TB) bool { return testkit.Expect(t, rec).NotVisited().OK() }, "no node ids given"},
		{"not visited, empty recorder", func(t testing.TB) bool { return testkit.AssertNotVisited(t, empty, "director") },
			"the recorder saw no node run"},
		{"zero times, empty recorder", func(t testing.TB) bool { return testkit.AssertVisitedTimes(t, empty, "director", 0) },
			"the recorder saw no node run"},
		{"misspelt", func(t testing.TB) bool { return testkit.AssertNotVisited(t, rec, "directr") },
			`no graph that ran has a node "directr"`},
		{"misspelt zero times", func(t testing.TB) bool { return testkit.AssertVisitedTimes(t, rec, "directr", 0) },
			`no graph that ran has a node "directr"`},
		{"nil recorder", func(t testing.TB) bool { return testkit.AssertVisited(t, nil, "s") }, "nil PathRecorder"},
		{"nil recorder path", func(t testing.TB) bool { return testkit.AssertPath(t, nil) }, "nil PathRecorder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTB{}
			assert.False(t, tc.assert(ft))
			require.Len(t, ft.errs, 1)
			assert.Contains(t, ft.errs[0], tc.msg)
		})
	}

	// What they may still assert: a node of the graph that did not run, no node at all
	// (AssertPath with no ids), and a qualified id, which is explicit about where.
	testkit.Expect(t, rec).NotVisited("director").Times("director", 0).NotVisited("leave:nowhere")
	testkit.AssertPath(t, empty)
}

// A plain id of a sub-graph that was never called cannot be told from a misspelt one:
// it is accepted.
func TestNotVisitedInUncalledSubGraph(t *testing.T) {
	e := flow.NewEngine()
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("x")
	child.Activity("x").LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	parent := flow.NewSpec("parent")
	parent.Start("s").LinkTo("g")
	parent.Exclusive("g").LinkTo("call", flow.LinkWhen("go")).LinkTo("e")
	parent.Activity("call").SetTask("#child").LinkTo("e")
	parent.End("e")
	rec, res := record(t, e, build(t, parent), map[string]any{"go": false})
	require.Equal(t, flow.StatusCompleted, res.Status)
	testkit.Expect(t, rec).NotVisited("x", "call").Times("x", 0)
}
