package team

import (
	"github.com/flowteam/flowteam/flow"
)

// teamConfig is what only teams take.
type teamConfig struct {
	members     []Agent
	proto       Protocol
	parallel    parallel
	swarm       swarm
	adjusters   []func(*flow.GraphSpec)
	maxTurns    int
	finish      string
	model       ChatModel
	fallback    string
	loopRepeats int
	engineOpts  []flow.Option
	graphID     string
	prompt      func(tr *TeamTrace, member Agent, task string) string
	answerFrom  string
}

// defaultMaxTurns bounds the member turns of a team run when WithMaxTurns is not given
// (a team with more members gets one turn per member).
const defaultMaxTurns = 10

// defaultFinishMarker is the text a supervisor (or a swarm member) answers to finish
// the team's work.
const defaultFinishMarker = "FINISH"

// WithMembers adds members: any Agent, other teams included (a *TeamAgent member runs
// as a sub-graph of the team's graph). Member names must be unique within the team.
func WithMembers(agents ...Agent) Option {
	return teamOption("WithMembers", func(c *teamConfig) { c.members = append(c.members, agents...) })
}

// WithProtocol sets how the members take turns (default Sequential).
func WithProtocol(p Protocol) Option {
	return teamOption("WithProtocol", func(c *teamConfig) { c.proto = p })
}

// WithGraphAdjuster edits the graph the protocol generated before it is built: add
// nodes and links (a human approval node that suspends, a notification), change
// meta (a retry policy, a branch policy). Adjusters run in the order given; the graph
// must still build.
func WithGraphAdjuster(fn func(spec *flow.GraphSpec)) Option {
	return teamOption("WithGraphAdjuster", func(c *teamConfig) { c.adjusters = append(c.adjusters, fn) })
}

// WithMaxTurns bounds the member turns of one team run, under every protocol (Solon
// does not apply it to its sequential protocol; we do). The members past the
// limit are skipped, with one "finish" decision saying max_turns. The default is
// 10, or the number of members if greater.
func WithMaxTurns(n int) Option {
	return teamOption("WithMaxTurns", func(c *teamConfig) { c.maxTurns = n })
}

// WithFinishMarker sets the text that finishes the team's work when the supervisor
// (or, in a swarm, a member) answers with it (default "FINISH").
func WithFinishMarker(marker string) Option {
	return teamOption("WithFinishMarker", func(c *teamConfig) { c.finish = marker })
}

// WithSupervisorModel sets the model of the supervisor (Supervisor protocol, where it
// is required) or of the coordinator that merges a Parallel team's answers (optional:
// without it the answers are concatenated).
func WithSupervisorModel(m ChatModel) Option {
	return teamOption("WithSupervisorModel", func(c *teamConfig) { c.model = m })
}

// WithDefaultMember makes an unresolvable routing decision (the supervisor named no
// member, or a swarm member handed over to a stranger) route to the named member
// instead of finishing with the last answer, which is the default fallback. The
// decision is recorded with Unresolved set either way.
func WithDefaultMember(name string) Option {
	return teamOption("WithDefaultMember", func(c *teamConfig) { c.fallback = name })
}

// WithLoopDetection makes the supervisor finish instead of routing when the route
// would end in the same member repeated n times (A-A for n = 2) or the same two
// members alternating n times (A-B-A-B for n = 2). 0 (the default) disables it; max
// turns bound the run either way.
func WithLoopDetection(n int) Option {
	return teamOption("WithLoopDetection", func(c *teamConfig) { c.loopRepeats = n })
}

// WithEngineOptions passes options to the team's flow engine: flow interceptors such
// as an audit, the branch policy, concurrency and step limits, an error policy.
func WithEngineOptions(opts ...flow.Option) Option {
	return teamOption("WithEngineOptions", func(c *teamConfig) { c.engineOpts = append(c.engineOpts, opts...) })
}

// WithMemberPrompt replaces how a member's prompt is built from the trace (the team's
// prompt, the records so far), the member, and the task the supervisor gave it (""
// if none). The default gives the team's prompt, the completed turns so far as
// "[member] answer" lines (not under Parallel, whose members run at once), and the
// task.
func WithMemberPrompt(fn func(tr *TeamTrace, member Agent, task string) string) Option {
	return teamOption("WithMemberPrompt", func(c *teamConfig) { c.prompt = fn })
}

// WithAnswerFrom makes the team's answer the last answer of the named member (a
// writer whose work a reviewer only approves) instead of the last member's, unless a
// supervisor or coordinator gives one explicitly. If the member never answered, the
// last member's answer stands. When the member's last turn failed and an error
// policy recovered the failure (so the team completes), the answer is the last one
// given before, followed by "[member] failed: <error>": an earlier answer is never
// presented as the team's without saying that the member who should have answered
// failed.
func WithAnswerFrom(member string) Option {
	return teamOption("WithAnswerFrom", func(c *teamConfig) { c.answerFrom = member })
}
