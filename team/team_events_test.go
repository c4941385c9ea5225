package team_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// ttCollect runs the team's stream to its end.
func ttCollect(t *testing.T, tm *team.TeamAgent, prompt string, sess *team.AgentSession) ([]team.Event, error) {
	t.Helper()
	var (
		evs    []team.Event
		runErr error
	)
	for ev, err := range tm.Stream(context.Background(), prompt, sess) {
		if err != nil {
			runErr = err
			continue
		}
		evs = append(evs, ev)
	}
	return evs, runErr
}

// ttCheckSymmetry checks that every start event has its end: team start/end by run id,
// member node start/end by run id, node and branch, agent run start/end by run id; and
// that every event says who and where.
func ttCheckSymmetry(t *testing.T, evs []team.Event) {
	t.Helper()
	open := map[string]int{}
	key := func(e team.Event) string {
		switch e.Kind {
		case team.EventTeamStart, team.EventTeamEnd:
			return "team " + e.RunID
		case team.EventNodeStart, team.EventNodeEnd:
			return "node " + e.RunID + " " + e.Node + " " + e.Branch
		case team.EventRunStart, team.EventRunEnd:
			return "run " + e.RunID
		case team.EventReasonStart, team.EventReasonEnd:
			return fmt.Sprintf("reason %s %s %d", e.RunID, e.Node, e.Step)
		}
		return ""
	}
	for i, e := range evs {
		assert.NotEmpty(t, e.RunID, "event %d %s has no run id", i, e)
		assert.NotEmpty(t, e.Agent, "event %d %s has no agent", i, e)
		assert.NotEmpty(t, e.Branch, "event %d %s has no branch", i, e)
		assert.NotEmpty(t, e.ParentRunID, "event %d %s has no parent run id", i, e)
		k := key(e)
		switch e.Kind {
		case team.EventTeamStart, team.EventNodeStart, team.EventRunStart, team.EventReasonStart:
			open[k]++
		case team.EventTeamEnd, team.EventNodeEnd, team.EventRunEnd, team.EventReasonEnd:
			if open[k] == 0 {
				t.Errorf("event %d %s (%s) ends what did not start", i, e, k)
				continue
			}
			open[k]--
		}
	}
	for k, n := range open {
		assert.Zero(t, n, "%s started without an end", k)
	}
}

// A nested team emits its own end event (Solon does not), every start has its end,
// and the events of parallel members can be grouped by branch id.
func TestTeamNestedEventSymmetry(t *testing.T) {
	research, err := team.NewTeam("research", team.WithTeamRole("researches in parallel"), team.WithProtocol(team.Parallel()),
		team.WithMembers(testkit.NewFixedAgent("web", "web says 3bn"), testkit.NewFixedAgent("papers", "papers say 3.2bn")))
	require.NoError(t, err)
	writerModel := testkit.NewScriptedModel(testkit.Reply("The market is about 3bn.").WithUsage(testkit.Tokens(30, 8, 2, 0)))
	writer, err := team.NewSimpleAgent("writer", writerModel, team.WithRole("writes"))
	require.NoError(t, err)
	sup := testkit.NewScriptedModel(ttRouteTo("1", "research").WithUsage(testkit.Tokens(10, 1, 1, 0)),
		testkit.Reply("writer").WithUsage(testkit.Tokens(10, 1, 0, 0)), testkit.Reply("FINISH"))
	desk, rec := ttTeam(t, "desk", team.WithMembers(research, writer), team.WithProtocol(team.Supervisor()), team.WithSupervisorModel(sup))

	sess := team.NewSession("nest-1")
	evs, err := ttCollect(t, desk, "Size the market", sess)
	require.NoError(t, err)
	ttCheckSymmetry(t, evs)

	// Two teams, each started and ended; the nested one inside the outer one, inside
	// its member node.
	var starts, ends []team.Event
	for _, e := range evs {
		switch e.Kind {
		case team.EventTeamStart:
			starts = append(starts, e)
		case team.EventTeamEnd:
			ends = append(ends, e)
		}
	}
	require.Len(t, starts, 2)
	require.Len(t, ends, 2)
	assert.Equal(t, "desk", starts[0].Agent)
	assert.Equal(t, "research", starts[1].Agent)
	assert.Equal(t, "research", ends[0].Agent)
	assert.Equal(t, team.TeamCompleted, ends[0].Status)
	assert.Equal(t, "desk", ends[1].Agent)
	assert.Equal(t, evs[len(evs)-1], ends[1])
	assert.Equal(t, starts[0].RunID, starts[1].ParentRunID, "the nested team runs inside the outer team")
	assert.Equal(t, "[web] web says 3bn\n\n[papers] papers say 3.2bn", ends[0].Content)
	assert.Equal(t, "The market is about 3bn.", ends[1].Content)
	require.NotNil(t, ends[1].Answer)
	outer, ok := ends[1].Answer.Trace.(*team.TeamTrace)
	require.True(t, ok)

	// The research node frames the nested team.
	idx := func(pred func(team.Event) bool) int { return slices.IndexFunc(evs, pred) }
	nodeStart := idx(func(e team.Event) bool { return e.Kind == team.EventNodeStart && e.Node == "research" })
	nodeEnd := idx(func(e team.Event) bool { return e.Kind == team.EventNodeEnd && e.Node == "research" })
	innerStart := idx(func(e team.Event) bool { return e.Kind == team.EventTeamStart && e.Agent == "research" })
	innerEnd := idx(func(e team.Event) bool { return e.Kind == team.EventTeamEnd && e.Agent == "research" })
	assert.True(t, nodeStart < innerStart && innerStart < innerEnd && innerEnd < nodeEnd, "node %d, team %d..%d, node end %d", nodeStart, innerStart, innerEnd, nodeEnd)
	assert.Equal(t, team.RunCompleted, evs[nodeEnd].Status)
	assert.Equal(t, starts[0].RunID, evs[nodeEnd].RunID)

	// Parallel members' events grouped by branch: each branch tells its own story.
	byBranch := map[string][]string{}
	for _, e := range evs {
		if strings.Contains(e.Branch, "fork:") {
			byBranch[e.Branch] = append(byBranch[e.Branch], string(e.Kind)+"/"+e.Agent)
		}
	}
	require.Len(t, byBranch, 2)
	for b, seq := range byBranch {
		member := b[strings.LastIndex(b, ":")+1:]
		assert.Equal(t, []string{"node_start/" + member, "run_start/" + member, "run_end/" + member, "node_end/" + member}, seq, b)
	}

	// Member runs report the team run as their parent; supervisor deltas stream.
	for _, e := range evs {
		if e.Kind == team.EventRunStart && e.Agent == "web" {
			assert.Equal(t, starts[1].RunID, e.ParentRunID)
		}
		if e.Kind == team.EventRunStart && e.Agent == "writer" {
			assert.Equal(t, starts[0].RunID, e.ParentRunID)
		}
	}
	assert.True(t, slices.ContainsFunc(evs, func(e team.Event) bool {
		return e.Kind == team.EventReasonDelta && e.Agent == "desk" && e.Node == team.TeamNodeSupervisor
	}))
	decisions := 0
	for _, e := range evs {
		if e.Kind == team.EventDecision && e.Agent == "desk" {
			require.NotNil(t, e.Route)
			decisions++
		}
	}
	assert.Equal(t, 3, decisions)

	// The outer trace counts the nested team as one member turn with its metrics.
	assert.Equal(t, []string{"research", "writer"}, outer.Route)
	assert.Equal(t, "[web] web says 3bn\n\n[papers] papers say 3.2bn", outer.Records[1].Content)
	assert.Equal(t, int64(2+1), outer.Metrics.ThinkTokens)
	inner := team.TraceIn(sess.Context(), "research")
	require.NotNil(t, inner)
	assert.Equal(t, starts[0].RunID, inner.ParentRunID)
	assert.Equal(t, team.Usage{PromptTokens: inner.Metrics.PromptTokens, CompletionTokens: inner.Metrics.CompletionTokens, ReasoningTokens: inner.Metrics.ThinkTokens, CachedTokens: inner.Metrics.CachedTokens, TotalTokens: inner.Metrics.TotalTokens}, outer.Records[1].Usage)

	// The flow ran the nested team as a sub-graph of the outer graph.
	assert.Contains(t, rec.QualifiedPath(), "team.desk/research/team.research:merge")
}

