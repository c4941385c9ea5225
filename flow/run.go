package flow

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

type runState int32

// Ordered by precedence: a failure outranks a suspension, which outranks a stop.
const (
	stateRunning runState = iota
	stateStopped
	stateSuspended
	stateFailed
)

// run is one evaluation (or resumption) of a graph.
type run struct {
	e        *Engine
	id       string
	fc       *Context
	st       *contextState
	root     *frame
	maxSteps int64
	icpts    []indexedInterceptor
	steps    atomic.Int64
	state    atomic.Int32
	rctx     runCtx
	began    time.Time

	mu        sync.Mutex // frames' counters, frontier, errors
	reason    string
	err       error
	errs      []*NodeError
	failures  []BranchFailure
	frontier  []*token
	calls     map[*frame]struct{} // sub-graph calls in progress, for Context.Trace
	records   []ExecutionError
	fallback  map[string]any // state applied on fatal paths
	retries   atomic.Int64
	fallbacks atomic.Int64
	ckpt      *checkpointer
	live      map[*token]struct{} // tokens not parked, waiting or ended; only when checkpointing

	// Kept in the run to save allocations per evaluation: a Result or a Frontier keeps
	// the whole run alive, which costs less than allocating each part.
	rootFrame frame
	seed      [1]*token
	startTok  token
	res       Result
	lastBuf   [1]lastNode
}

