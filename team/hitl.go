package team

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// PendingCall is a tool call waiting for a human decision.
type PendingCall struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args,omitempty"`
	Comment string          `json:"comment,omitempty"`
}

// Pending is a batch of tool calls held for human decisions: the model asked for Batch
// in one turn, and Calls (sensitive calls without a decision) need one before any call
// of the batch runs.
type Pending struct {
	Agent    string        `json:"agent"`
	RunID    string        `json:"runId"`
	Instance string        `json:"instance,omitempty"`
	Node     string        `json:"node,omitempty"`
	Branch   string        `json:"branch,omitempty"`
	Calls    []PendingCall `json:"calls"`
	Batch    []ToolCall    `json:"batch"`
}

// ids returns the ids of the calls waiting for a decision.
func (p *Pending) ids() []string {
	ids := make([]string, len(p.Calls))
	for i, c := range p.Calls {
		ids[i] = c.ID
	}
	return ids
}

// Reason is the suspend reason a flow node reports for the batch.
func (p *Pending) reason() string {
	names := make([]string, len(p.Calls))
	for i, c := range p.Calls {
		names[i] = c.Name + "#" + c.ID
	}
	return fmt.Sprintf("agent %q waits for decisions on %s", p.Agent, strings.Join(names, ", "))
}

// DecisionKind is what a human decided about a tool call.
type DecisionKind string

// Decision kinds.
const (
	DecisionApprove DecisionKind = "approve" // run the call, possibly with other arguments
	DecisionReject  DecisionKind = "reject"  // do not run it; the model sees a rejected error
	DecisionSkip    DecisionKind = "skip"    // do not run it; the model sees Result as its result
)

// Decision is a human's decision about one pending tool call, keyed by the call's id.
type Decision struct {
	CallID string       `json:"callId"`
	Kind   DecisionKind `json:"kind"`
	// Args replaces the call's arguments (approve); they are validated like the
	// model's.
	Args json.RawMessage `json:"args,omitempty"`
	// AlwaysAllow (approve) lets later calls of the same tool by this agent in this
	// session run without asking.
	AlwaysAllow bool `json:"alwaysAllow,omitempty"`
	// Comment explains a rejection; the model sees it.
	Comment string `json:"comment,omitempty"`
	// Result is the substitute result of a skipped call.
	Result any `json:"result,omitempty"`
	// By names who decided, for the audit.
	By string `json:"by,omitempty"`
}

// Approve approves a call as the model asked for it.
func Approve(callID string) Decision { return Decision{CallID: callID, Kind: DecisionApprove} }

// ApproveWithArgs approves a call with modified arguments.
func ApproveWithArgs(callID string, args json.RawMessage) Decision {
	return Decision{CallID: callID, Kind: DecisionApprove, Args: args}
}

// ApproveAlways approves a call and every later call of the same tool by the same
// agent in the session.
func ApproveAlways(callID string) Decision {
	return Decision{CallID: callID, Kind: DecisionApprove, AlwaysAllow: true}
}

// Reject rejects a call with a comment for the model.
func Reject(callID, comment string) Decision {
	return Decision{CallID: callID, Kind: DecisionReject, Comment: comment}
}

// Skip skips a call; the model sees result as the call's result.
func Skip(callID string, result any) Decision {
	return Decision{CallID: callID, Kind: DecisionSkip, Result: result}
}

func (d Decision) check() error {
	switch d.Kind {
	case DecisionApprove:
		if len(d.Args) > 0 && !json.Valid(d.Args) {
			return fmt.Errorf("decision for call %q: modified arguments are not JSON", d.CallID)
		}
	case DecisionReject:
	case DecisionSkip:
		if _, err := json.Marshal(d.Result); err != nil {
			return fmt.Errorf("decision for call %q: substitute result: %w", d.CallID, err)
		}
	default:
		return fmt.Errorf("decision for call %q: unknown kind %q (want approve, reject or skip)", d.CallID, d.Kind)
	}
	return nil
}

// observation returns what the model sees for a call that was not run.
func (d Decision) observation() Observation {
	if d.Kind == DecisionSkip {
		return Success(d.Result)
	}
	msg := d.Comment
	if msg == "" {
		msg = "a reviewer rejected the call"
	}
	return failure(&Error{Type: TypeRejected, Message: msg})
}

// pendingRun is the state of a ReAct run held for decisions, as the session keeps it:
// the run's identity, its prompt, the conversation up to and including the model's
// tool-call message, the batch, the calls that need a decision, the decisions given so
// far and the trace so far.
type pendingRun struct {
	Info      RunInfo             `json:"info"`
	Prompt    string              `json:"prompt"`
	Messages  []Message           `json:"messages"`
	Batch     []ToolCall          `json:"batch"`
	Pending   []PendingCall       `json:"pending"`
	Decisions map[string]Decision `json:"decisions,omitempty"`
	Trace     *ReActTrace         `json:"trace"`
}

// undecided returns the pending calls without a decision.
func (r *pendingRun) undecided() []PendingCall {
	var out []PendingCall
	for _, p := range r.Pending {
		if _, ok := r.Decisions[p.ID]; !ok {
			out = append(out, p)
		}
	}
	return out
}

func (r *pendingRun) isPending(id string) bool {
	return slices.ContainsFunc(r.Pending, func(p PendingCall) bool { return p.ID == id })
}

func (r *pendingRun) view(calls []PendingCall) *Pending {
	return &Pending{Agent: r.Info.Agent, RunID: r.Info.RunID, Instance: r.Info.Instance, Node: r.Info.Node,
		Branch: r.Info.Branch, Calls: calls, Batch: slices.Clone(r.Batch)}
}

// waitsAt reports whether the run waits at node n in the branch of c, so that the node
// continues it there: a run started outside a graph waits anywhere. The branch tells
// the passes of one node apart (each loop iteration has its own), so an iteration
// never continues the run an earlier one left waiting.
func (r *pendingRun) waitsAt(c *flow.Context, n *flow.Node) bool {
	return r.Info.Node == "" || r.Info.Node == n.ID && r.Info.Branch == c.BranchID()
}