// A nested team that fails still ends (failed), and so does its member node and the
// outer team.
func TestTeamNestedFailureEvents(t *testing.T) {
	inner, err := team.NewTeam("inner", team.WithMembers(testkit.FailingWith("broken", team.TypeSourceUnavailable, "down")))
	require.NoError(t, err)
	outer, _ := ttTeam(t, "outer", team.WithMembers(testkit.NewFixedAgent("first", "ok"), inner))
	sess := team.NewSession("nf-1")
	evs, err := ttCollect(t, outer, "go", sess)
	require.Error(t, err)
	assert.ErrorIs(t, err, team.ErrSourceUnavailable)
	ttCheckSymmetry(t, evs)
	var ends []string
	for _, e := range evs {
		if e.Kind == team.EventTeamEnd || e.Kind == team.EventNodeEnd {
			ends = append(ends, string(e.Kind)+"/"+e.Agent+"/"+e.Status)
		}
	}
	assert.Equal(t, []string{"node_end/first/completed", "node_end/broken/failed", "team_end/inner/failed", "node_end/inner/failed", "team_end/outer/failed"}, ends)
	tr := outer.Trace(sess.Context())
	assert.Equal(t, team.TeamFailed, tr.Status)
	assert.Equal(t, []string{"first", "inner"}, tr.Route)
	assert.Equal(t, team.RunFailed, tr.Records[1].Status)
}

// Breaking the loop cancels the run: the slow member sees its context end, and no
// goroutine is left (goleak in TestMain).
func TestTeamStreamBreakCancels(t *testing.T) {
	slow := testkit.NewSlowAgent("slow", "never")
	tm, rec := ttTeam(t, "waiters", team.WithMembers(testkit.NewFixedAgent("quick", "done"), slow))
	sess := team.NewSession("br-1")
	var seen []team.EventKind
	for ev, err := range tm.Stream(context.Background(), "go", sess) {
		require.NoError(t, err)
		seen = append(seen, ev.Kind)
		if ev.Kind == team.EventRunStart && ev.Agent == "slow" {
			break
		}
	}
	assert.Equal(t, team.EventTeamStart, seen[0])
	tr := tm.Trace(sess.Context())
	assert.Equal(t, team.TeamFailed, tr.Status)
	assert.Equal(t, team.TypeCancelled, tr.Error.Type)
	steps := rec.Steps()
	assert.Equal(t, "slow", steps[len(steps)-1].Node)
	assert.NotEqual(t, flow.NodeStatus("COMPLETED"), steps[len(steps)-1].Status)
}
