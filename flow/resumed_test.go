package flow_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// seenLog records, per node execution, what the task's view said: node id, loop item
// (when there is one), Resumed and Attempt.
type seenLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *seenLog) task(wait func(c *flow.Context, n *flow.Node) error) flow.TaskFunc {
	return func(_ context.Context, c *flow.Context, n *flow.Node) error {
		item := ""
		if v, ok := c.Get("it"); ok {
			item = fmt.Sprint(v)
		}
		l.mu.Lock()
		l.seen = append(l.seen, fmt.Sprintf("%s%s:%v:%d", n.ID, item, c.Resumed(), c.Attempt()))
		l.mu.Unlock()
		if wait != nil {
			return wait(c, n)
		}
		return nil
	}
}

// The node a resume runs again sees Resumed; the nodes after it, later iterations of
// a loop over it and any node of a fresh evaluation do not. Inside a sub-graph, the
// suspended node sees it too, through a JSON round trip of the frontier.
func TestContextResumed(t *testing.T) {
	var l seenLog
	ask := l.task(func(c *flow.Context, n *flow.Node) error {
		if v, _ := c.Get("it"); v == 2 && c.Value("ok") != true {
			c.Suspend("ask")
		}
		return nil
	})
	e := flow.NewEngine(flow.WithTaskFunc("ask", ask), flow.WithTaskFunc("note", l.task(nil)))
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("l")
	child.Loop("l", "it", []any{1, 2, 3}).LinkTo("ask")
	child.Activity("ask").SetTask("@ask").LinkTo("lc")
	child.Loop("lc", "", nil).LinkTo("after")
	child.Activity("after").SetTask("@note").LinkTo("ce")
	child.End("ce")
	parent := flow.NewSpec("parent")
	parent.Start("s").LinkTo("call")
	parent.Activity("call").SetTask("#child").LinkTo("done")
	parent.Activity("done").SetTask("@note").LinkTo("e")
	parent.End("e")
	require.NoError(t, e.Register(build(t, child)))
	pg := build(t, parent)

	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), pg, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, []string{"ask1:false:1", "ask2:false:1"}, l.seen)

	fr := throughJSON(t, e, pg, res.Frontier)
	l.seen = nil
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), fr, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{"ask2:true:1", "ask3:false:1", "after:false:1", "done:false:1"}, l.seen)

	// A fresh evaluation on the same context (ok is still set) resumes nothing.
	l.seen = nil
	_, err = e.EvalGraph(context.Background(), pg, fc)
	require.NoError(t, err)
	assert.Equal(t, []string{"ask1:false:1", "ask2:false:1", "ask3:false:1", "after:false:1", "done:false:1"}, l.seen)
}

// A retried node counts its attempts; a resumed node that fails and is retried stays
// resumed through its retries, the next node starts at attempt 1 again, and the root
// view has no attempt.
func TestContextAttempt(t *testing.T) {
	var l seenLog
	calls := 0
	flaky := l.task(func(c *flow.Context, n *flow.Node) error {
		calls++
		if c.Value("ok") != true {
			c.Suspend("wait")
			return nil
		}
		if calls < 4 {
			return flow.MarkRetryable(errors.New("flaky"))
		}
		return nil
	})
	e := flow.NewEngine(flow.WithTaskFunc("flaky", flaky), flow.WithTaskFunc("note", l.task(nil)))
	s := flow.NewSpec("r")
	s.Start("s").LinkTo("f")
	s.Activity("f").SetTask("@flaky").SetRetry(flow.RetryPolicy{Max: 5}).LinkTo("n")
	s.Activity("n").SetTask("@note").LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")
	assert.Equal(t, 0, fc.Attempt())
	assert.False(t, fc.Resumed())
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{"f:false:1", "f:true:1", "f:true:2", "f:true:3", "n:false:1"}, l.seen)
}

// An error policy's goto back to the node that failed after a resume is a new
// execution there, not the resumed one.
func TestContextResumedEndsAtAnErrorGoto(t *testing.T) {
	var l seenLog
	step := l.task(func(c *flow.Context, n *flow.Node) error {
		if c.Value("ok") != true {
			c.Suspend("wait")
			return nil
		}
		if c.Resumed() {
			return flow.MarkRecoverable(errors.New("fails once resumed"))
		}
		return nil
	})
	e := flow.NewEngine(flow.WithTaskFunc("step", step))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("a")
	s.Activity("a").SetTask("@step").OnError("a", nil).LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{"a:false:1", "a:true:1", "a:false:1"}, l.seen)
}

// A node the halted run had not started when it stopped (a Stop in the node before
// it leaves it in the frontier, not yet run) is not resumed when the resume runs it
// for the first time: an agent there must not take a waiting run that an earlier
// evaluation left in the variables for its own. The node that suspended is.
func TestContextResumedOnlyWhereTheNodeRanBefore(t *testing.T) {
	var l seenLog
	e := flow.NewEngine(flow.WithTaskFunc("note", l.task(nil)),
		flow.WithTaskFunc("stop", l.task(func(c *flow.Context, _ *flow.Node) error {
			if c.Value("ok") != true {
				c.Stop()
			}
			return nil
		})),
		flow.WithTaskFunc("ask", l.task(func(c *flow.Context, _ *flow.Node) error {
			if c.Value("ok") != true {
				c.Suspend("ask")
			}
			return nil
		})))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("stop")
	s.Activity("stop").SetTask("@stop").LinkTo("n")
	s.Activity("n").SetTask("@note").LinkTo("ask")
	s.Activity("ask").SetTask("@ask").LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusStopped, res.Status)
	res, err = e.Resume(context.Background(), throughJSON(t, e, g, res.Frontier), fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), throughJSON(t, e, g, res.Frontier), fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{"stop:false:1", "n:false:1", "ask:false:1", "ask:true:1"}, l.seen)
}

