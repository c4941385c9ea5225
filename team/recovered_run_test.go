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

// payEachGraph pays every item of "payees" with @payer inside a loop; the node's error
// policy recovers a source_unavailable failure, so the loop goes on with the next item.
func payEachGraph(t *testing.T) *flow.Graph {
	t.Helper()
	g, err := flow.LoadGraph("pay-each.yml", []byte(`id: payEach
layout:
  - {id: start, type: start, link: each}
  - {id: each, type: loop, meta: {$for: payee, $in: payees}, link: pay}
  - {id: pay, task: "@payer", meta: {prompt: 'pay {{var "payee"}}', onError: {recover: [source_unavailable]}}, link: close}
  - {id: close, type: loop, link: end}
  - {id: end, type: end}
`))
	require.NoError(t, err)
	return g
}

// An agent node in a loop body: the first iteration's run waits for a decision, the
// resumed run's model call fails after the approved batch, and the node's error
// policy recovers. The run is left waiting at the same node (the loop's body), but
// the next iteration is another question: it starts its own run with its own prompt
// instead of resuming the first iteration's run.
func TestAgentNodeInLoopStartsAFreshRunPerIteration(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)),
		testkit.FailWith(team.TypeSourceUnavailable),
		testkit.Reply("the cafe is paid"))
	a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(a))
	g := payEachGraph(t)
	sess := team.NewSession("pay-each")
	sess.Context().Set("payees", []any{"acme", "the cafe"})
	res, err := sess.RunFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	first := sess.Pending("payer")
	require.NotNil(t, first)
	require.NoError(t, sess.Decide("payer", team.Approve("p1")))

	res, err = sess.ResumeFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
	require.Equal(t, 3, model.Calls())
	assert.Equal(t, "pay the cafe", testkit.LastUserMessage(model.Requests()[2]), "the second iteration asks its own question")
	assert.Equal(t, "the cafe is paid", sess.Context().Value("payer.answer"))
	tr := sess.ReActTrace("payer")
	require.NotNil(t, tr)
	assert.NotEqual(t, first.RunID, tr.RunID, "each iteration has its own run")
	assert.Equal(t, "pay the cafe", tr.Prompt)
	assert.Nil(t, sess.Pending("payer"))
}

// A team in a loop body (its graph called as a sub-graph): in the first iteration its
// member's resumed run fails after the approved batch, the failure ends the team's
// call and the calling node's error policy recovers it. The second iteration's team
// run starts its member afresh, on the second item's prompt: the member does not
// resume the first iteration's run, nor ask the first iteration's question.
func TestTeamInLoopMemberStartsAFreshRunPerIteration(t *testing.T) {
	box, model, bot := flakyRemover(t, testkit.Reply("cleaned /b"))
	tm, err := team.NewTeam("crew", team.WithMembers(bot))
	require.NoError(t, err)
	g, err := flow.LoadGraph("clean-each.yml", []byte(`id: cleanEach
layout:
  - {id: start, type: start, link: each}
  - {id: each, type: loop, meta: {$for: dir, $in: dirs}, link: ask}
  - {id: ask, task: 'context.put("prompt", "clean " + dir)', link: crew}
  - {id: crew, task: "#team.crew", meta: {onError: {recover: true}}, link: close}
  - {id: close, type: loop, link: end}
  - {id: end, type: end}
`))
	require.NoError(t, err)
	eng := tm.Engine()
	require.NoError(t, eng.Register(g))
	sess := team.NewSession("clean-each")
	sess.Context().Set("dirs", []any{"/a", "/b"})
	res, err := sess.RunFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	first := sess.Pending("bot")
	require.NotNil(t, first)
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))

	res, err = sess.ResumeFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
	require.Equal(t, 3, model.Calls())
	assert.Equal(t, "clean /b", testkit.LastUserMessage(model.Requests()[2]), "the second iteration asks its own question")
	tr := tm.Trace(sess.Context())
	require.NotNil(t, tr)
	assert.Equal(t, "clean /b", tr.Prompt)
	assert.Equal(t, "cleaned /b", tr.FinalAnswer)
	require.Len(t, tr.Records, 1)
	assert.NotEqual(t, first.RunID, tr.Records[0].RunID, "each iteration has its own member run")
	assert.Nil(t, sess.Pending("bot"))
}

