package team

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/trace"
)

// AgentSession is the session an agent runs in: a flow instance's FlowContext, which
// holds the business data and, under stateKey(agent), each agent's conversation
// history, its pending tool-call batch and the trace of its last run; and, when the
// agent runs inside a flow graph, the node it runs as and the flow's frontier once the
// run halted.
//
// Keeping agent state in the FlowContext variables means that a flow snapshot (the
// session package) carries the agents' state with it; MarshalSession gives
// the same as plain JSON for agents used without a graph.
//
// An AgentSession is safe for concurrent use, but one agent must not run twice at the
// same time in one session (two parallel nodes need two agents, or two sessions).
type AgentSession struct {
	fc   *flow.Context
	node *flow.Node // the flow node the agent runs as, or nil outside a graph

	mu   sync.Mutex
	flow *flowPosition
}

type flowPosition struct {
	graph, hash, reason string
	frontier            *flow.FrontierState
}

// NewSession returns a new session with the given instance id and an empty context.
func NewSession(id string) *AgentSession { return &AgentSession{fc: flow.NewContext(id)} }

// SessionOf returns a session over a flow context (for example the one a graph run
// uses), so agent state can be read and decisions given between runs.
func SessionOf(fc *flow.Context) *AgentSession { return &AgentSession{fc: fc} }

// nodeSession is the session of an agent running as node n, over the node's branch
// view of the context.
func nodeSession(c *flow.Context, n *flow.Node) *AgentSession {
	return &AgentSession{fc: c, node: n}
}

// id returns the instance id (Context().InstanceID()).
func (s *AgentSession) id() string { return s.fc.InstanceID() }

// Context returns the FlowContext: business data the agents read and write.
func (s *AgentSession) Context() *flow.Context { return s.fc }

// stateKey is the context variable that holds an agent's state in a session.
func stateKey(agent string) string { return "_agent." + agent }

// agentState is what a session keeps for one agent. It is plain data: it goes through
// JSON unchanged.
type agentState struct {
	// History is the conversation of completed calls: each call's prompt and answer.
	History []Message `json:"history,omitempty"`
	// AlwaysAllow lists the sensitive tools a human approved for every later call.
	AlwaysAllow []string `json:"alwaysAllow,omitempty"`
	// Run is the ReAct run waiting for human decisions, if any.
	Run *pendingRun `json:"run,omitempty"`
	// ReAct and Simple are the traces of the agent's last run.
	ReAct  *ReActTrace  `json:"react,omitempty"`
	Simple *SimpleTrace `json:"simple,omitempty"`
}

// state returns a copy of the agent's state in the session (the zero state if the
// agent never ran in it).
func (s *AgentSession) state(agent string) agentState {
	v, _ := s.fc.Get(stateKey(agent))
	return stateOf(v)
}

// stateOf converts a stored value (an agentState, or the maps a restored snapshot
// holds) into a deep copy of the state.
func stateOf(v any) agentState {
	if v == nil {
		return agentState{}
	}
	b, err := json.Marshal(v)
	var st agentState
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		// Cannot happen for what this package stores (plain data); keep the value
		// rather than lose the agent's state.
		st, _ = v.(agentState)
	}
	return st
}

func (s *AgentSession) setState(agent string, st agentState) { s.fc.Set(stateKey(agent), st) }

// waitingRun returns the agent's waiting run, or nil, for reading only. A stored
// agentState is read in place: the node and team code that only checks the run would
// otherwise pay state's JSON round trip of the whole state, history included, on
// every node execution. Stored states are replaced, never changed in place, so the
// run read here does not change under the caller.
func (s *AgentSession) waitingRun(agent string) *pendingRun {
	v, _ := s.fc.Get(stateKey(agent))
	if st, ok := v.(agentState); ok {
		return st.Run
	}
	return stateOf(v).Run
}

