package team

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/flowteam/flowteam/flow"
)

var reservedIDs = []string{TeamNodeStart, TeamNodeEnd, TeamNodeSupervisor, TeamNodeRoute, TeamNodeFork, TeamNodeJoin, TeamNodeMerge}

// TeamAgent is a team of agents that runs as a flow graph: each member is a node whose
// task is the member agent (AsTask), and the protocol (Sequential, Supervisor, Swarm,
// Parallel) shapes the graph around them. A team is itself an Agent, so it can be a
// member of another team (it then runs as a sub-graph of its parent's graph) or a node
// of any graph.
//
// The team runs on the flow engine (Engine), so the engine's interceptors (audits,
// spans, metrics), error policies, branch policies, sessions and stores all apply to
// it. Its collaboration record, the TeamTrace, is plain data in the FlowContext under
// traceKey(name). A TeamAgent is immutable once built and safe for concurrent use in
// different sessions.
type TeamAgent struct {
	name     string
	turnsVar string // turnsKey, made once: a member's turn looks it up
	cfg      config
	proto    protocol
	members  []Agent
	byName   map[string]Agent
	nested   map[string]*TeamAgent // member name -> team
	names    []string
	maxTurns int
	finish   string
	graph    *flow.Graph
	eng      *flow.Engine
	obs      *observer

	mu      sync.Mutex
	parents map[string]*TeamAgent // graph id of a parent team -> the parent
}

var _ Agent = (*TeamAgent)(nil)

// NewTeam builds a team: it checks the members, generates the protocol's graph, lets
// the adjusters edit it, builds it and registers it (and the graphs of nested teams)
// on the team's engine. A name whose variables could be another team's (one ending
// with ".input", ".next" or ".prompt", or containing ".prompt.") is refused.
func NewTeam(name string, opts ...Option) (*TeamAgent, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	if err := checkTeamName(name); err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	t := &TeamAgent{name: name, turnsVar: "_team." + name + ":turns", byName: map[string]Agent{}, nested: map[string]*TeamAgent{}}
	for _, o := range opts {
		o(&t.cfg)
	}
	c := &t.cfg
	if c.agentOnly != "" {
		return nil, fmt.Errorf("team %q: %s is an option of agents", name, c.agentOnly)
	}
	if err := t.addMembers(); err != nil {
		return nil, err
	}
	if err := t.checkSettings(); err != nil {
		return nil, err
	}
	c.graphID = "team." + name
	if err := t.proto.check(t); err != nil {
		return nil, fmt.Errorf("team %q, protocol %s: %w", name, t.proto.Name(), err)
	}
	g, err := t.buildGraph()
	if err != nil {
		return nil, err
	}
	t.graph = g
	if err := t.buildEngine(); err != nil {
		return nil, err
	}
	for _, sub := range t.nested {
		sub.addParent(t)
	}
	return t, nil
}

// addMembers resolves the protocol (default Sequential) and checks the members and
// indexes them.
func (t *TeamAgent) addMembers() error {
	c, name := &t.cfg, t.name
	if c.proto == "" {
		c.proto = Sequential
	}
	proto, err := newProtocol(&c.teamConfig)
	if err != nil {
		return fmt.Errorf("team %q: %w", name, err)
	}
	t.proto = proto
	if len(c.members) == 0 {
		return fmt.Errorf("team %q: no members", name)
	}
	for _, m := range c.members {
		if m == nil {
			return fmt.Errorf("team %q: nil member", name)
		}
		mn := m.Name()
		if err := checkName(mn); err != nil {
			return fmt.Errorf("team %q, member: %w", name, err)
		}
		if slices.Contains(reservedIDs, mn) {
			return fmt.Errorf("team %q: member name %q is the id of a node the protocol generates (%v)", name, mn, reservedIDs)
		}
		if t.byName[mn] != nil {
			return fmt.Errorf("team %q: two members named %q", name, mn)
		}
		if mn == name {
			return fmt.Errorf("team %q: a member has the team's name", name)
		}
		t.byName[mn] = m
		t.members = append(t.members, m)
		t.names = append(t.names, mn)
		if sub, ok := m.(*TeamAgent); ok {
			t.nested[mn] = sub
		}
	}
	return nil
}

