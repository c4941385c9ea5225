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

// A SimpleAgent makes one model call with its instruction rendered over the
// FlowContext; as a flow task it writes its answer into the context.
func TestSimpleAgentInFlow(t *testing.T) {
	model := testkit.NewScriptedModel(testkit.Reply("Dear Ann, your order A-7 ships today.").WithUsage(testkit.Tokens(30, 10, 0, 0)))
	writer, err := team.NewSimpleAgent("writer", model,
		team.WithInstruction(`Write to {{.customer}} about order {{var "order.id"}}. Task: {{prompt}}`))
	require.NoError(t, err)

	s := flow.NewSpec("mail")
	s.Start("s").LinkTo("write")
	s.Activity("write").SetTask("@writer").SetMeta(team.MetaPrompt, "announce shipping").LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(writer))
	fc := flow.NewContextWith("m-1", map[string]any{"customer": "Ann", "order.id": "A-7"})
	_, err = eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)

	assert.Equal(t, "Dear Ann, your order A-7 ships today.", fc.Value("writer.answer"))
	req := model.Requests()[0]
	assert.Equal(t, []team.Message{
		team.SystemMessage("Write to Ann about order A-7. Task: announce shipping"),
		team.UserMessage("announce shipping"),
	}, req.Messages)
	tr := team.SessionOf(fc).SimpleTrace("writer")
	require.NotNil(t, tr)
	assert.Equal(t, team.RunCompleted, tr.Status)
	assert.Equal(t, int64(40), tr.Metrics.TotalTokens)
	assert.Equal(t, 1, tr.Metrics.ModelCalls)
	assert.Equal(t, "Write to Ann about order A-7. Task: announce shipping", tr.Instruction)

	// A missing variable is an invalid query naming it, before any model call.
	_, err = writer.Call(context.Background(), "x", team.NewSession("empty"))
	require.ErrorIs(t, err, team.ErrInvalidQuery)
	assert.ErrorContains(t, err, "customer")
	assert.Equal(t, 1, model.Calls())
}
