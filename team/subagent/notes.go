package subagent

import (
	"context"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
)

// Notes writes the coverage notes of a parallel team's sub-agent members for its
// coordinator: team.WithMergeNotes(subagent.Notes) on a Parallel team. A member with a
// gap after an answer (an empty success its failed searches contradict) gets its
// note after the answer, and the notes of every sub-agent member end the merge.
func Notes(c *flow.Context, tr *team.TeamTrace, members []team.Agent) (byMember map[string]string, end string) {
	cov := coverageOf(c, tr, members)
	byMember = make(map[string]string, len(cov.Notes))
	for _, n := range cov.Notes {
		if n.Class == CoverageGap {
			byMember[n.Task] = n.Text
		}
	}
	if len(cov.Notes) == 0 {
		return byMember, ""
	}
	return byMember, cov.Markdown()
}

// Merge returns a parallel team's merge (team.WithMerge) that gives fn the
// coverage notes of the team's members that are sub-agents (those Notes writes), so
// that its answer can tell "none exist" from "could not look". The notes are empty
// when no member is a sub-agent.
func Merge(members []team.Agent, fn func(ctx context.Context, tr *team.TeamTrace, cov Coverage) (string, error)) func(ctx context.Context, c *flow.Context, tr *team.TeamTrace) (string, error) {
	return func(ctx context.Context, c *flow.Context, tr *team.TeamTrace) (string, error) {
		return fn(ctx, tr, coverageOf(c, tr, members))
	}
}

// coverageOf classifies the sub-agent members (a SubAgent, or an agent wrapped by
// RecordToolCalls) and the members that reported a SubResult or whose tool calls
// failed without a successful retry: the evidence a merge must not hide. A sub-agent
// member that did not run and never reported is a gap too (no report). Other members
// (plain answers) get no note.
//
// The context keeps what members reported in earlier runs of the session, so the
// evidence is checked against this run's records: a member that did not run now
// reported nothing now, and one whose turn failed wrote no success now.
func coverageOf(c *flow.Context, tr *team.TeamTrace, members []team.Agent) Coverage {
	latest := map[string]team.TeamRecord{}
	for _, r := range tr.Records {
		if r.Kind == team.RecordMember {
			latest[r.Source] = r
		}
	}
	names := make([]string, len(members))
	sub := map[string]bool{}
	for i, m := range members {
		names[i] = m.Name()
		switch m.(type) {
		case *SubAgent, *recordingAgent:
			sub[m.Name()] = true
		}
	}
	var tasks []SubTask
	for _, st := range GatherSubTasks(c, names...) {
		if st.Result == nil && len(unresolvedFailures(st.Calls)) == 0 && !sub[st.Name] {
			continue
		}
		switch r := latest[st.Name]; r.Status {
		case team.RunCompleted:
		case team.RunFailed:
			if st.Result != nil && st.Result.OK() {
				st.Result, st.Answer = nil, ""
			}
			if r.Error != nil {
				st.Failure = r.Error
			}
		default:
			st = SubTask{Name: st.Name, Title: st.Title}
		}
		tasks = append(tasks, st)
	}
	return NewCoverage(tasks...)
}
