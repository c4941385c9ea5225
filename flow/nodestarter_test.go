package flow_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

type nodeKey struct{ name string }

// starter is a NodeStarter that puts "<name>:<node>#<attempt>" in the node's context
// and records what the other hooks see.
type starter struct {
	flow.NopInterceptor
	name   string
	nilCtx bool // StartNode returns nil

	mu       sync.Mutex
	starts   []string // node ids StartNode saw, with the context's value from before
	ends     []string // the value OnNodeEnd's context holds, per node end
	flows    []string // the value each InterceptFlow's context holds, per graph
	attempts map[string]int
}

func (s *starter) StartNode(ctx context.Context, c *flow.Context, n *flow.Node) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	before, _ := ctx.Value(nodeKey{}).(string)
	s.starts = append(s.starts, n.ID+"<"+before)
	if s.nilCtx {
		return nil
	}
	if s.attempts == nil {
		s.attempts = map[string]int{}
	}
	s.attempts[n.ID]++
	return context.WithValue(ctx, nodeKey{}, before+s.name+":"+n.ID+"#"+string(rune('0'+s.attempts[n.ID])))
}

func (s *starter) OnNodeStart(context.Context, *flow.Context, *flow.Node) {
	panic("the engine calls StartNode in place of OnNodeStart")
}

func (s *starter) OnNodeEnd(ctx context.Context, _ *flow.Context, n *flow.Node, _ flow.NodeEnd) {
	v, _ := ctx.Value(nodeKey{}).(string)
	s.mu.Lock()
	s.ends = append(s.ends, n.ID+"="+v)
	s.mu.Unlock()
}

func (s *starter) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	v, _ := ctx.Value(nodeKey{}).(string)
	s.mu.Lock()
	s.flows = append(s.flows, inv.Graph.ID+"="+v)
	s.mu.Unlock()
	return inv.Invoke(ctx)
}

// A NodeStarter's context reaches the node's task, the sub-graph the node calls (its
// InterceptFlow, its nodes' StartNode and tasks) and a retried node's next attempt
// anew; OnNodeEnd and the next node keep the run's context; NodeStarters chain in
// order, and one returning nil leaves the context as it was.
func TestNodeStarterContextReachesTheTask(t *testing.T) {
	e := flow.NewEngine()
	seen := map[string][]string{}
	var mu sync.Mutex
	task := func(ctx context.Context, _ *flow.Context, n *flow.Node) error {
		v, _ := ctx.Value(nodeKey{}).(string)
		mu.Lock()
		defer mu.Unlock()
		seen[n.ID] = append(seen[n.ID], v)
		if n.ID == "flaky" && len(seen[n.ID]) == 1 {
			return flow.MarkRetryable(errors.New("first attempt fails"))
		}
		return nil
	}
	c := flow.NewSpec("child")
	c.Start("cs").LinkTo("c1")
	c.Activity("c1").DoFunc(task).LinkTo("ce")
	c.End("ce")
	require.NoError(t, e.Register(build(t, c)))
	s := flow.NewSpec("parent")
	s.Start("s").LinkTo("a")
	s.Activity("a").DoFunc(task).LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("flaky")
	s.Activity("flaky").DoFunc(task).SetRetry(flow.RetryPolicy{Max: 2, NoJitter: true}).LinkTo("e")
	s.End("e")
	g := build(t, s)

	outer, inner, none := &starter{name: "o"}, &starter{name: "i"}, &starter{name: "n", nilCtx: true}
	_, err := e.EvalGraph(context.Background(), g, flow.NewContext("i-1"),
		flow.WithEvalInterceptor(outer, 0), flow.WithEvalInterceptor(none, 1), flow.WithEvalInterceptor(inner, 2))
	require.NoError(t, err)

	require.Equal(t, []string{"o:a#1i:a#1"}, seen["a"], "chained in order, the nil one keeping the context")
	require.Equal(t, []string{"o:call#1i:call#1o:c1#1i:c1#1"}, seen["c1"], "a sub-graph's node runs under its calling node's context")
	require.Equal(t, []string{"o:flaky#1i:flaky#1", "o:flaky#2i:flaky#2"}, seen["flaky"], "each attempt has its own context")
	require.Contains(t, outer.flows, "child=o:call#1i:call#1", "the sub-graph's InterceptFlow gets the calling node's context")
	require.Contains(t, outer.flows, "parent=", "the root graph's does not")
	require.Contains(t, inner.starts, "c1<o:call#1i:call#1o:c1#1", "StartNode is given the context the ones before returned")
	require.Contains(t, none.starts, "a<o:a#1")
	for _, end := range append(outer.ends, inner.ends...) {
		switch end {
		case "cs=o:call#1i:call#1", "c1=o:call#1i:call#1", "ce=o:call#1i:call#1": // the sub-graph's nodes: its call's context
		default:
			require.Regexp(t, `^[a-z0-9]+=$`, end, "OnNodeEnd keeps the run's context")
		}
	}
}

