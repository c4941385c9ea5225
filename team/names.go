package team

import "errors"

// Names of the package: meta keys, node ids, statuses, decision actions, sources and
// reasons, and tool names. They are plain strings, as the traces and events carry them.
const (
	// Meta keys an agent node may set to configure the agent task.

	// MetaPrompt is a text/template rendered over the FlowContext as the prompt.
	MetaPrompt = "prompt"
	// MetaPromptKey names the context variable holding the prompt.
	MetaPromptKey = "promptKey"
	// MetaAnswerKey names the context variable the answer is written to.
	MetaAnswerKey = "answerKey"

	// Run statuses, as RunEnd events and traces report them.
	RunCompleted = "completed"
	RunPending   = "pending" // waiting for human decisions
	RunFailed    = "failed"
	// RunInterrupted ends a team member's node whose turn the flow cut short: its
	// context ended because the run halted (another branch failed fast) or its
	// sub-graph call failed elsewhere. The failure is not the member's, and its node
	// runs again on resume.
	RunInterrupted = "interrupted"

	// TeamStart statuses.
	TeamStarted = "started"
	TeamResumed = "resumed"

	// TransferToolName is the name of the tool swarm members hand over with (and one of
	// the names a supervisor may route with).
	TransferToolName = "transfer_to"

	// RouteToolName is the tool the supervisor routes with: route {"to": "<member>" or the
	// finish marker, "task": "...", "answer": "..."}.
	RouteToolName = "route"

	// Node ids of the nodes a protocol generates besides the members' (whose ids are the
	// member names). A graph adjuster refers to them to add nodes and links.
	TeamNodeStart      = "start"
	TeamNodeEnd        = "end"
	TeamNodeSupervisor = "supervisor"
	TeamNodeRoute      = "route"
	TeamNodeFork       = "fork"
	TeamNodeJoin       = "join"
	TeamNodeMerge      = "merge"

	// Meta keys of a team's graph and nodes.

	// MetaTeam names the team on its graph's meta.
	MetaTeam = "team"
	// MetaProtocol names the protocol on the graph's meta.
	MetaProtocol = "protocol"
	// MetaMaxTurns is the team's max turns, on the graph's meta.
	MetaMaxTurns = "maxTurns"
	// MetaAgent names the agent a member node runs (the audit reads it).
	MetaAgent = "agent"

	// Team run statuses, as TeamTrace.Status and the team's events report them.
	TeamRunning   = "running"
	TeamSuspended = "suspended"
	TeamCompleted = "completed"
	TeamFailed    = "failed"
	TeamStopped   = "stopped"
	// TeamInterrupted is the status of a team run as a sub-graph (a nested team, or
	// Task) that the flow cut short for a reason outside it: another branch of the
	// run, or of the sub-graph call it runs in, failed. The run did not fail (as
	// RunInterrupted for a member's turn): it goes on when flow runs the calling
	// node again on resume, or is retried when flow calls its graph again.
	TeamInterrupted = "interrupted"
	// TeamSkipped is the status of a nested team its parent did not let run (max
	// turns, or an interceptor's ShouldAgentContinue).
	TeamSkipped = "skipped"

	// Record statuses of a TeamRecord (besides RunCompleted and RunFailed).
	RecordSkipped = "skipped"

	// Record kinds: who wrote a TeamRecord.
	RecordMember      = "member"
	RecordSupervisor  = "supervisor"
	RecordCoordinator = "coordinator"

	// Decision actions of a RouteDecision.
	ActionRoute  = "route"
	ActionFinish = "finish"

	// Decision sources: where a RouteDecision came from.
	SourceTool     = "tool"     // a route/transfer tool call of the model or the member
	SourceText     = "text"     // the answer's text (a member name, a transfer line, the finish marker)
	SourceRule     = "rule"     // the team's own rules: max turns, loop detector, transfers, interceptors
	SourceFallback = "fallback" // an unresolvable decision replaced by the configured fallback
	SourceProtocol = "protocol" // the protocol's fixed order (sequential, parallel)

	// Decision reasons, for the decisions the team takes itself.
	ReasonMaxTurns     = "max_turns"
	ReasonLoop         = "loop"
	ReasonInterceptor  = "interceptor"
	ReasonUnresolved   = "unresolved"
	ReasonFinishMarker = "finish_marker"
	ReasonNoHandoff    = "no_handoff"
	// ReasonMemberFailed: a swarm member's turn failed (and the failure was
	// recovered), so nobody holds the conversation.
	ReasonMemberFailed = "member_failed"

	// Observation statuses.
	StatusSuccess = "success"
	StatusError   = "error"
)

// Errors of the package: errors.Is(err, ErrTimeout) holds for every *Error of that
// type; the others are conditions of the agent and team API.
var (
	// Sentinel errors of the error types.
	ErrTimeout           = &Error{Type: TypeTimeout}
	ErrRateLimited       = &Error{Type: TypeRateLimited}
	ErrAuthDenied        = &Error{Type: TypeAuthDenied}
	ErrNotFound          = &Error{Type: TypeNotFound}
	ErrInvalidQuery      = &Error{Type: TypeInvalidQuery}
	ErrSourceUnavailable = &Error{Type: TypeSourceUnavailable}
	ErrStepLimit         = &Error{Type: TypeStepLimit}
	ErrCancelled         = &Error{Type: TypeCancelled}

	// Errors of the agent API that are not failures of a call.

	// ErrPending is returned when a session holds a suspended run of the agent and the
	// call asks for something else (a different prompt). Decide and call again, or
	// Discard the pending run.
	ErrPending = errors.New("agent has a run waiting for decisions")
	// ErrNoPending is returned by Decide when the agent has no run waiting.
	ErrNoPending = errors.New("agent has no run waiting for decisions")
	// ErrUnknownCall is returned by Decide for a tool-call id that is not pending.
	ErrUnknownCall = errors.New("no pending tool call with this id")

	// ErrGraphChanged is returned by ResumeFlow when the graph's definition differs from
	// the one the session was saved with.
	ErrGraphChanged = errors.New("graph definition changed since the session was saved")

	// ErrTeamSuspendedInNode is returned when a team called as a plain agent node of
	// another graph (through AsTask) suspends: that node cannot hold the team's place. Run
	// the team as a sub-graph (TeamAgent.Task) to suspend and resume with the enclosing
	// flow, or make it a member of a team.
	ErrTeamSuspendedInNode = errors.New("team suspended inside an agent node")
)
