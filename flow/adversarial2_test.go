package flow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// An error policy is handed the run's context.Context and a view of its Context. A
// policy that keeps them must find the instance it was given, never another run's,
// and the run's context ended, however many runs follow.
func TestErrorPolicyMayKeepItsContext(t *testing.T) {
	var (
		kept    *flow.Context
		keptCtx context.Context
	)
	e := flow.NewEngine(flow.WithErrorPolicy(func(ctx context.Context, c *flow.Context, _ *flow.Node, _ error, def flow.ErrorDecision) flow.ErrorDecision {
		if kept == nil {
			kept, keptCtx = c, ctx
		}
		return def
	}))
	g, err := flow.LoadGraph("p.yml", []byte(`
id: p
layout:
  - {id: s, type: start}
  - {id: bad, task: 'raise("SOFT", "soft failure", true)'}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	for i := range 200 {
		who := "first"
		if i > 0 {
			who = "later"
		}
		res, err := e.EvalGraph(context.Background(), g, flow.NewContextWith("i", map[string]any{"who": who}))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		require.Len(t, res.ExecutionErrors, 1)
	}
	require.NotNil(t, kept)
	assert.Equal(t, "first", kept.Value("who"))
	assert.Equal(t, "main", kept.BranchID())
	assert.Error(t, keptCtx.Err(), "the run is over")
}
