// Package subagent is the coordinator/sub-agent discipline of flowteam's agent
// teams: sub-agents that report structured results, never a bare string, and a
// coordinator that keeps going when one sub-task fails and says where the gaps are.
//
// A parallel team of sub-agents whose coordinator ends with coverage notes:
//
//	patents := &subagent.SubAgent{Task: "patents", Source: "patent_db", Search: searchPatents,
//		Retry: flow.RetryPolicy{Max: 3, Backoff: 200 * time.Millisecond}}
//	research, err := team.NewTeam("research", team.WithMembers(market, patents),
//		team.WithProtocol(team.Parallel), team.WithMergeNotes(subagent.Notes),
//		team.WithBranchPolicy(flow.ContinueOnError))
//
// # Results
//
// A SubResult has a status: success (Results is the answer, and an empty list is a
// valid answer), error, or partial_failure (an error with PartialResults); the error
// type (timeout, rate_limited, auth_denied, not_found, ...), whether a retry may
// help, what was attempted and alternatives. Only a success with an empty list says
// "none exist": not_found is a failure the source reported, never a completed
// search. Its JSON is snake_case, as a coordinator model reads it in a prompt, and it
// travels through the FlowContext and session snapshots as plain data (SubResultOf
// reads it back in any form).
//
// # Sub-agents
//
// SubAgent runs a search (query to results) as a team.Agent. It retries retryable
// failures locally with a flow.RetryPolicy, an optional per-attempt timeout and a
// total budget, records every attempt, and reports only what it could not resolve.
// As a graph node it writes its SubResult to ResultKey(name) and fails the node with
// the structured *team.Error when it could not resolve a failure: put sub-agents
// behind a parallel gateway with branch policy continue so the other sub-tasks go on.
//
// # Coverage
//
// A sub-agent that swallows an error and reports an empty success is found out by
// the tool calls of its run: RecordToolCalls keeps them in the FlowContext (and
// ToolCallsOfTrace reads them from a ReAct agent's trace). After the join,
// GatherSubTasks collects each sub-task's report, tool calls and node failure, and
// NewCoverage classifies it: well supported, valid empty, or gap (with the reason).
// Coverage.Markdown renders the "## Coverage notes" a coordinator appends; Notes and
// Merge give them to a parallel team's coordinator.
package subagent