// recoverNode is an error policy that recovers every failure of the node id.
func recoverNode(id string) flow.Option {
	return flow.WithErrorPolicy(func(_ context.Context, _ *flow.Context, n *flow.Node, _ error, def flow.ErrorDecision) flow.ErrorDecision {
		if n.ID == id {
			def.Recover = true
		}
		return def
	})
}

// A member's resumed run fails after its approved batch and the error policy
// recovers the failure: the team goes on and then waits at an approval node. Nobody
// can continue the member's run any more, so it leaves no pending entry: the team's
// answer says the team waits at its approval node (not for the member, with nothing
// to decide), and the session shows nothing pending for the member.
func TestTeamRecoveredMemberFailureLeavesNoPending(t *testing.T) {
	box, model, bot := flakyRemover(t)
	tm, err := team.NewTeam("crew", team.WithMembers(bot, testkit.NewFixedAgent("writer", "report")),
		team.WithEngineOptions(recoverNode("bot")),
		team.WithGraphAdjuster(approvalAfter("writer")))
	require.NoError(t, err)
	sess := team.NewSession("crew-approve")
	teamWaitsAfterBot(t, tm, sess)
	assert.Empty(t, sess.PendingAll())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())

	sess.Context().Set("approved", true)
	ans, err := tm.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	assert.Nil(t, ans.Pending)
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
	assert.Equal(t, 2, model.Calls())
}

// teamWaitsAfterBot calls tm with "clean up" in sess, where member bot asks for its
// call d1, approves it and calls tm again: bot's resumed run fails, and the team then
// waits at its approval node, not for bot, whose run waits for nothing.
func teamWaitsAfterBot(t *testing.T, tm *team.TeamAgent, sess *team.AgentSession) {
	t.Helper()
	ans, err := tm.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.Equal(t, "bot", ans.Pending.Agent)
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))

	ans, err = tm.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending, "the team waits at its approval node")
	assert.Equal(t, tm.Name(), ans.Pending.Agent, "the team itself waits, not its failed member")
	assert.Equal(t, tm.Graph().ID+":approve", ans.Pending.Node)
	assert.Nil(t, sess.Pending("bot"), "the failed member's run waits for nothing")
}

// A supervisor routes to a member whose resumed run fails after its approved batch;
// the error policy recovers the failure and the supervisor routes to the member again
// with a new task. The member takes that task in a new run: it does not resume the
// failed run (with its old prompt and conversation) as if nothing had happened.
func TestSupervisorRoutesAgainToRecoveredMember(t *testing.T) {
	_, model, bot := flakyRemover(t, testkit.Reply("checked /b"))
	sup := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("s1", team.RouteToolName, `{"to":"bot","task":"remove /a"}`)),
		testkit.CallTools(testkit.ToolCall("s2", team.RouteToolName, `{"to":"bot","task":"check /b"}`)),
		testkit.Reply("FINISH"))
	tm, err := team.NewTeam("desk", team.WithMembers(bot), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup), team.WithEngineOptions(recoverNode("bot")))
	require.NoError(t, err)
	sess := team.NewSession("desk-again")
	ans, err := tm.Call(context.Background(), "tidy up", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	first := ans.Pending.RunID
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))

	ans, err = tm.Call(context.Background(), "tidy up", sess)
	require.NoError(t, err)
	require.Nil(t, ans.Pending)
	require.Equal(t, 3, model.Calls())
	assert.Contains(t, testkit.LastUserMessage(model.Requests()[2]), "check /b", "the member takes its new task")
	var turns []team.TeamRecord
	for _, r := range tm.Trace(sess.Context()).Records {
		if r.Kind == team.RecordMember {
			turns = append(turns, r)
		}
	}
	require.Len(t, turns, 2)
	assert.Equal(t, team.RunFailed, turns[0].Status)
	assert.Equal(t, team.RunCompleted, turns[1].Status)
	assert.Equal(t, "checked /b", turns[1].Content)
	assert.NotEqual(t, first, turns[1].RunID, "a new member run")
	assert.Nil(t, sess.Pending("bot"))
}

