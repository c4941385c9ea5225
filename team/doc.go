// Package team is flowteam's agent layer: the Agent interface and its flow-task
// adapter, chat models (an interface, an OpenAI-compatible HTTP client, and scripted
// models in testkit), SimpleAgent and ReActAgent with Go tools, human approval of tool
// calls (HITL), the agent session, the event stream, traces and metrics, and teams of
// agents (TeamAgent) that run as flow graphs.
//
// # Agents in graphs
//
// Any Agent is a flow task: AsTask adapts it, WithAgents registers agents on an engine
// by name so that `task: "@analyst"` runs one. The task reads the prompt from the
// node's meta (prompt, a template; promptKey, a variable), the task options, or the
// variable "prompt"; it writes the answer to meta answerKey or "<name>.answer". The
// agent reads and writes business data through its session's FlowContext, which is the
// run's context as seen from the node's branch:
//
//	eng := flow.NewEngine(team.WithAgents(testkit.Analyst(), writer))
//
// # Chat models
//
// ChatModel has one method, Chat; streaming is the optional StreamingModel
// (iter.Seq2[Delta, error]), and Accumulator/Collect assemble deltas. Usage reports
// prompt, completion, reasoning (think) and cached tokens. OpenAI speaks the
// chat-completions protocol over net/http, with tool calls, server-sent-event
// streaming and structured errors: 401/403 auth_denied, 404 not_found, 400 and other
// 4xx invalid_query, 429 rate_limited (retryable, honouring Retry-After; an exhausted
// quota is not retryable), 5xx source_unavailable (retryable), 408/504 and attempt
// timeouts timeout (retryable). An error object without an error status (in a 200
// response, or an error event in a stream) is classified by its code and type
// (rate_limit, insufficient_quota, auth, invalid_request) and is otherwise
// source_unavailable (retryable), like a 5xx. Retries are bounded by a RetryPolicy
// with exponential backoff; the sleeper and the clock are injectable so tests never
// sleep. A stream is retried like a request as long as the caller has seen nothing of
// the answer (an error event, a lost connection or a stream that ends early before
// the first token); after that, a failure ends the stream with the type of its cause
// and retryable false, whatever the cause, since a retry would hand the caller a
// second, different beginning of the answer (its message says "after part of the
// answer").
//
// # Tools, permissions and observations
//
// A Tool is a Go function with a Schema for its arguments (NewTool makes one from a
// typed function). The schema subset is documented on Schema: type, properties,
// required, additionalProperties: false, enum, items. Before a tool runs, the agent
// checks in this order: the tool exists, the Permission code allows the call (an
// allow-list or any predicate; never a sentence in the prompt), and the arguments
// validate. What the model sees is always a JSON Observation: {"status":"success",
// "result":...} (an empty result is a success) or {"status":"error","error":{"type",
// "retryable","message"}}, so "found nothing" and "could not look" never look alike.
// The calls of a batch run one after another in the model's order.
//
// # Human in the loop
//
// A tool is sensitive always (Always) or by a predicate on its arguments. When a batch
// holds a sensitive call without a decision, no call of the batch runs: the agent
// emits a HITLPending event and returns an Answer whose Pending lists the calls (id,
// name, arguments, comment); inside a flow the node suspends the run. Decisions are
// given per tool-call id with AgentSession.Decide (or DecideIn on stored variables):
// Approve, ApproveWithArgs (validated like the model's), ApproveAlways (later calls of
// the tool by this agent in this session need no decision), Reject (the model sees a
// rejected error with the comment), Skip (the model sees the substitute result). The
// next call (agent.Resume, or the resumed node) applies them to the same batch, with
// no model call before it runs, then the loop goes on. Calls that code refuses or
// whose arguments are invalid fail without asking anyone. A waiting run is resumed
// once: the call that resumes it takes it out of the session atomically, so a second
// resume at the same time (or after it) gets ErrNoPending and an approved call never
// runs twice; Decide while it runs gets ErrNoPending too. The last decision given for
// a call before the resume is the one applied. A resume does not fail the run, or
// drop the decisions and what they let run, when its context ends (cancelled,
// deadline) or a model call fails (a 5xx after the client's retries, a bad response)
// before the run's answer: the call returns that error (its RunEnd has status
// pending) and the run waits again, the calls that ran with their observations, the
// others with their decisions, so the next resume (or a Call with the run's prompt,
// or a retry of the node) goes on from there, asking the model again if need be,
// without asking anyone again and without running a call twice. Discard gives such a
// run up. (A run that fails would be started afresh by a retry: the human asked
// again, an approved, paid-once call run twice.) Across processes the session store's
// version check plays the same part (session.Runner.Resume: one winner, the others
// get session.ErrConflict). Sessions copied from one snapshot are independent: each
// holds its own waiting run, so decide in one of them only.
//
// # Sessions
//
// An AgentSession wraps a FlowContext. Each agent's state (conversation history, the
// run waiting for decisions, always-allowed tools, the trace of its last run) is kept
// in the context variables under stateKey(name), as plain data. Hence the session
// package's snapshots and stores (memory, file, Redis) carry agent state with the flow
// they belong to: session.Runner.Run suspends an instance at the agent node, and in
// another process runner.Load, PendingIn and DecideIn produce the updates that
// runner.Resume applies. For agents used without a graph, or to keep a flow's frontier
// with the session, MarshalSession/UnmarshalSession give the whole session as JSON
// (RunFlow and ResumeFlow record and continue the frontier). An agent run waiting at a
// node belongs to that node and to the flow run that left it there, and only that flow
// run's own execution of the node continues it: the one a resume makes where the run
// halted (ResumeFlow, a resume of the instance with session.Runner, Engine.Resume,
// also inside a sub-graph call the resume re-enters; flow's Context.Resumed says so),
// or a retry of the node by its retry policy (Context.Attempt above 1). Any other
// execution of an agent node discards the agent's waiting run and starts afresh on the
// question the variables hold now: a new evaluation (RunFlow, which also discards
// every such run first; EvalGraph or session.Runner.Run over a context that holds
// one), another node of the same agent, the same node in another branch (the next
// iteration of a loop whose body holds the node), or the same node reached again (a
// cycle, an error policy's goto). So a new question never resumes an old run's
// approved calls. (Solon, whose resume is a new evaluation of the graph, lets the
// agent's saved state decide; here a resume continues the frontier, and flow tells the
// node which execution it is.) A run started outside a graph (the agent called
// directly) waits anywhere: the first node of the agent continues it. A team's member
// node follows the same rule, and also continues the run its team's start node kept
// when its turn asks the run's question (a supervisor asked again may route it with
// another task: a new question): the start node discards its members' waiting runs
// unless the team retries its failed run (see Teams), which flow may do by calling
// the team's graph afresh, where no member's execution is a resumed one. A run
// that a failure left waiting (a model call failed after its approved batch) is for a
// retry of its node; once an error policy recovered that failure nobody retries it, so
// it leaves no pending entry: a team's engine (its Interceptor) discards it as the node
// ends (with the runs waiting inside a sub-graph the node called), a parallel team's
// merge discards the runs of members whose branch was withdrawn with its failure
// (branch policy continue), and RunFlow and ResumeFlow discard every run still waiting
// at a node when the flow run completes. (On an engine without the team's Interceptor,
// such a run shows in Pending, with no calls, until a node of the agent runs again, or
// RunFlow or ResumeFlow sees the flow run complete.) session.Runner, which knows no
// agents, discards nothing itself: give its engine DiscardStaleRuns, an interceptor
// that makes each run of the engine discard what RunFlow and ResumeFlow discard (the
// runs waiting at nodes when a new run starts, those still waiting when a run
// completes); else a new run leaves the runs waiting at nodes it never reaches listed
// in Pending. A run held for decisions keeps its run id and its trace, so its trace
// after the pause is the trace it would have had without it (plus the decisions), and
// Metrics.Duration counts the agent's active time, not the human's.
//
// The conversation history keeps each call's prompt and final answer, not the tool
// turns (WithHistoryLimit bounds it). Agent state is business data in the snapshot:
// redact or encrypt snapshots (session.WithRedaction, WithCipher) when prompts or tool
// results are sensitive. One agent must not run twice at once in one session.
//
// # Events, traces and interceptors
//
// Agents report Events to the Sink carried by their context (WithSink): run
// start/end, reason start/delta/end with durations and usage, action start/end, tool
// call start/end with the call, its observation and its duration, HITL pending and
// decided. Each event carries the run id and agent name and, inside a graph, the
// instance, node id, branch id, and the flow's run id as ParentRunID (Solon has no
// branch id on its events). Stream (and the agents' Stream methods) yield a call's
// events as an iter.Seq2[Event, error]; breaking the loop cancels the call and waits
// for it to return. Deltas are streamed only when someone listens and the model can
// stream.
//
// SimpleTrace and ReActTrace record runs (a ReActTrace as explicit reason, action and
// observation steps with durations, usage and decisions) with their Metrics: duration,
// model and tool calls, prompt, completion, think, cached and total tokens. A
// ReActInterceptor (embed NopReActInterceptor) observes agent, reason, action and tool
// calls.
//
// A human rejection and every retry the OpenAI client makes are reported with
// trace.Count (CountRejection, CountRetry) to the metrics sink of the run's context.
//
// # Teams
//
// A TeamAgent (NewTeam) is a team of agents that runs as a flow graph on the flow
// engine: each member is a node whose task is the member agent (AsTask), and the
// protocol shapes the graph around the members. Graph returns it (it exports like any
// graph; TaskNamer names its Go tasks for the document writers) and Engine the engine
// it runs on, so audits, flow interceptors, error and branch policies, session.Runner
// and every store apply to a team as to any graph. A graph adjuster
// (WithGraphAdjuster) edits the generated graph before it is built: a human approval
// node that suspends, a retry policy, a notification. A TeamAgent is an Agent: it can
// be a member of another team, where it runs as a sub-graph of its parent's graph
// ("#team.<name>") sharing the FlowContext, so a member waiting deep inside a nested
// team suspends the whole run and resumes at the exact place.
//
//	Sequential  start → m1 → m2 → … → end
//	Supervisor  start → supervisor → route ─(next == m)→ m → supervisor …; route ─default→ end
//	Swarm       start → route ─(next == m)→ m → route …; route ─default→ end
//	Parallel    start → fork (parallel) → m1 … mN → join → merge (coordinator) → end
//
// Decisions, where Solon leaves them open or differs:
//
//   - Max turns (WithMaxTurns) bounds every protocol, the sequential one included
//     (Solon skips it there): the members past the limit are skipped, with one
//     "finish" decision saying max_turns. Under Parallel it admits the first members in
//     member order, so which members run never depends on timing.
//   - The supervisor routes from a tool call (route or transfer_to, or a tool named
//     transfer_to_<member>) or from its text, in this order: a member's name, a
//     "route: <name>" line, the finish marker anywhere in it, the only member it
//     names (so "not finished yet" in prose does not override an explicit route
//     line). A decision it cannot resolve is
//     never guessed: it is recorded (RouteDecision.Unresolved, with the raw text) and
//     replaced by a defined fallback: finish with the last answer, or, with
//     WithDefaultMember, route to that member. WithLoopDetection finishes a supervisor
//     whose route would end in A-A or A-B-A-B (with n = 2).
//   - Swarm members hand over with TransferTool, or a "transfer_to: <member>" line; a
//     member that answers without handing over finishes. Handoffs are bounded
//     (SwarmMaxTransfers, default max turns - 1). A member whose failure an error
//     policy recovers finishes the swarm too (reason member_failed): routing back to
//     it would retry it outside any retry policy.
//   - A member that panics fails its turn like a member that returns an error (a
//     failed record, its NodeEnd, the protocol's routing), then the engine reports the
//     panic as any task panic (flow.ErrTaskPanic, with the stack). A chat model that
//     panics inside an agent fails that model call with agent_failed (the panic value
//     in the message, the stack in Error.Err), as a panicking tool fails its call: the
//     agent's run ends, traced and with its RunEnd event, instead of vanishing.
//   - Parallel members follow the fork's branch policy: fail-fast fails the team and
//     cancels the other members, whose turns are interrupted, not failed (as flow
//     ends their nodes): the trace records no turn of theirs, their NodeEnd says
//     interrupted (RunInterrupted), and the retry (a resume, a Call with the same
//     prompt) runs them like any interrupted node. The same holds for a member
//     cancelled because any other branch of the run, or of the sub-graph call it runs
//     in, failed, and for a member whose context the caller cancelled (the run fails
//     with the cancellation, and the member runs again on resume). (The team's
//     Interceptor follows flow's classification of the node: on an engine without
//     it, such a turn is recorded as failed.) A team run as a
//     sub-graph (a nested team, or Task) cut short so, by no failure of its own,
//     did not fail either: its run ends interrupted (TeamInterrupted, in its trace,
//     which keeps no error, its TeamEnd and OnTeamEnd, which gets the cause as
//     OnMemberEnd does for an interrupted turn), and goes on when flow runs its node
//     again (a TeamStart "resumed"), or is retried like a failed run when flow calls
//     its graph again. A team used as a plain agent node of another graph (AsTask,
//     "@crew") whose node's context ended so (a fail-fast sibling, the caller's
//     cancellation), by no failure of its own, is interrupted too, and so is its
//     member's turn: flow ends the node INTERRUPTED, and the node's resume (or
//     retry) retries the team's run as flow's call of a failed Task team does, under
//     a new run id (the node's run keeps no frames inside it): a member that
//     answered replays its answer, the one cut short runs. (The team cannot tell a
//     node context of an interceptor's own that ends, a deadline per node, from the
//     run's: flow fails that node, the team's run says interrupted, and the node's
//     retry retries it the same.) A root team called by user code (Call, Stream)
//     whose context the caller cancelled, or a team whose own member failed fast,
//     fails. Branch policy continue lets the other members
//     finish, and the coordinator reports the failed member as a gap ("[m] failed:
//     …") instead of leaving it out. Members that are sub-agents (a SubResult, or
//     failed tool calls RecordToolCalls kept) get coverage notes at the end of the
//     merge, and an empty success that failed searches contradict is marked as a gap
//     where it stands. A custom merge (ParallelMerge) replaces all of that;
//     ParallelMergeWithCoverage hands it the notes.
//   - The team's answer is the last member's answer, or the answer a supervisor gives
//     when finishing with the route tool, or the coordinator's merge; WithAnswerFrom
//     names the member whose last answer it is. When that member's last turn failed
//     and an error policy recovered the failure (so the team completes), the answer
//     is the last answer given before, followed by a note "[member] failed: <error>"
//     (the note alone when nobody answered): an earlier member's answer is never
//     presented as the team's without saying that the member who should have
//     answered failed.
//
// A team keeps its state in context variables named from its name: "_team.<name>"
// (its trace), "_team.<name>.input", "_team.<name>.next" (the router's),
// "_team.<name>.prompt.<member>" and "_team.<name>:turns". NewTeam refuses a name
// that ends with ".input", ".next" or ".prompt", or contains ".prompt.": only such a
// name can give a variable of another team (the one whose name it extends), and two
// teams over one context (a nested team, two teams in one graph) would overwrite
// each other's state. The variables keep the names snapshots already hold.
//
// The TeamTrace (TraceIn, TraceOf) is plain data in the FlowContext under
// traceKey(name): records (kind, role, source member, content, status, duration,
// tokens), the route, every decision and the last one, the turn count, the protocol's
// state, the final answer and the metrics of the supervisor and of each member (think
// tokens included), summed into the team's. A session snapshot carries it, so a team
// suspended by a member's HITL request or by an approval node resumes in another
// process (Call or Resume on a restored AgentSession; session.Runner.Resume on the
// team's Engine) and ends with the trace it would have had without the pause: the
// same run id, records, decisions and metrics; only times differ. After a failure,
// calling again with the same prompt retries from the failed node; a new run (another
// prompt) starts its members afresh, discarding member runs the failed run left
// waiting for decisions. Where the failed node is the call of a nested team (or of a
// team run as a sub-graph with Task), flow calls the team's graph again from its
// start, and a team used as a plain agent node (AsTask) is evaluated again; the team,
// started again on the same question in the same place by the resume (or the retry)
// of that node, retries its failed (or interrupted) run (under a new run id).
// The member whose failure kept its run waiting goes on with it, so an approved call
// still runs once and nobody is asked again; and a member turn that ended with an
// answer in the failed run (or in a run it retried) is replayed when the retry asks
// that member the same question at the same node and branch: the recorded answer is
// the turn's answer, with no model call, no tool call and no approval request. A
// supervisor is asked again: a member it routes with the same task replays, one it
// routes with another task (a new question) runs. A nested team whose run ended with
// its answer in the failed call is replayed as one turn: its graph is called and ends
// at once, leaving the nested team's trace as it was. A replayed turn emits no events
// and calls no team hooks (the stream and the interceptors saw it in the failed call,
// and the stream never shows a member working twice; flow's own records, an audit
// for one, still show the member's node executing, as it did, to give the recorded
// answer); the trace records it as it was (the member's run id, answer, usage and
// duration) and counts its metrics once, so the retried run's trace is the one it
// would have had without the failure. What the replay needs (a log of the answered
// turns of a team run as a sub-graph or in an agent node, "_team.<name>:turns",
// dropped when the run can no longer be retried: it completes, its parent's run
// completes, or an error policy recovers its call (a Task's, or a nested team's:
// the team's Interceptor sees it; an agent node's log stays until the team runs
// again there or a flow run of RunFlow, ResumeFlow or DiscardStaleRuns ends); RunFlow and ResumeFlow, and an engine with
// DiscardStaleRuns, also drop every turn log when a new flow run starts over the
// context, which retries no earlier run even where it never reaches the team's
// node, and when a flow run completes) is kept in the context variables with the team's trace,
// so a retry in another process (a restored snapshot) replays too. A member's failed
// turn whose failure an error policy recovered (the team's Interceptor notes it) is
// replayed too: the node fails again with the recorded error, without running the
// member, for the policy to recover again, so the failed run's approved calls do not
// run again.
// A failure that ended the run is not replayed (its member goes on with the run it
// kept, or starts afresh), nor is a nested team's failure, nor a parallel member's
// failure withdrawn by the fork's branch policy. (A team run with Task learns that
// the call resumes or retries its node from Interceptor(), which the enclosing engine
// then needs.) A new evaluation of the team's graph, or of a graph that calls it,
// starts the members afresh even on the same question, and replays nothing; so does
// a new execution of a nested team's node in the same run of its parent (the parent
// routes it again after an error policy recovered its failure: a new turn, which a
// member would also run afresh).
//
// A team's events are those of its members framed by its own: TeamStart, then per
// member turn NodeStart … NodeEnd with the member's events between them, the
// supervisor's ReasonStart/ReasonDelta/ReasonEnd (Agent is the team) and a Decision
// per routing decision, then TeamEnd. Every event carries the run id, the parent run
// id, the branch id and the agent. The team's run id is its own and survives pauses;
// a member run's parent is the team run, a nested team's parent its parent team's
// run, and a root team's parent the flow run. TeamEnd is emitted whenever a run stops
// being active, completed or not (status failed, interrupted, suspended or stopped),
// and a resumed run starts with a TeamStart "resumed", so every start has its end in
// each process; a nested team emits its own TeamEnd (Solon does not). Parallel
// members' events interleave; group them by Branch.
//
// TeamInterceptor (WithTeamInterceptor) adds team hooks to the flow hooks: team start
// and end, the supervisor's continue check, model start and end, decision, and each
// member's continue check, start and end (OnMemberStart/OnMemberEnd, Solon's
// onAgentStart/onAgentEnd, renamed so one type can also be a ReActInterceptor).
//
// The team's nodes keep its trace; its engine also carries Interceptor(), which ends
// the events of runs that did not reach the end node, starts resumed runs, and frames
// nested teams' nodes. Running the team's graph on another engine (Task, a sub-graph
// of another graph) needs Interceptor() on that engine for those. A team used as a
// plain agent node of another graph (AsTask) runs on a copy of the node's context and
// cannot suspend there (ErrTeamSuspendedInNode); use Task for that.
//
// # Where flowteam differs from Solon, on purpose
//
//   - HITL holds the model's whole batch of tool calls, not one call: nothing of a
//     batch runs until every sensitive call in it has a decision, and resuming runs
//     that same batch (same call ids) before the model is asked anything.
//   - A tool result is always a structured observation; an error has a type and a
//     retryable flag, so the model (and a coordinator) can tell "nothing found" from
//     "could not look".
//   - Tool permissions and sensitivity are code (predicates, allow-lists), checked
//     before a human is asked.
//   - Agent state is business state in the FlowContext, so a flow snapshot carries it
//     and any session store resumes an agent in a new process.
//   - Events carry a branch id and the parent run id; Solon's have neither.
//
// # Templates
//
// Instructions and prompt templates are text/template over the FlowContext variables
// (`{{.customer}}`), failing on a missing key. Functions: var "name" reads any
// variable, dotted names and loop items included, and fails when it is unset; has
// "name" tells whether it is set; prompt is the call's prompt (in instructions); json
// encodes a value.
//
// # Errors
//
// Failures are *Error values with a type (timeout, rate_limited, auth_denied,
// not_found, invalid_query, source_unavailable, step_limit, cancelled, ...), a
// retryable flag and a message; errors.Is(err, ErrRateLimited) matches by type. In a
// graph the type is the failed node's code and a retryable error is retried by the
// node's retry policy (flow reads Retryable()). An agent cut short by its context's
// end fails with cancelled (or timeout) whose chain holds the context's error, also
// when the caller gave a cause (context.WithCancelCause; the message and the chain
// keep it too): that is how flow tells a cut node (INTERRUPTED) from a failed one.
//
// # Sub-agent results and coverage notes
//
// A coordinator that fans a question out to sub-agents must be able to tell "could not
// look" from "found nothing", keep going when one sub-task fails, and say where the
// gaps are. A sub-agent therefore reports a SubResult, never a bare string: status
// success (Results is the answer, and an empty list is a valid answer), error or
// partial_failure (an error with PartialResults), the error type (timeout,
// rate_limited, auth_denied, not_found, invalid_query, source_unavailable), whether a
// retry may help, what was attempted (query, source, attempts, the outcome of each)
// and alternatives. Its JSON is the seeds' wire format (snake_case field names, as a
// coordinator model reads it in a prompt), and it travels through the FlowContext and
// session snapshots as plain data: SubResultOf reads it back in any form.
//
// Only a success with an empty list says "none exist". An error of type not_found is
// a failure the source reported (a missing index, endpoint or record), not a completed
// search: its coverage note is a gap that names not_found, and never claims absence. A
// search that ran and matched nothing must return an empty list, not an error.
//
// SubAgent runs a search-like function (query → results, error) as an Agent: it
// retries retryable failures locally with bounded exponential backoff (RetryPolicy,
// an optional per-attempt timeout and a total budget; the sleeper and the clock are
// injectable), records every attempt, and reports only what it could not resolve. It
// never turns an error into an empty success. As a graph node it writes its SubResult
// to ResultKey(name) and, when it could not resolve a failure, also fails the node
// with the structured *Error, so the failure is an ExecutionError record and an audit
// FAILED record (unless its context ended: that error, cancelled or timeout, holds
// the context's, and flow interrupts the node, which runs again on resume, as it
// does any agent's): put sub-agents behind a parallel gateway with branchPolicy
// "continue" (or give their nodes an onError policy) so the other sub-tasks go on.
//
// A sub-agent that swallows an error and reports an empty success is found out by
// evidence it does not control: the tool calls made during its run. RecordToolCalls
// wraps any agent so that the tool-call events of its run (and of agents it calls)
// are kept, per agent, in the FlowContext under toolCallsKey(name); the ReActTrace a
// ReActAgent keeps in the session is a second source (ToolCallsOfTrace). Both are
// plain data in the context, so they survive a session snapshot and a restore in
// another process, which events alone would not. A call a human skipped (Skip) is
// recorded as failed with type skipped, although the model saw the substitute as a
// success: the tool did not run, so an empty substitute is not "none exist".
//
// After the join, GatherSubTasks collects for each sub-task its report (the value at
// ResultKey, else the agent's answer parsed as a SubResult), its tool calls and its
// node failure (the last execution error record of its node, under the key
// flow.Context.ErrorKey names, so an engine with flow.WithErrorKey is read right), and
// NewCoverage classifies each one:
//
//   - well supported: success with results;
//   - valid empty ("searched, none exist"): success with no results, and no failed
//     tool call that a later identical call did not resolve;
//   - gap: an access failure (with what was tried, the attempts, the error type,
//     partial results and alternatives), a reported empty success contradicted by
//     failed tool calls or by its own attempts (a query whose every recorded attempt
//     failed; the note says so and never claims absence), a sub-agent that
//     failed without a report, an inconsistent report, or no report at all.
//
// Coverage.Markdown renders the "## Coverage notes" section a coordinator appends to
// its report.
package team
