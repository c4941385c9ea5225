package subagent

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
)

// ToolCallRecord is one tool call made during a sub-agent's run, as evidence of what
// it did: the tool, the arguments and whether the call failed, with the structured
// error.
type ToolCallRecord struct {
	// Agent is the agent that made the call: the sub-agent, or an agent it called.
	Agent  string          `json:"agent"`
	RunID  string          `json:"run_id"`
	CallID string          `json:"call_id,omitempty"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args,omitempty"`
	Status string          `json:"status"` // StatusSuccess or StatusError
	Error  *team.Error     `json:"error,omitempty"`
}

// Failed reports whether the call failed.
func (c ToolCallRecord) Failed() bool { return c.Status != team.StatusSuccess }

// failure names the tool and the error type of a failed call: "patent_db: timeout"
// (tool_error when the call has no type).
func (c ToolCallRecord) failure() string {
	typ := team.TypeToolFailed
	if c.Error != nil && c.Error.Type != "" {
		typ = c.Error.Type
	}
	return c.Tool + ": " + string(typ)
}

// toolCallsKey is the context variable RecordToolCalls keeps an agent's tool calls in.
func toolCallsKey(agent string) string { return "_calls." + agent }

// RecordToolCalls wraps an agent so that the tool calls of each of its runs, and of
// the runs of agents it calls, are kept in the session's FlowContext under
// toolCallsKey(name), whatever the agent reports. A coordinator reads them
// (ToolCallsIn, GatherSubTasks) to check a sub-agent's report against what happened:
// an empty success while its searches failed is a gap, not a finding.
//
// The calls are collected from the tool-call events of the call's context (so the
// agent must report them, as the agents of this package and SubAgent do), one list per
// run: a new run replaces the list, a run resumed after human decisions extends it.
// The wrapper is an Agent only: the wrapped agent's other methods (Stream, Resume) are
// not forwarded.
func RecordToolCalls(a team.Agent) team.Agent { return &recordingAgent{Agent: a} }

type recordingAgent struct {
	team.Agent
}

// Call calls the agent and records its tool calls.
func (r *recordingAgent) Call(ctx context.Context, prompt string, sess *team.AgentSession) (*team.Answer, error) {
	if sess == nil {
		sess = team.NewSession("")
	}
	name := r.Name()
	var (
		mu    sync.Mutex
		done  bool // events of goroutines that outlive the call are not this run's record
		runID string
		calls = []ToolCallRecord{}
	)
	ctx = team.WithSink(ctx, func(e team.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case done:
		case e.Kind == team.EventRunStart && e.Agent == name && runID == "":
			runID = e.RunID
		case e.Kind == team.EventToolEnd && e.Call != nil:
			calls = append(calls, callRecord(e.Agent, e.RunID, e.Call, e.Observation, e.Decision))
		}
	})
	ans, err := r.Agent.Call(ctx, prompt, sess)
	mu.Lock()
	defer mu.Unlock()
	done = true
	if runID == "" && ans != nil {
		runID = ans.RunID
	}
	sess.Context().Update(toolCallsKey(name), func(old any, _ bool) any {
		prev := toolCallsOf(old)
		if runID != "" && len(prev) > 0 && prev[0].RunID == runID {
			return append(prev, calls...) // the same run, resumed
		}
		return calls
	})
	return ans, err
}

// ToolCallsIn returns the tool calls RecordToolCalls kept for agent in c.
func ToolCallsIn(c *flow.Context, agent string) []ToolCallRecord {
	v, _ := c.Get(toolCallsKey(agent))
	return toolCallsOf(v)
}

// ToolCallAttrs puts the tool calls RecordToolCalls kept for a node's agent on the
// node's terminal audit record; pass it to interceptor.WithAttrs. The agent is the
// node's meta "agent", else its "@name" task. The attributes are "tool_calls" (how
// many calls the run made), "failed_tool_calls" (how many failed) and "tool_errors"
// ("tool: error_type" per failed call), so that an audit shows a sub-agent whose
// searches failed even when its node completed.
func ToolCallAttrs(c *flow.Context, n *flow.Node, end *flow.NodeEnd) map[string]any {
	if end == nil {
		return nil
	}
	agent := n.MetaString("agent")
	if agent == "" && strings.HasPrefix(n.Task, "@") {
		agent = n.Task[1:]
	}
	v, ok := c.Get(toolCallsKey(agent))
	if agent == "" || !ok {
		return nil
	}
	calls := toolCallsOf(v)
	errs := []any{}
	for _, call := range calls {
		if call.Failed() {
			errs = append(errs, call.failure())
		}
	}
	attrs := map[string]any{"tool_calls": len(calls), "failed_tool_calls": len(errs)}
	if len(errs) > 0 {
		attrs["tool_errors"] = errs
	}
	return attrs
}

// toolCallsOf converts a stored value (the records, or the maps a restored snapshot
// holds) into a fresh slice of records.
func toolCallsOf(v any) []ToolCallRecord {
	switch t := v.(type) {
	case nil:
		return nil
	case []ToolCallRecord:
		return slices.Clone(t)
	}
	out, err := viaJSON[[]ToolCallRecord](v)
	if err != nil {
		return nil
	}
	return out
}

// ToolCallsOfTrace returns the tool calls a ReAct run made, from its trace (which the
// session keeps: AgentSession.ReActTrace). A call a human rejected counts as made, with
// the observation the model saw; one a human skipped did not run, whatever substitute
// the model saw, so it is a failed call of type TypeSkipped (see callRecord).
func ToolCallsOfTrace(tr *team.ReActTrace) []ToolCallRecord {
	if tr == nil {
		return nil
	}
	var out []ToolCallRecord
	var dec *team.Decision // of the action step the observation follows
	for _, st := range tr.Steps {
		switch {
		case st.Kind == team.StepAction:
			dec = st.Decision
		case st.Kind == team.StepObservation && st.Call != nil && st.Observation != nil:
			if dec != nil && dec.CallID != st.Call.ID {
				dec = nil
			}
			out = append(out, callRecord(tr.Agent, tr.RunID, st.Call, st.Observation, dec))
			dec = nil
		}
	}
	return out
}

// callRecord is the record of a tool call that ended with observation o after the
// human decision dec (nil without one). A call a human skipped is a failure of type
// TypeSkipped although the model saw the substitute as a success: the source was not
// searched, so an empty substitute must not read as "none exist" in a coverage note.
func callRecord(agent, runID string, c *team.ToolCall, o *team.Observation, dec *team.Decision) ToolCallRecord {
	rec := ToolCallRecord{Agent: agent, RunID: runID, CallID: c.ID, Tool: c.Name, Args: c.Args, Status: team.StatusSuccess}
	switch {
	case dec != nil && dec.Kind == team.DecisionSkip:
		rec.Status, rec.Error = team.StatusError, &team.Error{Type: team.TypeSkipped, Message: "a reviewer skipped the call: the tool did not run"}
	case o != nil && !o.OK():
		rec.Status, rec.Error = team.StatusError, o.Error
		if rec.Error == nil {
			rec.Error = &team.Error{Type: team.TypeToolFailed}
		}
	}
	return rec
}

// sameArgs compares two calls' arguments as JSON values (key order and spacing do not
// matter).
func sameArgs(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(orEmpty(a), &x) != nil || json.Unmarshal(orEmpty(b), &y) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(x, y)
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}
