package team_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// chooseGraph is start → gate; the gate goes to @payer when "pay" is true, else to
// the end.
func chooseGraph(t *testing.T) *flow.Graph {
	t.Helper()
	g, err := flow.LoadGraph("choose.yml", []byte(`id: choose
layout:
  - {id: start, type: start, link: gate}
  - {id: gate, type: exclusive, link: [{nextId: payer, when: 'context.get("pay") == true'}, {nextId: end}]}
  - {id: payer, task: "@payer", link: end}
  - {id: end, type: end}
`))
	require.NoError(t, err)
	return g
}

// session.Runner.Run starts a new instance over variables that hold an agent run
// waiting at a node (here copied from another instance's snapshot), and the new run
// never reaches that node. With DiscardStaleRuns on the engine, the new run gives it
// up first, as RunFlow does, instead of listing it in Pending for ever; the instance
// it came from keeps its own and goes on with it.
func TestDiscardStaleRunsRunnerRun(t *testing.T) {
	ctx := context.Background()
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)),
		testkit.Reply("acme is paid"))
	a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(a), flow.WithInterceptor(team.DiscardStaleRuns(), 0))
	require.NoError(t, eng.Register(chooseGraph(t)))
	runner := session.NewRunner(eng, session.NewMemoryStore())
	res, err := runner.Run(ctx, "choose", flow.NewContextWith("pay-1", map[string]any{"pay": true, "prompt": "pay acme"}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	snap, err := runner.Load(ctx, "pay-1")
	require.NoError(t, err)
	require.NotNil(t, team.SessionOf(flow.NewContextWith("", snap.Vars)).Pending("payer"))

	vars := snap.Vars
	vars["pay"] = false
	res, err = runner.Run(ctx, "choose", flow.NewContextWith("pay-2", vars))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Nil(t, team.SessionOf(res.Context).Pending("payer"), "the new run gave the copied run up")
	stored, err := runner.Load(ctx, "pay-2")
	require.NoError(t, err)
	assert.Nil(t, team.SessionOf(flow.NewContextWith("", stored.Vars)).Pending("payer"))

	snap, err = runner.Load(ctx, "pay-1")
	require.NoError(t, err)
	updates, err := team.DecideIn(snap.Vars, "payer", team.Approve("p1"))
	require.NoError(t, err)
	res, err = runner.Resume(ctx, "pay-1", updates)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "acme is paid", res.Context.Value("payer.answer"))
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
}

// session.Runner.Resume completes a run whose error policy recovered an agent node's
// failure after its approved batch: with DiscardStaleRuns on the engine, the run the
// failure left waiting is given up when the run completes, as ResumeFlow does.
func TestDiscardStaleRunsRunnerResumeCompletes(t *testing.T) {
	ctx := context.Background()
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)),
		testkit.FailWith(team.TypeSourceUnavailable))
	a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(a), recoverNode("payer"), flow.WithInterceptor(team.DiscardStaleRuns(), 0))
	require.NoError(t, eng.Register(payerGraph(t)))
	runner := session.NewRunner(eng, session.NewMemoryStore())
	res, err := runner.Run(ctx, "pay", flow.NewContextWith("pay-r", map[string]any{"prompt": "pay acme"}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	snap, err := runner.Load(ctx, "pay-r")
	require.NoError(t, err)
	updates, err := team.DecideIn(snap.Vars, "payer", team.Approve("p1"))
	require.NoError(t, err)
	res, err = runner.Resume(ctx, "pay-r", updates)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Empty(t, team.SessionOf(res.Context).PendingAll())
	stored, err := runner.Load(ctx, "pay-r")
	require.NoError(t, err)
	assert.Nil(t, team.SessionOf(flow.NewContextWith("", stored.Vars)).Pending("payer"))
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
}

// An evaluation made inside an agent's run is part of that run, not a new flow run:
// here the session's flow waits at payer for a decision, and an assistant called in
// the same session has a tool that evaluates a graph over the session's context on an
// engine with DiscardStaleRuns. The tool's evaluation leaves payer's run alone, and
// the session's flow, resumed, goes on with it without asking anyone again.
func TestDiscardStaleRunsInsideAgentRun(t *testing.T) {
	ctx := context.Background()
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)),
		testkit.Reply("acme is paid"))
	payer, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(payer), flow.WithInterceptor(team.DiscardStaleRuns(), 0))
	g := payerGraph(t)
	sess := team.NewSession("inside")
	sess.Context().Set("prompt", "pay acme")
	res, err := sess.RunFlow(ctx, eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, sess.Decide("payer", team.Approve("p1")))

	noop, err := flow.LoadGraph("noop.yml", []byte("id: noop\nlayout:\n  - {id: start, type: start, link: end}\n  - {id: end, type: end}\n"))
	require.NoError(t, err)
	lookup := team.NewTool("lookup", "Run the lookup workflow", nil, func(ctx context.Context, _ struct{}) (any, error) {
		_, err := eng.EvalGraph(ctx, noop, sess.Context())
		return "looked up", err
	})
	helper, err := team.NewReActAgent("helper", testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("l1", "lookup", `{}`)), testkit.Reply("done")), team.WithTools(lookup))
	require.NoError(t, err)
	_, err = helper.Call(ctx, "look it up", sess)
	require.NoError(t, err)
	require.NotNil(t, sess.Pending("payer"), "the session's flow still waits at payer")

	res, err = sess.ResumeFlow(ctx, eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls(), "the approved call ran")
	assert.Equal(t, 2, model.Calls())
}
