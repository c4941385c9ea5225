package team_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// heldRemove returns an agent whose run waits in a session for a decision on
// remove(/a), already approved, and the model that scripts it (the turns after the
// first are given).
func heldRemove(t *testing.T, box *toolbox, after ...testkit.Turn) (*team.ReActAgent, *team.AgentSession, *testkit.ScriptedModel) {
	t.Helper()
	model := testkit.NewScriptedModel(append([]testkit.Turn{
		testkit.CallTools(testkit.ToolCall("d1", "remove", `{"path":"/a"}`))}, after...)...)
	a, err := team.NewReActAgent("bot", model, team.WithTools(box.remove(), box.weather()))
	require.NoError(t, err)
	sess := team.NewSession("model-fails")
	ans, err := a.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))
	return a, sess, model
}

// The model call that follows an approved batch fails (a 5xx after the client's
// retries, a bad response): the run does not fail away with the batch's results. It
// waits again with the observations of the calls that ran, so the next Resume, a
// Call with the same prompt or a node retry asks the model again and never runs the
// approved call a second time nor asks the human again.
func TestReActModelFailureAfterResumedBatchKeepsResults(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail testkit.Turn
		want *team.Error
	}{
		{"source unavailable", testkit.FailWith(team.TypeSourceUnavailable), team.ErrSourceUnavailable},
		{"bad response", testkit.FailWith(team.TypeBadResponse), &team.Error{Type: team.TypeBadResponse}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, again := range []string{"resume", "call"} {
				t.Run(again, func(t *testing.T) {
					box := &toolbox{}
					a, sess, model := heldRemove(t, box, tc.fail, afterRemove("done"))
					evs, err := testkit.Events(context.Background(), resumer{a}, "", sess)
					require.ErrorIs(t, err, tc.want)
					last := evs[len(evs)-1]
					assert.Equal(t, team.EventRunEnd, last.Kind)
					assert.Equal(t, team.RunPending, last.Status, "the run waits again; its batch ran")
					p := sess.Pending("bot")
					require.NotNil(t, p, "the run still waits")
					assert.Empty(t, p.Calls, "nothing to decide again")
					assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())

					var ans *team.Answer
					if again == "resume" {
						ans, err = a.Resume(context.Background(), sess)
					} else {
						ans, err = a.Call(context.Background(), "clean up", sess)
					}
					require.NoError(t, err)
					assert.Equal(t, "done", ans.Content)
					assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
					assert.Equal(t, 3, model.Calls(), "the failed model turn is asked again, nothing before it")
					reqs := model.Requests()
					obs := toolMessages(reqs[len(reqs)-1])
					assert.Equal(t, team.StatusSuccess, observation(t, obs["d1"]).Status, "the model sees the call's result")
					assert.Nil(t, sess.Pending("bot"))
					assert.Equal(t, team.RunCompleted, sess.ReActTrace("bot").Status)
				})
			}
		})
	}
}

func removeA() testkit.Turn {
	return testkit.CallTools(testkit.ToolCall("d1", "remove", `{"path":"/a"}`))
}

// flakyRemover returns a toolbox and a ReAct agent "bot" over it whose model first
// asks to remove /a (call d1), then fails with source_unavailable when the approved
// batch's result comes back, then takes the turns in after.
func flakyRemover(t *testing.T, after ...testkit.Turn) (*toolbox, *testkit.ScriptedModel, *team.ReActAgent) {
	t.Helper()
	box := &toolbox{}
	model := testkit.NewScriptedModel(append([]testkit.Turn{removeA(), testkit.FailWith(team.TypeSourceUnavailable)}, after...)...)
	bot, err := team.NewReActAgent("bot", model, team.WithTools(box.remove()))
	require.NoError(t, err)
	return box, model, bot
}

// afterRemove answers once the model sees the removal's result; asked afresh, the
// model asks for the removal again.
func afterRemove(answer string) testkit.Turn {
	return testkit.Turn{Respond: func(req *team.ChatRequest) (*team.ChatResponse, error) {
		if testkit.LastIsToolResult("remove")(req) {
			return &team.ChatResponse{Message: team.AssistantMessage(answer)}, nil
		}
		return &team.ChatResponse{Message: team.Message{Role: team.RoleAssistant, ToolCalls: removeA().ToolCalls}}, nil
	}}
}

// In a graph, the node's retry policy retries the failed model turn after the
// resumed batch: the approved call runs once.
func TestReActModelFailureAfterResumedBatchNodeRetry(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(removeA(), testkit.FailWith(team.TypeSourceUnavailable), afterRemove("done"))
	a, err := team.NewReActAgent("bot", model, team.WithTools(box.remove()))
	require.NoError(t, err)
	g, err := flow.LoadGraph("clean.yml", []byte(`id: clean
layout:
  - {id: start, type: start, link: bot}
  - {id: bot, task: "@bot", meta: {retry: {max: 2}, idempotent: true}, link: end}
  - {id: end, type: end}
`))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(a))
	sess := team.NewSession("clean-1")
	sess.Context().Set("prompt", "clean up")
	res, err := runFlowApproved(t, sess, eng, g, "bot", "d1")
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, res.Retries)
	assert.Equal(t, "done", sess.Context().Value("bot.answer"))
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
	assert.Equal(t, 3, model.Calls())
}

// payerGraph is start → @payer → end, the prompt in the variable "prompt".
func payerGraph(t *testing.T) *flow.Graph {
	t.Helper()
	g, err := flow.LoadGraph("pay.yml", []byte(`id: pay
layout:
  - {id: start, type: start, link: payer}
  - {id: payer, task: "@payer", link: end}
  - {id: end, type: end}
`))
	require.NoError(t, err)
	return g
}