// A plain agent node whose recovered failure left its run waiting, in a flow that
// then completes: the session shows nothing pending for the agent.
func TestAgentNodeRecoveredFailureLeavesNoPending(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)),
		testkit.FailWith(team.TypeSourceUnavailable))
	a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(a), recoverNode("payer"))
	g := payerGraph(t)
	sess := team.NewSession("pay-recovered")
	sess.Context().Set("prompt", "pay acme")
	res, err := runFlowApproved(t, sess, eng, g, "payer", "p1")
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Nil(t, sess.Pending("payer"), "the completed flow run continues nothing")
	assert.Empty(t, sess.PendingAll())
}

// In a parallel team whose fork lets the others go on (continue), a member's resumed
// run fails after its approved batch: its branch is withdrawn and the merge reports
// the failure. The team then waits at an approval node after the merge; the failed
// member's run waits for nothing (its branch is gone), so the team's answer names
// the approval node, and no pending entry is left for the member.
func TestParallelWithdrawnMemberLeavesNoPending(t *testing.T) {
	box, _, bot := flakyRemover(t)
	tm, err := team.NewTeam("fan", team.WithMembers(bot, testkit.NewFixedAgent("writer", "report")),
		team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError),
		team.WithGraphAdjuster(approvalAfter(team.TeamNodeMerge)))
	require.NoError(t, err)
	sess := team.NewSession("fan-approve")
	teamWaitsAfterBot(t, tm, sess)
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
}

