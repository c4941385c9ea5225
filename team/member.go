package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flowteam/flowteam/flow"
)

// memberTask is the task of a member node: the member agent as a flow task (AsTask),
// framed by the team's bookkeeping: admission (max turns, interceptors), the prompt,
// node events, the member record and the protocol's routing.
type memberTask struct {
	t     *TeamAgent
	m     Agent
	index int
	inner *agentTask
}

func newMemberTask(t *TeamAgent, index int, m Agent) *memberTask {
	mt := &memberTask{t: t, m: m, index: index}
	mt.inner = asTask(m, withPromptKey(t.promptKey(m.Name())), asTeamMember(t, m),
		onAnswer(func(ctx context.Context, _ *flow.Context, _ *flow.Node, ans *Answer) error {
			if s, ok := ctx.Value(memberSlotKey{}).(*memberSlot); ok {
				s.setAnswer(ans)
			}
			return nil
		}))
	return mt
}

// asTeamMember makes the agent task of m, a member of team, also continue the run
// waiting at its node and branch that team's start node kept in this evaluation of
// its graph, when the turn asks m the run's question: kept gives the team's prompt
// for the turn. A retried team is evaluated again from its start, so a supervisor
// may route the member with another task: that is a new question, which a run kept
// for another never answers.
func asTeamMember(team *TeamAgent, m Agent) taskOption {
	return func(t *agentTask) {
		t.kept = func(ctx context.Context, c *flow.Context) (string, bool) {
			if st := invStateOf(ctx, team); st == nil || !st.kept.Load() {
				return "", false
			}
			return team.promptFor(team.trace(c), m), true
		}
	}
}

// AgentName names the member for the audit.
func (mt *memberTask) AgentName() string { return mt.m.Name() }

// memberSlot carries what a member's run reports back besides its error: its answer,
// and a handoff made with the transfer tool.
type memberSlot struct {
	members []string
	self    string

	mu      sync.Mutex
	ans     *Answer
	handoff *handoff
}

type handoff struct {
	To, Reason string
}

type memberSlotKey struct{}

func (s *memberSlot) setAnswer(a *Answer) {
	s.mu.Lock()
	s.ans = a
	s.mu.Unlock()
}

func (s *memberSlot) result() (*Answer, *handoff) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ans, s.handoff
}

// Run runs the member's turn.
func (mt *memberTask) Run(ctx context.Context, c *flow.Context, n *flow.Node) error {
	t, m := mt.t, mt.m
	name, branch := m.Name(), c.BranchID()
	tr := t.trace(c)
	// A member whose run waits for decisions was admitted before the pause: it goes on,
	// with its prompt, if its node continues the run (else the node discards it, and
	// this is a new turn).
	prompt := t.promptFor(tr, m)
	asked := prompt
	if q, err := mt.inner.question(c, n, prompt); err == nil {
		asked = q
		// A replay comes first: the run a failure kept waiting is the member's last
		// turn in the failed run, so a turn it answered there with the same question
		// came before it.
		if turn, ok := t.replayable(c, tr.RunID, name, n.ID, branch, q); ok {
			return mt.replay(c, n, prompt, turn)
		}
	}
	run := SessionOf(c).waitingRun(name)
	resuming := run != nil && mt.inner.continues(ctx, run, c, n)
	if resuming {
		asked = run.Prompt
	}
	start := nodeEvent(EventNodeStart, tr, name, n.ID, branch)
	if !resuming {
		if reason := t.admit(ctx, tr, mt.index, m); reason != "" {
			Emit(ctx, start)
			tr, dec := t.skip(c, n.ID, branch, m, reason)
			t.decided(ctx, tr, dec, n.ID, branch)
			end := nodeEvent(EventNodeEnd, tr, name, n.ID, branch)
			end.Status = RecordSkipped
			Emit(ctx, end)
			return nil
		}
	}
	if !resuming {
		c.Set(t.promptKey(name), prompt)
	}
	start.Prompt = prompt
	Emit(ctx, start)
	t.cfg.icpts.memberStart(ctx, tr, m, prompt)

	slot := &memberSlot{members: t.names, self: name}
	mctx := context.WithValue(ctx, memberSlotKey{}, slot)
	mctx = withMemberRun(mctx, c.RunID(), tr.RunID)
	began := time.Now()
	if err := mt.runInner(ctx, mctx, c, n, asked, began); err != nil {
		return err
	}
	return mt.ended(ctx, c, n, tr, slot, asked, began)
}

