package team_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

func ttSupervisorTeam(t *testing.T) *team.TeamAgent {
	t.Helper()
	research, err := team.NewTeam("research", team.WithProtocol(team.Parallel()),
		team.WithMembers(testkit.NewFixedAgent("web", "w"), testkit.NewFixedAgent("papers", "p")))
	require.NoError(t, err)
	tm, err := team.NewTeam("desk", team.WithMembers(research, testkit.NewFixedAgent("writer", "done").WithRole("writes")),
		team.WithProtocol(team.Supervisor()), team.WithSupervisorModel(testkit.NewScriptedModel()))
	require.NoError(t, err)
	return tm
}

// The team's graph is a graph like any other: every writer renders it, and the
// document form (with the task namer) reads back into the same shape.
func TestTeamGraphExports(t *testing.T) {
	tm := ttSupervisorTeam(t)
	g := tm.Graph()
	assert.Equal(t, "team.desk", g.ID)
	assert.Equal(t, "supervisor", g.Meta[team.MetaProtocol])
	ids := []string{}
	for _, n := range g.Nodes() {
		ids = append(ids, n.ID)
	}
	assert.Equal(t, []string{"start", "supervisor", "route", "research", "writer", "end"}, ids)
	assert.Equal(t, "#team.research", g.Node("research").Task)
	assert.Equal(t, []string{"team.research"}, g.Calls())

	uml, err := export.PlantUML(g)
	require.NoError(t, err)
	for _, want := range []string{"supervisor", "<<choice>>", "#team.research", "writer (writes)", "_team.desk.next", ": finish"} {
		assert.Contains(t, string(uml), want)
	}
	for _, f := range export.Formats() {
		var b strings.Builder
		require.NoError(t, export.Write(&b, g, f, export.WithTaskNamer(tm.TaskNamer)), "format %s", f)
		assert.NotEmpty(t, b.String())
	}
	_, err = export.YAML(g)
	assert.ErrorIs(t, err, export.ErrNoTextualForm, "Go tasks need the namer in a document")

	doc, err := export.YAML(g, export.WithTaskNamer(tm.TaskNamer))
	require.NoError(t, err)
	assert.Contains(t, string(doc), "'@desk.supervisor'")
	spec, err := flow.ParseDefinition("desk.yml", doc)
	require.NoError(t, err)
	back, err := spec.Build()
	require.NoError(t, err)
	assert.Len(t, back.Nodes(), len(g.Nodes()))
	assert.Equal(t, "@desk.writer", back.Node("writer").Task)
	assert.Equal(t, g.Node("route").Links()[0].When, back.Node("route").Links()[0].When)

	// The production checklist has nothing to say about a generated graph.
	research, ok := tm.Engine().Graph("team.research")
	require.True(t, ok)
	findings := export.Validate(g, export.WithRegistered(research))
	assert.False(t, export.HasErrors(findings), "%v", findings)
}

// A team is an Agent: as the task of a node of another graph it runs on a copy of the
// node's context and writes back what changed; as a sub-graph (Task) it shares the
// context and suspends with the enclosing flow.
func TestTeamInsideAnotherGraph(t *testing.T) {
	ctx := context.Background()
	tm, err := team.NewTeam("duo", team.WithMembers(testkit.NewFixedAgent("a", "A").Write("a.done", true), testkit.NewFixedAgent("b", "B")))
	require.NoError(t, err)

	t.Run("agent node", func(t *testing.T) {
		spec := flow.NewSpec("outer")
		spec.Start("s").LinkTo("duo")
		spec.Activity("duo").Do(team.AsTask(tm)).SetMeta(team.MetaPrompt, "Do {{.job}}").LinkTo("e")
		spec.End("e")
		g, err := spec.Build()
		require.NoError(t, err)
		fc := flow.NewContextWith("o-1", map[string]any{"job": "the thing"})
		res, err := flow.NewEngine().EvalGraph(ctx, g, fc)
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "B", fc.Value(team.AnswerKey("duo")))
		assert.Equal(t, true, fc.Value("a.done"))
		tr := team.TraceIn(fc, "duo")
		require.NotNil(t, tr)
		assert.Equal(t, "Do the thing", tr.Prompt)
		assert.Equal(t, res.RunID(), tr.ParentRunID)
	})
	t.Run("sub-graph", func(t *testing.T) {
		spec := flow.NewSpec("outer2")
		spec.Start("s").LinkTo("duo")
		spec.Activity("duo").Do(tm.Task()).LinkTo("e")
		spec.End("e")
		g, err := spec.Build()
		require.NoError(t, err)
		fc := flow.NewContextWith("o-2", map[string]any{"prompt": "Do it"})
		var evs []team.Event
		eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100))
		res, err := eng.EvalGraph(team.WithSink(ctx, func(e team.Event) { evs = append(evs, e) }), g, fc)
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "B", fc.Value(team.AnswerKey("duo")))
		ttCheckSymmetry(t, evs)
		tr := team.TraceIn(fc, "duo")
		assert.Equal(t, "Do it", tr.Prompt)
		assert.Equal(t, "main/duo/team.duo", tr.Branch)
	})
	t.Run("suspends inside an agent node", func(t *testing.T) {
		ap := ttApprovalTeam(t)
		spec := flow.NewSpec("outer3")
		spec.Start("s").LinkTo("rel")
		spec.Activity("rel").Do(team.AsTask(ap)).LinkTo("e")
		spec.End("e")
		g, err := spec.Build()
		require.NoError(t, err)
		res, err := flow.NewEngine().EvalGraph(ctx, g, flow.NewContext("o-3"))
		require.Error(t, err)
		assert.Equal(t, flow.StatusFailed, res.Status)
		assert.ErrorIs(t, err, team.ErrTeamSuspendedInNode)
	})
}
