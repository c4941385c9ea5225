package interceptor_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
)

// TestEngineResumeOfParkedCall is a regression test for an engine bug the randomized
// test found: a run resumed inside a sub-graph call that halted before it re-entered
// the call lost the position inside the call, and resuming that frontier panicked.
// The audit must stay complete across the three evaluations.
func TestEngineResumeOfParkedCall(t *testing.T) {
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithLogger(slog.New(slog.DiscardHandler))), 0))
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("wait")
	child.Activity("wait").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("ok") == nil {
			c.Suspend("need ok")
		}
		return nil
	}).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")

	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, []string{"root/call/child:wait"}, res.Frontier.Pending())
	res, err = e.Resume(context.Background(), res.Frontier, fc, flow.WithSteps(0))
	require.ErrorIs(t, err, flow.ErrStepLimit)
	fc.Set("ok", true)
	require.Equal(t, []string{"root/call/child:wait"}, res.Frontier.Pending(), "the position inside the call is kept")
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	require.NoError(t, mem.Records().Verify())
	assert.Len(t, mem.ByRun(res.RunID()).ByNode("root/call/child:wait"), 2, "the suspended node runs again")
}