// runIDs makes run ids unique within the process and, through the start time, across
// processes: "r" + start time in base 36 + "-" + sequence number.
var runIDs = struct {
	prefix string
	seq    atomic.Uint64
}{prefix: "r" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"}

// NewRunID returns a new run id, unique within the process and, through the process
// start time, across processes: what the engine uses when WithRunID is not given, and
// what callers use to know a run's id before it starts (a session's claim).
func NewRunID() string {
	var buf [40]byte
	b := append(buf[:0], runIDs.prefix...)
	return string(strconv.AppendUint(b, runIDs.seq.Add(1), 10))
}

func (r *run) halted() bool { return runState(r.state.Load()) != stateRunning }

// halt moves the run to a terminal state of at least the given precedence.
func (r *run) halt(s runState, reason string, tok *token, err error) {
	r.mu.Lock()
	if s > runState(r.state.Load()) {
		r.state.Store(int32(s))
		if s == stateSuspended {
			r.reason = reason
		}
	}
	if err != nil && r.err == nil {
		r.err = err
	}
	if s == stateSuspended && tok != nil {
		tok.suspended = true
	}
	r.mu.Unlock()
	if s == stateFailed {
		r.rctx.cancel(context.Canceled) // fail fast: siblings see the cancellation through ctx
	}
}

func (r *run) park(tok *token) {
	r.mu.Lock()
	if tok.mode == modeResumeCall {
		// A sub-graph call that was never re-entered: its own parked tokens are the
		// frontier, as they were before this resume.
		r.frontier = append(r.frontier, tok.resume...)
	} else {
		r.frontier = append(r.frontier, tok)
	}
	r.mu.Unlock()
}

// drive moves a token, and the tokens it fans out to sequentially, until each one ends,
// waits at a join, or is parked because the run halted.
func (r *run) drive(ctx context.Context, tok *token) {
	var local []*token
	done := r.doneOf(ctx)
	for {
		for tok != nil {
			if r.halted() {
				r.park(tok)
				break
			}
			if tok.call.caller != nil && r.aborted(tok) {
				tok = r.endToken(tok) // the sub-graph call failed: withdraw
				continue
			}
			select {
			case <-done:
				r.halt(stateFailed, "", nil, r.nodeError(tok, CodeCancelled, context.Cause(ctx)))
				r.park(tok)
				tok = nil
				continue
			default:
			}
			cur := tok
			tok = r.step(ctx, tok, &local)
			if r.ckpt != nil {
				r.afterStep(ctx, cur, tok)
			}
		}
		if len(local) == 0 {
			return
		}
		tok, local = local[len(local)-1], local[:len(local)-1]
	}
}

// doneOf returns the channel drive watches for cancellation. For the run's own context
// that is the caller's channel: the run's cancellation is seen through halted, and
// asking runCtx for its channel would allocate one.
func (r *run) doneOf(ctx context.Context) <-chan struct{} {
	if rc, ok := ctx.(*runCtx); ok && rc == &r.rctx {
		return rc.parent.Done()
	}
	return ctx.Done()
}

// aborted reports whether the token's sub-graph call (or one of its callers) failed.
func (r *run) aborted(tok *token) bool {
	for c := tok.call; c.caller != nil; c = c.caller {
		if c.abort.Load() != nil {
			return true
		}
	}
	return false
}

// step handles one token at its node and returns the token to continue with, if any.
func (r *run) step(ctx context.Context, tok *token, local *[]*token) *token {
	cn := tok.node
	switch tok.mode {
	case modeFollow, modeBody:
		return r.follow(ctx, tok, local)
	case modeFailed:
		ne := tok.failure
		tok.failure, tok.mode = nil, modeFollow
		return r.failed(ctx, tok, ne, true, 1, local)
	case modeResumeCall:
		return r.execNode(ctx, tok, local)
	case modeArrive:
		if cn.join {
			if !r.arrive(tok) {
				return nil
			}
		} else if cn.isClose {
			if f := nearestLoop(tok.frame); f != nil {
				r.mu.Lock()
				f.closing = cn
				r.mu.Unlock()
				return r.endToken(tok)
			}
		}
	}
	return r.execNode(ctx, tok, local)
}

// arrive registers a token at a join. It reports whether the token goes on: it was
// the last branch of its split, or it came from no split at all.
func (r *run) arrive(tok *token) bool {
	f := tok.frame
	if f == nil || f.kind != frameSplit {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f.join == nil {
		f.join = tok.node
	} else if f.join != tok.node {
		err := r.nodeError(tok, CodeJoinMismatch, fmt.Errorf("%w: split %q joined at %q and %q", ErrJoinMismatch, f.split.n.ID, f.join.n.ID, tok.node.n.ID))
		r.mu.Unlock()
		r.halt(stateFailed, "", nil, err)
		r.mu.Lock()
		return false
	}
	f.arrived++
	f.pending--
	if f.pending > 0 {
		if r.live != nil {
			delete(r.live, tok) // it now counts as an arrival of f
		}
		return false
	}
	tok.frame, tok.branch, tok.mode, tok.arrivals = f.parent, f.branch, modeExec, f.arrived
	if r.live != nil {
		r.commitLocked(tok)
	}
	return true
}

func nearestLoop(f *frame) *frame {
	for ; f != nil && f.kind != frameCall; f = f.parent {
		if f.kind == frameLoop {
			return f
		}
	}
	return nil
}

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
	tok.call.last.Store(int32(tok.node.n.index) + 1)
	if len(r.icpts) > 0 {
		return r.execAttempts(ctx, tok, local, step, nil)
	}
	err := r.runNode(ctx, tok)
	if err == nil && !tok.suspended && !tok.interrupted {
		rt, err := r.decide(ctx, tok)
		if err == nil {
			tok.arrivals = 0
			if r.ckpt != nil {
				tok.completed = tok.node
			}
			tok.mode = modeFollow
			return r.apply(tok, rt, local)
		}
		return r.execAttempts(ctx, tok, local, step, &firstAttempt{err: err, routing: true})
	}
	return r.execAttempts(ctx, tok, local, step, &firstAttempt{err: err})
}

// firstAttempt is the outcome of an attempt execNode already made without hooks: the
// task's error, or the routing error when routing is set.
type firstAttempt struct {
	err     error
	routing bool
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
	n := cn.n
	for attempt := 1; ; attempt++ {
		var began time.Duration // since the run began: one monotonic clock read, no wall clock
		if len(r.icpts) > 0 {
			began = time.Since(r.began)
			for i := range r.icpts {
				r.icpts[i].i.OnNodeStart(ctx, &tok.view, n)
			}
		}
		var (
			err     error
			rt      route
			routing bool
		)
		if first != nil {
			err, routing = first.err, first.routing
			first = nil
		} else {
			err = r.runNode(ctx, tok)
		}
		status := nodeCompleted
		held := errors.Is(err, errCallHalted)
		switch {
		case routing:
			status = nodeFailed
		case held && runState(r.state.Load()) == stateSuspended:
			status, err = nodeSuspended, nil
		case held:
			status, err = nodeInterrupted, nil
		case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) && (r.halted() || r.aborted(tok)):
			status = nodeInterrupted // cancelled because the run or its sub-graph call failed elsewhere
		case err != nil:
			status = nodeFailed
		case tok.suspended:
			status = nodeSuspended
		case tok.interrupted:
			status = nodeInterrupted
		}
		var (
			ne    *NodeError
			dec   ErrorDecision
			retry bool
		)
		if status == nodeCompleted {
			if rt, err = r.decide(ctx, tok); err != nil {
				status, routing = nodeFailed, true
			}
		}
		if status == nodeFailed {
			ne = r.taskError(tok, err)
			err = ne
			dec = r.decideError(ctx, tok, ne)
			retry = !routing && dec.Retryable && cn.retry != nil && cn.idempotent && attempt < cn.retry.Max
		}
		if len(r.icpts) > 0 {
			end := NodeEnd{Status: status, Err: err, Start: r.began.Add(began), Duration: time.Since(r.began) - began, Step: step, Arrivals: tok.arrivals,
				Attempt: attempt, Retrying: retry, Recovered: status == nodeFailed && !retry && dec.Recover}
			if end.Recovered {
				end.Goto = dec.Goto
			}
			if status == nodeSuspended {
				end.Reason = r.suspendReason()
			}
			for i := len(r.icpts) - 1; i >= 0; i-- {
				r.icpts[i].i.OnNodeEnd(ctx, &tok.view, n, end)
			}
		}
		if retry {
			r.retries.Add(1)
			if r.waitRetry(ctx, cn.retry, attempt) {
				continue
			}
			// Cancelled while waiting: the last failure stands.
		}
		if held {
			return nil // the sub-graph halted: its call frame keeps the caller's place
		}
		tok.arrivals = 0
		if r.ckpt != nil && status == nodeCompleted {
			tok.completed = cn
		}
		switch status {
		case nodeFailed:
			return r.failedWith(ctx, tok, ne, dec, routing, attempt, local)
		case nodeInterrupted:
			if r.halted() {
				tok.mode = modeExec
				r.park(tok)
				return nil
			}
			return r.endToken(tok)
		case nodeSuspended:
			tok.suspended = false
			tok.mode = modeExec
			r.park(tok)
			return nil
		}
		tok.mode = modeFollow
		return r.apply(tok, rt, local)
	}
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
		ok, err := r.test(ctx, tok, &cn.guard)
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

// test evaluates a condition for the token.
func (r *run) test(ctx context.Context, tok *token, c *cond) (bool, error) {
	if c.named != nil {
		return c.named.Test(ctx, &tok.view)
	}
	r.st.mu.Lock()
	v, err := c.expr.Eval((*lockedView)(&tok.view))
	r.st.mu.Unlock()
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%w (got %T)", ErrBadCondition, v)
	}
	return b, nil
}

