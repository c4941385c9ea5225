package a2a_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/a2a"
	"github.com/flowteam/flowteam/team/subagent"
	"github.com/flowteam/flowteam/testkit"
)

// A parallel team with one remote member whose server times out: the coordinator's
// coverage notes report the member as a gap (could not look), never as an empty
// result, and the local member's findings stand.
func TestTeamReportsATimedOutRemoteMemberAsAGap(t *testing.T) {
	hs := serve(t, testkit.NewSlowAgent("patents", "never"), a2a.WithRunTimeout(20*time.Millisecond))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			remote := subagent.RecordToolCalls(dial(t, hs, a2a.WithStreaming(m.streaming)))
			market := &subagent.SubAgent{Task: "market", Search: func(context.Context, string) ([]any, error) {
				return []any{"20bn EUR in 2024"}, nil
			}}
			members := []team.Agent{market, remote}
			var notes subagent.Coverage
			research, err := team.NewTeam("research", team.WithMembers(members...),
				team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError),
				team.WithMerge(subagent.Merge(members, func(_ context.Context, _ *team.TeamTrace, cov subagent.Coverage) (string, error) {
					notes = cov
					return cov.Markdown(), nil
				})))
			require.NoError(t, err)
			ans, err := research.Call(context.Background(), "e-bikes in Europe", team.NewSession("r-1"))
			require.NoError(t, err)
			n, ok := notes.Note("patents")
			require.True(t, ok, ans.Content)
			assert.Equal(t, subagent.CoverageGap, n.Class)
			assert.Equal(t, subagent.GapAgentFailure, n.Gap)
			assert.Equal(t, team.TypeTimeout, n.ErrorType)
			mk, _ := notes.Note("market")
			assert.Equal(t, subagent.CoverageWellSupported, mk.Class)
			assert.Contains(t, ans.Content, "patents: gap")
			assert.NotContains(t, ans.Content, "none exist")
		})
	}
}
