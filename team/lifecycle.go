package team

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flowteam/flowteam/flow"
)

var teamRunSeq atomic.Uint64

var teamRunPrefix = "t" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"

func newTeamRunID() string { return teamRunPrefix + strconv.FormatUint(teamRunSeq.Add(1), 10) }

// update applies fn to the team's trace atomically (parallel members record
// concurrently) and returns a copy of the result. fn must not call Context methods.
func (t *TeamAgent) update(c *flow.Context, fn func(tr *TeamTrace)) *TeamTrace {
	var out *TeamTrace
	c.Update(traceKey(t.name), func(old any, _ bool) any {
		tr := traceValue(old)
		if tr == nil {
			tr = &TeamTrace{Team: t.name, Protocol: t.proto.Name()}
		}
		fn(tr)
		out = tr.clone()
		return *tr
	})
	return out
}

// trace returns a copy of the team's trace in c, or an empty one.
func (t *TeamAgent) trace(c *flow.Context) *TeamTrace {
	if tr := traceIn(c, t.name); tr != nil {
		return tr
	}
	return &TeamTrace{Team: t.name, Protocol: t.proto.Name()}
}

// setNext mirrors the trace's next member into the variable the router reads.
func (t *TeamAgent) setNext(c *flow.Context, tr *TeamTrace) {
	next := tr.State.Next
	if next == "" {
		next = TeamNodeEnd
	}
	c.Set(t.nextKey(), next)
}

// nesting describes where a team's graph runs: under a parent team (the calling node
// and its branch), or on its own.
type nesting struct {
	parent *TeamAgent
	node   string
	branch string
}

// nestingOf finds the parent team from the call path "…/<parentGraph>/<node>/<graph>".
func (t *TeamAgent) nestingOf(c *flow.Context) nesting {
	return t.nestingAt(c.CallPath(), c.BranchID())
}

// nestingAt is nestingOf for the evaluation of the team's graph at call path path,
// whose top-level branch is branch.
func (t *TeamAgent) nestingAt(path, branch string) nesting {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return nesting{}
	}
	rest := path[:i]
	j := strings.LastIndexByte(rest, '/')
	if j < 0 {
		return nesting{}
	}
	node, parentPath := rest[j+1:], rest[:j]
	parentGraph := parentPath[strings.LastIndexByte(parentPath, '/')+1:]
	p := t.parent(parentGraph)
	if p == nil {
		return nesting{}
	}
	return nesting{parent: p, node: node, branch: strings.TrimSuffix(branch, "/"+node+"/"+t.graph.ID)}
}

// teamStartTask is the task of the start node: it opens the team's trace.
type teamStartTask struct{ t *TeamAgent }

// AgentName names the team for the audit.
func (s *teamStartTask) AgentName() string { return s.t.name }

// Run starts the team run. A nested team asks its parent for its prompt (and whether
// it may run at all); a root team reads InputKey, else the "prompt" variable.
func (s *teamStartTask) Run(ctx context.Context, c *flow.Context, _ *flow.Node) error {
	t := s.t
	now := time.Now()
	tr := &TeamTrace{Team: t.name, Protocol: t.proto.Name(), RunID: newTeamRunID(), Instance: c.InstanceID(),
		Branch: c.BranchID(), Status: TeamRunning, Records: []TeamRecord{}, Route: []string{}, Started: now, Segment: now}
	nest := t.nestingOf(c)
	if nest.parent != nil {
		prompt, skip, replayed, ptr := nest.parent.nestedBegin(ctx, c, nest, t)
		if replayed {
			// The parent took this team's turn from the failed run it retries: the run
			// that answered stays this team's, and the call ends here.
			c.Interrupt()
			return nil
		}
		tr.ParentRunID, tr.Prompt = ptr.RunID, prompt
		if skip {
			tr.Status, tr.Segment = TeamSkipped, time.Time{}
			c.Set(traceKey(t.name), *tr)
			c.Interrupt() // the call ends here; the parent goes on
			return nil
		}
	} else {
		if p, ok := ctx.Value(parentKey{}).(string); ok && p != "" {
			tr.ParentRunID = p
		} else {
			tr.ParentRunID = c.RunID()
		}
		v, ok := c.Get(t.InputKey())
		if !ok {
			v, _ = c.Get(defaultPromptKey)
		}
		tr.Prompt, _ = v.(string)
	}
	// A new run starts its members afresh. A member run still waiting for decisions
	// belongs to a run that was abandoned (it failed, or a new prompt replaced it):
	// resumed here, its approved calls would act for a task nobody asks for now.
	// Unless this call retries the team's failed run: flow calls a sub-graph again
	// from its start when a resume retries the node whose call failed, and the
	// member whose failure kept its run waiting (a model call that failed after an
	// approved batch) must go on with it, as on a retry of its own node, instead of
	// asking the human again and running the approved calls twice. Only the flow run
	// that failed retries it: a new evaluation asking the same question is a new run.
	st := invStateOf(ctx, t)
	logged := strings.Contains(c.CallPath(), "/") || st != nil && st.inNode != nil
	if old := t.retries(ctx, c, tr, nest.parent); old != "" {
		if st != nil {
			st.keep(old)
		}
		// The members whose turns ended with an answer in the failed run replay them
		// (memberTask.replay) for the same question: they acted already.
		t.startTurns(c, tr.RunID, old, logged)
	} else {
		sess := SessionOf(c)
		for _, name := range t.names {
			if sess.waitingRun(name) != nil {
				sess.Discard(name)
			}
		}
		t.startTurns(c, tr.RunID, "", logged)
	}
	t.proto.start(t, tr)
	c.Set(traceKey(t.name), *tr)
	t.setNext(c, tr)
	ev := teamEvent(EventTeamStart, tr)
	ev.Prompt, ev.Status = tr.Prompt, TeamStarted
	Emit(ctx, ev)
	t.cfg.icpts.teamStart(ctx, tr)
	return nil
}

