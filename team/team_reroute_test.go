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

// A supervisor routes a worker whose turn fails; the error policy recovers the
// failure, and the supervisor, asked again, routes the same worker with the same
// task. That is a new turn, not a retry of the failed one (nobody resumed or retried
// the node): the worker runs fresh, whether it is a plain member or a nested team,
// whose members then all run again (a nested team replays its members only when
// flow resumes or retries its node, or retries its parent's call).
func TestSupervisorRerouteAfterRecoveredFailureRunsFresh(t *testing.T) {
	route := func(to string) testkit.Turn {
		return testkit.CallTools(testkit.ToolCall("r", team.RouteToolName, `{"to":"`+to+`","task":"check"}`))
	}
	for _, nested := range []bool{false, true} {
		name := map[bool]string{false: "member", true: "nested team"}[nested]
		t.Run(name, func(t *testing.T) {
			wModel := testkit.NewScriptedModel(testkit.FailWith(team.TypeSourceUnavailable), testkit.Reply("w done"))
			w, err := team.NewSimpleAgent("w", wModel)
			require.NoError(t, err)
			aModel := testkit.NewScriptedModel(testkit.Reply("a first"), testkit.Reply("a again"))
			a, err := team.NewSimpleAgent("a", aModel)
			require.NoError(t, err)
			var worker team.Agent = w
			if nested {
				inner, err := team.NewTeam("inner", team.WithMembers(a, w))
				require.NoError(t, err)
				worker = inner
			}
			sup := testkit.NewScriptedModel(route(worker.Name()), route(worker.Name()), testkit.Reply("FINISH"))
			desk, err := team.NewTeam("desk", team.WithMembers(worker), team.WithProtocol(team.Supervisor()),
				team.WithSupervisorModel(sup), team.WithEngineOptions(recoverNode(worker.Name())))
			require.NoError(t, err)
			sess := team.NewSession("reroute")
			ans, err := desk.Call(context.Background(), "work", sess)
			require.NoError(t, err)
			assert.Equal(t, 2, wModel.Calls(), "w's turn ran again")
			tr := desk.Trace(sess.Context())
			require.Len(t, tr.MemberRecords(), 2)
			assert.Equal(t, team.RunFailed, tr.MemberRecords()[0].Status)
			assert.Equal(t, team.RunCompleted, tr.MemberRecords()[1].Status)
			if !nested {
				assert.Equal(t, "w done", ans.Content)
				return
			}
			assert.Equal(t, 2, aModel.Calls(), "a is asked again: the re-routed team runs fresh")
			assert.Equal(t, "w done", ans.Content)
			itr := team.TraceIn(sess.Context(), "inner")
			assert.Equal(t, []string{"a", "w"}, itr.Route)
			assert.Equal(t, "a again", itr.Records[0].Content)
		})
	}
}

// The contrast: a retry policy on the nested team's node retries its failed run
// (the node's own execution continues it), so a, which answered, is not asked again.
func TestNestedTeamNodeRetryPolicyReplaysAnsweredMember(t *testing.T) {
	wModel := testkit.NewScriptedModel(testkit.FailWith(team.TypeSourceUnavailable), testkit.Reply("w done"))
	w, err := team.NewSimpleAgent("w", wModel)
	require.NoError(t, err)
	aModel := testkit.NewScriptedModel(testkit.Reply("a first"), testkit.Reply("a again"))
	a, err := team.NewSimpleAgent("a", aModel)
	require.NoError(t, err)
	inner, err := team.NewTeam("inner", team.WithMembers(a, w))
	require.NoError(t, err)
	desk, err := team.NewTeam("desk", team.WithMembers(inner), team.WithGraphAdjuster(func(s *flow.GraphSpec) {
		s.NodeByID("inner").SetRetry(flow.RetryPolicy{Max: 2})
	}))
	require.NoError(t, err)
	sess := team.NewSession("nested-retry-policy")
	ans, err := desk.Call(context.Background(), "work", sess)
	require.NoError(t, err)
	assert.Equal(t, "w done", ans.Content)
	assert.Equal(t, 1, aModel.Calls(), "a's answer is replayed")
	assert.Equal(t, 2, wModel.Calls())
	itr := team.TraceIn(sess.Context(), "inner")
	assert.Equal(t, []string{"a", "w"}, itr.Route)
	assert.Equal(t, "a first", itr.Records[0].Content)
}