// runInner runs the member's task. A failure is recorded as the turn's, except one
// that ended with the turn's context: the observer records that turn when flow says
// how the node ended.
func (mt *memberTask) runInner(ctx, mctx context.Context, c *flow.Context, n *flow.Node, asked string, began time.Time) error {
	t, name, branch := mt.t, mt.m.Name(), c.BranchID()
	err := func() error {
		defer func() {
			if p := recover(); p != nil {
				// The turn failed like any failing turn (record, node end, routing);
				// then the engine reports the panic as any task panic, with its stack.
				mt.failed(ctx, c, n, asked, began, &Error{Type: TypeAgentFailed, Message: fmt.Sprintf("agent %q panicked: %v", name, p)})
				panic(p)
			}
		}()
		return mt.inner.Run(mctx, c, n)
	}()
	if err != nil {
		if st := invStateOf(ctx, t); st != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Ended with its context: flow ends such a node INTERRUPTED (the run
			// halted, the sub-graph call failed elsewhere, or the caller cancelled:
			// the node runs again on resume, the failure is not the member's), but
			// only flow knows which context it checked (a NodeStarter may give the
			// task a context of its own). The team's observer records the turn when
			// flow says how the node ended.
			st.cut.Store(turnKey(n.ID, branch), cutTurn{mt: mt, ctx: ctx, asked: asked, began: began, err: err})
			return err
		}
		mt.failed(ctx, c, n, asked, began, err)
		return err
	}
	return nil
}

// ended records the member's answer (or its wait for decisions) and reports the
// node's end.
func (mt *memberTask) ended(ctx context.Context, c *flow.Context, n *flow.Node, tr *TeamTrace, slot *memberSlot, asked string, began time.Time) error {
	t, m := mt.t, mt.m
	name, branch := m.Name(), c.BranchID()
	d := time.Since(began)
	ans, ho := slot.result()
	if ho == nil && ans != nil && ans.Pending == nil {
		ho = handoffIn(ans.Trace)
	}
	end := nodeEvent(EventNodeEnd, tr, name, n.ID, branch)
	end.Duration = d
	switch {
	case ans == nil:
		// An agent that answers nothing and fails nothing: keep the turn, empty.
		ans = &Answer{Agent: name}
	case ans.Pending != nil:
		tr = t.update(c, func(tr *TeamTrace) { tr.State.Waiting = name })
		end.Status = RunPending
		end.Pending = ans.Pending.Calls
		Emit(ctx, end)
		t.cfg.icpts.memberEnd(ctx, tr, m, ans, nil)
		return nil
	}
	rec := TeamRecord{Kind: RecordMember, Role: m.Role(), Source: name, Node: n.ID, Branch: branch, RunID: ans.RunID,
		Content: ans.Content, Status: RunCompleted, Started: began, Duration: d, Usage: usageOf(ans.Metrics)}
	tr, dec := t.answered(c, name, turnQuestion{prompt: asked}, rec, ans, ho)
	t.decided(ctx, tr, dec, n.ID, branch)
	end.Status, end.Content = RunCompleted, ans.Content
	u := usageOf(ans.Metrics)
	end.Usage, end.Answer = &u, ans
	Emit(ctx, end)
	t.cfg.icpts.memberEnd(ctx, tr, m, ans, nil)
	return nil
}

