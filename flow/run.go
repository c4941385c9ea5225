package flow

import (
	"context"
	"fmt"
	"slices"
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
	id       string // WithRunID's, or the sequence number's once something asked (see runIDLocked)
	seq      uint64 // the run id's sequence number when WithRunID was not given
	fc       *Context
	st       *contextState
	root     *frame
	maxSteps int64
	icpts    []indexedInterceptor
	steps    atomic.Int64
	state    atomic.Int32
	timed    bool // an interceptor wants node times (NodeTimer)
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
	// withdrew is set once a ContinueOnError split of this run holds a failed branch
	// (recorded now or restored): from then on a token checks, before each step,
	// that its branch was not withdrawn (see withdrawn). Until then the check costs
	// one atomic load.
	withdrew atomic.Bool
	ckpt     *checkpointer
	live     map[*token]struct{} // tokens not parked, waiting or ended; only when checkpointing
	out      *Result             // WithResult's Result, filled instead of allocating one
	panicked *BranchPanic        // the first panic of a branch goroutine, raised again at the end
	opts     evalConfig          // where newRun applies the EvalOptions (empty otherwise)

	// Kept in the run to save allocations per evaluation: a Result or a Frontier keeps
	// the whole run alive, which costs less than allocating each part. (A recycled
	// run's Result is allocated on its own: recycle.go.)
	rootFrame frame
	seed      [1]*token
	startTok  token
	res       Result
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
func NewRunID() string { return formatRunID(runIDs.seq.Add(1)) }

func formatRunID(seq uint64) string {
	var buf [40]byte
	b := append(buf[:0], runIDs.prefix...)
	return string(strconv.AppendUint(b, seq, 10))
}

// runIDLocked returns the run's id, formatting it the first time it is asked for: a
// run that nobody asks (no interceptor, no Context.RunID, no Result.RunID call) never
// builds the string, which was one allocation per run. The caller holds r.st.mu or
// is the only goroutine that reaches r.
func (r *run) runIDLocked() string {
	if r.id == "" && r.seq != 0 {
		r.id = formatRunID(r.seq)
	}
	return r.id
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
	if s == stateSuspended && tok != nil && !tok.suspended {
		// The node's own reason: when branches suspend together, the run keeps the
		// first one, but each node's end (and audit record) says why it suspended.
		tok.suspended, tok.reason = true, reason
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
		tok.effects = nil // its node did not complete: they never reach a checkpoint
		if r.live != nil {
			// A checkpoint a sibling branch takes later must show the token as it is
			// parked (a suspended node runs again), not where it last moved.
			r.commitLocked(tok)
		}
	}
	r.mu.Unlock()
}

// drive moves a token, and the tokens it fans out to sequentially, until each one ends,
// waits at a join, or is parked because the run halted.
func (r *run) drive(ctx context.Context, tok *token) {
	var local []*token
	done := r.doneOf()
	for {
		for tok != nil {
			if r.halted() {
				r.park(tok)
				break
			}
			if tok.call.caller != nil && r.aborted(tok) {
				cutUnderAbort(tok)
				tok = r.endToken(tok) // the sub-graph call failed: withdraw
				continue
			}
			if done != nil { // a context that cannot end has none: skip the select
				select {
				case <-done:
					r.haltCancelled(tok)
					r.park(tok)
					tok = nil
					continue
				default:
				}
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

// doneOf returns the channel drive watches for cancellation: the run's (the root
// call's) whatever call the token is in. A sub-graph call's own context also ends
// when the call is aborted, seen through aborted, or for a reason of the calling
// node's (a NodeStarter's deadline for it), which is not the run's cancellation: the
// child's tasks that honour it fail their nodes (see run.cancelled). For the run's
// own context that is the caller's channel: the run's cancellation is seen through
// halted, and asking runCtx for its channel would allocate one.
func (r *run) doneOf() <-chan struct{} {
	ctx := r.root.ctx
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
	if r.withdrew.Load() && r.endsWithdrawn(tok) {
		if tok.mode == modeResumeCall && r.live != nil {
			// The call is not re-entered: its parked tokens, live since the resume
			// began, end with it, or every later checkpoint would list them.
			r.mu.Lock()
			for _, t := range tok.resume {
				delete(r.live, t)
			}
			r.mu.Unlock()
		}
		return r.endToken(tok)
	}
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
			// An inner loop's closing node reached without its loop (an error policy's
			// goto into the inner body) is an ordinary node of the outer body.
			if f := nearestLoop(tok.frame); f != nil && f.loop.closers[cn] {
				r.mu.Lock()
				if !f.left {
					f.closing = cn
				}
				r.mu.Unlock()
				return r.endToken(tok)
			}
		}
	}
	return r.execNode(ctx, tok, local)
}

// withdrawn reports whether tok belongs to a branch that a ContinueOnError split
// withdrew: a branch whose failure was recorded while other tokens of it were still
// running or parked (the failing node was inside an inclusive split or an activity's
// fan-out in that branch). Those tokens end before their next step, so nothing more
// of the branch runs (its inner join included) and it never arrives at the split's
// join as if it had succeeded. At each split frame the token's own branch at that
// level is compared with the branches the frame's failures withdrew (frame.failedIn;
// comparing the failing token's branch id as a prefix mistook a sibling whose node
// id extends this branch's with "/" for a branch nested in it). Tokens already
// running a node finish it: branches share no context.Context to cancel.
func (r *run) withdrawn(tok *token) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return withdrawnBy(tok.frame, tok.branch) != nil
}

// endsWithdrawn is withdrawn for a token about to end because of it: the sub-graph
// calls it ends inside, below the split that withdrew its branch, are marked cut, as
// they did not reach their end.
func (r *run) endsWithdrawn(tok *token) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	split := withdrawnBy(tok.frame, tok.branch)
	if split == nil {
		return false
	}
	for f := tok.frame; f != split; f = f.parent {
		if f.kind == frameCall {
			f.cut.Store(true)
		}
	}
	return true
}

// withdrawnBy returns the split frame that withdrew branch, a branch of frame f (a
// token's, or the one that opened a frame nested in f), or a branch it is inside; nil
// if none did. The caller holds r.mu. It looks past sub-graph calls (a call frame's
// parent and branch are its calling token's): a call in a withdrawn branch is part of
// it, so its tokens end too, instead of running the rest of the child for a branch
// that is over.
func withdrawnBy(f *frame, branch string) *frame {
	for ; f != nil; f = f.parent {
		if f.kind == frameSplit && slices.Contains(f.failedIn, branch) {
			return f
		}
		branch = f.branch // tok's branch one level up: the one that opened f (or called it)
	}
	return nil
}

// cutUnderAbort marks the sub-graph calls a token ends inside because a call
// enclosing them was aborted, if one was: those calls did not reach their end (the
// aborted call itself reports its failure).
func cutUnderAbort(tok *token) {
	for c := tok.call; c.caller != nil; c = c.caller {
		if c.abort.Load() != nil {
			for d := tok.call; d != c; d = d.caller {
				d.cut.Store(true)
			}
			return
		}
	}
}

// haltCancelled fails the run with the cancellation of its context, unless it halted
// already or tok's sub-graph call was aborted (the call's failure is the calling
// node's). Noticed between nodes or by a node, the error is the root's: a call's own
// context may not have ended.
func (r *run) haltCancelled(tok *token) {
	if !r.halted() && !r.aborted(tok) {
		r.halt(stateFailed, "", nil, r.nodeError(tok, CodeCancelled, cancelCause(r.root.ctx)))
	}
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
	if f.pending == 0 {
		f = joinUp(f)
	}
	if f == nil || f.pending > 0 {
		if r.live != nil {
			delete(r.live, tok) // it now counts as an arrival of f
		}
		return false
	}
	tok.frame, tok.branch, tok.mode, tok.arrivals = f.parent, f.branch, modeBegin, f.arrived
	if r.live != nil {
		r.commitLocked(tok)
	}
	return true
}

// joinUp is called when every branch of split frame f arrived at its join or ended.
// If the join also joins the branches of the enclosing split (cnode.joinReach), f's
// arrivals become that split's, and so on outwards. It returns the frame whose join
// fires now, or nil when an enclosing split still waits for other branches. The
// caller holds r.mu.
func joinUp(f *frame) *frame {
	for {
		if _, outer := f.split.joinReach(f.join); !outer {
			break
		}
		p := f.parent
		if p.kind != frameSplit {
			break
		}
		if reaches, _ := p.split.joinReach(f.join); !reaches || (p.join != nil && p.join != f.join) {
			break
		}
		p.join = f.join
		p.arrived += f.arrived
		p.pending--
		if p.pending > 0 {
			return nil
		}
		f = p
	}
	return f
}

func nearestLoop(f *frame) *frame {
	for ; f != nil && f.kind != frameCall; f = f.parent {
		if f.kind == frameLoop {
			return f
		}
	}
	return nil
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
			if f.arrived > 0 && r.withdrew.Load() && withdrawnBy(f.parent, f.branch) != nil {
				// The branch that opened f was withdrawn after some of f's branches
				// arrived: its join does not run, and arrivals at a join f shares with
				// an enclosing split (joinUp) do not count there either.
				break
			}
			if f.arrived > 0 {
				if f = joinUp(f); f == nil {
					return nil // the enclosing split waits for its other branches
				}
				t := r.newToken(f.join, modeBegin, f.parent, f.branch)
				t.arrivals = f.arrived
				return t
			}
			if len(f.failed) > 0 {
				return r.allBranchesFailed(f)
			}
		case frameLoop:
			if t := r.nextIteration(f); t != nil {
				return t
			}
		case frameCall:
			if r.live != nil && f.callerTok != nil {
				r.callerLive(f)
			}
			return nil // the caller continues after the call returns
		}
		f = f.parent
	}
	return nil
}

