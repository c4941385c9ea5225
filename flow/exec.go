package flow

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// Executing one node: the step limit, hooks, guard, task, routing decision, outcome and
// retries (run.go moves the tokens between nodes).

// execNode runs the token's node: hooks, guard, task, routing decision; failures go
// through the error policy (and the node's retry policy) before the end hook.
//
// The common case, a node that completes without interceptors, takes the short path
// here; everything else goes through execAttempts. Keeping this frame small matters:
// a branch goroutine starts with a small stack, and a deep frame chain makes every one
// of them grow and copy it.
func (r *run) execNode(ctx context.Context, tok *token, local *[]*token) *token {
	step, ok := r.takeStep(tok)
	if !ok {
		return nil
	}
	if tok.effects != nil {
		tok.effects = nil // an earlier node's that did not complete (see Context.Effect)
	}
	tok.call.last.Store(int32(tok.node.n.index) + 1)
	if len(r.icpts) > 0 {
		return r.execHooked(ctx, tok, local, step)
	}
	err := r.runNode(ctx, tok)
	if err == nil && !tok.suspended && !tok.interrupted {
		rt, err := r.decide(ctx, tok)
		if err == nil {
			return r.completed(tok, rt, local)
		}
		return r.execAttempts(ctx, tok, local, step, &firstAttempt{err: err, routing: true})
	}
	return r.execAttempts(ctx, tok, local, step, &firstAttempt{err: err})
}

// execHooked is execNode's short path with interceptors: a node that completes at
// its first attempt. Anything else goes on in execAttempts, its start hooks called.
func (r *run) execHooked(ctx context.Context, tok *token, local *[]*token, step int) *token {
	tok.retries = 0
	taskCtx, began := r.startHooks(ctx, tok)
	err := r.runNode(taskCtx, tok)
	if err == nil && !tok.suspended && !tok.interrupted {
		rt, err := r.decide(ctx, tok)
		if err == nil {
			r.endHooks(ctx, tok, &attemptOutcome{status: nodeCompleted}, began, step, 1)
			return r.completed(tok, rt, local)
		}
		return r.execAttempts(ctx, tok, local, step, &firstAttempt{err: err, routing: true, started: true, began: began})
	}
	return r.execAttempts(ctx, tok, local, step, &firstAttempt{err: err, started: true, began: began})
}

// firstAttempt is the outcome of an attempt execNode already made: the task's error,
// or the routing error when routing is set; started says it called the start hooks,
// at began.
type firstAttempt struct {
	err     error
	routing bool
	started bool
	began   time.Duration
}

// takeStep counts a node execution against the step limit; past it, the run fails and
// the token is parked.
func (r *run) takeStep(tok *token) (int, bool) {
	step := int(r.steps.Add(1))
	if int64(step) > r.maxSteps {
		r.refuseStep(tok)
		return 0, false
	}
	return step, true
}

func (r *run) refuseStep(tok *token) {
	r.steps.Add(-1) // the refused step did not run
	r.halt(stateFailed, "", nil, r.nodeError(tok, CodeStepLimit, fmt.Errorf("%w (%d)", ErrStepLimit, r.maxSteps)))
	r.park(tok)
}

// execAttempts runs the node's attempts with hooks, outcome classification, the error
// policy and retries. first, when set, is the outcome of the first attempt.
func (r *run) execAttempts(ctx context.Context, tok *token, local *[]*token, step int, first *firstAttempt) *token {
	cn := tok.node
	for attempt := 1; ; attempt++ {
		tok.retries = int32(attempt - 1)
		var (
			taskCtx context.Context
			began   time.Duration
		)
		if first != nil && first.started {
			began = first.began
		} else {
			taskCtx, began = r.startHooks(ctx, tok)
		}
		var a attemptOutcome
		if first != nil {
			a.err, a.routing = first.err, first.routing
			first = nil
		} else {
			a.err = r.runNode(taskCtx, tok)
		}
		r.classify(ctx, tok, &a)
		if a.status == nodeFailed {
			a.ne = r.taskError(tok, a.err)
			a.err = a.ne
			a.dec = r.decideError(ctx, tok, a.ne)
			a.retry = !a.routing && a.dec.Retryable && cn.retry != nil && cn.idempotent && attempt < cn.retry.Max
		}
		if len(r.icpts) > 0 {
			r.endHooks(ctx, tok, &a, began, step, attempt)
		}
		if a.retry {
			r.retries.Add(1)
			tok.effects = nil // the failed attempt's: the retry queues its own
			if r.waitRetry(ctx, cn.retry, attempt) {
				if tok.mode == modeResumeCall {
					// The resumed call failed and its frame is aborted: re-entering it
					// would fail again without running anything, so the retry makes a
					// fresh call, as it does for a call that was not resumed.
					tok.mode, tok.resume = modeExec, nil
				}
				continue
			}
			if r.runCancelled(tok) {
				return r.putOffRetry(tok)
			}
		}
		return r.afterAttempt(ctx, tok, &a, attempt, local)
	}
}