// continues reports whether the evaluation of the team's graph belongs to the flow
// run that left the team's failed run: the start node's own execution, or the
// sub-graph call it runs in, resumes that run or retries its node. A new evaluation
// (EvalGraph, session.Runner.Run) over a context that still holds a failed run of
// the team, with the same question, is a new run all the same. The call is known to
// the observer of the engine that runs it (a nested team's is its root team's).
func (t *TeamAgent) continues(ctx context.Context, c *flow.Context) bool {
	o := t.obs
	if st := invStateOf(ctx, t); st != nil {
		o = st.obs
		if st.inNode != nil {
			// Evaluated afresh for an agent node of another graph: the node's execution
			// says which flow run it belongs to.
			return st.inNode.continues
		}
	}
	return c.Resumed() || c.Attempt() > 1 || o.callerContinues(c, t.graph.ID)
}

// retries returns the id of the team's failed run in c that the run tr starts
// retries, or "": the same question in the same branch, where the evaluation belongs
// to the flow run that left the failed run (continues). For a nested team that is
// the same run of its parent, where the calling node resumes or retries, or the
// failed run its parent retries (a parent called again from its start, which its
// start node kept, has a new run id). In the same run of its parent, a call made by
// a new execution of the node (the parent routed the team again after an error
// policy recovered its failure) is a new turn, as it is for a member, and retries
// nothing. A root team's parent run id is the flow run's, which a resume renews.
func (t *TeamAgent) retries(ctx context.Context, c *flow.Context, tr *TeamTrace, parent *TeamAgent) string {
	old := traceIn(c, t.name)
	if old == nil || old.Status != TeamFailed && old.Status != TeamInterrupted || old.Branch != tr.Branch || old.Prompt != tr.Prompt {
		return ""
	}
	switch {
	case parent == nil || old.ParentRunID == tr.ParentRunID:
		if !t.continues(ctx, c) {
			return ""
		}
	case !enclosingStateOf(ctx, parent).retries(old.ParentRunID):
		return ""
	}
	return old.RunID
}

// teamEndTask is the task of the end node: it closes the trace with the final answer.
type teamEndTask struct{ t *TeamAgent }

// AgentName names the team for the audit.
func (s *teamEndTask) AgentName() string { return s.t.name }

// Run ends the team run.
func (s *teamEndTask) Run(ctx context.Context, c *flow.Context, _ *flow.Node) error {
	t := s.t
	tr := t.update(c, func(tr *TeamTrace) {
		if tr.FinalAnswer == "" {
			tr.FinalAnswer = t.lastAnswer(tr)
		}
		tr.Status, tr.State.Next, tr.State.Waiting = TeamCompleted, "", ""
		tr.closeSegment(time.Now())
	})
	c.Set(AnswerKey(t.name), tr.FinalAnswer)
	// A completed run is never retried, nor are the runs of nested teams it called
	// (a nested team whose failure was recovered keeps its log until then: a retry
	// of this run calls it again).
	t.dropTurns(c)
	if st := invStateOf(ctx, t); st != nil {
		st.ended.Store(true)
	}
	t.emitEnd(ctx, tr, nil, nil)
	if nest := t.nestingOf(c); nest.parent != nil {
		nest.parent.nestedEnd(ctx, c, nest, t, tr)
	}
	return nil
}