// A fresh evaluation (EvalGraph, not Resume) over a context that holds an agent run
// an earlier, suspended evaluation left waiting. Only the execution that resumes the
// halted run (or retries the node) continues it: the agent node of a new evaluation
// discards it and asks the model the question the variables hold now, so the calls a
// human approved for the old question never run for the new one. A team's start node
// does the same for its members.
func TestFreshEvalOverWaitingRun(t *testing.T) {
	t.Run("agent node starts afresh", func(t *testing.T) {
		box := &toolbox{}
		model := testkit.NewScriptedModel(
			testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)),
			testkit.Reply("the cafe is paid"))
		a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
		require.NoError(t, err)
		eng := flow.NewEngine(team.WithAgents(a))
		fc := flow.NewContextWith("fresh-eval", map[string]any{"prompt": "pay acme"})
		res, err := eng.EvalGraph(context.Background(), payerGraph(t), fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusSuspended, res.Status)
		first := team.SessionOf(fc).Pending("payer")
		require.NotNil(t, first)
		require.NoError(t, team.SessionOf(fc).Decide("payer", team.Approve("p1")))

		fc.Set("prompt", "pay the cafe")
		res, err = eng.EvalGraph(context.Background(), payerGraph(t), fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		require.Equal(t, 2, model.Calls())
		assert.Equal(t, "pay the cafe", testkit.LastUserMessage(model.Requests()[1]), "the model sees the new question")
		assert.Empty(t, box.Calls(), "the call approved for the old question did not run")
		assert.Equal(t, "the cafe is paid", fc.Value("payer.answer"))
		assert.Nil(t, team.SessionOf(fc).Pending("payer"), "the old run is gone")
		tr := team.SessionOf(fc).ReActTrace("payer")
		require.NotNil(t, tr)
		assert.NotEqual(t, first.RunID, tr.RunID)
		assert.Equal(t, "pay the cafe", tr.Prompt)
	})
	t.Run("agent node in a sub-graph starts afresh", func(t *testing.T) {
		box := &toolbox{}
		model := testkit.NewScriptedModel(
			testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)),
			testkit.Reply("the cafe is paid"))
		eng, g := payerCallEngine(t, model, box)
		fc := flow.NewContextWith("fresh-call", map[string]any{"prompt": "pay acme"})
		res, err := eng.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusSuspended, res.Status)
		require.NoError(t, team.SessionOf(fc).Decide("payer", team.Approve("p1")))

		fc.Set("prompt", "pay the cafe")
		res, err = eng.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "pay the cafe", testkit.LastUserMessage(model.Requests()[1]))
		assert.Empty(t, box.Calls())
		assert.Nil(t, team.SessionOf(fc).Pending("payer"))
	})
	t.Run("session runner starts afresh, its resume continues", func(t *testing.T) {
		box := &toolbox{}
		model := testkit.NewScriptedModel(
			testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)),
			testkit.Reply("the cafe is paid")).
			When(testkit.LastIsToolResult("transfer"), testkit.Reply("acme is paid"))
		a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
		require.NoError(t, err)
		eng := flow.NewEngine(team.WithAgents(a))
		require.NoError(t, eng.Register(payerGraph(t)))
		runner := session.NewRunner(eng, session.NewMemoryStore())
		res, err := runner.Run(context.Background(), "pay", flow.NewContextWith("pay-1", map[string]any{"prompt": "pay acme"}))
		require.NoError(t, err)
		require.Equal(t, flow.StatusSuspended, res.Status)
		snap, err := runner.Load(context.Background(), "pay-1")
		require.NoError(t, err)
		updates, err := team.DecideIn(snap.Vars, "payer", team.Approve("p1"))
		require.NoError(t, err)

		// A new instance started over the stored variables (a copy of the first
		// instance's state) asks its own question.
		vars := snap.Vars
		for k, v := range updates {
			vars[k] = v
		}
		vars["prompt"] = "pay the cafe"
		res, err = runner.Run(context.Background(), "pay", flow.NewContextWith("pay-2", vars))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "the cafe is paid", res.Context.Value("payer.answer"))
		assert.Nil(t, team.SessionOf(res.Context).Pending("payer"))
		assert.Empty(t, box.Calls())

		// The first instance, resumed, goes on with its run: the approved call runs.
		res, err = runner.Resume(context.Background(), "pay-1", updates)
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "acme is paid", res.Context.Value("payer.answer"))
		assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
		assert.Equal(t, 3, model.Calls(), "the resume asked the model once, after the approved call")
	})
	t.Run("team starts its members afresh", func(t *testing.T) {
		box := &toolbox{}
		model := testkit.NewScriptedModel(removeA(), testkit.Reply("nothing to clean"))
		bot, err := team.NewReActAgent("bot", model, team.WithTools(box.remove()))
		require.NoError(t, err)
		tm, err := team.NewTeam("crew", team.WithMembers(bot))
		require.NoError(t, err)
		fc := flow.NewContextWith("fresh-team", map[string]any{tm.InputKey(): "clean up"})
		res, err := tm.Engine().EvalGraph(context.Background(), tm.Graph(), fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusSuspended, res.Status)
		first := team.SessionOf(fc).Pending("bot").RunID

		fc.Set(tm.InputKey(), "check the disk")
		res, err = tm.Engine().EvalGraph(context.Background(), tm.Graph(), fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "check the disk", testkit.LastUserMessage(model.Requests()[1]))
		tr := tm.Trace(fc)
		require.Len(t, tr.Records, 1)
		assert.NotEqual(t, first, tr.Records[0].RunID)
		assert.Empty(t, box.Calls())
		assert.Nil(t, team.SessionOf(fc).Pending("bot"))
	})
}

// In a nested team, the member's resumed run fails after its approved batch: the
// failure ends the nested team's call and fails the outer team. Called again with
// its prompt, the outer team retries from the failed node, which calls the nested
// team again; the member goes on with its run, as a member of a root team does
// (TestTeamMemberModelFailureAfterResumedBatch): the approved call ran once and
// nobody is asked again.
func TestNestedTeamMemberModelFailureAfterResumedBatch(t *testing.T) {
	retryNestedMember(t, "inner")
}

