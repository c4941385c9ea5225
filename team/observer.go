package team

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// observer is the flow interceptor a team installs on its engine. The team's own
// nodes keep its trace (start, members, supervisor, end); what no node of the team
// sees is left to the observer: the end of an evaluation that did not reach the end
// node (suspended, failed, stopped: a TeamEnd with that status), the start of a
// resumed evaluation (a TeamStart "resumed"), and the node events of nested teams,
// whose nodes are sub-graph calls that run no team code of the parent.
type observer struct {
	flow.NopInterceptor
	teams map[string]*TeamAgent // graph id -> the team and every nested team

	// continuing holds the calls of team graphs (keyed by callKey) made by a node
	// execution that resumes a halted run or retries the node, while it runs. A team
	// graph called again from its start (a failed call) runs no resumed node: its
	// start node reads here whether the call belongs to the run it retries.
	continuing sync.Map
	// cut holds the team runs (keyed by callKey of their call) whose evaluation ended
	// with its context and no failure of their own, until the calling node ends.
	cut sync.Map
}

// callKey identifies a sub-graph call by the calling node's execution: the run, the
// caller's call path and branch, each followed by "/<calling node id>".
func callKey(runID, callerPath, callerBranch string) string {
	return runID + "\x00" + callerPath + "\x00" + callerBranch
}

// callsTeam reports whether node n calls the graph of a team this observer follows.
func (o *observer) callsTeam(n *flow.Node) bool { return o.calledTeam(n) != nil }

// calledTeam returns the team whose graph node n calls, if this observer follows it.
func (o *observer) calledTeam(n *flow.Node) *TeamAgent {
	if g, ok := flow.CalledGraph(n.Component); ok {
		return o.teamOf(g)
	}
	// Trimmed as flow trims a task reference: a call it makes is a call here too.
	if id, ok := strings.CutPrefix(strings.TrimSpace(n.Task), "#"); ok && n.Component == nil {
		return o.teams[strings.TrimSpace(id)]
	}
	return nil
}

// callerContinues reports whether the call of graph graphID that c's node belongs to
// was made by a node execution that resumes a halted run or retries the node.
func (o *observer) callerContinues(c *flow.Context, graphID string) bool {
	suffix := "/" + graphID
	path, ok1 := strings.CutSuffix(c.CallPath(), suffix)
	branch, ok2 := strings.CutSuffix(c.BranchID(), suffix)
	if !ok1 || !ok2 {
		return false
	}
	_, ok := o.continuing.Load(callKey(c.RunID(), path, branch))
	return ok
}

func newObserver(t *TeamAgent) *observer {
	o := &observer{teams: map[string]*TeamAgent{}}
	var add func(x *TeamAgent)
	add = func(x *TeamAgent) {
		if o.teams[x.cfg.graphID] != nil {
			return
		}
		o.teams[x.cfg.graphID] = x
		for _, sub := range x.nested {
			add(sub)
		}
	}
	add(t)
	return o
}

func (o *observer) teamOf(g *flow.Graph) *TeamAgent {
	if g == nil {
		return nil
	}
	t := o.teams[g.ID]
	if t == nil || (t.graph != nil && t.graph != g) {
		return nil
	}
	return t
}

// nestedAt returns the team whose member node n is a nested team, and that team.
func (o *observer) nestedAt(n *flow.Node) (*TeamAgent, *TeamAgent) {
	p := o.teamOf(n.Graph())
	if p == nil {
		return nil, nil
	}
	sub := p.nested[n.ID]
	if sub == nil || n.Task != "#"+sub.graph.ID {
		return nil, nil
	}
	return p, sub
}

// invState follows one evaluation of a team's graph.
type invState struct {
	team      *TeamAgent
	obs       *observer // the observer framing it, which sees the calling node's execution
	path      string
	ended     atomic.Bool // the end node ran
	suspended atomic.Bool
	kept      atomic.Bool // the start node kept the members' waiting runs (a retry)
	outer     *invState   // the evaluation this one is called from, if any
	mu        sync.Mutex
	retried   string   // the id of the failed team run the start node retries (kept)
	replayed  sync.Map // callKey of the nested teams' nodes whose turn was replayed -> struct{}
	failed    error
	waitsAt   string      // "callpath:node" of the first node that suspended
	cut       sync.Map    // turnKey -> cutTurn: member turns whose context ended, until their node ends
	inNode    *inNodeCall // set when this is the evaluation callInNode makes for an agent node
}