// emitEnd reports the end of a team run (completed, failed, suspended, stopped). The
// event's Answer is the one Call gives: a suspended run's says who waits (pending).
func (t *TeamAgent) emitEnd(ctx context.Context, tr *TeamTrace, err error, pending *Pending) {
	ev := teamEvent(EventTeamEnd, tr)
	ev.Status, ev.Content, ev.Duration = tr.Status, tr.FinalAnswer, tr.Metrics.Duration
	u := usageOf(tr.Metrics)
	ev.Usage = &u
	ev.Error = tr.Error
	ev.Answer = &Answer{Agent: t.name, RunID: tr.RunID, Content: tr.FinalAnswer, Metrics: tr.Metrics, Trace: tr}
	if pending != nil {
		ev.Answer.Content, ev.Answer.Pending = "", pending
	}
	Emit(ctx, ev)
	t.cfg.icpts.teamEnd(ctx, tr, err)
}

// admit decides whether a member may take its turn: "" if it may, else why not.
func (t *TeamAgent) admit(ctx context.Context, tr *TeamTrace, index int, m Agent) string {
	if tr.State.Halt != "" {
		return tr.State.Halt
	}
	if t.proto.concurrent() {
		// Members of a parallel team take their turns at once: max turns admits the first
		// ones in member order, so which members run does not depend on timing.
		if index >= t.maxTurns {
			return ReasonMaxTurns
		}
	} else if tr.Turns >= t.maxTurns {
		return ReasonMaxTurns
	}
	if !t.cfg.icpts.agentContinue(ctx, tr, m) {
		return ReasonInterceptor
	}
	return ""
}

// skip records a member turn that did not happen. Under a sequential protocol max
// turns also halts the members after it, with one decision saying so.
func (t *TeamAgent) skip(c *flow.Context, node, branch string, m Agent, reason string) (*TeamTrace, *RouteDecision) {
	var dec *RouteDecision
	tr := t.update(c, func(tr *TeamTrace) {
		tr.Records = append(tr.Records, TeamRecord{Turn: tr.Turns, Kind: RecordMember, Role: m.Role(), Source: m.Name(),
			Node: node, Branch: branch, Status: RecordSkipped, Content: reason, Started: time.Now()})
		dec = t.proto.afterSkip(t, tr, m.Name(), reason)
	})
	if dec != nil {
		t.setNext(c, tr)
	}
	return tr, dec
}

// lastAnswer is the team's answer when nobody gave one explicitly: the last answer
// of the WithAnswerFrom member, else of any member. When the member whose answer it
// should be (the WithAnswerFrom member, else the one that took the last turn) failed
// that turn, a failure an error policy recovered, the answer ends with a note saying
// so ("[member] failed: …", as a parallel merge reports a gap): an earlier answer is
// never passed off as the answer of a member that did not give one.
func (t *TeamAgent) lastAnswer(tr *TeamTrace) string {
	ans := ""
	if t.cfg.answerFrom != "" {
		ans = tr.LastAnswerOf(t.cfg.answerFrom)
	}
	if ans == "" {
		ans = tr.lastAnswer()
	}
	r, ok := t.answeringTurn(tr)
	if !ok || r.Status != RunFailed {
		return ans
	}
	note := describeRecord(r.Source, r)
	if ans == "" {
		return note
	}
	return ans + "\n\n" + note
}

// answeringTurn returns the last turn taken (not skipped) by the member whose answer
// is the team's: the WithAnswerFrom member, else any member.
func (t *TeamAgent) answeringTurn(tr *TeamTrace) (TeamRecord, bool) {
	for i := len(tr.Records) - 1; i >= 0; i-- {
		r := tr.Records[i]
		if r.Kind == RecordMember && r.Status != RecordSkipped && (t.cfg.answerFrom == "" || r.Source == t.cfg.answerFrom) {
			return r, true
		}
	}
	return TeamRecord{}, false
}

// promptFor builds a member's prompt.
func (t *TeamAgent) promptFor(tr *TeamTrace, m Agent) string {
	task := ""
	if d := tr.LastDecision; d != nil && d.Action == ActionRoute && d.To == m.Name() {
		task = d.Task
	}
	if t.cfg.prompt != nil {
		return t.cfg.prompt(tr, m, task)
	}
	var b strings.Builder
	b.WriteString(tr.Prompt)
	if !t.proto.concurrent() {
		first := true
		for _, r := range tr.Records {
			if r.Kind != RecordMember || r.Status != RunCompleted {
				continue
			}
			if first {
				b.WriteString("\n\nWork so far:")
				first = false
			}
			b.WriteString("\n[" + r.Source + "] " + r.Content)
		}
	}
	if task != "" {
		b.WriteString("\n\nYour task: " + task)
	}
	return b.String()
}