// checkSettings resolves the max turns and the finish marker and checks the
// options that name members.
func (t *TeamAgent) checkSettings() error {
	c, name := &t.cfg, t.name
	t.maxTurns = c.maxTurns
	if t.maxTurns == 0 {
		t.maxTurns = max(defaultMaxTurns, len(t.members))
	}
	if t.maxTurns < 1 {
		return fmt.Errorf("team %q: max turns must be at least 1", name)
	}
	t.finish = c.finish
	if t.finish == "" {
		t.finish = defaultFinishMarker
	}
	for _, mn := range t.names {
		if t.isFinish(mn) {
			return fmt.Errorf("team %q: member name %q reads as the finish marker %q (or \"finish\"), so nobody could route to it", name, mn, t.finish)
		}
	}
	if c.fallback != "" && t.byName[c.fallback] == nil {
		return fmt.Errorf("team %q: default member %q is not a member", name, c.fallback)
	}
	if c.answerFrom != "" && t.byName[c.answerFrom] == nil {
		return fmt.Errorf("team %q: answer member %q is not a member", name, c.answerFrom)
	}
	if c.loopRepeats < 0 {
		return fmt.Errorf("team %q: loop detection needs a positive repeat count", name)
	}
	return nil
}

// checkName rejects names that cannot be node ids, call path segments or quoted in a
// condition.
func checkName(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	if strings.ContainsAny(s, "\"'`\\/: \t\r\n") || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("name %q may not contain quotes, backslashes, slashes, colons, spaces or control characters", s)
	}
	return nil
}

// checkTeamName rejects team names whose variables could be another team's. A team
// named n keeps "_team.n" (its trace), "_team.n.input", "_team.n.next" and
// "_team.n.prompt.<member>" ("_team.n:turns" cannot clash: names have no colon). Two
// names give the same variable only when one is the other followed by ".input",
// ".next", ".prompt" or ".prompt.<part of a member name>", so such a name would
// overwrite, over one context (a nested team, two teams in one graph), the state of a
// team whose name it extends. The variables keep their names (snapshots written
// before hold them); the names that could collide are refused instead.
func checkTeamName(s string) error {
	for _, suffix := range []string{".input", ".next", ".prompt"} {
		if strings.HasSuffix(s, suffix) {
			return fmt.Errorf("team name %q may not end with %q: its trace variable %q is a variable of another team, %q, and over one context each team would overwrite the other's state",
				s, suffix, traceKey(s), strings.TrimSuffix(s, suffix))
		}
	}
	if i := strings.Index(s, ".prompt."); i >= 0 {
		return fmt.Errorf("team name %q may not contain %q: its variables are named like the member prompts (%q) of another team, %q, and over one context each team would overwrite the other's state",
			s, ".prompt.", "_team."+s[:i]+".prompt.<member>", s[:i])
	}
	return nil
}

func (t *TeamAgent) buildGraph() (*flow.Graph, error) {
	c := &t.cfg
	spec := flow.NewSpec(c.graphID)
	spec.Title = "team " + t.name
	spec.Meta = map[string]any{MetaTeam: t.name, MetaProtocol: t.proto.Name(), MetaMaxTurns: t.maxTurns}
	spec.Start(TeamNodeStart).Do(&teamStartTask{t})
	if err := t.proto.build(t, spec); err != nil {
		return nil, fmt.Errorf("team %q, protocol %s: %w", t.name, t.proto.Name(), err)
	}
	spec.End(TeamNodeEnd).Do(&teamEndTask{t})
	for _, adj := range c.adjusters {
		adj(spec)
	}
	g, err := spec.Build()
	if err != nil {
		return nil, fmt.Errorf("team %q: graph: %w", t.name, err)
	}
	return g, nil
}

// memberNode adds the node of a member: an activity whose task is the member agent, or
// a call of a nested team's graph.
func (t *TeamAgent) memberNode(spec *flow.GraphSpec, index int, m Agent) *flow.NodeSpec {
	ns := spec.Activity(m.Name()).SetMeta(MetaAgent, m.Name())
	if r := m.Role(); r != "" && r != m.Name() {
		ns.SetTitle(m.Name() + " (" + r + ")")
	}
	if sub := t.nested[m.Name()]; sub != nil {
		return ns.SetTask("#" + sub.graph.ID)
	}
	return ns.Do(newMemberTask(t, index, m))
}