// claimedCopy returns a copy of a stored state that the agent's call may change. A
// stored agentState is copied in part, without stateOf's JSON round trip of its whole
// history on every call: the call replaces its traces and appends to its slices
// (clipped here, so an append copies), and changes only the waiting run in place,
// which is copied whole. Stored states are replaced, never changed in place.
func claimedCopy(v any) agentState {
	st, ok := v.(agentState)
	if !ok {
		return stateOf(v)
	}
	st.History, st.AlwaysAllow = slices.Clip(st.History), slices.Clip(st.AlwaysAllow)
	if st.Run != nil {
		st.Run = stateOf(agentState{Run: st.Run}).Run
	}
	return st
}

// callState returns the agent's state as a call of the agent may change it
// (claimedCopy).
func (s *AgentSession) callState(agent string) agentState {
	v, _ := s.fc.Get(stateKey(agent))
	return claimedCopy(v)
}

// claim returns the agent's state and, in one atomic step, takes its waiting run (if
// any, and if prompt may resume it: empty or the run's prompt) out of the stored
// state, so that only one caller resumes it. A run that prompt may not resume stays
// and the error is ErrPending.
func (s *AgentSession) claim(agent, prompt string) (agentState, error) {
	var (
		st  agentState
		err error
	)
	_ = s.fc.Atomic(func(v flow.Vars) error {
		old, _ := v.Get(stateKey(agent))
		st = claimedCopy(old)
		if st.Run == nil {
			return nil
		}
		if prompt != "" && prompt != st.Run.Prompt {
			err = fmt.Errorf("%w (run %s)", ErrPending, st.Run.Info.RunID)
			return nil
		}
		left := st
		left.Run = nil
		v.Put(stateKey(agent), left)
		return nil
	})
	return st, err
}

// History returns the agent's conversation history in the session.
func (s *AgentSession) History(agent string) []Message { return s.state(agent).History }

// Pending returns the agent's batch waiting for decisions (only the calls still
// without one), or nil.
func (s *AgentSession) Pending(agent string) *Pending {
	r := s.state(agent).Run
	if r == nil {
		return nil
	}
	return r.view(r.undecided())
}

