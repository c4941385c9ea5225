package team

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flowteam/flowteam/flow"
)

// Protocol names how a team's members take turns (WithProtocol): it shapes the
// team's graph and routes between its nodes. The set is closed; a team whose shape
// differs edits the generated graph with WithGraphAdjuster.
type Protocol string

// The protocols.
const (
	// Sequential is the protocol in which each member takes one turn, in the order
	// given, with no model deciding anything: start → m1 → m2 → … → end. Each member sees
	// the answers before it. Max turns applies: the members after the limit are skipped
	// (one "finish" decision with reason max_turns records it). The team's answer is the
	// last member's answer; if the last member failed and an error policy recovered the
	// failure, it is the answer before it followed by a "[member] failed: …" note.
	Sequential Protocol = "sequential"

	// Supervisor is the hierarchical protocol: a supervisor model (WithSupervisorModel)
	// picks the member that acts next, or finishes. The graph is start → supervisor →
	// route (an exclusive gateway) → one member → supervisor → …, and route's default link
	// goes to end:
	//
	//	start → supervisor → route ─┬─ (next == "a") → a ─┐
	//	            ↑               ├─ (next == "b") → b ─┤
	//	            └───────────────┴───────────────────────┘   route ── default → end
	//
	// The supervisor is given the members (name and role), the task and the work so far,
	// and the tool route {"to", "task", "answer"}. Its decision is read, in this order,
	// from a tool call (route or transfer_to with "to", or a tool named
	// "transfer_to_<member>"), else from its text: the finish marker finishes; a text that
	// is a member's name (ignoring case, quotes and punctuation), a "route: <name>" line,
	// or that names exactly one member routes to it. Finishing via the tool with an
	// "answer" makes that the team's answer; otherwise the team's answer is the last
	// member's answer (or the last answer of the member named with WithAnswerFrom).
	//
	// A decision that names no member, or several, is unresolvable: it is recorded (a
	// RouteDecision with Unresolved, Raw holding the text, reason "unresolved", source
	// "fallback") and replaced by the fallback, which is to finish with the last answer,
	// or, with WithDefaultMember, to route to that member.
	//
	// Before asking the model the supervisor checks, in order, its interceptors
	// (ShouldSupervisorContinue) and max turns; with WithLoopDetection a route that would
	// complete a loop (A-A, A-B-A-B) finishes instead. Each of these is a "finish"
	// decision with source "rule" and its reason, without a model call when taken before.
	Supervisor Protocol = "supervisor"

	// Swarm is the handoff protocol: one member holds the conversation and either
	// answers, which finishes the team's work with its answer, or hands over to another
	// member, which then holds it. The graph is start → route (an exclusive gateway) → the
	// member named by the last handoff → route → …, and route's default link goes to end.
	//
	// A member hands over with TransferTool (give it to the members' ReActAgents), or by
	// writing a line "transfer_to: <member>" in its answer (any agent can). A member that
	// answers with the finish marker finishes. Handoffs are bounded by max turns
	// (a run of n turns makes n-1 handoffs); past it the team finishes with the last
	// answer (reason max_turns). A
	// handoff to someone who is not a member is unresolvable: recorded with Unresolved,
	// then the fallback (finish, or WithDefaultMember). A member whose turn fails hands
	// over to nobody: when an error policy recovers the failure, the team finishes with
	// the last answer (reason member_failed) rather than call the failed member again;
	// retrying it is the node's retry policy's business.
	Swarm Protocol = "swarm"

	// Parallel is the protocol in which every member takes its turn at once, on a
	// parallel gateway: start → fork → members → join → merge → end. The merge node is
	// the coordinator: with a supervisor model (WithSupervisorModel) it asks the model to
	// merge the answers, else it concatenates them as "[member] answer" sections, failed
	// and skipped members included (WithMerge replaces it, WithMergeNotes adds to it).
	// A failing member follows the branch policy (WithBranchPolicy): fail-fast (the
	// default) fails the team and cancels the others; continue lets the others finish and
	// the merge see the failure (and flow's KeyBranchFailures); if every member fails the
	// team fails. The members fail-fast cancels are interrupted, not failed (as flow ends
	// their nodes): the trace records no turn of theirs, their NodeEnd says
	// RunInterrupted, and a retry (a resume, a Call with the same prompt) runs them like
	// any interrupted node. Max turns admits the first members in member order, so which
	// members run never depends on timing.
	Parallel Protocol = "parallel"
)