// A node whose token the step limit refused has not run, though its arrival was
// already handled (a join whose branches all arrived, a loop's closing node after the
// last item): a resume with a higher limit runs it for the first time, so it is not
// resumed, from the frontier as the run left it and from its JSON state alike.
func TestContextResumedNotAtANodeTheStepLimitRefused(t *testing.T) {
	for _, tc := range []struct {
		name, def string
		steps     int
		want      []string
	}{
		{"join", `
id: g
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [a, b]}
  - {id: a, link: j}
  - {id: b, link: j}
  - {id: j, type: parallel, task: "@note", link: e}
  - {id: e, type: end}
`, 4, []string{"j:false:1"}},
		{"loop closing node", `
id: g
layout:
  - {id: s, type: start}
  - {id: l, type: loop, meta: {$for: it, $in: [1, 2]}}
  - {id: body, task: "@note"}
  - {id: lc, type: loop, task: "@note"}
  - {id: e, type: end}
`, 4, []string{"lc:false:1"}},
	} {
		for _, viaJSON := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/json=%v", tc.name, viaJSON), func(t *testing.T) {
				var l seenLog
				e := flow.NewEngine(flow.WithTaskFunc("note", l.task(nil)))
				g, err := flow.LoadGraph("g.yml", []byte(tc.def))
				require.NoError(t, err)
				fc := flow.NewContext("i")
				res, err := e.EvalGraph(context.Background(), g, fc, flow.WithSteps(tc.steps))
				require.ErrorIs(t, err, flow.ErrStepLimit)
				fr := res.Frontier
				if viaJSON {
					fr = throughJSON(t, e, g, fr)
				}
				l.seen = nil
				res, err = e.Resume(context.Background(), fr, fc)
				require.NoError(t, err)
				require.Equal(t, flow.StatusCompleted, res.Status)
				assert.Equal(t, tc.want, l.seen)
			})
		}
	}
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

// reasonRec records the suspend reason of each node's end.
type reasonRec struct {
	flow.NopInterceptor
	mu      sync.Mutex
	reasons map[string]string
}

func (r *reasonRec) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, end flow.NodeEnd) {
	if end.Status == trace.Suspended {
		r.mu.Lock()
		r.reasons[n.ID] = end.Reason
		r.mu.Unlock()
	}
}

// When parallel branches suspend together, the run keeps the first reason, but each
// node's end (and so its audit record) gives the reason that node suspended with,
// not the other branch's.
func TestBranchesSuspendingTogetherKeepTheirOwnReasons(t *testing.T) {
	started, suspended := make(chan struct{}), make(chan struct{})
	s := flow.NewSpec("both")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		<-started
		c.Suspend("manager approval")
		close(suspended)
		return nil
	}).LinkTo("j")
	s.Activity("b").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		close(started)
		<-suspended
		c.Suspend("budget check")
		return nil
	}).LinkTo("j")
	s.Parallel("j")
	rec := &reasonRec{reasons: map[string]string{}}
	res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), flow.NewContext("i"), flow.WithEvalInterceptor(rec, 0))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, "manager approval", res.Reason, "the run's reason is the first")
	assert.Equal(t, map[string]string{"a": "manager approval", "b": "budget check"}, rec.reasons)
}

// The branches of a parallel split that a resume continues run concurrently again, a
// sub-graph call re-entered on resume included: they ran one after the other on the
// resuming goroutine, so a branch that waits for its sibling waited for ever.
func TestResumedParallelBranchesRunConcurrently(t *testing.T) {
	defer goleak.VerifyNone(t)
	childSuspended, aStarted, wStarted := make(chan struct{}), make(chan struct{}), make(chan struct{})
	meet := func(mine, other chan struct{}, before func()) flow.TaskFunc {
		return func(ctx context.Context, c *flow.Context, n *flow.Node) error {
			if c.Value("decided") != true {
				before()
				c.Suspend("waiting at " + n.ID)
				return nil
			}
			close(mine)
			select {
			case <-other:
				return nil
			case <-ctx.Done(): // only if the sibling never runs
				return fmt.Errorf("%s: the sibling branch did not run meanwhile", n.ID)
			}
		}
	}
	e := flow.NewEngine()
	child := flow.NewSpec("child")
	child.Start("w").DoFunc(meet(wStarted, aStarted, func() {})).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("meet")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").DoFunc(meet(aStarted, wStarted, func() { <-childSuspended })).LinkTo("j")
	s.Activity("b").SetTask("#child").LinkTo("j")
	s.Parallel("j")
	g := build(t, s)
	// The child suspends first, then a: both branches are inside their tasks.
	watch := flow.WithEvalInterceptor(suspendWatch{"w": childSuspended}, 0)

	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc, watch)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.ElementsMatch(t, []string{"meet:a", "meet/b/child:w"}, res.Frontier.Pending())

	fc.Set("decided", true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err = e.Resume(ctx, res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
}

// suspendWatch closes a node's channel once that node has ended suspended.
type suspendWatch map[string]chan struct{}

func (suspendWatch) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	return inv.Invoke(ctx)
}

func (suspendWatch) OnNodeStart(context.Context, *flow.Context, *flow.Node) {}

func (w suspendWatch) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, end flow.NodeEnd) {
	if ch := w[n.ID]; ch != nil && end.Status == trace.Suspended {
		close(ch)
	}
}