// attemptOutcome is what one attempt at a node came to.
type attemptOutcome struct {
	status  NodeStatus
	err     error
	routing bool // err is the routing decision's, not the task's: never retried
	held    bool // a sub-graph call halted inside: its frame keeps the caller's place
	rt      route
	ne      *NodeError
	dec     ErrorDecision
	retry   bool
}

// startHooks calls the interceptors' start hooks and returns the node's context (its
// own, when an interceptor is a NodeStarter) and when the node began, since the run
// began (one monotonic clock read, no wall clock; none when no interceptor wants
// node times, see NodeTimer).
func (r *run) startHooks(ctx context.Context, tok *token) (context.Context, time.Duration) {
	if len(r.icpts) == 0 {
		return ctx, 0
	}
	var began time.Duration
	if r.timed {
		began = time.Since(r.began)
	}
	for i := range r.icpts {
		if s := r.icpts[i].starter; s != nil {
			if c := s.StartNode(ctx, &tok.view, tok.node.n); c != nil {
				ctx = c
			}
		} else {
			r.icpts[i].i.OnNodeStart(ctx, &tok.view, tok.node.n)
		}
	}
	return ctx, began
}

// classify sets the attempt's status from the task's error and the token's controls;
// for a completed node it also makes the routing decision.
func (r *run) classify(ctx context.Context, tok *token, a *attemptOutcome) {
	a.status = nodeCompleted
	a.held = errors.Is(a.err, errCallHalted)
	switch {
	case a.err != nil && r.cancelled(ctx, tok, a.err): // err first: the call is not inlined
		a.status, a.routing = nodeInterrupted, false // a link condition's, too
		if tok.suspended {
			a.status, a.err = nodeSuspended, nil // the task suspended first: its node runs again on resume
		}
	case a.routing:
		a.status = nodeFailed
	case a.held && runState(r.state.Load()) == stateSuspended:
		a.status, a.err = nodeSuspended, nil
	case a.held:
		a.status, a.err = nodeInterrupted, nil
	case a.err != nil && errors.Is(a.err, errCallCut):
		a.status, a.err = nodeInterrupted, nil
	case a.err != nil:
		a.status = nodeFailed
	case tok.suspended:
		a.status = nodeSuspended
	case tok.interrupted:
		a.status = nodeInterrupted
	}
	if a.status != nodeCompleted {
		return
	}
	var err error
	if a.rt, err = r.decide(ctx, tok); err != nil {
		a.err, a.status, a.routing = err, nodeFailed, true
		if r.cancelled(ctx, tok, err) {
			a.status, a.routing = nodeInterrupted, false
		}
	}
}

// endHooks calls the interceptors' end hooks, innermost first.
func (r *run) endHooks(ctx context.Context, tok *token, a *attemptOutcome, began time.Duration, step, attempt int) {
	end := NodeEnd{Status: a.status, Err: a.err, Step: step,
		Arrivals: tok.arrivals, Attempt: attempt, Retrying: a.retry, Recovered: a.status == nodeFailed && !a.retry && a.dec.Recover}
	if r.timed {
		end.Start, end.Duration = r.began.Add(began), time.Since(r.began)-began
	}
	if end.Recovered {
		end.Goto = a.dec.Goto
	}
	if a.status == nodeSuspended {
		end.Reason = tok.reason
		if !tok.suspended { // a sub-graph suspended inside the call
			end.Reason = r.suspendReason()
		}
	}
	for i := len(r.icpts) - 1; i >= 0; i-- {
		r.icpts[i].i.OnNodeEnd(ctx, &tok.view, tok.node.n, end)
	}
}

// putOffRetry handles a retry whose wait the run's cancellation cut short: the retry is
// put off, not given up. As for a node the cancellation cut short, the policy does not
// decide on the failure (a recover goto would skip the node on resume): the node runs
// again on resume, or ends with the sub-graph call a failure aborted. (A context a node
// gave the call ending the wait, its own deadline, leaves the last failure standing,
// for the policy.)
func (r *run) putOffRetry(tok *token) *token {
	r.haltCancelled(tok)
	if r.halted() {
		tok.mode, tok.resume = modeExec, nil // a resumed call failed: a fresh call, as a retry makes
		r.park(tok)
		return nil
	}
	tok.arrivals = 0
	cutUnderAbort(tok)
	return r.endToken(tok)
}