// protocol drives a team's protocol.
type protocol interface {
	// Name names the protocol in the graph's meta and the trace.
	Name() string
	check(t *TeamAgent) error
	build(t *TeamAgent, spec *flow.GraphSpec) error
	// start sets up the trace of a new run (the first member to act, for a router).
	start(t *TeamAgent, tr *TeamTrace)
	// afterMember routes after a member's completed turn (nil: no decision).
	afterMember(t *TeamAgent, tr *TeamTrace, member string, ans *Answer, ho *handoff) *RouteDecision
	// afterSkip handles a member turn that was not taken.
	afterSkip(t *TeamAgent, tr *TeamTrace, member, reason string) *RouteDecision
	// afterFailure routes after a member's failed turn (nil: no decision). It matters
	// only when the failure is recovered (an error policy); a fatal one ends the run.
	afterFailure(t *TeamAgent, tr *TeamTrace, member string) *RouteDecision
	// concurrent reports whether the members run at once.
	concurrent() bool
}

// newProtocol returns the protocol c names, with the options that configure it; an
// option of another protocol is an error.
func newProtocol(c *teamConfig) (protocol, error) {
	var fail flow.BranchPolicy
	if c.proto != Parallel && (c.parallel.policy != fail || c.parallel.merge != nil || c.parallel.notes != nil) {
		return nil, fmt.Errorf("WithBranchPolicy, WithMerge and WithMergeNotes are options of the parallel protocol, not %s", c.proto)
	}
	if c.proto != Swarm && c.swarm != (swarm{}) {
		return nil, fmt.Errorf("WithEntryMember is an option of the swarm protocol, not %s", c.proto)
	}
	switch c.proto {
	case Sequential:
		return sequential{}, nil
	case Supervisor:
		return supervisor{}, nil
	case Swarm:
		s := c.swarm
		return &s, nil
	case Parallel:
		p := c.parallel
		return &p, nil
	}
	return nil, fmt.Errorf("unknown protocol %q", c.proto)
}

// routeCond is the condition of the router's link to a member node.
func (t *TeamAgent) routeCond(member string) string {
	return fmt.Sprintf("context.get(%q) == %q", t.nextKey(), member)
}

// countSkip counts a turn an interceptor skipped, so that a supervisor that keeps
// choosing a refused member still reaches max turns.
func countSkip(tr *TeamTrace, reason string) {
	if reason == ReasonInterceptor {
		tr.Turns++
		tr.Records[len(tr.Records)-1].Turn = tr.Turns
	}
}

// --- sequential ---

type sequential struct{}

func (sequential) Name() string                 { return "sequential" }
func (sequential) check(*TeamAgent) error       { return nil }
func (sequential) start(*TeamAgent, *TeamTrace) {}
func (sequential) concurrent() bool             { return false }

func (sequential) build(t *TeamAgent, spec *flow.GraphSpec) error {
	prev := spec.NodeByID(TeamNodeStart)
	for i, m := range t.members {
		prev.LinkTo(m.Name())
		prev = t.memberNode(spec, i, m)
	}
	prev.LinkTo(TeamNodeEnd)
	return nil
}

func (sequential) afterMember(*TeamAgent, *TeamTrace, string, *Answer, *handoff) *RouteDecision {
	return nil
}

func (sequential) afterFailure(*TeamAgent, *TeamTrace, string) *RouteDecision { return nil }

func (sequential) afterSkip(_ *TeamAgent, tr *TeamTrace, _, reason string) *RouteDecision {
	countSkip(tr, reason)
	if reason != ReasonMaxTurns || tr.State.Halt != "" {
		return nil
	}
	tr.State.Halt = reason
	d := RouteDecision{Turn: tr.Turns, Action: ActionFinish, Source: SourceRule, Reason: reason}
	tr.decide(d)
	return &d
}

