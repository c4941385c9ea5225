package team_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// A sequential team whose answering member fails, the failure recovered by an error
// policy, completes; its answer says that member failed instead of passing an earlier
// member's answer off as the team's. A member that failed before the one that answers
// leaves the answer alone (the trace has its failed record).
func TestSequentialRecoveredFailureOfAnsweringMember(t *testing.T) {
	down := func(name string) *testkit.FailingAgent {
		return testkit.NewFailingAgent(name, flow.MarkRecoverable(errors.New("writer backend down")))
	}
	for _, tc := range []struct {
		name    string
		members []team.Agent
		opts    []team.TeamOption
		want    string
	}{
		{"last member", []team.Agent{testkit.NewFixedAgent("a", "draft"), down("b")}, nil,
			"draft\n\n[b] failed: agent_error: writer backend down"},
		{"only member", []team.Agent{down("b")}, nil, "[b] failed: agent_error: writer backend down"},
		{"answer-from member", []team.Agent{down("a"), testkit.NewFixedAgent("b", "notes")},
			[]team.TeamOption{team.WithAnswerFrom("a")}, "notes\n\n[a] failed: agent_error: writer backend down"},
		{"earlier member", []team.Agent{down("a"), testkit.NewFixedAgent("b", "final")}, nil, "final"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm, _ := ttTeam(t, "seq", append(tc.opts, team.WithMembers(tc.members...))...)
			sess := team.NewSession("seq-failed")
			evs, err := ttCollect(t, tm, "write it", sess)
			require.NoError(t, err, "the error policy recovered the failure")
			tr := tm.Trace(sess.Context())
			assert.Equal(t, team.TeamCompleted, tr.Status)
			assert.Equal(t, tc.want, tr.FinalAnswer)
			last := advLast(t, evs)
			assert.Equal(t, team.EventTeamEnd, last.Kind)
			assert.Equal(t, tc.want, last.Content)
			ans, err := tm.Call(t.Context(), "write it", team.NewSession("seq-failed-call"))
			require.NoError(t, err)
			assert.Equal(t, tc.want, ans.Content)
		})
	}
}
