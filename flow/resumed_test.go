package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	fr := frontierThroughJSON(t, e, pg, res.Frontier)
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

// frontierThroughJSON returns fr after a JSON round trip of its state, as a process
// that restarted would have it.
func frontierThroughJSON(t *testing.T, e *flow.Engine, g *flow.Graph, fr *flow.Frontier) *flow.Frontier {
	t.Helper()
	b, err := json.Marshal(fr.State())
	require.NoError(t, err)
	var st flow.FrontierState
	require.NoError(t, json.Unmarshal(b, &st))
	out, err := e.RestoreFrontier(g, st)
	require.NoError(t, err)
	return out
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
	res, err = e.Resume(context.Background(), frontierThroughJSON(t, e, g, res.Frontier), fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), frontierThroughJSON(t, e, g, res.Frontier), fc)
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
					fr = frontierThroughJSON(t, e, g, fr)
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