// retryNestedMember nests bot (flakyRemover) in teams named by nesting, innermost
// first, under an outer team with a planner; once the human approved bot's call and
// bot's resumed run failed, the outer team called again with its prompt goes on
// without asking anyone and runs the approved call once.
func retryNestedMember(t *testing.T, nesting ...string) {
	box, model, bot := flakyRemover(t, afterRemove("cleaned"))
	var member team.Agent = bot
	for _, name := range nesting {
		tm, err := team.NewTeam(name, team.WithMembers(member))
		require.NoError(t, err)
		member = tm
	}
	outer, err := team.NewTeam("outer", team.WithMembers(testkit.NewFixedAgent("planner", "plan"), member))
	require.NoError(t, err)
	sess := team.NewSession("nested-retry")
	ans, err := outer.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.Equal(t, "bot", ans.Pending.Agent)
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))

	_, err = outer.Call(context.Background(), "clean up", sess)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	ans, err = outer.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	require.Nil(t, ans.Pending, "nobody is asked again")
	assert.Equal(t, "cleaned", ans.Content)
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
	assert.Equal(t, 3, model.Calls())
}

// The failure of a nested team's member ends the nested call, and the error policy
// recovers the calling node's failure: the outer team goes on and waits at its
// approval node. The member's run, kept waiting inside the call, is no one's to
// continue: no pending entry is left for it.
func TestNestedTeamRecoveredCallLeavesNoPending(t *testing.T) {
	box, _, bot := flakyRemover(t)
	inner, err := team.NewTeam("inner", team.WithMembers(bot))
	require.NoError(t, err)
	outer, err := team.NewTeam("outer", team.WithMembers(inner, testkit.NewFixedAgent("writer", "report")),
		team.WithEngineOptions(recoverNode("inner")),
		team.WithGraphAdjuster(approvalAfter("writer")))
	require.NoError(t, err)
	sess := team.NewSession("nested-recovered")
	ans, err := outer.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))

	ans, err = outer.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	assert.Equal(t, "outer", ans.Pending.Agent, "the outer team waits at its approval node")
	assert.Nil(t, sess.Pending("bot"))
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
}

// payerCallEngine returns an engine with @payer (the model's agent, with the transfer
// tool) and a graph that calls the sub-graph start → @payer → end.
func payerCallEngine(t *testing.T, model team.ChatModel, box *toolbox) (*flow.Engine, *flow.Graph) {
	t.Helper()
	a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(a))
	require.NoError(t, eng.Register(payerGraph(t)))
	g, err := flow.LoadGraph("pay-call.yml", []byte(`id: payCall
layout:
  - {id: start, type: start, link: call}
  - {id: call, task: "#pay", link: end}
  - {id: end, type: end}
`))
	require.NoError(t, err)
	return eng, g
}

// The resume of a halted evaluation continues the agent run its node left waiting,
// also inside a sub-graph (whose call the resume re-enters): the approved call runs
// once, and the model is asked nothing before it.
func TestResumeContinuesWaitingRun(t *testing.T) {
	for _, inCall := range []bool{false, true} {
		name := "root"
		if inCall {
			name = "sub-graph"
		}
		t.Run(name, func(t *testing.T) {
			box := &toolbox{}
			model := testkit.NewScriptedModel(
				testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)),
				testkit.Reply("acme is paid"))
			eng, g := payerCallEngine(t, model, box)
			if !inCall {
				g = payerGraph(t)
			}
			fc := flow.NewContextWith("resume-"+name, map[string]any{"prompt": "pay acme"})
			res, err := eng.EvalGraph(context.Background(), g, fc)
			require.NoError(t, err)
			require.Equal(t, flow.StatusSuspended, res.Status)
			first := team.SessionOf(fc).Pending("payer")
			require.NotNil(t, first)
			require.NoError(t, team.SessionOf(fc).Decide("payer", team.Approve("p1")))
			fc.Set("prompt", "something else") // a resume keeps the run's question

			resumeCompleted(context.Background(), t, eng, fc, res)
			assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
			assert.Equal(t, 2, model.Calls())
			assert.Equal(t, "acme is paid", fc.Value("payer.answer"))
			tr := team.SessionOf(fc).ReActTrace("payer")
			require.NotNil(t, tr)
			assert.Equal(t, first.RunID, tr.RunID, "the same run went on")
		})
	}
}

