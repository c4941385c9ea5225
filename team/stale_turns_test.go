package team_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
)

// otherGraph is a graph that never reaches a team's node.
func otherGraph(t *testing.T) *flow.Graph {
	t.Helper()
	spec := flow.NewSpec("other")
	spec.Start("s").LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	return g
}

// A team run as a sub-graph fails (its call fails) and keeps its turn log for a
// retry. A new run over the same context that never reaches the team's node (another
// graph) cannot retry it: RunFlow, and an engine with DiscardStaleRuns (as
// session.Runner.Run uses it), drop the log instead of carrying it in every later
// snapshot. A resume of the failed run keeps it (it retries the call).
func TestNewRunDropsStaleTurnLogs(t *testing.T) {
	const turns = "_team.crew:turns"
	failed := func(t *testing.T, eng *flow.Engine, g *flow.Graph, fc *flow.Context) *flow.Result {
		t.Helper()
		res, err := eng.EvalGraph(context.Background(), g, fc)
		require.ErrorIs(t, err, team.ErrSourceUnavailable)
		_, kept := fc.Get(turns)
		require.True(t, kept, "the failed call keeps its log for a retry")
		return res
	}
	newTeamWith := func(t *testing.T) (*team.TeamAgent, *turnsAgent) {
		a := &turnsAgent{name: "a"}
		tm, err := team.NewTeam("crew", team.WithMembers(a, &turnsAgent{name: "b", outcomes: []error{down}}))
		require.NoError(t, err)
		return tm, a
	}
	newTeam := func(t *testing.T) *team.TeamAgent {
		tm, _ := newTeamWith(t)
		return tm
	}
	t.Run("RunFlow", func(t *testing.T) {
		eng, g := opsGraph(t, newTeam(t))
		sess := team.NewSession("stale-turns-1")
		sess.Context().Set("prompt", "work")
		_, err := sess.RunFlow(context.Background(), eng, g)
		require.ErrorIs(t, err, team.ErrSourceUnavailable)
		_, kept := sess.Context().Get(turns)
		require.True(t, kept, "the failed call keeps its log for a retry")
		res, err := sess.RunFlow(context.Background(), eng, otherGraph(t))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		_, left := sess.Context().Get(turns)
		assert.False(t, left, "a new run drops the log of a run it does not continue")
	})
	t.Run("DiscardStaleRuns", func(t *testing.T) {
		tm := newTeam(t)
		_, g := opsGraph(t, tm)
		eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100), flow.WithInterceptor(team.DiscardStaleRuns(), 0))
		fc := flow.NewContextWith("stale-turns-2", map[string]any{"prompt": "work"})
		failed(t, eng, g, fc)
		// A new run that fails before its end (so the completion's discard is not
		// what drops the log).
		spec := flow.NewSpec("broken")
		spec.Start("s").Do(flow.TaskFunc(func(context.Context, *flow.Context, *flow.Node) error { return down })).LinkTo("e")
		spec.End("e")
		broken, err := spec.Build()
		require.NoError(t, err)
		_, err = eng.EvalGraph(context.Background(), broken, fc)
		require.ErrorIs(t, err, team.ErrSourceUnavailable)
		_, left := fc.Get(turns)
		assert.False(t, left, "a new run drops the log of a run it does not continue")
	})
	t.Run("resume keeps it", func(t *testing.T) {
		tm, a := newTeamWith(t)
		_, g := opsGraph(t, tm)
		eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100), flow.WithInterceptor(team.DiscardStaleRuns(), 0))
		fc := flow.NewContextWith("stale-turns-3", map[string]any{"prompt": "work"})
		res := failed(t, eng, g, fc)
		resumeCompleted(context.Background(), t, eng, fc, res)
		assert.Equal(t, 1, a.calls(), "a's answer replayed from the log")
	})
}