// replay takes again, in a retry of the team's failed run, a turn that run took to
// its end: the member's recorded answer is its answer, and it does not run; a
// recorded failure (one an error policy recovered) fails the node again with the
// recorded error, for the policy to recover again. Asked again, the member would call
// its model and tools again (a payment made twice) and ask its human again. The turn
// emits no events and calls no hooks: the stream and the interceptors saw it in the
// failed run, and showing it again would show the member working twice. Only the
// trace (and the answer variable) has it, as the run would have had it without the
// failure.
func (mt *memberTask) replay(c *flow.Context, n *flow.Node, prompt string, turn answeredTurn) error {
	name, rec := mt.m.Name(), turn.Record
	c.Set(mt.t.promptKey(name), prompt)
	if rec.Status == RunFailed {
		mt.t.failedTurn(c, name, turnQuestion{digest: turn.Question}, rec)
		if rec.Error == nil {
			return &Error{Type: TypeAgentFailed, Message: fmt.Sprintf("agent %q failed", name)}
		}
		return rec.Error
	}
	c.Set(mt.inner.answerKeyAt(n), rec.Content)
	ans := &Answer{Agent: name, RunID: rec.RunID, Content: rec.Content, Metrics: turn.Metrics}
	mt.t.answered(c, name, turnQuestion{digest: turn.Question}, rec, ans, turn.Handoff)
	return nil
}

// failed records a failed turn of the member, lets the protocol route after it, and
// reports the end of the member's node.
func (mt *memberTask) failed(ctx context.Context, c *flow.Context, n *flow.Node, asked string, began time.Time, err error) {
	t, m := mt.t, mt.m
	name, branch := m.Name(), c.BranchID()
	d := time.Since(began)
	e := AsError(err, TypeAgentFailed)
	tr, dec := t.failedTurn(c, name, turnQuestion{prompt: asked}, TeamRecord{Kind: RecordMember, Role: m.Role(), Source: name,
		Node: n.ID, Branch: branch, Status: RunFailed, Error: e, Started: began, Duration: d})
	t.decided(ctx, tr, dec, n.ID, branch)
	end := nodeEvent(EventNodeEnd, tr, name, n.ID, branch)
	end.Duration, end.Status, end.Error = d, RunFailed, e
	Emit(ctx, end)
	t.cfg.icpts.memberEnd(ctx, tr, m, nil, err)
}

// cutTurn is a member turn whose context ended before its answer, waiting for flow
// to say how its node ended (observer.OnNodeEnd).
type cutTurn struct {
	mt    *memberTask
	ctx   context.Context
	asked string
	began time.Time
	err   error
}

// turnKey identifies a member turn in an evaluation of its team's graph: one node
// runs at most once at a time in a branch.
func turnKey(node, branch string) string { return node + "\x00" + branch }

// ended records the cut turn as flow classified its node: interrupted (the run
// halted, or the call failed, elsewhere), else failed.
func (ct cutTurn) ended(c *flow.Context, n *flow.Node, interrupted bool) {
	if !interrupted {
		ct.mt.failed(ct.ctx, c, n, ct.asked, ct.began, ct.err)
		return
	}
	ct.mt.interrupted(ct.ctx, c, n, ct.began, ct.err)
}

// interrupted reports the end of a turn flow interrupted. The trace records no turn
// (no record, no turn counted, no routing), as for a turn that never began: the node
// runs again on resume, and the member then takes its turn; a run it kept waiting for
// decisions still waits.
func (mt *memberTask) interrupted(ctx context.Context, c *flow.Context, n *flow.Node, began time.Time, err error) {
	t, m := mt.t, mt.m
	tr := t.trace(c)
	end := nodeEvent(EventNodeEnd, tr, m.Name(), n.ID, c.BranchID())
	end.Duration, end.Status = time.Since(began), RunInterrupted
	Emit(ctx, end)
	t.cfg.icpts.memberEnd(ctx, tr, m, nil, err)
}

