package team_test

import (
	"context"
	"sync"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// Two sinks both receive events; options reach the model; history is bounded.
func TestSimpleAgentOptionsAndSinks(t *testing.T) {
	model := testkit.NewScriptedModel(testkit.Reply("one"), testkit.Reply("two"), testkit.Reply("three"))
	temp := 0.1
	agent, err := team.NewSimpleAgent("s", model, team.WithRole("helper"), team.WithHistoryLimit(2),
		team.WithChatOptions(team.ChatOptions{Model: "m-2", Temperature: &temp}))
	require.NoError(t, err)
	assert.Equal(t, "helper", agent.Role())

	var mu sync.Mutex
	var a, b int
	ctx := team.WithSink(context.Background(), func(team.Event) { mu.Lock(); a++; mu.Unlock() })
	ctx = team.WithSink(ctx, func(team.Event) { mu.Lock(); b++; mu.Unlock() })
	sess := team.NewSession("h")
	for _, p := range []string{"p1", "p2", "p3"} {
		_, err := agent.Call(ctx, p, sess)
		require.NoError(t, err)
	}
	assert.Equal(t, a, b)
	assert.Positive(t, a)
	assert.Equal(t, []team.Message{team.UserMessage("p3"), team.AssistantMessage("three")}, sess.History("s"))
	last := model.Requests()[2]
	assert.Equal(t, "m-2", last.Options.Model)
	assert.Equal(t, []team.Message{team.UserMessage("p2"), team.AssistantMessage("two"), team.UserMessage("p3")}, last.Messages)

	// A model failure fails the call and is recorded in the trace.
	failing, err := team.NewSimpleAgent("f", testkit.NewScriptedModel(testkit.FailWith(team.TypeSourceUnavailable)))
	require.NoError(t, err)
	var kindsSeen []team.EventKind
	var last2 error
	for ev, err := range team.Stream(context.Background(), failing, "x", sess) {
		if err != nil {
			last2 = err
			continue
		}
		kindsSeen = append(kindsSeen, ev.Kind)
	}
	require.ErrorIs(t, last2, team.ErrSourceUnavailable)
	assert.Equal(t, []team.EventKind{team.EventRunStart, team.EventReasonStart, team.EventReasonEnd, team.EventRunEnd}, kindsSeen)
	assert.Equal(t, team.RunFailed, sess.SimpleTrace("f").Status)
}
