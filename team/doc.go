// Package team runs AI agents and teams of agents on the flow engine: the Agent
// interface, chat models (ChatModel), SimpleAgent and ReActAgent with Go tools,
// human approval of tool calls, the AgentSession that keeps agent state in a
// FlowContext, the event stream, and TeamAgent, a team whose protocol is a flow
// graph. Sub-agents that report structured results and coverage notes are in
// package team/subagent.
//
// A ReAct agent with one tool:
//
//	stock := team.NewTool("stock", "Units in stock for a SKU",
//		nil, // the schema is inferred from the argument type
//		func(ctx context.Context, a struct {
//			SKU string `json:"sku" jsonschema:"stock keeping unit"`
//		}) (int, error) {
//			return 12, nil
//		})
//	agent, err := team.NewReActAgent("clerk", model, team.WithTools(stock))
//	if err != nil {
//		return err
//	}
//	ans, err := agent.Call(ctx, "How many A-1?", team.NewSession("s-1"))
//
// The model is any ChatModel: the OpenAI client of package team/openai, or the
// scripted models of package testkit in tests.
//
// # Agents in graphs
//
// Every Agent is a flow task: WithAgents registers agents on an engine, so that a
// node with task "@clerk" runs one (AsTask adapts one with options). The node's meta
// gives the prompt (MetaPrompt, a template; MetaPromptKey, a variable) and where the
// answer goes (MetaAnswerKey, else "<name>.answer"). The agent reads and writes
// business data through its session's FlowContext, the run's context as seen from
// the node's branch:
//
//	eng := flow.NewEngine(team.WithAgents(agent))
//
// # Tools and human approval
//
// A Tool is a Go function with a JSON Schema for its arguments (a jsonschema.Schema of
// github.com/google/jsonschema-go; NewTool infers it from the argument type). Before
// a tool runs, the agent checks that the tool exists, that the Permission allows the
// call, and that the arguments validate. What the model sees is always a JSON
// Observation, success or a typed error, so "found nothing" and "could not look"
// never look alike. A sensitive tool (Tool.Sensitive) holds the model's whole batch
// of calls until a human decides (AgentSession.Decide with Approve, Reject, Skip, ...); the next call
// (ReActAgent.Resume, or the resumed node) runs that same batch.
//
// # Sessions
//
// An AgentSession wraps a FlowContext: each agent's history, waiting run and trace
// are plain data in its variables, so the session package's snapshots and stores
// carry them with the flow, and a run suspended for a decision resumes in another
// process. MarshalSession and UnmarshalSession give a whole session as JSON for
// agents used without a graph. Agent state is business data in the snapshot:
// redact or encrypt snapshots when prompts or tool results are sensitive.
//
// # Teams
//
// NewTeam builds a TeamAgent from members and a Protocol (Sequential, Supervisor,
// Swarm, Parallel). The team is a flow graph (TeamAgent.Graph) run on its own
// engine (TeamAgent.Engine), so audits, interceptors, error and branch policies and
// session stores apply to it as to any graph; a team is an Agent too, so it can be a
// member of another team. Its collaboration record is a TeamTrace (TeamAgent.Trace):
//
//	desk, err := team.NewTeam("desk", team.WithMembers(researcher, writer),
//		team.WithProtocol(team.Supervisor), team.WithSupervisorModel(model))
//
// # Events or interceptors
//
// Use the event stream (Stream, or WithSink on a context) to show or record what a
// run does: every event carries the run id, the parent run id, the agent and, in a
// graph, the node and branch, and a team's events frame its members'. Use a
// TeamInterceptor (WithInterceptor, on a team or an agent) to act on a run in code:
// its Should hooks stop a supervisor or skip a member, and as a flow.Interceptor it
// sees every node (the audit's five statuses come from there).
//
// What a task of the graph publishes (flow.Context.Publish, a Solon script's
// context.eventBus().send(topic, payload)) comes on the stream as an EventFlow
// event with its topic, payload, node and branch: in a team's graph as the team
// run's, on another engine once FlowEvents is among its interceptors.
//
// # Errors
//
// Failures are *Error values with a type (timeout, rate_limited, auth_denied,
// not_found, invalid_query, source_unavailable, ...), a retryable flag and a
// message; errors.Is(err, ErrRateLimited) matches by type. In a graph the type is
// the failed node's code, and flow's retry policy retries what is retryable. An
// agent cut short by its context fails with cancelled or timeout wrapping the
// context's error, which is how flow tells an interrupted node from a failed one.
//
// # Sub-agents and coverage
//
// Package team/subagent is the one entry point for the coordinator/sub-agent
// discipline: subagent.SubAgent runs a search as an Agent, retries transient
// failures with a flow.RetryPolicy and reports a SubResult in which an empty success
// means "none exist" and an error says what was tried; subagent.Notes, given to a
// parallel team with WithMergeNotes, makes its coordinator end with coverage notes
// that tell "none exist" from "could not look".
package team