type transferArgs struct {
	To     string `json:"to" jsonschema:"name of the member to hand over to"`
	Reason string `json:"reason,omitempty" jsonschema:"why, and what the member should do"`
}

// TransferTool returns the tool a member of a Swarm team hands the conversation over
// with: transfer_to {"to": "<member>", "reason": "..."}. Give it to the members'
// ReActAgents (WithTools). When the member's run ends, the team routes to the member
// named in its last transfer; a member that answers without transferring finishes the
// team's work. The tool refuses (as an invalid_arguments observation the model can
// correct) a name that is not a member of the team, and outside a team it fails.
func TransferTool() Tool {
	return NewTool(TransferToolName, "Hand the conversation over to another member of the team.",
		nil,
		func(ctx context.Context, a transferArgs) (map[string]any, error) {
			s, ok := ctx.Value(memberSlotKey{}).(*memberSlot)
			if !ok {
				return nil, &Error{Type: TypeInvalidQuery, Message: "transfer_to is only available to members of a team"}
			}
			to := strings.TrimSpace(a.To)
			if !slices.Contains(s.members, to) {
				return nil, &Error{Type: TypeInvalidArguments, Message: fmt.Sprintf("no member named %q (members: %s)", to, strings.Join(s.members, ", "))}
			}
			s.mu.Lock()
			s.handoff = &handoff{To: to, Reason: a.Reason}
			s.mu.Unlock()
			return map[string]any{"transferred_to": to}, nil
		})
}

// handoffIn finds the last handoff a ReAct run made with the transfer tool. The slot
// sees only the calls since the run last resumed, so a member that handed over and
// then waited for a human decision would otherwise lose its handoff; the run's trace
// is kept across the pause. A transfer a human skipped did not run, so it is no
// handoff.
func handoffIn(t any) *handoff {
	tr, ok := t.(*ReActTrace)
	if !ok || tr == nil {
		return nil
	}
	for i := len(tr.Steps) - 1; i > 0; i-- {
		obs, act := tr.Steps[i], tr.Steps[i-1]
		if obs.Kind != StepObservation || act.Kind != StepAction || act.Call == nil || act.Call.Name != TransferToolName ||
			obs.Observation == nil || !obs.Observation.OK() ||
			act.Decision != nil && act.Decision.Kind != DecisionApprove {
			continue
		}
		var a transferArgs
		if json.Unmarshal(act.Call.Args, &a) != nil || strings.TrimSpace(a.To) == "" {
			continue
		}
		return &handoff{To: strings.TrimSpace(a.To), Reason: a.Reason}
	}
	return nil
}

// parseTransfer reads a handoff written in text: a line "transfer_to: <name>" (or
// "transfer_to <name>", "transfer to <name>", "handoff: <name>"), case-insensitive.
// It returns the named target (possibly not a member) and whether there was one.
func parseTransfer(text string) (string, bool) {
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		low := strings.ToLower(l)
		for _, p := range []string{"transfer_to", "transfer to", "handoff", "hand off to", "hand over to"} {
			if !strings.HasPrefix(low, p) || len(l) > len(p) && isNameByte(l[len(p)]) {
				continue // "Handoffs are…", "Transfer tomorrow…": a word, not the directive
			}
			rest := strings.TrimSpace(l[len(p):])
			rest = strings.TrimSpace(strings.TrimPrefix(rest, ":"))
			rest = strings.Trim(rest, "\"'`*.,;!")
			if f := strings.Fields(rest); len(f) > 0 {
				return strings.Trim(f[0], "\"'`*.,;!"), true
			}
		}
	}
	return "", false
}

// isNameByte reports whether b can continue a word of a directive or a name.
func isNameByte(b byte) bool {
	return b == '_' || b == '-' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// toolArgs decodes a tool call's arguments into a map ("" values dropped).
func toolArgs(raw json.RawMessage) map[string]string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok && s != "" {
			out[k] = s
		}
	}
	return out
}