// A retry of the node (its retry policy, in an evaluation that resumes nothing)
// continues the run the failed attempt left waiting: here the agent's run, approved
// outside the graph, runs its batch at the node, and the model call after it fails.
// The second attempt asks the model again; it does not start afresh, which would ask
// the human again and run the approved call twice.
func TestNodeRetryContinuesWaitingRun(t *testing.T) {
	box := &toolbox{}
	a, sess, model := heldRemove(t, box, testkit.FailWith(team.TypeSourceUnavailable), afterRemove("done"))
	g, err := flow.LoadGraph("clean.yml", []byte(`id: clean
layout:
  - {id: start, type: start, link: bot}
  - {id: bot, task: "@bot", meta: {retry: {max: 2}, idempotent: true}, link: end}
  - {id: end, type: end}
`))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(a))
	res, err := eng.EvalGraph(context.Background(), g, sess.Context())
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, res.Retries)
	assert.Equal(t, "done", sess.Context().Value("bot.answer"))
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
	assert.Equal(t, 3, model.Calls(), "the failed model turn is asked again, nothing before it")
	assert.Nil(t, sess.Pending("bot"))
}

// A fresh evaluation of a team's graph over a context that holds the team's failed
// run, with the same question, is a new run all the same: the member does not go on
// with the run the failed one left waiting (whose approved call would then count for
// this run), it asks its question afresh. A resume of the failed run retries it: the
// member goes on, and the approved call runs once.
func TestTeamFreshEvalOverFailedRun(t *testing.T) {
	setup := func(t *testing.T) (*team.TeamAgent, *flow.Context, *flow.Result, *testkit.ScriptedModel, *toolbox) {
		box, model, bot := flakyRemover(t, afterRemove("cleaned"))
		tm, err := team.NewTeam("crew", team.WithMembers(bot))
		require.NoError(t, err)
		fc := flow.NewContextWith("crew-fresh", map[string]any{tm.InputKey(): "clean up"})
		res, err := tm.Engine().EvalGraph(context.Background(), tm.Graph(), fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusSuspended, res.Status)
		require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
		res, err = tm.Engine().Resume(context.Background(), res.Frontier, fc)
		require.ErrorIs(t, err, team.ErrSourceUnavailable)
		require.Equal(t, flow.StatusFailed, res.Status)
		require.Equal(t, team.TeamFailed, tm.Trace(fc).Status)
		require.NotNil(t, team.SessionOf(fc).Pending("bot"), "the member's run waits for a retry")
		return tm, fc, res, model, box
	}
	t.Run("fresh evaluation", func(t *testing.T) {
		tm, fc, _, model, box := setup(t)
		failed := tm.Trace(fc).RunID
		res, err := tm.Engine().EvalGraph(context.Background(), tm.Graph(), fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusSuspended, res.Status, "the new run asks for its own decision")
		assert.Equal(t, 3, model.Calls())
		assert.Equal(t, "clean up", testkit.LastUserMessage(model.Requests()[2]), "the model is asked afresh")
		assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
		p := team.SessionOf(fc).Pending("bot")
		require.NotNil(t, p)
		assert.Equal(t, []string{"d1"}, callIDs(p))
		assert.NotEqual(t, failed, tm.Trace(fc).RunID, "a new team run")
	})
	t.Run("resume", func(t *testing.T) {
		tm, fc, res, model, box := setup(t)
		res, err := tm.Engine().Resume(context.Background(), res.Frontier, fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "cleaned", fc.Value(team.AnswerKey("crew")))
		assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
		assert.Equal(t, 3, model.Calls())
	})
}