// --- parallel ---

type parallel struct {
	policy flow.BranchPolicy
	merge  func(ctx context.Context, c *flow.Context, tr *TeamTrace) (string, error)
	notes  func(c *flow.Context, tr *TeamTrace, members []Agent) (byMember map[string]string, end string)
}

// WithBranchPolicy sets what a failing member of a Parallel team does to the others
// (the fork's branchPolicy meta): flow.FailFast (the default) or
// flow.ContinueOnError.
func WithBranchPolicy(bp flow.BranchPolicy) Option {
	return teamOption("WithBranchPolicy", func(c *teamConfig) { c.parallel.policy = bp })
}

// WithMerge replaces the coordinator's merge of a Parallel team: fn gets the run's
// context and the trace with every member's record, and returns the team's answer.
func WithMerge(fn func(ctx context.Context, c *flow.Context, tr *TeamTrace) (string, error)) Option {
	return teamOption("WithMerge", func(c *teamConfig) { c.parallel.merge = fn })
}

// WithMergeNotes adds notes to the coordinator's merge of a Parallel team: fn returns
// a note per member,
// which follows the member's answer, and notes that end the merge (a model merging
// the answers is told to end with them). With subagent.Notes they are the coverage
// notes of the members that are sub-agents, so that a source that could not be
// searched is never reported as holding nothing.
func WithMergeNotes(fn func(c *flow.Context, tr *TeamTrace, members []Agent) (byMember map[string]string, end string)) Option {
	return teamOption("WithMergeNotes", func(c *teamConfig) { c.parallel.notes = fn })
}

func (p *parallel) Name() string                 { return "parallel" }
func (p *parallel) check(*TeamAgent) error       { return nil }
func (p *parallel) start(*TeamAgent, *TeamTrace) {}
func (p *parallel) concurrent() bool             { return true }

func (p *parallel) build(t *TeamAgent, spec *flow.GraphSpec) error {
	spec.NodeByID(TeamNodeStart).LinkTo(TeamNodeFork)
	fork := spec.Parallel(TeamNodeFork).SetMeta(flow.MetaBranchPolicy, p.policy.String())
	for i, m := range t.members {
		fork.LinkTo(m.Name())
		t.memberNode(spec, i, m).LinkTo(TeamNodeJoin)
	}
	spec.Parallel(TeamNodeJoin).LinkTo(TeamNodeMerge)
	spec.Activity(TeamNodeMerge).SetTitle("coordinator").SetMeta(MetaAgent, t.name).Do(&mergeTask{t: t, p: p}).LinkTo(TeamNodeEnd)
	return nil
}

func (p *parallel) afterMember(*TeamAgent, *TeamTrace, string, *Answer, *handoff) *RouteDecision {
	return nil
}

func (p *parallel) afterFailure(*TeamAgent, *TeamTrace, string) *RouteDecision { return nil }

func (p *parallel) afterSkip(_ *TeamAgent, tr *TeamTrace, _, reason string) *RouteDecision {
	countSkip(tr, reason)
	return nil
}

// mergeTask is the coordinator of a parallel team.
type mergeTask struct {
	t *TeamAgent
	p *parallel
}

// AgentName names the team for the audit.
func (mt *mergeTask) AgentName() string { return mt.t.name }