// ownContext is a NodeStarter that gives node "call" a context of its own (or, with
// call set, gives the sub-graph call that node makes one in InterceptFlow), which a
// task of the sub-graph cancels, as a deadline would end it, and which OnNodeEnd
// cancels as the doc asks.
type ownContext struct {
	flow.NopInterceptor
	call   bool
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (o *ownContext) StartNode(ctx context.Context, _ *flow.Context, n *flow.Node) context.Context {
	if n.ID != "call" || o.call {
		return nil
	}
	return o.own(ctx)
}

func (o *ownContext) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	if o.call && inv.Node != nil {
		ctx = o.own(ctx)
	}
	return inv.Invoke(ctx)
}

func (o *ownContext) own(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	o.mu.Lock()
	o.cancel = cancel
	o.mu.Unlock()
	return ctx
}

func (o *ownContext) expire() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cancel()
}

func (o *ownContext) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, _ flow.NodeEnd) {
	if n.ID == "call" {
		o.expire()
	}
}

// A node's own context (a NodeStarter's, a deadline per node) reaches the sub-graph the
// node calls; a child task that fails because it ended fails its node, and so the
// call and the calling node, whose error policy decides: it is not an interruption of
// the run, whether it ends while a child task waits on it or between two child nodes.
// The same holds for a context an interceptor gives the sub-graph call.
// Before, the child node took it for the caller's cancellation (it ended INTERRUPTED)
// and so did the sub-graph's drive loop: either failed the whole run as cancelled,
// without asking any policy.
func TestNodeStarterContextEndingInASubGraphFailsTheCallingNode(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct{ between, call bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		between := tc.between
		own := &ownContext{call: tc.call}
		e := flow.NewEngine(
			flow.WithTaskFunc("slow", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
				own.expire() // the calling node's deadline passes while the child works
				if between {
					return nil
				}
				<-ctx.Done()
				return ctx.Err()
			}),
			flow.WithTaskFunc("check", func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
				return ctx.Err()
			}))
		c := flow.NewSpec("child")
		c.Start("cs").LinkTo("work")
		c.Activity("work").SetTask("@slow").LinkTo("next")
		c.Activity("next").SetTask("@check").LinkTo("ce")
		c.End("ce")
		require.NoError(t, e.Register(build(t, c)))
		s := flow.NewSpec("parent")
		s.Start("s").LinkTo("call")
		s.Activity("call").SetTask("#child").SetMeta(flow.MetaOnError, map[string]any{"goto": "late", "recover": true, "set": map[string]any{"late": true}}).LinkTo("e")
		s.Activity("late").LinkTo("e")
		s.End("e")
		h := &endStatuses{end: map[string]flow.NodeStatus{}, callEnded: make(chan struct{})}
		fc := flow.NewContext("i")
		res, err := e.EvalGraph(context.Background(), build(t, s), fc, flow.WithEvalInterceptor(own, 0), flow.WithEvalInterceptor(h, 1))
		require.NoError(t, err, "the calling node's policy recovered the failure")
		require.Equal(t, flow.StatusCompleted, res.Status)
		require.Equal(t, true, fc.Value("late"))
		failed := "work"
		if between {
			failed = "next"
		}
		require.Equal(t, trace.Failed, h.end[failed])
		require.Equal(t, trace.Failed, h.end["call"])
		out, ok := fc.CallOutcome("parent/call/child")
		require.True(t, ok)
		require.Equal(t, flow.StatusFailed, out.Status)
		require.NotEmpty(t, res.ExecutionErrors)
		last := res.ExecutionErrors[len(res.ExecutionErrors)-1]
		require.Equal(t, "call", last.NodeID)
		require.Equal(t, flow.Recoverable, last.Severity)
	}
}
