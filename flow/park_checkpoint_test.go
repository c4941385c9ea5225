package flow

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// A checkpoint taken after a branch suspended (a sibling completing a node in its own
// goroutine) shows the suspended node as one to run again, as the run's final
// frontier does: a recovery from that checkpoint resumes the node (Context.Resumed),
// so an agent waiting there for a human goes on instead of asking again.
func TestCheckpointAfterASuspendKeepsTheSuspendedNode(t *testing.T) {
	defer goleak.VerifyNone(t)
	parked := func(c *Context) bool {
		c.st.mu.Lock()
		r := c.st.run
		c.st.mu.Unlock()
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.frontier) > 0
	}
	bRuns := make(chan struct{})
	s := NewSpec("g")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").DoFunc(func(_ context.Context, c *Context, _ *Node) error {
		<-bRuns
		c.Suspend("ask a human")
		return nil
	}).LinkTo("j")
	s.Activity("b").DoFunc(func(_ context.Context, c *Context, _ *Node) error {
		close(bRuns)
		for !parked(c) { // a runs inline, b on its own goroutine: wait for a's park
			runtime.Gosched()
		}
		return nil
	}).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)

	var last Checkpoint
	res, err := NewEngine().EvalGraph(context.Background(), g, NewContext("i"), WithCheckpoint(func(_ context.Context, cp Checkpoint) error {
		last = cp
		return nil
	}))
	require.NoError(t, err)
	require.Equal(t, StatusSuspended, res.Status)
	require.Equal(t, "b", last.Node, "the last checkpoint is b's, taken after a suspended")
	modes := map[string]string{}
	for _, ts := range last.Frontier.Tokens {
		modes[ts.Node] = ts.Mode
	}
	require.Equal(t, "exec", modes["a"], "a suspended: a recovery runs it again, as resumed")
}
