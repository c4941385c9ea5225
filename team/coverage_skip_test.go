package team_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

type searchArgs struct {
	Q string `json:"q"`
}

// A search a human skipped with an empty substitute did not run: the model saw "no
// results", but the tool call records say the call did not run, so a coordinator's
// note is a gap, never "searched, none exist". Both records of the calls agree: the
// agent's trace (ToolCallsOfTrace) and the events (RecordToolCalls).
func TestSkippedSearchIsNotAnEmptySearch(t *testing.T) {
	ran := 0
	search := team.NewTool("patent_search", "Search the patent database",
		team.Object(map[string]*team.Schema{"q": team.String("query")}),
		func(_ context.Context, a searchArgs) ([]string, error) { ran++; return []string{"EP-1"}, nil })
	search.Sensitive = team.Always("a search costs money")
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("c1", "patent_search", `{"q":"solid-state"}`)),
		testkit.Reply(`{"status":"success","results":[]}`),
	)
	agent, err := team.NewReActAgent("patents", model, team.WithTools(search))
	require.NoError(t, err)
	recorded := team.RecordToolCalls(agent)
	sess := team.NewSession("s-1")

	ans, err := recorded.Call(context.Background(), "find patents", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.NoError(t, sess.Decide("patents", team.Skip("c1", []any{})))
	_, err = recorded.Call(context.Background(), "find patents", sess)
	require.NoError(t, err)
	require.Zero(t, ran, "a skipped call does not run")

	for source, calls := range map[string][]team.ToolCallRecord{
		"trace":  team.ToolCallsOfTrace(sess.ReActTrace("patents")),
		"events": team.ToolCallsIn(sess.Context(), "patents"),
	} {
		require.Len(t, calls, 1, source)
		assert.True(t, calls[0].Failed(), "%s: a skipped call is not a search that succeeded", source)
		require.NotNil(t, calls[0].Error, source)
		assert.Equal(t, team.TypeSkipped, calls[0].Error.Type, source)

		cov := team.NewCoverage(team.SubTask{Name: "patents",
			Result: &team.SubResult{Status: team.ResultSuccess, Results: []any{}}, Calls: calls})
		n, ok := cov.Note("patents")
		require.True(t, ok, source)
		assert.Equal(t, team.CoverageGap, n.Class, "%s: %s", source, n.Text)
		assert.Equal(t, team.GapSilentFailure, n.Gap, source)
		assertNoAbsenceClaim(t, n.Text, "patents")
		assert.False(t, cov.Complete(), source)
	}
}

// A number beyond float64 in a stored session is an error naming the variable, not a
// string in its place (bad input is rejected, never loaded as something else).
func TestUnmarshalSessionRejectsOutOfRangeNumbers(t *testing.T) {
	data, err := team.MarshalSession(team.NewSession("s-1"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	doc["vars"] = map[string]any{"big": json.Number("1e400"), "ok": json.Number("3")}
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	_, err = team.UnmarshalSession(data)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `variable "big"`)
	assert.Contains(t, err.Error(), "1e400")

	doc["vars"] = map[string]any{"ok": json.Number("3"), "list": []any{json.Number("1.5")}}
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	sess, err := team.UnmarshalSession(data)
	require.NoError(t, err)
	assert.Equal(t, int64(3), sess.Context().Value("ok"))
	assert.Equal(t, []any{1.5}, sess.Context().Value("list"))
}