func (t *TeamAgent) buildEngine() error {
	t.obs = newObserver(t)
	opts := []flow.Option{flow.WithInterceptor(t.obs, observerIndex)}
	for _, i := range t.cfg.icpts {
		opts = append(opts, flow.WithInterceptor(i, 0))
	}
	opts = append(opts, t.cfg.engineOpts...)
	t.eng = flow.NewEngine(opts...)
	var reg func(x *TeamAgent) error
	seen := map[*TeamAgent]bool{}
	reg = func(x *TeamAgent) error {
		if seen[x] {
			return nil
		}
		seen[x] = true
		for _, sub := range x.nested {
			if err := reg(sub); err != nil {
				return err
			}
		}
		if err := t.eng.Register(x.graph); err != nil {
			return fmt.Errorf("team %q: %w", t.name, err)
		}
		return nil
	}
	return reg(t)
}

// observerIndex places the team's own interceptor outside every other one, so team
// start and end frame what the others record.
const observerIndex = math.MinInt

func (t *TeamAgent) addParent(p *TeamAgent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.parents == nil {
		t.parents = make(map[string]*TeamAgent)
	}
	t.parents[p.graph.ID] = p
}

func (t *TeamAgent) parent(graphID string) *TeamAgent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.parents[graphID]
}

// Name returns the team's name.
func (t *TeamAgent) Name() string { return t.name }

// Role returns the team's role.
func (t *TeamAgent) Role() string { return t.cfg.role }

// Graph returns the team's graph. It exports like any graph (package export); pass
// TaskNamer to the document writers to name the Go tasks of its nodes.
func (t *TeamAgent) Graph() *flow.Graph { return t.graph }

// Engine returns the team's engine: its graph and the graphs of nested teams are
// registered, its interceptors installed. Run the team with session.Runner on it
// (graph id Graph().ID, the prompt in InputKey()) to keep it in a session store.
func (t *TeamAgent) Engine() *flow.Engine { return t.eng }

// Interceptor returns the flow interceptor that reports the team's start and end
// when a run resumes, fails or suspends, and frames nested teams' nodes. The team's
// engine has it; add it to another engine that runs the team's graph (Task).
func (t *TeamAgent) Interceptor() flow.Interceptor { return t.obs }

// Task returns a task that runs the team's graph as a sub-graph of the node's graph,
// sharing its FlowContext: a team suspended inside resumes with the enclosing flow.
// The team's prompt is the variable InputKey() (else "prompt"); its answer is written
// to AnswerKey(name). The enclosing engine should carry Interceptor(), and must have
// the graphs of the teams nested in this one registered (Engine.Register of each
// nested TeamAgent's Graph): the team's graph calls them as "#team.<name>", and
// without them the run fails with subgraph_not_found.
//
// A failed call retried (a retry policy on the node, or a resume of the failed node)
// runs the team's graph again from its start, and the team retries its failed run:
// the member whose failure ended the call goes on with its run, and a member whose
// turn ended with an answer in the failed call replays that answer when it is asked
// the same question again, without calling its model or tools or asking anyone (see
// Teams in the package documentation).
func (t *TeamAgent) Task() flow.Task { return flow.Call(t.graph) }

// TaskNamer names the Go tasks of the team's nodes for the export package's document
// writers (export.WithTaskNamer(team.TaskNamer)): "<team>.start", "<team>.end",
// "<team>.supervisor", "<team>.merge" and "<team>.<member>".
func (t *TeamAgent) TaskNamer(n *flow.Node) (string, bool) {
	switch c := n.Component.(type) {
	case *teamStartTask:
		return c.t.name + "." + TeamNodeStart, true
	case *teamEndTask:
		return c.t.name + "." + TeamNodeEnd, true
	case *supervisorTask:
		return c.t.name + "." + TeamNodeSupervisor, true
	case *mergeTask:
		return c.t.name + "." + TeamNodeMerge, true
	case *memberTask:
		return c.t.name + "." + c.m.Name(), true
	}
	return "", false
}

