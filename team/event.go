package team

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"sync/atomic"
	"time"
)

// EventKind names what an Event reports.
type EventKind string

// Event kinds. Every run emits RunStart first and RunEnd last; a ReAct step emits
// ReasonStart, ReasonDelta (streaming models only), ReasonEnd, then, when the model
// asked for tools, ActionStart, ToolStart/ToolEnd per call and ActionEnd. A batch that
// needs human decisions emits HITLPending (and the run ends pending); the resumed run
// emits HITLDecided per decided call before the batch runs.
const (
	EventRunStart    EventKind = "run_start"
	EventRunEnd      EventKind = "run_end"
	EventReasonStart EventKind = "reason_start"
	EventReasonDelta EventKind = "reason_delta"
	EventReasonEnd   EventKind = "reason_end"
	EventActionStart EventKind = "action_start"
	EventActionEnd   EventKind = "action_end"
	EventToolStart   EventKind = "tool_start"
	EventToolEnd     EventKind = "tool_end"
	EventHITLPending EventKind = "hitl_pending"
	EventHITLDecided EventKind = "hitl_decided"

	// Team event kinds. A team run emits TeamStart first and TeamEnd last (also when it
	// fails, is interrupted or suspends; a resumed run starts with a TeamStart whose
	// Status is "resumed"). Each member turn is framed by NodeStart and NodeEnd (Agent is
	// the member, Node its node), and between them come the member's own events (run
	// start/end, reasoning, tools, HITL). The supervisor's model calls emit ReasonStart,
	// ReasonDelta and ReasonEnd with the team's name as Agent and the supervisor node as
	// Node, and every routing decision emits a Decision event carrying the
	// RouteDecision. A nested team emits its own TeamStart and TeamEnd inside its
	// parent's NodeStart/NodeEnd (Solon emits no end event for a nested team).
	EventTeamStart EventKind = "team_start"
	EventTeamEnd   EventKind = "team_end"
	EventNodeStart EventKind = "node_start"
	EventNodeEnd   EventKind = "node_end"
	EventDecision  EventKind = "team_decision"

	// EventFlow reports an event a task of the graph published (flow.Context.Publish,
	// such as a Solon script's context.eventBus().send(topic, payload)): Topic and
	// Payload, the publishing Node and its Branch. In a team's graph, RunID and Agent
	// are the team run's; elsewhere (FlowEvents) RunID is the flow run's and Agent is
	// empty.
	EventFlow EventKind = "flow_event"
)