// nextIteration returns the token that goes on after an iteration of loop frame f
// ended: the next iteration, or the loop's closing node; nil when the flow left the
// loop without one. The caller holds r.mu. (Not inlined: see allBranchesFailed.)
//
//go:noinline
func (r *run) nextIteration(f *frame) *token {
	f.index++
	if f.index < len(f.items) && !f.left {
		f.pending = 1
		return r.newToken(f.loop, modeBody, f, iterationBranch(f))
	}
	if f.closing != nil {
		return r.newToken(f.closing, modeBegin, f.parent, f.branch)
	}
	return nil
}

// callerLive puts the token that made call f back among the live ones, for the
// checkpoints: the caller's goroutine goes on once the call returns; until then the
// checkpoint must show the caller ready to leave the calling node, or, when the call
// failed, about to run it again (as dropCall leaves it). The caller holds r.mu.
//
//go:noinline
func (r *run) callerLive(f *frame) {
	cp := position{node: f.node, mode: modeFollow, frame: f.parent, branch: f.branch}
	if f.abort.Load() != nil {
		// The calling node runs again, a join's with the arrivals it waited for.
		cp.mode, cp.arrivals = modeExec, f.callerTok.arrivals
	}
	f.callerTok.cp = cp
	r.live[f.callerTok] = struct{}{}
}

