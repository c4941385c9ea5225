package team

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// RouteDecision is one routing decision of a team: the supervisor's choice of the next
// member (or to finish), a swarm member's handoff, or a decision the team's rules took
// (max turns, the loop detector, an interceptor). An answer the team could not read as
// a decision is kept in Raw with Unresolved set, and the decision is the fallback.
type RouteDecision struct {
	// Turn is the number of member turns taken before the decision.
	Turn int `json:"turn"`
	// Action is "route" or "finish".
	Action string `json:"action"`
	// To is the member that acts next (route).
	To string `json:"to,omitempty"`
	// From is the member that handed over (swarm).
	From string `json:"from,omitempty"`
	// Task is the instruction for the next member, when the supervisor gave one.
	Task string `json:"task,omitempty"`
	// Source says where the decision came from (tool, text, rule, fallback, protocol).
	Source string `json:"source"`
	// Reason explains decisions the team took itself (max_turns, loop, ...).
	Reason string `json:"reason,omitempty"`
	// Raw is the model's or member's output that could not be resolved.
	Raw string `json:"raw,omitempty"`
	// Unresolved is set when the decision is the fallback for an unreadable answer.
	Unresolved bool `json:"unresolved,omitempty"`
}

// TeamRecord is one contribution to a team run: a member's turn (its answer, or its
// failure), a supervisor's decision, a coordinator's merge.
type TeamRecord struct {
	Turn int `json:"turn"`
	// Kind is member, supervisor or coordinator.
	Kind string `json:"kind"`
	// Role is the member's role (its Role()), or the kind for the others.
	Role string `json:"role"`
	// Source names the member, or "supervisor"/"coordinator".
	Source  string `json:"source"`
	Node    string `json:"node,omitempty"`
	Branch  string `json:"branch,omitempty"`
	RunID   string `json:"runId,omitempty"`
	Content string `json:"content,omitempty"`
	// Status is completed, failed or skipped.
	Status   string        `json:"status"`
	Error    *Error        `json:"error,omitempty"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	// Usage is the tokens of the turn (think tokens included, as ReasoningTokens).
	Usage Usage `json:"usage"`
}

// TeamState is the protocol's state in a TeamTrace.
type TeamState struct {
	// Next is the member chosen to act next ("" when the team finishes).
	Next string `json:"next,omitempty"`
	// Transfers counts the swarm's handoffs.
	Transfers int `json:"transfers,omitempty"`
	// Halt is why the team stopped routing before its natural end (max_turns, loop,
	// interceptor), if it did.
	Halt string `json:"halt,omitempty"`
	// Waiting names the member whose run waits for human decisions.
	Waiting string `json:"waiting,omitempty"`
}

// TeamTrace is the collaboration record of one team run: every member turn and
// supervisor decision, the route the members took, the last decision, the turn count,
// the protocol's state, the final answer and the metrics of the supervisor and of
// every member. It is plain data kept in the FlowContext under traceKey(team), so a
// session snapshot carries it and a team resumed in another process goes on with it.
type TeamTrace struct {
	Team        string `json:"team"`
	Protocol    string `json:"protocol"`
	RunID       string `json:"runId"`
	ParentRunID string `json:"parentRunId,omitempty"`
	Instance    string `json:"instance,omitempty"`
	Branch      string `json:"branch,omitempty"`
	Prompt      string `json:"prompt"`
	// Status is running, suspended, completed, failed, interrupted, stopped or skipped.
	Status string `json:"status"`

	Records      []TeamRecord    `json:"records"`
	Route        []string        `json:"route"`
	Decisions    []RouteDecision `json:"decisions,omitempty"`
	LastDecision *RouteDecision  `json:"lastDecision,omitempty"`
	// Turns counts the member turns taken (completed or failed).
	Turns       int       `json:"turns"`
	State       TeamState `json:"state"`
	FinalAnswer string    `json:"finalAnswer,omitempty"`
	Error       *Error    `json:"error,omitempty"`

	Started time.Time `json:"started"`
	// Metrics are the team's totals: its active wall time (pauses excluded), and the
	// model calls, tool calls and tokens of the supervisor and every member.
	Metrics trace.Metrics `json:"metrics"`
	// Supervisor are the metrics of the supervisor's (or coordinator's) model calls.
	Supervisor trace.Metrics `json:"supervisor"`
	// Members are the metrics of each member's turns, by member name.
	Members map[string]trace.Metrics `json:"members,omitempty"`

	// Active is the time spent in earlier segments of a paused run; Segment is when
	// the current segment began.
	Active  time.Duration `json:"active"`
	Segment time.Time     `json:"segment"`
}

// MemberRecords returns the records of members (not the supervisor's or coordinator's).
func (t *TeamTrace) MemberRecords() []TeamRecord {
	var out []TeamRecord
	for _, r := range t.Records {
		if r.Kind == RecordMember {
			out = append(out, r)
		}
	}
	return out
}

// LastAnswer returns the content of the last completed member turn ("" if none).
func (t *TeamTrace) lastAnswer() string { return t.LastAnswerOf("") }

// LastAnswerOf returns the content of the member's last completed turn (any member's
// when member is "").
func (t *TeamTrace) LastAnswerOf(member string) string {
	for i := len(t.Records) - 1; i >= 0; i-- {
		if r := t.Records[i]; r.Kind == RecordMember && r.Status == RunCompleted && (member == "" || r.Source == member) {
			return r.Content
		}
	}
	return ""
}

// clone returns a deep copy of t.
func (t *TeamTrace) clone() *TeamTrace {
	c := *t
	c.Records = slices.Clone(t.Records)
	c.Route = slices.Clone(t.Route)
	c.Decisions = slices.Clone(t.Decisions)
	if t.LastDecision != nil {
		d := *t.LastDecision
		c.LastDecision = &d
	}
	if t.Members != nil {
		c.Members = make(map[string]trace.Metrics, len(t.Members))
		for k, v := range t.Members {
			c.Members[k] = v
		}
	}
	return &c
}

// addMember counts a member turn's metrics in the member's and the team's totals.
func (t *TeamTrace) addMember(name string, m trace.Metrics) {
	if t.Members == nil {
		t.Members = make(map[string]trace.Metrics)
	}
	mm := t.Members[name]
	mergeMetrics(&mm, m)
	t.Members[name] = mm
	d := t.Metrics.Duration // the team's duration is its own wall time, not a sum
	mergeMetrics(&t.Metrics, m)
	t.Metrics.Duration = d
}

// addSupervisor counts one supervisor (or coordinator) model call.
func (t *TeamTrace) addSupervisor(u Usage) {
	addUsage(&t.Supervisor, u)
	addUsage(&t.Metrics, u)
}

// decide records a decision.
func (t *TeamTrace) decide(d RouteDecision) {
	t.Decisions = append(t.Decisions, d)
	t.LastDecision = &d
	t.State.Next = ""
	if d.Action == ActionRoute {
		t.State.Next = d.To
	}
}

// closeSegment adds the current segment's time to Active and returns the total.
func (t *TeamTrace) closeSegment(now time.Time) time.Duration {
	if !t.Segment.IsZero() {
		t.Active += now.Sub(t.Segment)
		t.Segment = time.Time{}
	}
	t.Metrics.Duration = t.Active
	return t.Active
}

// traceKey is the context variable that holds a team's TeamTrace.
func traceKey(team string) string { return "_team." + team }

// TraceOf returns a copy of the team's trace held in a flow instance's variables (the
// FlowContext's Vars(), or a stored snapshot's Vars), or nil if the team never ran
// there; TeamAgent.Trace reads it from a FlowContext.
func TraceOf(vars map[string]any, team string) *TeamTrace {
	return traceValue(vars[traceKey(team)])
}

// traceIn returns a copy of the team's trace in a FlowContext, or nil.
func traceIn(c *flow.Context, team string) *TeamTrace {
	v, _ := c.Get(traceKey(team))
	return traceValue(v)
}

// traceValue converts a stored value (a TeamTrace, or the maps a restored snapshot
// holds) into a deep copy; nil when there is none.
func traceValue(v any) *TeamTrace {
	switch t := v.(type) {
	case nil:
		return nil
	case TeamTrace:
		return t.clone()
	case *TeamTrace:
		return t.clone()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var tr TeamTrace
	if json.Unmarshal(b, &tr) != nil {
		return nil
	}
	return &tr
}