// inNodeCall describes the agent node of another graph a team runs for (callInNode):
// its evaluation there is a root evaluation of the team's graph on the team's engine,
// which no interceptor of the node's engine frames, so the node's execution is told
// through the context.
type inNodeCall struct {
	team *TeamAgent
	// node is the node task's context: when it ends, flow ends the node INTERRUPTED.
	node context.Context
	// continues is set when the node's execution resumes the halted flow run or
	// retries the node: the team then retries the run the node's last execution left.
	continues bool
}

type inNodeKey struct{}

type invKey struct{}

// invStateOf returns the state of the innermost evaluation of t's graph in ctx.
func invStateOf(ctx context.Context, t *TeamAgent) *invState {
	st, _ := ctx.Value(invKey{}).(*invState)
	if st != nil && st.team == t {
		return st
	}
	return nil
}

// enclosingStateOf returns the state of the innermost evaluation of t's graph that
// the evaluation in ctx is part of (itself, or one that called it).
func enclosingStateOf(ctx context.Context, t *TeamAgent) *invState {
	st, _ := ctx.Value(invKey{}).(*invState)
	for st != nil && st.team != t {
		st = st.outer
	}
	return st
}

// keep notes that the start node kept the members' waiting runs to retry the
// team's failed run runID.
func (st *invState) keep(runID string) {
	st.mu.Lock()
	st.retried = runID
	st.mu.Unlock()
	st.kept.Store(true)
}

// retries reports whether this evaluation retries the failed team run runID.
func (st *invState) retries(runID string) bool {
	if st == nil || runID == "" || !st.kept.Load() {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.retried == runID
}

// InterceptFlow frames an evaluation of a team's graph.
func (o *observer) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	t := o.teamOf(inv.Graph)
	if t == nil {
		return inv.Invoke(ctx)
	}
	st := &invState{team: t, obs: o, path: inv.Path}
	st.outer, _ = ctx.Value(invKey{}).(*invState)
	if in, _ := ctx.Value(inNodeKey{}).(*inNodeCall); in != nil {
		if in.team == t && inv.Node == nil {
			st.inNode = in
		}
		// The mark is for the node's own evaluation: nothing the team runs inside it
		// (a nested team, a member calling a team) is that node's.
		ctx = context.WithValue(ctx, inNodeKey{}, (*inNodeCall)(nil))
	}
	ctx = context.WithValue(ctx, invKey{}, st)
	c := inv.Context
	if inv.Resumed {
		t.resumed(ctx, c, inv.Path)
	}
	err := inv.Invoke(ctx)
	if st.ended.Load() {
		return err
	}
	cur := traceIn(c, t.name)
	if cur == nil || cur.Status != TeamRunning {
		return err // the run never started (or was skipped): nothing to end
	}
	status, failure, cause, cut := o.outcome(ctx, inv, st, cur, err)
	if cut {
		return err
	}
	tr := t.update(c, func(tr *TeamTrace) {
		tr.Status = status
		if failure != nil {
			tr.Error = AsError(failure, TypeAgentFailed)
		}
		tr.closeSegment(time.Now())
	})
	var pending *Pending
	if status == TeamSuspended {
		st.mu.Lock()
		node := st.waitsAt
		st.mu.Unlock()
		pending = t.pending(c, tr, node)
	}
	t.emitEnd(ctx, tr, cause, pending)
	return err
}

// OnNodeStart notes the calls of team graphs that continue a run, and reports the
// start of a nested team's member node.
func (o *observer) OnNodeStart(ctx context.Context, c *flow.Context, n *flow.Node) {
	if (c.Resumed() || c.Attempt() > 1) && o.callsTeam(n) {
		o.continuing.Store(callKey(c.RunID(), c.CallPath()+"/"+n.ID, c.BranchID()+"/"+n.ID), struct{}{})
	}
	p, sub := o.nestedAt(n)
	if p == nil {
		return
	}
	tr := p.trace(c)
	if p.replays(c, tr.RunID, sub.name, n.ID, c.BranchID(), func() string { return p.promptFor(tr, sub) }) {
		return // a replayed turn shows nobody working (nestedBegin)
	}
	Emit(ctx, nodeEvent(EventNodeStart, tr, sub.name, n.ID, c.BranchID()))
}