// PendingAll returns every agent's pending batch in the session, by agent name order.
func (s *AgentSession) PendingAll() []*Pending {
	var out []*Pending
	vars := s.fc.Vars()
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if name, ok := strings.CutPrefix(k, stateKey("")); ok && name != "" {
			if p := s.Pending(name); p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// Decide records decisions for the agent's pending calls, keyed by tool-call id. The
// next call of the agent (or, in a graph, the resumed node) applies them to the same
// batch without asking the model again. It fails with ErrNoPending when nothing waits
// and ErrUnknownCall for an id that is not pending; nothing is recorded then.
func (s *AgentSession) Decide(agent string, ds ...Decision) error {
	var err error
	// One atomic read-modify-write, so concurrent deciders do not lose each other's
	// decisions.
	s.fc.Update(stateKey(agent), func(old any, _ bool) any {
		st := stateOf(old)
		if err = st.decide(ds); err != nil {
			return old
		}
		return st
	})
	if err != nil {
		return fmt.Errorf("agent %q in session %q: %w", agent, s.id(), err)
	}
	return nil
}

func (st *agentState) decide(ds []Decision) error {
	if st.Run == nil {
		return ErrNoPending
	}
	for _, d := range ds {
		if !st.Run.isPending(d.CallID) {
			return fmt.Errorf("call %q: %w (pending: %v)", d.CallID, ErrUnknownCall, st.Run.view(st.Run.Pending).ids())
		}
		if err := d.check(); err != nil {
			return err
		}
	}
	if st.Run.Decisions == nil {
		st.Run.Decisions = make(map[string]Decision)
	}
	for _, d := range ds {
		st.Run.Decisions[d.CallID] = d
	}
	return nil
}

// Discard drops the agent's pending run; the next call starts afresh.
func (s *AgentSession) Discard(agent string) {
	st := s.state(agent)
	st.Run = nil
	s.setState(agent, st)
}

// discardRunsAt drops the agent runs waiting at node in branch, and inside the
// sub-graph node calls there: the node's failure was recovered, so the flow went on
// past them and nothing continues them.
func (s *AgentSession) discardRunsAt(node, branch string) {
	inCall := branch + "/" + node + "/" // the branches of a sub-graph call (flow's branch ids)
	s.discardRuns(func(r *pendingRun) bool {
		return r.Info.Node == node && r.Info.Branch == branch || strings.HasPrefix(r.Info.Branch, inCall)
	})
}

// discardRuns drops every agent run waiting in the session that drop selects.
func (s *AgentSession) discardRuns(drop func(*pendingRun) bool) {
	for k := range s.fc.Vars() {
		s.discardRunIn(k, drop)
	}
}

// discardStale drops what no flow run over the session can continue once a new run
// starts or a run completes: the agent runs waiting at flow nodes, and the teams'
// turn logs. A turn log serves only a retry of the failed team run it belongs to,
// which only a resume of that flow run makes; left behind, it would be carried in
// every later snapshot. (One pass over the variables does both.)
func (s *AgentSession) discardStale() {
	for k := range s.fc.Vars() {
		if isTurnsKey(k) {
			s.fc.Delete(k)
			continue
		}
		s.discardRunIn(k, isNodeRun)
	}
}

func isNodeRun(r *pendingRun) bool { return r.Info.Node != "" }

// discardRunIn drops the agent run waiting in variable k, if k holds an agent's state
// and drop selects its run.
func (s *AgentSession) discardRunIn(k string, drop func(*pendingRun) bool) {
	if name, ok := strings.CutPrefix(k, stateKey("")); !ok || name == "" {
		return
	}
	s.fc.Update(k, func(old any, _ bool) any {
		if st, ok := old.(agentState); ok && (st.Run == nil || !drop(st.Run)) {
			return old // the usual case, without stateOf's JSON round trip
		}
		st := stateOf(old)
		if st.Run == nil || !drop(st.Run) {
			return old
		}
		st.Run = nil
		return st
	})
}

// ReActTrace returns the trace of the agent's last (or pending) ReAct run, or nil.
func (s *AgentSession) ReActTrace(agent string) *ReActTrace {
	st := s.state(agent)
	if st.Run != nil {
		return st.Run.Trace
	}
	return st.ReAct
}

// SimpleTrace returns the trace of the agent's last SimpleAgent run, or nil.
func (s *AgentSession) SimpleTrace(agent string) *SimpleTrace { return s.state(agent).Simple }

// setFlow records where a flow run over the session's context stands: its frontier
// when it halted (suspended for a decision, stopped, failed), or nothing once it
// completed. sessionState then carries it, and ResumeFlow continues from it.
func (s *AgentSession) setFlow(g *flow.Graph, res *flow.Result) {
	var pos *flowPosition
	if res != nil && res.Frontier != nil {
		st := res.Frontier.State()
		pos = &flowPosition{graph: g.ID, hash: g.Hash(), reason: res.Reason, frontier: &st}
	}
	s.mu.Lock()
	s.flow = pos
	s.mu.Unlock()
}

func (s *AgentSession) position() *flowPosition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flow
}

// Suspended reports whether the session holds a halted flow run to resume.
func (s *AgentSession) Suspended() bool { return s.position() != nil }

// RunFlow evaluates g over the session's context with eng and records where it
// stands (setFlow).
//
// It starts a new run: the agent runs an earlier flow run left waiting at a node
// (suspended for decisions, or halted by a failure or a cancelled resume) are
// discarded first. The agent nodes of the new run would not continue them (only a
// resume or a retry of their node does), but the nodes the new run does not reach
// would leave them in Pending, waiting for decisions nobody needs. ResumeFlow is the
// way to continue such a run; runs of agents called outside a graph are kept. The
// turn logs of failed team runs ("_team.<name>:turns") are dropped too: the new run
// retries none of them.
func (s *AgentSession) RunFlow(ctx context.Context, eng *flow.Engine, g *flow.Graph, opts ...flow.EvalOption) (*flow.Result, error) {
	s.discardStale()
	res, err := eng.EvalGraph(ctx, g, s.fc, opts...)
	s.ended(g, res)
	return res, err
}

// ended records where the flow run of g stands once an evaluation returned. A run
// that completed leaves no agent run waiting at a node: nothing can continue one (a
// run left there by a failure an error policy recovered, or by a branch withdrawn
// with its failure), and Pending would show it waiting for nothing; nor a team's
// turn log, which nothing retries.
func (s *AgentSession) ended(g *flow.Graph, res *flow.Result) {
	if res == nil {
		return
	}
	s.setFlow(g, res)
	if res.Status == flow.StatusCompleted {
		s.discardStale()
	}
}

// ResumeFlow continues the session's halted flow run of g with eng (which must have
// the same tasks and agents registered) and records where it then stands. The suspended
// agent node runs again and applies the decisions given with Decide.
//
// The halted run is resumed once: ResumeFlow takes it out of the session before it
// runs, so a concurrent ResumeFlow (or one after it) fails with flow.ErrNotResumable
// instead of running the same frontier twice. If the resume cannot start (another
// graph, a frontier that does not restore, the context busy), the run stays halted.
func (s *AgentSession) ResumeFlow(ctx context.Context, eng *flow.Engine, g *flow.Graph, opts ...flow.EvalOption) (*flow.Result, error) {
	s.mu.Lock()
	pos := s.flow
	switch {
	case pos == nil:
		s.mu.Unlock()
		return nil, fmt.Errorf("session %q: %w", s.id(), flow.ErrNotResumable)
	case pos.graph != g.ID || pos.hash != g.Hash():
		s.mu.Unlock()
		return nil, fmt.Errorf("session %q, graph %q: %w", s.id(), g.ID, ErrGraphChanged)
	}
	s.flow = nil // claimed
	s.mu.Unlock()
	putBack := func() {
		s.mu.Lock()
		if s.flow == nil {
			s.flow = pos
		}
		s.mu.Unlock()
	}
	fr, err := eng.RestoreFrontier(g, *pos.frontier)
	if err != nil {
		putBack()
		return nil, fmt.Errorf("session %q: %w", s.id(), err)
	}
	res, err := eng.Resume(ctx, fr, s.fc, opts...)
	if res == nil {
		putBack() // nothing ran
	}
	s.ended(g, res)
	return res, err
}

// sessionFormat is the version of the sessionState format.
const sessionFormat = 1

// sessionState is the plain-data form of an AgentSession, for storage: the instance id,
// the context variables (agent state included), the FlowTrace and, when a flow run
// halted, its graph, definition hash, reason and frontier.
type sessionState struct {
	Format   int                 `json:"format"`
	ID       string              `json:"id"`
	Vars     map[string]any      `json:"vars,omitempty"`
	Trace    trace.FlowTrace     `json:"trace,omitzero"`
	Graph    string              `json:"graph,omitempty"`
	Hash     string              `json:"hash,omitempty"`
	Reason   string              `json:"reason,omitempty"`
	Frontier *flow.FrontierState `json:"frontier,omitempty"`
}

// snapshot returns the session's plain-data form.
func (s *AgentSession) snapshot() sessionState {
	st := sessionState{Format: sessionFormat, ID: s.id(), Vars: s.fc.Vars(), Trace: s.fc.Trace()}
	if len(st.Trace.Last) == 0 {
		st.Trace = trace.FlowTrace{}
	}
	if f := s.position(); f != nil {
		st.Graph, st.Hash, st.Reason, st.Frontier = f.graph, f.hash, f.reason, f.frontier
	}
	return st
}

// restoreSession rebuilds a session from its plain-data form (in any process).
func restoreSession(st sessionState) (*AgentSession, error) {
	if st.Format != sessionFormat {
		return nil, fmt.Errorf("session %q: format %d, this build reads %d", st.ID, st.Format, sessionFormat)
	}
	s := &AgentSession{fc: flow.RestoreContext(st.ID, st.Vars, st.Trace)}
	if st.Frontier != nil {
		s.flow = &flowPosition{graph: st.Graph, hash: st.Hash, reason: st.Reason, frontier: st.Frontier}
	}
	return s, nil
}

// MarshalSession encodes a session as JSON.
func MarshalSession(s *AgentSession) ([]byte, error) {
	return json.Marshal(s.snapshot())
}

// UnmarshalSession decodes a session encoded by MarshalSession. Numbers in the
// variables become int64 when integral and float64 otherwise, as a snapshot's do
// (session.UnmarshalVars), so scripts see integers as integers; a number beyond
// float64 is an error, not a value of another type.
func UnmarshalSession(data []byte) (*AgentSession, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var st struct {
		sessionState
		Vars json.RawMessage `json:"vars,omitempty"` // shadows sessionState's
	}
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decode session: data after the session")
	}
	if st.Vars != nil {
		vars, err := session.UnmarshalVars(st.Vars)
		if err != nil {
			return nil, fmt.Errorf("decode session: %w", err)
		}
		st.sessionState.Vars = vars
	}
	// The frontier's loop items are int64 or float64 already (FrameState.UnmarshalJSON),
	// as a snapshot's are.
	return restoreSession(st.sessionState)
}

