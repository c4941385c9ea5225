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
	assert.Equal(t, "pay the cafe", model.Requests()[2].LastUserMessage(), "the second iteration asks its own question")
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
	box := &toolbox{}
	model := testkit.NewScriptedModel(removeA(), testkit.FailWith(team.TypeSourceUnavailable), testkit.Reply("cleaned /b"))
	bot, err := team.NewReActAgent("bot", model, team.WithTools(box.remove()))
	require.NoError(t, err)
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
	assert.Equal(t, "clean /b", model.Requests()[2].LastUserMessage(), "the second iteration asks its own question")
	tr := tm.Trace(sess.Context())
	require.NotNil(t, tr)
	assert.Equal(t, "clean /b", tr.Prompt)
	assert.Equal(t, "cleaned /b", tr.FinalAnswer)
	require.Len(t, tr.Records, 1)
	assert.NotEqual(t, first.RunID, tr.Records[0].RunID, "each iteration has its own member run")
	assert.Nil(t, sess.Pending("bot"))
}
