package team_test

import (
	"context"
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