// InputKey is the context variable the team reads its prompt from when it starts as
// the root graph of a run (Call sets it).
func (t *TeamAgent) InputKey() string { return inputKey(t.name) }

func inputKey(team string) string { return "_team." + team + ".input" }

// nextKey is the variable the router reads: the member that acts next, or "end".
func (t *TeamAgent) nextKey() string { return "_team." + t.name + ".next" }

// promptKey is the variable a member's agent task reads its prompt from.
func (t *TeamAgent) promptKey(member string) string { return "_team." + t.name + ".prompt." + member }

// Trace returns a copy of the team's trace in a FlowContext (nil if it never ran
// there).
func (t *TeamAgent) Trace(c *flow.Context) *TeamTrace { return traceIn(c, t.name) }

// Resume continues the team's run suspended in sess (Call with an empty prompt); it
// fails with flow.ErrNotResumable when the session holds no suspended run of the team.
func (t *TeamAgent) Resume(ctx context.Context, sess *AgentSession) (*Answer, error) {
	if sess == nil || sess.node != nil {
		return nil, fmt.Errorf("team %q: %w", t.name, flow.ErrNotResumable)
	}
	if pos := sess.position(); pos == nil || pos.graph != t.graph.ID {
		return nil, fmt.Errorf("team %q in session %q: %w", t.name, sess.id(), flow.ErrNotResumable)
	}
	// ResumeFlow claims the halted run atomically. Going through Call instead would
	// check for it a second time, and a concurrent Resume claiming it in between would
	// make this one start a new run with an empty prompt instead of failing.
	res, err := sess.ResumeFlow(ctx, t.eng, t.graph)
	if err != nil {
		return nil, fmt.Errorf("team %q: %w", t.name, err)
	}
	return t.answer(sess.Context(), res)
}

// Call runs the team on prompt in sess, on the team's engine, over the session's
// FlowContext. If the session holds the team's suspended run (a member waiting for a
// human decision, an approval node of a graph adjuster), Call resumes it instead;
// prompt must then be empty or the run's prompt (else ErrPending). A suspended run
// returns an Answer whose Pending says who waits (the member's pending tool calls, or
// the team itself with no calls for an approval node). After a failed run, Call with
// an empty prompt or the same prompt retries it from where it failed (the members
// that completed do not run again); another prompt starts a new run, in which no
// member resumes a run the failed one left waiting. One session holds
// one halted team run at a time.
//
// Called as the task of a node of another graph (AsTask), the team runs on a copy of
// the node's context and writes back what it changed; it cannot suspend there
// (ErrTeamSuspendedInNode): use Task or make it a team member for that. There its run
// ends interrupted when the node's context ends by no failure of the team's (as flow
// ends the node), and the node's resume or retry retries it, replaying the members
// that answered.
//
// A retry replays: a member turn that ended with an answer in the failed run is
// given again, with no model call, no tool call and no approval request, when the
// retry asks that member the same question at the same node and branch (a
// supervisor is asked again; a member it routes with another task runs). A replayed
// turn emits no events and calls no team hooks, and its metrics count once, so the
// retried run's trace is the one it would have had without the failure. The log of
// answered turns ("_team.<name>:turns") lives in the context with the trace, so a
// retry in another process replays too; it is dropped when the run can no longer be
// retried. A new evaluation of the team's graph replays nothing.
func (t *TeamAgent) Call(ctx context.Context, prompt string, sess *AgentSession) (*Answer, error) {
	if sess == nil {
		sess = NewSession("")
	}
	if sess.node != nil {
		return t.callInNode(ctx, prompt, sess)
	}
	var (
		res *flow.Result
		err error
	)
	resume := false
	if pos := sess.position(); pos != nil && pos.graph == t.graph.ID {
		tr := t.Trace(sess.Context())
		switch {
		case tr == nil || prompt == "" || prompt == tr.Prompt:
			resume = true // a failed run asked again with its prompt is retried from where it failed
		case tr.Status != TeamFailed:
			return nil, fmt.Errorf("team %q in session %q: %w (run %s)", t.name, sess.id(), ErrPending, tr.RunID)
		}
	}
	if resume {
		res, err = sess.ResumeFlow(ctx, t.eng, t.graph)
	} else {
		sess.Context().Set(t.InputKey(), prompt)
		res, err = sess.RunFlow(ctx, t.eng, t.graph)
	}
	if err != nil {
		return nil, fmt.Errorf("team %q: %w", t.name, err)
	}
	return t.answer(sess.Context(), res)
}

