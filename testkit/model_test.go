package testkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

func userReq(text string) *team.ChatRequest {
	return &team.ChatRequest{Messages: []team.Message{team.UserMessage(text)}}
}

func TestScriptedModelTurnsAndRules(t *testing.T) {
	ctx := context.Background()
	m := testkit.NewScriptedModel(
		testkit.Reply("first").WithUsage(testkit.Tokens(3, 2, 1, 0)),
		testkit.CallTools(testkit.ToolCall("c1", "search", `{"q":"x"}`)),
		testkit.FailWith(team.TypeRateLimited),
	).When(testkit.LastUserIs("ping"), testkit.Reply("pong"))

	r, err := m.Chat(ctx, userReq("a"))
	require.NoError(t, err)
	assert.Equal(t, "first", r.Message.Content)
	assert.Equal(t, team.Usage{PromptTokens: 3, CompletionTokens: 2, ReasoningTokens: 1, TotalTokens: 5}, r.Usage)
	assert.Equal(t, "stop", r.FinishReason)

	// A rule answers whatever the script's position, and does not move it.
	r, err = m.Chat(ctx, userReq("ping"))
	require.NoError(t, err)
	assert.Equal(t, "pong", r.Message.Content)

	r, err = m.Chat(ctx, userReq("b"))
	require.NoError(t, err)
	assert.Equal(t, []team.ToolCall{testkit.ToolCall("c1", "search", `{"q":"x"}`)}, r.Message.ToolCalls)
	assert.Equal(t, "tool_calls", r.FinishReason)

	_, err = m.Chat(ctx, userReq("c"))
	require.ErrorIs(t, err, team.ErrRateLimited)
	assert.True(t, team.AsError(err, "").Retryable())

	_, err = m.Chat(ctx, userReq("d"))
	require.ErrorIs(t, err, testkit.ErrScriptExhausted)
	assert.ErrorContains(t, err, `last user message "d"`)

	// Every request is recorded, as it was when sent.
	assert.Equal(t, 5, m.Calls())
	assert.Equal(t, 0, m.Remaining())
	req := userReq("e")
	m.Then(testkit.Reply("late"))
	_, err = m.Chat(ctx, req)
	require.NoError(t, err)
	req.Messages[0].Content = "changed"
	reqs := m.Requests()
	require.Len(t, reqs, 6)
	assert.Equal(t, "e", testkit.LastUserMessage(reqs[5]))
	assert.Equal(t, "a", testkit.LastUserMessage(reqs[0]))
}

func TestScriptedModelRespondAndStream(t *testing.T) {
	ctx := context.Background()
	m := testkit.NewScriptedModel(
		testkit.Turn{Respond: func(r *team.ChatRequest) (*team.ChatResponse, error) {
			return &team.ChatResponse{Message: team.AssistantMessage("echo: " + testkit.LastUserMessage(*r))}, nil
		}},
		testkit.Reply("one two three").WithReasoning("hmm").WithUsage(testkit.Tokens(5, 3, 1, 2)),
		testkit.CallTools(testkit.ToolCall("a", "x", `{}`), testkit.ToolCall("b", "y", `{"k":1}`)),
	)
	r, err := m.Chat(ctx, userReq("hi"))
	require.NoError(t, err)
	assert.Equal(t, "echo: hi", r.Message.Content)

	var deltas []team.Delta
	for d, err := range m.ChatStream(ctx, userReq("x")) {
		require.NoError(t, err)
		deltas = append(deltas, d)
	}
	require.Len(t, deltas, 5)
	assert.Equal(t, "hmm", deltas[0].Reasoning)
	assert.Equal(t, []string{"one ", "two ", "three"}, []string{deltas[1].Content, deltas[2].Content, deltas[3].Content})
	assert.Equal(t, int64(8), deltas[4].Usage.TotalTokens)

	resp, err := team.Collect(m.ChatStream(ctx, userReq("y")))
	require.NoError(t, err)
	assert.Equal(t, []team.ToolCall{testkit.ToolCall("a", "x", `{}`), testkit.ToolCall("b", "y", `{"k":1}`)}, resp.Message.ToolCalls)

	_, err = team.Collect(m.ChatStream(ctx, userReq("z")))
	require.ErrorIs(t, err, testkit.ErrScriptExhausted)
}

// A waiting turn honours cancellation.
func TestScriptedModelWait(t *testing.T) {
	block := make(chan struct{})
	m := testkit.NewScriptedModel(testkit.Turn{Wait: block, Content: "x"}, testkit.Turn{Wait: block, Content: "y"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Chat(ctx, userReq("a"))
	require.ErrorIs(t, err, team.ErrCancelled)
	close(block)
	r, err := m.Chat(context.Background(), userReq("b"))
	require.NoError(t, err)
	assert.Equal(t, "y", r.Message.Content)
}

// The model records each request exactly as sent and shares no memory with its caller:
// an agent that edits its history or the tool arguments it got in place changes
// neither the recording nor the answers a rule gives next time.
func TestScriptedModelSharesNoMemory(t *testing.T) {
	ctx := context.Background()
	call := testkit.ToolCall("c1", "search", `{"q": "x"}`)
	m := testkit.NewScriptedModel().When(testkit.LastUserIs("go"), testkit.CallTools(call))

	// A history holding a tool call whose arguments a model cut short (not JSON).
	req := &team.ChatRequest{Messages: []team.Message{
		{Role: team.RoleAssistant, ToolCalls: []team.ToolCall{testkit.ToolCall("c0", "search", `{"q":`)}},
		team.UserMessage("go"),
	}}
	r, err := m.Chat(ctx, req)
	require.NoError(t, err)
	req.Messages[0].ToolCalls[0].Args[1] = 'X'
	req.Messages[1].Content = "changed"
	r.Message.ToolCalls[0].Args[2] = 'X'

	got := m.Requests()[0]
	assert.Equal(t, "go", testkit.LastUserMessage(got))
	assert.Equal(t, `{"q":`, string(got.Messages[0].ToolCalls[0].Args))
	r, err = m.Chat(ctx, userReq("go"))
	require.NoError(t, err)
	assert.Equal(t, `{"q": "x"}`, string(r.Message.ToolCalls[0].Args), "as scripted, spaces included")
}