// Event is one thing that happened in an agent run. Every event carries the run id and
// the agent name and, when the agent runs as a node of a flow graph, the instance, the
// node id, the branch id and the flow's run id as ParentRunID. The other fields are set
// by the kinds they belong to.
type Event struct {
	Kind  EventKind `json:"kind"`
	Time  time.Time `json:"time"`
	RunID string    `json:"runId"`
	// ParentRunID is the run this one runs inside: the flow run of the node, or the
	// run of the agent that called this one.
	ParentRunID string `json:"parentRunId,omitempty"`
	Agent       string `json:"agent"`
	Instance    string `json:"instance,omitempty"`
	Node        string `json:"node,omitempty"`
	Branch      string `json:"branch,omitempty"`
	// Step numbers the model calls of a run, from 1.
	Step int `json:"step,omitempty"`

	// Prompt is set on RunStart.
	Prompt string `json:"prompt,omitempty"`
	// Delta is the streamed text of a ReasonDelta; Reasoning the streamed thinking.
	Delta     string `json:"delta,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	// Content is the model's text on ReasonEnd and the answer on RunEnd.
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls the model asked for (ReasonEnd, ActionStart).
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Call is the tool call of ToolStart, ToolEnd and HITLDecided.
	Call *ToolCall `json:"call,omitempty"`
	// Observation is the outcome of ToolEnd: the result or the structured error.
	Observation *Observation `json:"observation,omitempty"`
	// Pending lists the calls waiting for a decision (HITLPending).
	Pending []PendingCall `json:"pending,omitempty"`
	// Decision is the decision applied to Call (HITLDecided).
	Decision *Decision `json:"decision,omitempty"`
	// Usage is the token usage of a model call (ReasonEnd) or of the run (RunEnd).
	Usage *Usage `json:"usage,omitempty"`
	// Duration is set on every *End event.
	Duration time.Duration `json:"duration,omitempty"`
	// Status is set on RunEnd: completed, pending or failed.
	Status string `json:"status,omitempty"`
	// Error is the failure of a failed ReasonEnd or RunEnd.
	Error *Error `json:"error,omitempty"`
	// Answer is the complete answer on RunEnd (and on a team's TeamEnd, with the
	// TeamTrace as its Trace).
	Answer *Answer `json:"-"`
	// Route is the routing decision of a team's Decision event.
	Route *RouteDecision `json:"route,omitempty"`
	// Topic and Payload are what a task published (EventFlow). The payload is the
	// task's value as it gave it: the sink must not change it.
	Topic   string `json:"topic,omitempty"`
	Payload any    `json:"payload,omitempty"`
}

// String gives a short description for logs and test failures.
func (e Event) String() string {
	s := string(e.Kind)
	if e.Call != nil {
		s += "(" + e.Call.Name + "#" + e.Call.ID + ")"
	}
	if e.Topic != "" {
		s += "(" + e.Topic + ")"
	}
	if e.Status != "" {
		s += "[" + e.Status + "]"
	}
	return s
}

type sinkKey struct{}

type parentKey struct{}

// WithSink returns a context whose agent runs send their events to sink, in addition
// to any sink already in ctx. The sink is called from the goroutines the agents run
// on, possibly concurrently (parallel branches of a flow); it must not block for long.
func WithSink(ctx context.Context, sink func(Event)) context.Context {
	if prev := sinkFrom(ctx); prev != nil {
		next := sink
		sink = func(e Event) { prev(e); next(e) }
	}
	return context.WithValue(ctx, sinkKey{}, sink)
}

func sinkFrom(ctx context.Context) func(Event) {
	s, _ := ctx.Value(sinkKey{}).(func(Event))
	return s
}

// Emit sends ev to the sink of ctx, if there is one, stamping its time. Agents other
// than those of this package use it (with RunInfo.Event) to report their runs.
func Emit(ctx context.Context, ev Event) {
	s := sinkFrom(ctx)
	if s == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	s(ev)
}

// RunInfo identifies one agent run and where it runs.
type RunInfo struct {
	RunID       string `json:"runId"`
	ParentRunID string `json:"parentRunId,omitempty"`
	Agent       string `json:"agent"`
	Instance    string `json:"instance,omitempty"`
	Node        string `json:"node,omitempty"`
	Branch      string `json:"branch,omitempty"`
}

// Event returns an event of the given kind stamped with the run's identity.
func (r RunInfo) Event(kind EventKind) Event {
	return Event{Kind: kind, Time: time.Now(), RunID: r.RunID, ParentRunID: r.ParentRunID, Agent: r.Agent,
		Instance: r.Instance, Node: r.Node, Branch: r.Branch}
}

var runSeq atomic.Uint64

var runPrefix = "a" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"

// NewRunInfo starts the identity of a new run of agent in sess: a fresh run id, the
// session's instance and, inside a flow node, the node, the branch and the flow's run
// id as parent. A run started inside another agent's run (ctx from that run) records
// it as parent.
func NewRunInfo(ctx context.Context, agent string, sess *AgentSession) RunInfo {
	ri := RunInfo{RunID: runPrefix + strconv.FormatUint(runSeq.Add(1), 10), Agent: agent}
	if p, ok := ctx.Value(parentKey{}).(string); ok {
		ri.ParentRunID = p
	}
	if sess != nil {
		ri.Instance = sess.id()
		if sess.fc != nil && sess.node != nil {
			ri.Node, ri.Branch = sess.node.ID, sess.fc.BranchID()
			if id := sess.fc.RunID(); id != "" {
				ri.ParentRunID = id
			}
		}
	}
	return ri
}

// withParent marks ctx as running inside the given run.
func withParent(ctx context.Context, runID string) context.Context {
	return context.WithValue(ctx, parentKey{}, runID)
}

// Stream runs agent.Call and yields its events as they happen. The last event is the
// RunEnd of the call (its Answer field holds the answer); if the call failed, a final
// element carries the error. Breaking the loop (or a panic in its body) cancels the
// call and waits for it to return, so no goroutine is left behind.
func Stream(ctx context.Context, agent Agent, prompt string, sess *AgentSession) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type item struct {
			ev  Event
			err error
		}
		ch := make(chan item)
		// stopped, not ctx: when the caller's own context ends, the run's last events
		// and its error must still reach the loop. Once stopped is closed, events are
		// dropped.
		stopped := make(chan struct{})
		// done, not closing ch: a goroutine the call started may emit after the call
		// returned, and a send on a closed channel would panic.
		done := make(chan struct{})
		send := func(it item) {
			select {
			case ch <- it:
			case <-stopped:
			}
		}
		ctx2 := WithSink(ctx, func(e Event) { send(item{ev: e}) })
		go func() {
			defer close(done)
			var err error
			func() {
				// A panicking agent fails the call, as a panicking task fails its node.
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("agent %q panicked: %v", agent.Name(), p)
					}
				}()
				_, err = agent.Call(ctx2, prompt, sess)
			}()
			if err != nil {
				send(item{err: err})
			}
		}()
		returned := false
		defer func() {
			// Nobody reads ch any more. If the loop broke or its body panicked, the call
			// is cancelled and awaited here, or its next event would block its goroutine
			// for ever.
			close(stopped)
			if !returned {
				cancel()
				<-done
			}
		}()
		for {
			// The call's own sends are synchronous, so once done is closed every event
			// of the call has been yielded.
			select {
			case it := <-ch:
				if !yield(it.ev, it.err) {
					return
				}
			case <-done:
				returned = true
				return
			}
		}
	}
}

// teamEvent returns an event of the team run described by tr: RunID is the team's run
// id, ParentRunID the run the team runs in.
func teamEvent(kind EventKind, tr *TeamTrace) Event {
	return Event{Kind: kind, Time: time.Now(), RunID: tr.RunID, ParentRunID: tr.ParentRunID, Agent: tr.Team,
		Instance: tr.Instance, Branch: tr.Branch}
}

// nodeEvent returns a NodeStart/NodeEnd event of a member node of the team run.
func nodeEvent(kind EventKind, tr *TeamTrace, member, node, branch string) Event {
	ev := teamEvent(kind, tr)
	ev.Agent, ev.Node, ev.Branch = member, node, branch
	return ev
}

// withMemberRun makes the member runs started under ctx report the team run as their
// parent: the engine gives an agent node the flow's run id, but inside a team the run a
// member belongs to is the team's.
func withMemberRun(ctx context.Context, flowRun, teamRun string) context.Context {
	s := sinkFrom(ctx)
	if s == nil || flowRun == "" || flowRun == teamRun {
		return ctx
	}
	return context.WithValue(ctx, sinkKey{}, func(e Event) {
		if e.ParentRunID == flowRun && e.Kind != EventNodeStart && e.Kind != EventNodeEnd {
			e.ParentRunID = teamRun
		}
		s(e)
	})
}