// answer turns a run's result into the team's Answer.
func (t *TeamAgent) answer(c *flow.Context, res *flow.Result) (*Answer, error) {
	tr := t.Trace(c)
	if tr == nil {
		return nil, fmt.Errorf("team %q: the run left no trace", t.name)
	}
	ans := &Answer{Agent: t.name, RunID: tr.RunID, Content: tr.FinalAnswer, Metrics: tr.Metrics, Trace: tr}
	switch res.Status {
	case flow.StatusCompleted:
		return ans, nil
	case flow.StatusSuspended, flow.StatusStopped:
		ans.Content = ""
		node := ""
		if res.Frontier != nil {
			if ids := res.Frontier.Pending(); len(ids) > 0 {
				node = ids[0]
			}
		}
		ans.Pending = t.pending(c, tr, node)
		return ans, nil
	}
	return nil, fmt.Errorf("team %q: run %s", t.name, res.Status)
}

// pending says who the suspended team waits for: the first member (of the team or of
// a nested team, or an agent a member called at its node) whose pending tool batch
// still has calls without a decision, else the first such with a pending batch, else
// the team itself (an approval node: node, "callpath:node", names it). The session may hold waiting
// runs of agents outside the team, and of members whose calls are all decided (a
// parallel member the suspension stopped before it resumed): reporting those would
// hide the calls a human must decide.
func (t *TeamAgent) pending(c *flow.Context, tr *TeamTrace, node string) *Pending {
	var decided *Pending
	for _, p := range SessionOf(c).PendingAll() {
		switch {
		case !t.hasMember(p.Agent) && !t.hasMember(p.Node):
		case len(p.Calls) > 0:
			return p
		case decided == nil:
			decided = p
		}
	}
	if decided != nil {
		return decided
	}
	return &Pending{Agent: t.name, RunID: tr.RunID, Instance: c.InstanceID(), Node: node, Calls: []PendingCall{}, Batch: []ToolCall{}}
}

// hasMember reports whether name is a member of the team or of a nested team.
func (t *TeamAgent) hasMember(name string) bool {
	if t.byName[name] != nil {
		return true
	}
	for _, sub := range t.nested {
		if sub.hasMember(name) {
			return true
		}
	}
	return false
}

// callInNode runs the team for an agent node of another graph: on a copy of the
// node's context, since the node's run holds the context itself.
func (t *TeamAgent) callInNode(ctx context.Context, prompt string, sess *AgentSession) (*Answer, error) {
	outer := sess.Context()
	before := outer.Vars()
	inner := flow.NewContextWith(outer.InstanceID(), before)
	inner.Set(t.InputKey(), prompt)
	in := &inNodeCall{team: t, node: ctx, continues: outer.Resumed() || outer.Attempt() > 1}
	res, err := t.eng.EvalGraph(context.WithValue(withParent(ctx, outer.RunID()), inNodeKey{}, in), t.graph, inner)
	after := inner.Vars()
	for k, v := range after {
		if old, ok := before[k]; !ok || !reflect.DeepEqual(old, v) {
			outer.Set(k, v)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			outer.Delete(k) // the team's completed run dropped its turn log, say
		}
	}
	if err != nil {
		if tr := t.Trace(inner); tr != nil && tr.Status == TeamInterrupted && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			// The run's error holds the cause a caller gave its cancellation: flow
			// interrupts the node, as the team's run was, only when it holds ctx.Err().
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return nil, fmt.Errorf("team %q: %w", t.name, err)
	}
	if res.Status != flow.StatusCompleted {
		return nil, fmt.Errorf("team %q at node %q: %w (%s)", t.name, sess.node.ID, ErrTeamSuspendedInNode, res.Reason)
	}
	return t.answer(inner, res)
}