// A team run as a sub-graph of another graph (Task): its member's resumed run fails
// after the approved batch, which fails the call. A resume of the failed flow run
// calls the team's graph again from its start, and the team retries its run: the
// member goes on, the approved call runs once. A fresh evaluation of the outer graph
// over the same context starts the team's member afresh.
func TestTeamTaskRetryAfterFailedCall(t *testing.T) {
	setup := func(t *testing.T) (*flow.Engine, *flow.Graph, *flow.Context, *flow.Result, *testkit.ScriptedModel, *toolbox) {
		box, model, bot := flakyRemover(t, afterRemove("cleaned"))
		tm, err := team.NewTeam("crew", team.WithMembers(bot))
		require.NoError(t, err)
		eng, g := opsGraph(t, tm)
		fc := flow.NewContextWith("ops-1", map[string]any{"prompt": "clean up"})
		res := failedAfterApproval(t, eng, g, fc, "bot", "d1")
		require.Equal(t, flow.StatusFailed, res.Status)
		require.Equal(t, []string{"ops:crew"}, res.Frontier.Pending(), "the calling node, as the call failed")
		require.NotNil(t, team.SessionOf(fc).Pending("bot"))
		return eng, g, fc, res, model, box
	}
	t.Run("resume", func(t *testing.T) {
		eng, _, fc, res, model, box := setup(t)
		resumeCompleted(context.Background(), t, eng, fc, res)
		assert.Equal(t, "cleaned", fc.Value(team.AnswerKey("crew")))
		assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
		assert.Equal(t, 3, model.Calls(), "nobody is asked again")
	})
	t.Run("fresh evaluation", func(t *testing.T) {
		eng, g, fc, _, model, box := setup(t)
		res, err := eng.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusSuspended, res.Status, "the new run asks for its own decision")
		assert.Equal(t, "clean up", testkit.LastUserMessage(model.Requests()[2]))
		assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
		assert.Equal(t, []string{"d1"}, callIDs(team.SessionOf(fc).Pending("bot")))
	})
}

// As TestSupervisorRoutesAgainToRecoveredMember, with the team's graph on an engine
// without the team's Interceptor, so that nothing discards the member's run when the
// error policy recovers its failure: routed to again, the member's node is neither a
// resume nor a retry, and its team did not keep the run, so the member takes its new
// task in a new run.
func TestSupervisorRoutesAgainToRecoveredMemberWithoutInterceptor(t *testing.T) {
	box, model, bot := flakyRemover(t, testkit.Reply("checked /b"))
	sup := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("s1", team.RouteToolName, `{"to":"bot","task":"remove /a"}`)),
		testkit.CallTools(testkit.ToolCall("s2", team.RouteToolName, `{"to":"bot","task":"check /b"}`)),
		testkit.Reply("FINISH"))
	tm, err := team.NewTeam("desk", team.WithMembers(bot), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	eng := flow.NewEngine(recoverNode("bot"))
	fc := flow.NewContextWith("desk-plain", map[string]any{tm.InputKey(): "tidy up"})
	res, err := eng.EvalGraph(context.Background(), tm.Graph(), fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))

	resumeCompleted(context.Background(), t, eng, fc, res)
	require.Equal(t, 3, model.Calls())
	assert.Contains(t, testkit.LastUserMessage(model.Requests()[2]), "check /b", "the member takes its new task")
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
	assert.Nil(t, team.SessionOf(fc).Pending("bot"))
}

// approvalAfter makes the team graph go from the node with the given id to an
// approval node that suspends until "approved" is set, then to the team's end.
func approvalAfter(id string) func(*flow.GraphSpec) {
	return func(s *flow.GraphSpec) {
		n := s.NodeByID(id)
		n.Links = nil
		n.LinkTo("approve")
		s.Activity("approve").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
			if ok, _ := c.GetBool("approved"); !ok {
				c.Suspend("waiting for a manager's approval")
			}
			return nil
		}).LinkTo(team.TeamNodeEnd)
	}
}