// OnNodeEnd notes how the nodes of a team evaluation end, drops the agent runs a
// recovered failure left waiting at its node, and reports the end of a nested team's
// member node.
func (o *observer) OnNodeEnd(ctx context.Context, c *flow.Context, n *flow.Node, end flow.NodeEnd) {
	var cause error // why a team run the node called was cut short
	if o.callsTeam(n) {
		key := callKey(c.RunID(), c.CallPath()+"/"+n.ID, c.BranchID()+"/"+n.ID)
		if c.Resumed() || c.Attempt() > 1 {
			o.continuing.Delete(key)
		}
		// Before the nested team's node end, which its run's end precedes. A call cut
		// short by the failure of the call it runs in may end its node completed (its
		// interrupted nodes ended instead of parking): the run did not reach its end
		// node, and failed only if flow fails the node.
		if cr, ok := o.cut.LoadAndDelete(key); ok {
			cr.(cutRun).ended(c, end.Status != trace.Failed)
			cause = cr.(cutRun).cause
		}
	}
	if p := o.teamOf(n.Graph()); p != nil && p.byName[n.ID] != nil {
		// Before the recovered failure's bookkeeping, which marks the failed turn.
		if st := invStateOf(ctx, p); st != nil {
			if ct, ok := st.cut.LoadAndDelete(turnKey(n.ID, c.BranchID())); ok {
				ct.(cutTurn).ended(c, n, end.Status == trace.Interrupted)
			}
		}
	}
	if end.Status == trace.Failed && end.Recovered {
		// A member run kept waiting by its failure (a model call that failed after an
		// approved batch) waits for a retry of its node; once the error policy
		// recovered, the flow went on and no retry comes. Left there, it would show as
		// a pending entry with nothing to decide, and a later turn of the member would
		// resume it instead of taking its new task.
		SessionOf(c).discardRunsAt(n.ID, c.BranchID())
		if p := o.teamOf(n.Graph()); p != nil && p.byName[n.ID] != nil {
			p.markRecovered(c, n.ID, c.BranchID()) // a retry of the team's run replays the failure
		}
		if sub := o.calledTeam(n); sub != nil {
			if p, _ := o.nestedAt(n); p == nil {
				// The flow went on past the call: nothing retries the team's run. (A
				// nested team's log waits for its parent's run, which a retry of the
				// parent's call would retry with it.)
				sub.dropTurns(c)
			}
		}
	}
	if st, _ := ctx.Value(invKey{}).(*invState); st != nil && c.CallPath() == st.path {
		switch {
		case end.Status == trace.Suspended:
			st.suspended.Store(true)
			st.mu.Lock()
			if st.waitsAt == "" {
				st.waitsAt = c.CallPath() + ":" + n.ID
			}
			st.mu.Unlock()
		case end.Status == trace.Failed && !end.Retrying && !end.Recovered:
			st.mu.Lock()
			if st.failed == nil {
				st.failed = end.Err
			}
			st.mu.Unlock()
		}
	}
	o.nestedEnd(ctx, c, n, end, cause)
}

// resumed reports the start of a resumed team run (if its run was under way), and
// the start of its turn to its parent's hooks when a halt elsewhere had cut it short.
func (t *TeamAgent) resumed(ctx context.Context, c *flow.Context, path string) {
	resumed, was := false, ""
	tr := t.update(c, func(tr *TeamTrace) {
		switch tr.Status {
		case TeamSuspended, TeamStopped, TeamFailed, TeamInterrupted, TeamRunning:
			if tr.RunID != "" {
				was = tr.Status
				tr.Status, tr.Segment, tr.Error = TeamRunning, time.Now(), nil
				resumed = true
			}
		}
	})
	if resumed {
		ev := teamEvent(EventTeamStart, tr)
		ev.Prompt, ev.Status = tr.Prompt, TeamResumed
		Emit(ctx, ev)
		t.cfg.icpts.teamStart(ctx, tr)
		if haltedElsewhere(was) {
			// Its parent's hooks saw the turn end when it was cut short (OnNodeEnd).
			if nest := t.nestingAt(path, tr.Branch); nest.parent != nil {
				nest.parent.cfg.icpts.memberStart(ctx, nest.parent.trace(c), t, tr.Prompt)
			}
		}
	}
}