// DecideIn applies decisions to the agent state held in a flow instance's variables
// (a stored snapshot's Vars, whose pending batch
// SessionOf(flow.NewContextWith("", vars)).Pending(agent) shows) and returns the
// variable updates that carry them: pass them to a resume that takes updates
// (session.Runner.Resume). vars is not modified.
func DecideIn(vars map[string]any, agent string, ds ...Decision) (map[string]any, error) {
	s := SessionOf(flow.NewContextWith("", vars))
	if err := s.Decide(agent, ds...); err != nil {
		return nil, err
	}
	return map[string]any{stateKey(agent): s.state(agent)}, nil
}

// DiscardStaleRuns returns a flow interceptor that gives every run of an engine what
// RunFlow and ResumeFlow give the flow runs of an AgentSession: a new evaluation (not
// a resume) first discards the agent runs waiting at flow nodes in its context, and
// an evaluation that completes discards those still waiting; both also drop the
// teams' turn logs ("_team.<name>:turns"), which only a resume of the failed run
// they belong to replays. Add it to the engine of
// a session.Runner (flow.WithInterceptor(team.DiscardStaleRuns(), i)): Runner.Run
// would otherwise leave an agent run waiting at a node the new run never reaches (in
// variables copied from another instance, say) listed in Pending, waiting for
// decisions nobody needs, and a run that a recovered failure left waiting would stay
// listed after Runner.Resume completes (the team's Interceptor discards the latter as
// the node ends; this one also covers engines without it). Runs of agents called
// outside a graph are kept, and an evaluation made inside an agent's run (a team used
// as an agent node, a tool that runs a graph) is part of that run: it discards
// nothing, since the enclosing flow run's waiting runs are still its own.
func DiscardStaleRuns() flow.Interceptor { return staleRuns{} }

type staleRuns struct{ flow.NopInterceptor }

// InterceptFlow frames the root evaluation of a run.
func (staleRuns) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	if inv.Node != nil || ctx.Value(parentKey{}) != nil {
		return inv.Invoke(ctx)
	}
	sess := SessionOf(inv.Context)
	if !inv.Resumed {
		sess.discardStale()
	}
	err := inv.Invoke(ctx)
	if st, _, _ := inv.Outcome(); st == flow.StatusCompleted {
		sess.discardStale()
	}
	return err
}