// endToken ends a token that finished, was interrupted or was withdrawn, and returns
// the token that continues because of it, if any.
func (r *run) endToken(tok *token) *token {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live != nil {
		delete(r.live, tok)
	}
	next := r.unitDone(tok.frame)
	if next != nil && r.live != nil {
		r.commitLocked(next)
	}
	return next
}

// unitDone ends one unit of frame f (a token or a nested frame) and returns the token
// that continues because of it, if any: the join of a split whose other branches
// already arrived, the next iteration of a loop, or the closing node of a finished
// loop. The caller holds r.mu.
func (r *run) unitDone(f *frame) *token {
	for f != nil {
		f.pending--
		if f.pending > 0 {
			return nil
		}
		switch f.kind {
		case frameSplit:
			if f.arrived > 0 {
				t := r.newToken(f.join, modeExec, f.parent, f.branch)
				t.arrivals = f.arrived
				return t
			}
			if len(f.failed) > 0 {
				// Every branch failed: "continue with what finished" leaves nothing to
				// continue with, so the split itself fails instead of ending silently.
				t := r.newToken(f.split, modeFailed, f.parent, f.branch)
				t.failure = &NodeError{Graph: f.split.n.graph.ID, Path: f.call.path, Node: f.split.n.ID, NodeType: f.split.n.Type,
					Title: f.split.n.Title, Branch: f.branch, Step: int(r.steps.Load()), Code: CodeAllBranchesFailed,
					Err: fmt.Errorf("%w: %w", ErrAllBranchesFailed, joinNodeErrors(f.failed))}
				return t
			}
		case frameLoop:
			f.index++
			if f.index < len(f.items) {
				f.pending = 1
				return r.newToken(f.loop, modeBody, f, iterationBranch(f))
			}
			if f.closing != nil {
				return r.newToken(f.closing, modeExec, f.parent, f.branch)
			}
		case frameCall:
			if r.live != nil && f.callerTok != nil {
				// The caller's goroutine goes on once the call returns; until then the
				// checkpoint must show the caller ready to leave the calling node.
				f.callerTok.cp = position{node: f.node, mode: modeFollow, frame: f.parent, branch: f.branch}
				r.live[f.callerTok] = struct{}{}
			}
			return nil // the caller continues after the call returns
		}
		f = f.parent
	}
	return nil
}

func iterationBranch(f *frame) string {
	return fmt.Sprintf("%s/%s[%d]", f.branch, f.loop.n.ID, f.index)
}

// afterStep commits the position of the token that goes on and, when cur completed a
// node, takes a checkpoint. A failing checkpoint fails the run.
func (r *run) afterStep(ctx context.Context, cur, next *token) {
	if next != nil {
		r.commit(next)
	}
	done := cur.completed
	if done == nil {
		return
	}
	cur.completed = nil
	at := &token{node: done, call: cur.call}
	if err := r.checkpoint(ctx, at); err != nil {
		r.halt(stateFailed, "", nil, r.nodeError(at, CodeCheckpoint, err))
	}
}