// outcome classifies how a team run's evaluation ended: its status, its failure and
// the cause the end hooks get. cut reports a run cut short with its context, which
// the calling node's end ends (OnNodeEnd).
func (o *observer) outcome(ctx context.Context, inv *flow.Invocation, st *invState, cur *TeamTrace, err error) (status string, failure, cause error, cut bool) {
	t, c := st.team, inv.Context
	status = TeamStopped
	st.mu.Lock()
	failure = st.failed
	st.mu.Unlock()
	cause = failure // why the run ended, for the end hooks
	switch {
	case st.suspended.Load():
		status = TeamSuspended
	case failure == nil && st.inNode != nil && st.inNode.node.Err() != nil:
		// Run for an agent node whose context ended (a fail-fast sibling, the
		// caller's cancellation), by no failure of its own: flow ends that node
		// INTERRUPTED and runs it again on resume, which retries this run, so it did
		// not fail. (Unlike a root team the caller cancelled: nothing runs it again.)
		status, cause = TeamInterrupted, context.Cause(st.inNode.node)
	case failure == nil && err == nil && ctx.Err() != nil && inv.Node != nil:
		// Cut short with its context, by no failure of its own: because another
		// branch of the run, or of the call it runs in, failed, or the caller
		// cancelled. Flow then ends the calling node INTERRUPTED (it runs again on
		// resume), but only flow knows which context it checked (a NodeStarter may
		// give the task its own): the calling node's end (OnNodeEnd) ends the run as
		// flow classifies the node.
		key := callKey(c.RunID(), strings.TrimSuffix(inv.Path, "/"+inv.Graph.ID), strings.TrimSuffix(cur.Branch, "/"+inv.Graph.ID))
		o.cut.Store(key, cutRun{t: t, ctx: ctx, cause: context.Cause(ctx), at: time.Now()})
		return status, failure, cause, true
	case failure != nil || err != nil || ctx.Err() != nil:
		status = TeamFailed
		if failure == nil {
			failure = err
		}
		if failure == nil {
			failure = context.Cause(ctx)
		}
		cause = failure
	}
	return status, failure, cause, false
}

// nestedEnd reports the end of a nested team's member node; cause is why the nested
// team's run was cut short, if it was.
func (o *observer) nestedEnd(ctx context.Context, c *flow.Context, n *flow.Node, end flow.NodeEnd, cause error) {
	p, sub := o.nestedAt(n)
	if p == nil {
		return
	}
	tr := p.trace(c)
	ev := nodeEvent(EventNodeEnd, tr, sub.name, n.ID, c.BranchID())
	ev.Duration = end.Duration
	switch end.Status {
	case trace.Completed:
		if st := enclosingStateOf(ctx, p); st != nil {
			if _, ok := st.replayed.LoadAndDelete(callKey(c.RunID(), n.ID, c.BranchID())); ok {
				// The parent replayed the turn (nestedBegin): the nested team did not run,
				// and its trace may be another turn's.
				return
			}
		}
		str := sub.trace(c)
		ev.Status, ev.Content = str.Status, str.FinalAnswer
		if str.Status == TeamSkipped {
			ev.Status = RecordSkipped
		} else {
			u := usageOf(str.Metrics)
			ev.Usage = &u
		}
	case trace.Failed:
		tr = p.nestedFailed(ctx, c, n, sub, end.Err, end.Duration)
		ev.Status, ev.Error = RunFailed, AsError(end.Err, TypeAgentFailed)
	case trace.Suspended:
		ev.Status = RunPending
	case trace.Interrupted:
		ev.Status = RunInterrupted
	default:
		ev.Status = string(end.Status)
	}
	Emit(ctx, ev)
	if end.Status != trace.Failed && haltedElsewhere(sub.trace(c).Status) {
		// Cut short by a halt elsewhere, the turn ends for the parent's hooks as a
		// member's does, and starts again if the resume goes on with it
		// (InterceptFlow). (A nested team waiting for its own members' decisions is
		// one turn until it ends.)
		p.cfg.icpts.memberEnd(ctx, tr, sub, nil, cause)
	}
}

// haltedElsewhere reports whether a team run of this status was cut short, not by
// itself: interrupted, or stopped.
func haltedElsewhere(status string) bool { return status == TeamInterrupted || status == TeamStopped }

// cutRun is a team run, called as a sub-graph, whose evaluation ended with its
// context before the run's end, waiting for flow to say how the calling node ended.
type cutRun struct {
	t     *TeamAgent
	ctx   context.Context
	cause error
	at    time.Time // when the evaluation ended
}

// ended ends the cut run as flow classified its calling node: interrupted (the run
// halted, or the call it runs in failed, elsewhere: the run did not fail, and goes
// on when the node runs again, or is retried when the call it runs in is), else
// failed. The team's end hooks get the cause either way, as a member's do for its
// interrupted turn.
func (cr cutRun) ended(c *flow.Context, interrupted bool) {
	tr := cr.t.update(c, func(tr *TeamTrace) {
		if tr.Status != TeamRunning {
			return
		}
		tr.Status, tr.Error = TeamInterrupted, nil
		if !interrupted {
			tr.Status, tr.Error = TeamFailed, AsError(cr.cause, TypeAgentFailed)
		}
		tr.closeSegment(cr.at)
	})
	cr.t.emitEnd(cr.ctx, tr, cr.cause, nil)
}
