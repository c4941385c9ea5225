package subagent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/subagent"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/trace"
)

// RecordToolCalls keeps the tool calls of a wrapped agent's run in the context: the
// evidence a coordinator checks a report against. A new run replaces them.
func TestRecordToolCalls(t *testing.T) {
	failing := team.NewTool("patent_search", "Search patents",
		nil,
		func(context.Context, struct {
			Query string `json:"query"`
		}) ([]string, error) {
			return nil, team.NewError(team.TypeSourceUnavailable, "patent database returned 503")
		})
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("c1", "patent_search", `{"query":"solid-state"}`)),
		testkit.CallTools(testkit.ToolCall("c2", "patent_search", `{"query":"solid-state"}`)),
		testkit.Reply(`{"status":"success","results":[]}`),
		testkit.Reply(`{"status":"success","results":[]}`),
	)
	react, err := team.NewReActAgent("patents", model, team.WithTools(failing))
	require.NoError(t, err)
	agent := subagent.RecordToolCalls(react)
	assert.Equal(t, "patents", agent.Name())
	sess := team.NewSession("s")

	_, err = agent.Call(context.Background(), "find patents", sess)
	require.NoError(t, err)
	calls := subagent.ToolCallsIn(sess.Context(), "patents")
	require.Len(t, calls, 2)
	for _, c := range calls {
		assert.True(t, c.Failed())
		assert.Equal(t, "patent_search", c.Tool)
		assert.Equal(t, "patents", c.Agent)
		assert.Equal(t, team.TypeSourceUnavailable, c.Error.Type)
	}
	assert.Equal(t, []string{"c1", "c2"}, []string{calls[0].CallID, calls[1].CallID})
	// The same calls are in the ReAct trace the session keeps.
	fromTrace := subagent.ToolCallsOfTrace(sess.ReActTrace("patents"))
	assert.Equal(t, calls, fromTrace)

	// The next run made no tool call: its (empty) record replaces the old one.
	_, err = agent.Call(context.Background(), "again", sess)
	require.NoError(t, err)
	assert.Empty(t, subagent.ToolCallsIn(sess.Context(), "patents"))
}

// ToolCallAttrs puts a node's recorded tool calls on its terminal audit record only.
func TestToolCallAttrs(t *testing.T) {
	g := researchGraph(t)
	fc := flow.NewContext("x")
	end := &flow.NodeEnd{Status: trace.Completed}
	assert.Nil(t, subagent.ToolCallAttrs(fc, g.Node("patents"), end), "nothing recorded")
	fc.Set(subagent.ToolCallsKey("patents"), []subagent.ToolCallRecord{
		okCall("1", `{}`), failedCall("2", `{}`, team.TypeTimeout)})
	assert.Nil(t, subagent.ToolCallAttrs(fc, g.Node("patents"), nil), "not on STARTED records")
	assert.Equal(t, map[string]any{"tool_calls": 2, "failed_tool_calls": 1, "tool_errors": []any{"search: timeout"}},
		subagent.ToolCallAttrs(fc, g.Node("patents"), end))
	assert.Nil(t, subagent.ToolCallAttrs(fc, g.Node("join"), end), "not an agent node")
}
