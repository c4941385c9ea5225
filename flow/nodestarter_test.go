package flow_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
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