// A flow run that left the agent waiting failed (here a resume whose context was
// cancelled); a new run of the flow over the same session, with a new prompt, asks the
// model afresh: it does not resume the abandoned run and run its approved call.
func TestAgentNodeNewFlowRunDoesNotResumeStaleRun(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("old", "transfer", `{"to":"acme","amount":5000}`)),
		testkit.CallTools(testkit.ToolCall("new", "transfer", `{"to":"cafe","amount":2000}`)))
	a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(a))
	g := payerGraph(t)
	sess := team.NewSession("pay-stale")
	sess.Context().Set("prompt", "pay acme")
	res, err := sess.RunFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, sess.Decide("payer", team.Approve("old")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = sess.ResumeFlow(ctx, eng, g) // the caller went away: the run failed
	require.Empty(t, box.Calls())

	sess.Context().Set("prompt", "pay the cafe")
	res, err = sess.RunFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Empty(t, box.Calls(), "the abandoned run's approved call did not run")
	assert.Equal(t, 2, model.Calls())
	assert.Equal(t, "pay the cafe", testkit.LastUserMessage(model.Requests()[1]))
	p := sess.Pending("payer")
	require.NotNil(t, p)
	assert.Equal(t, []string{"new"}, callIDs(p))
}

// The same abandoned run is still there for ResumeFlow, which continues it: the
// approved call runs once, with the old question.
func TestAgentNodeResumeFlowAfterCancelledResume(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("old", "transfer", `{"to":"acme","amount":5000}`)), testkit.Reply("paid"))
	a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(a))
	g := payerGraph(t)
	sess := team.NewSession("pay-resume")
	sess.Context().Set("prompt", "pay acme")
	_, err = sess.RunFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.NoError(t, sess.Decide("payer", team.Approve("old")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = sess.ResumeFlow(ctx, eng, g)

	sess.Context().Set("prompt", "pay the cafe") // the resumed node keeps its question
	res, err := sess.ResumeFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "paid", sess.Context().Value("payer.answer"))
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
	assert.Equal(t, 2, model.Calls())
}

// The rule holds for the whole resumed call: the decided batch ran, the model asked
// for another (not sensitive) call, and the model call after it fails. The run waits
// with every observation, and the next Resume neither runs the approved call again
// nor asks the human again.
func TestReActModelFailureLaterInResumedRunKeepsResults(t *testing.T) {
	box := &toolbox{}
	a, sess, model := heldRemove(t, box,
		testkit.CallTools(testkit.ToolCall("w1", "weather", `{"city":"Oslo"}`)),
		testkit.FailWith(team.TypeSourceUnavailable), testkit.Reply("done"))
	_, err := a.Resume(context.Background(), sess)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	p := sess.Pending("bot")
	require.NotNil(t, p, "the run still waits")
	assert.Empty(t, p.Calls)

	ans, err := a.Resume(context.Background(), sess)
	require.NoError(t, err)
	assert.Equal(t, "done", ans.Content)
	assert.Equal(t, []string{`remove:{"path":"/a"}`, `weather:{"city":"Oslo"}`}, box.Calls(), "each call ran once")
	assert.Equal(t, 4, model.Calls())
	reqs := model.Requests()
	obs := toolMessages(reqs[len(reqs)-1])
	assert.Equal(t, team.StatusSuccess, observation(t, obs["d1"]).Status)
	assert.Equal(t, team.StatusSuccess, observation(t, obs["w1"]).Status)
}

// In a team, the member's model failure after its resumed batch fails the team; the
// team called again with its prompt retries from the failed member, which asks the
// model again with the batch's results: the approved call runs once.
func TestTeamMemberModelFailureAfterResumedBatch(t *testing.T) {
	box, model, bot := flakyRemover(t, afterRemove("cleaned"))
	tm, _ := ttTeam(t, "crew", team.WithMembers(testkit.NewFixedAgent("planner", "plan"), bot))
	sess := team.NewSession("crew-1")
	ans, err := tm.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))

	_, err = tm.Call(context.Background(), "clean up", sess)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	ans, err = tm.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	assert.Equal(t, "cleaned", ans.Content)
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
	assert.Equal(t, 3, model.Calls())
}

// An agent node whose failure an error policy recovered leaves its agent's run
// waiting (its model call failed after the approved batch); the flow goes on to
// another node of the same agent, which asks its own question: it does not resume
// the other node's run, with the other node's prompt and answer.
func TestAgentNodeDoesNotResumeRunOfAnotherNode(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)),
		testkit.FailWith(team.TypeSourceUnavailable),
		testkit.Reply("the cafe is paid"))
	a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
	require.NoError(t, err)
	g, err := flow.LoadGraph("pay2.yml", []byte(`id: pay2
layout:
  - {id: start, type: start, link: first}
  - {id: first, task: "@payer", meta: {prompt: "pay acme", answerKey: first.answer, onError: {recover: [source_unavailable]}}, link: second}
  - {id: second, task: "@payer", meta: {prompt: "pay the cafe", answerKey: second.answer}, link: end}
  - {id: end, type: end}
`))
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(a))
	sess := team.NewSession("pay-two")
	res, err := runFlowApproved(t, sess, eng, g, "payer", "p1")
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
	assert.Equal(t, "the cafe is paid", sess.Context().Value("second.answer"))
	assert.Equal(t, 3, model.Calls())
	assert.Equal(t, "pay the cafe", testkit.LastUserMessage(model.Requests()[2]), "the second node asks its own question")
	assert.Nil(t, sess.Pending("payer"))
}