// afterAttempt moves the token on from its node's last attempt. A parked token keeps
// its join's arrivals for the node's run on resume.
func (r *run) afterAttempt(ctx context.Context, tok *token, a *attemptOutcome, attempt int, local *[]*token) *token {
	if a.held {
		return nil // the sub-graph halted: its call frame keeps the caller's place
	}
	switch a.status {
	case nodeCompleted:
		return r.completed(tok, a.rt, local)
	case nodeFailed:
		// failedWith drops the arrivals unless the failure parks the token, to run
		// its node again on resume.
		return r.failedWith(ctx, tok, a.ne, a.dec, a.routing, attempt, local)
	case nodeInterrupted:
		// A node cancelled because the run halted runs again on resume; one whose
		// task called Interrupt has ended its branch, whatever the siblings did.
		if r.halted() && !tok.interrupted {
			tok.mode = modeExec
			r.park(tok)
			return nil
		}
		tok.arrivals = 0
		cutUnderAbort(tok)
		return r.endToken(tok)
	default: // nodeSuspended
		tok.suspended, tok.reason = false, ""
		tok.mode = modeExec
		r.park(tok)
		return nil
	}
}

// cancelled reports whether err, a node's (its guard, task or link conditions), is
// ctx's cancellation: because the run or its sub-graph call failed elsewhere, or by
// the caller. The cancellation is not the node's failure for its error policy to
// recover from (a recover goto would skip the node on resume, a recovered routing
// failure would end the branch): the run fails with it, as when the drive loop
// notices it between nodes, and the node is interrupted, to run again on resume. A
// task that called Interrupt first has ended its branch: the run fails only if
// something is left to run, which notices the cancellation at its next step (halted
// here, the run failed naming a node that would not run again, with nothing to
// resume). Inside a sub-graph call, ctx may have ended for a reason of a node's own
// (a NodeStarter's deadline for the calling node, which the call runs under): that
// fails the node, as the NodeStarter's doc says, so the call and its calling node
// fail, for their policies to decide.
func (r *run) cancelled(ctx context.Context, tok *token, err error) bool {
	if err == nil || ctx.Err() == nil || !errors.Is(err, ctx.Err()) || !r.runCancelled(tok) {
		return false
	}
	if !tok.interrupted {
		r.haltCancelled(tok)
	}
	return true
}

// runCancelled reports whether the token's context ended because the run's did (the
// caller cancelled, the run failed and cancelled its branches, or a deadline an
// interceptor gave the whole run passed) or because its sub-graph call, or one it
// runs in, was aborted: not for a reason of a node's own.
func (r *run) runCancelled(tok *token) bool {
	return r.root.ctx.Err() != nil || r.aborted(tok)
}

// completed moves a token whose node completed along its decided route.
func (r *run) completed(tok *token, rt route, local *[]*token) *token {
	tok.arrivals = 0
	if r.ckpt != nil {
		tok.completed = tok.node // for the checkpoint afterStep takes
	}
	tok.mode = modeFollow
	return r.apply(tok, rt, local)
}

func (r *run) suspendReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason
}

// runNode evaluates the node's guard and runs its task, turning panics into errors.
func (r *run) runNode(ctx context.Context, tok *token) (err error) {
	cn := tok.node
	if tok.mode == modeResumeCall {
		return r.resumeCall(ctx, tok)
	}
	if cn.kind == taskNone {
		return nil
	}
	if !cn.guard.always() {
		ok, err := cn.guard.test(ctx, &tok.view)
		if err != nil {
			return r.nodeError(tok, CodeCondition, err)
		}
		if !ok {
			return nil
		}
	}
	defer func() {
		if p := recover(); p != nil {
			err = r.nodeError(tok, CodePanic, fmt.Errorf("%w: %v\n%s", ErrTaskPanic, p, debug.Stack()))
		}
	}()
	switch cn.kind {
	case taskGo:
		if err := cn.task.Run(ctx, &tok.view, cn.n); err != nil {
			return r.taskError(tok, err)
		}
	case taskScript:
		r.st.mu.Lock()
		_, err := cn.script.Eval((*lockedView)(&tok.view))
		r.st.mu.Unlock()
		if err != nil {
			var raised *Error
			if errors.As(err, &raised) {
				err = raised // raise() is deliberate: its code and message say it all, without expr's source excerpt
			}
			code := errorCode(err) // raise(code, ...) names its own code
			if code == "" {
				code = CodeScript
			}
			return r.nodeError(tok, code, err)
		}
	case taskSubgraph:
		return r.callSubgraph(ctx, tok)
	}
	return nil
}

// test evaluates a condition that is not always true against view, a run's branch
// view or, outside a run, a root view (Engine.TestLink).
func (c *cond) test(ctx context.Context, view *Context) (bool, error) {
	if c.named != nil {
		return c.named.Test(ctx, view)
	}
	view.st.mu.Lock()
	v, err := c.expr.Eval((*lockedView)(view))
	view.st.mu.Unlock()
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%w (got %T)", ErrBadCondition, v)
	}
	return b, nil
}