// decided reports a decision (event and interceptors).
func (t *TeamAgent) decided(ctx context.Context, tr *TeamTrace, d *RouteDecision, node, branch string) {
	if d == nil {
		return
	}
	ev := teamEvent(EventDecision, tr)
	ev.Node, ev.Branch = node, branch
	dd := *d
	ev.Route = &dd
	Emit(ctx, ev)
	t.cfg.icpts.decision(ctx, tr, dd)
}

// nestedBegin is called by a nested team's start node: it admits the nested team's
// turn (skip when it may not take it) and gives its prompt, or replays the turn the
// failed run this run retries took to its answer (replayed: the nested team must not
// run). A replayed turn emits nothing and calls no hooks, as a member's (see
// memberTask.replay).
func (t *TeamAgent) nestedBegin(ctx context.Context, c *flow.Context, nest nesting, sub *TeamAgent) (prompt string, skip, replayed bool, tr *TeamTrace) {
	tr = t.trace(c)
	prompt = t.promptFor(tr, sub)
	if turn, ok := t.replayable(c, tr.RunID, sub.name, nest.node, nest.branch, prompt); ok {
		c.Set(AnswerKey(sub.name), turn.Record.Content)
		ans := &Answer{Agent: sub.name, RunID: turn.Record.RunID, Content: turn.Record.Content, Metrics: turn.Metrics}
		tr, _ = t.answered(c, sub.name, turnQuestion{digest: turn.Question}, turn.Record, ans, turn.Handoff)
		if st := enclosingStateOf(ctx, t); st != nil {
			st.replayed.Store(callKey(c.RunID(), nest.node, nest.branch), struct{}{}) // for the observer's node end
		}
		return prompt, false, true, tr
	}
	if reason := t.admit(ctx, tr, slices.Index(t.names, sub.name), sub); reason != "" {
		tr, dec := t.skip(c, nest.node, nest.branch, sub, reason)
		t.decided(ctx, tr, dec, nest.node, nest.branch)
		return "", true, false, tr
	}
	t.cfg.icpts.memberStart(ctx, tr, sub, prompt)
	return prompt, false, false, tr
}

// nestedEnd is called by a nested team's end node with its final trace: the nested
// team's run is one member turn of this team.
func (t *TeamAgent) nestedEnd(ctx context.Context, c *flow.Context, nest nesting, sub *TeamAgent, str *TeamTrace) {
	ans := &Answer{Agent: sub.name, RunID: str.RunID, Content: str.FinalAnswer, Metrics: str.Metrics, Trace: str}
	rec := TeamRecord{Kind: RecordMember, Role: sub.Role(), Source: sub.name, Node: nest.node, Branch: nest.branch,
		RunID: str.RunID, Content: str.FinalAnswer, Status: RunCompleted, Started: str.Started,
		Duration: str.Metrics.Duration, Usage: usageOf(str.Metrics)}
	tr, dec := t.answered(c, sub.name, turnQuestion{prompt: str.Prompt}, rec, ans, nil)
	t.decided(ctx, tr, dec, nest.node, nest.branch)
	t.cfg.icpts.memberEnd(ctx, tr, sub, ans, nil)
}

// nestedFailed records the failure of a nested team's run (its node failed).
func (t *TeamAgent) nestedFailed(ctx context.Context, c *flow.Context, n *flow.Node, sub *TeamAgent, err error, d time.Duration) *TeamTrace {
	e := AsError(err, TypeAgentFailed)
	var dec *RouteDecision
	tr := t.update(c, func(tr *TeamTrace) {
		tr.Turns++
		tr.Records = append(tr.Records, TeamRecord{Turn: tr.Turns, Kind: RecordMember, Role: sub.Role(), Source: sub.name,
			Node: n.ID, Branch: c.BranchID(), Status: RunFailed, Error: e, Started: time.Now().Add(-d), Duration: d})
		tr.Route = append(tr.Route, sub.name)
		dec = t.proto.afterFailure(t, tr, sub.name)
	})
	if dec != nil {
		t.setNext(c, tr)
		t.decided(ctx, tr, dec, n.ID, c.BranchID())
	}
	t.cfg.icpts.memberEnd(ctx, tr, sub, nil, err)
	return tr
}
