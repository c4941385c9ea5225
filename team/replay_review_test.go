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

// A supervisor routes bot twice with the same question (the member prompt is the
// task alone): its first turn answers, its second waits for the removal's approval
// and fails after it, which fails the call. The retried call routes bot the same way
// twice: the first routing replays the first answer and the second goes on with the
// kept run, so the records keep their order and the supervisor sees the work it saw.
func TestSupervisorSameQuestionTwiceReplaysInOrder(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(testkit.Reply("looked at /a"), removeA(),
		testkit.FailWith(team.TypeSourceUnavailable), afterRemove("cleaned /a"))
	bot, err := team.NewReActAgent("bot", model, team.WithTools(box.remove()))
	require.NoError(t, err)
	route := testkit.CallTools(testkit.ToolCall("s", team.RouteToolName, `{"to":"bot","task":"see to /a"}`))
	sup := testkit.NewScriptedModel(route, route, route, route, testkit.Reply("FINISH"))
	tm, err := team.NewTeam("desk", team.WithMembers(bot), team.WithProtocol(team.Supervisor()),
		team.WithSupervisorModel(sup),
		team.WithMemberPrompt(func(_ *team.TeamTrace, _ team.Agent, task string) string { return task }))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-same-twice", map[string]any{"prompt": "tidy up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	first := tm.Trace(fc).Records

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 4, model.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
	var got []string
	for _, r := range tm.Trace(fc).MemberRecords() {
		got = append(got, r.Content)
	}
	assert.Equal(t, []string{"looked at /a", "cleaned /a"}, got, "the turns keep their order")
	require.NotEmpty(t, first)
	assert.Equal(t, sup.Requests()[1].LastUserMessage(), sup.Requests()[3].LastUserMessage(),
		"the supervisor sees the work it saw before the failure")
}