// allBranchesFailed returns the token that fails split frame f, every branch of
// which failed: "continue with what finished" leaves nothing to continue with, so the
// split itself fails instead of ending silently. It is a function of its own so that
// unitDone, on every branch goroutine's path, keeps a small stack frame (a goroutine
// starts with a small stack and copies it to grow).
//
//go:noinline
func (r *run) allBranchesFailed(f *frame) *token {
	t := r.newToken(f.split, modeFailed, f.parent, f.branch)
	t.failure = &NodeError{Graph: f.split.n.graph.ID, Path: f.call.path, Node: f.split.n.ID, NodeType: f.split.n.Type,
		Title: f.split.n.Title, Branch: f.branch, Step: int(r.steps.Load()), Code: CodeAllBranchesFailed,
		Err: fmt.Errorf("%w: %w", ErrAllBranchesFailed, joinNodeErrors(f.failed))}
	return t
}

func iterationBranch(f *frame) string {
	return fmt.Sprintf("%s/%s[%d]", f.branch, f.loop.n.ID, f.index)
}

// afterStep commits the position of the token that goes on and, when cur completed a
// node, takes a checkpoint carrying the effects the node queued. A failing checkpoint
// fails the run.
func (r *run) afterStep(ctx context.Context, cur, next *token) {
	if next != nil {
		r.commit(next)
	}
	done := cur.completed
	if done == nil {
		return
	}
	cur.completed = nil
	var effects []any
	if cur.effects != nil {
		effects, cur.effects = *cur.effects, nil
	}
	at := &token{node: done, call: cur.call}
	if err := r.checkpoint(ctx, at, effects); err != nil {
		r.halt(stateFailed, "", nil, r.nodeError(at, CodeCheckpoint, err))
	}
}

// stoppedStatus is the status of a run that Context.Stop halted: stopped when
// something is left to resume, else completed (a Stop in the end node stops nothing).
// The caller holds mu or the run is over.
func (r *run) stoppedStatus() Status {
	if len(r.frontier) == 0 {
		return StatusCompleted
	}
	return StatusStopped
}