// Run merges the members' answers into the team's answer.
func (mt *mergeTask) Run(ctx context.Context, c *flow.Context, n *flow.Node) error {
	t := mt.t
	// The join fired: every member's branch reached it, or was withdrawn with its
	// failure (branch policy continue). A member run still waiting was kept by that
	// failure for a retry of its node that will not come: left there it would be a
	// pending entry with nothing to decide, named in place of whoever the team waits
	// for next.
	prefix := c.BranchID() + "/"
	SessionOf(c).discardRuns(func(r *pendingRun) bool {
		return t.hasMember(r.Info.Node) && strings.HasPrefix(r.Info.Branch, prefix)
	})
	tr := t.trace(c)
	latest := latestByMember(tr)
	var (
		notes map[string]string
		end   string
	)
	if mt.p.notes != nil {
		notes, end = mt.p.notes(c, tr, t.members)
	}
	began := time.Now()
	var (
		answer string
		usage  *Usage
		err    error
	)
	switch {
	case mt.p.merge != nil:
		answer, err = mt.p.merge(ctx, c, tr)
	case t.cfg.model != nil:
		var b strings.Builder
		b.WriteString("Task: " + tr.Prompt + "\n\nAnswers of the members:")
		for _, m := range t.names {
			b.WriteString("\n" + describeCovered(m, latest[m], notes))
		}
		sys := fmt.Sprintf("You are the coordinator of the team %q. Merge the members' answers into one answer to the task. Say which members failed or did not answer.", t.name)
		if end != "" {
			b.WriteString("\n\n" + end)
			sys += " End with the notes given: never report that a member whose note says it could not search found nothing."
		}
		req := &ChatRequest{Messages: []Message{
			SystemMessage(sys),
			UserMessage(b.String()),
		}, Options: t.cfg.options}
		var resp *ChatResponse
		resp, err = t.modelCall(ctx, c, n, tr, req)
		if err == nil {
			answer, usage = resp.Message.Content, &resp.Usage
		}
	default:
		parts := make([]string, 0, len(t.names))
		for _, m := range t.names {
			parts = append(parts, describeCovered(m, latest[m], notes))
		}
		if end != "" {
			parts = append(parts, strings.TrimSuffix(end, "\n"))
		}
		answer = strings.Join(parts, "\n\n")
	}
	if err != nil {
		return fmt.Errorf("team %q: merge: %w", t.name, err)
	}
	d := time.Since(began)
	t.update(c, func(tr *TeamTrace) {
		rec := TeamRecord{Turn: tr.Turns, Kind: RecordCoordinator, Role: RecordCoordinator, Source: RecordCoordinator,
			Node: n.ID, Branch: c.BranchID(), Content: answer, Status: RunCompleted, Started: began, Duration: d}
		if usage != nil {
			rec.Usage = *usage
			tr.addSupervisor(*usage)
		}
		tr.Records = append(tr.Records, rec)
		tr.FinalAnswer = answer
	})
	return nil
}

// latestByMember returns each member's last record.
func latestByMember(tr *TeamTrace) map[string]TeamRecord {
	out := map[string]TeamRecord{}
	for _, r := range tr.Records {
		if r.Kind == RecordMember {
			out[r.Source] = r
		}
	}
	return out
}

// describeCovered renders a member's record for a merge, with the member's note
// after an answer (an empty success after failed searches carries its gap note, so
// the answer is never read as "none exist").
func describeCovered(member string, r TeamRecord, notes map[string]string) string {
	s := describeRecord(member, r)
	if n, ok := notes[member]; ok && r.Status == RunCompleted {
		s += " (" + n + ")"
	}
	return s
}

// describeRecord renders a member's record for a merge.
func describeRecord(member string, r TeamRecord) string {
	switch r.Status {
	case RunCompleted:
		return "[" + member + "] " + r.Content
	case RunFailed:
		msg := "unknown error"
		if r.Error != nil {
			msg = r.Error.Error()
		}
		return "[" + member + "] failed: " + msg
	case RecordSkipped:
		return "[" + member + "] skipped (" + r.Content + ")"
	}
	return "[" + member + "] did not answer"
}

// modelCall makes one supervisor or coordinator model call, reported as the team's
// reasoning (events with the team as agent and the node) and to the interceptors.
func (t *TeamAgent) modelCall(ctx context.Context, c *flow.Context, n *flow.Node, tr *TeamTrace, req *ChatRequest) (*ChatResponse, error) {
	if t.cfg.model == nil {
		return nil, errors.New("no supervisor model")
	}
	r := &runner{cfg: &config{icpts: t.cfg.icpts}, model: t.cfg.model, info: RunInfo{RunID: tr.RunID, ParentRunID: tr.ParentRunID,
		Agent: t.name, Instance: c.InstanceID(), Node: n.ID, Branch: c.BranchID()}}
	resp, _, err := r.reason(ctx, tr.Supervisor.ModelCalls+1, req)
	return resp, err
}
