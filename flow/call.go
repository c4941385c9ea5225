package flow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// errCallHalted tells the calling node that its sub-graph stopped or was suspended: the
// call frame keeps the caller's place in the frontier.
var errCallHalted = errors.New("sub-graph halted")

// errCallCut tells the calling node that its sub-graph call was cut short: the branch
// it runs in was withdrawn, or a call it runs in was aborted, and the call's tokens
// ended before the child's end.
var errCallCut = errors.New("sub-graph call cut short: its branch was withdrawn")

// callSubgraph runs the node's sub-graph on the caller's goroutine, sharing the
// FlowContext, under its own call frame.
func (r *run) callSubgraph(ctx context.Context, tok *token) error {
	cn := tok.node
	var (
		child *compiled
		err   error
	)
	if cn.subGraph != nil {
		child, err = r.e.prepare(cn.subGraph)
	} else {
		child, err = r.e.lookup(cn.subID)
	}
	if err != nil {
		return r.nodeError(tok, CodeSubgraphNotFound, err)
	}
	if tok.call.depth+1 > r.e.maxDepth {
		return r.nodeError(tok, CodeCallDepth, fmt.Errorf("%w (%d) calling %q", ErrCallDepth, r.e.maxDepth, child.g.ID))
	}
	cf := r.newCallFrame(tok, child)
	cf.callerTok = tok
	// The sub-graph's branches are named under the call, so branch ids stay unique in a
	// run even when the same graph (or the same split ids) run more than once.
	start := r.newToken(child.start, modeArrive, cf, tok.branch+"/"+tok.node.n.ID+"/"+child.g.ID)
	cf.pending = 1
	if r.live != nil {
		// While the call runs, the sub-graph's tokens stand for the caller's.
		r.mu.Lock()
		delete(r.live, tok)
		r.commitLocked(start)
		r.mu.Unlock()
	}
	return r.runCall(ctx, tok, cf, []*token{start})
}

func (r *run) newCallFrame(tok *token, child *compiled) *frame {
	cf := &frame{kind: frameCall, parent: tok.frame, graph: child, node: tok.node, caller: tok.call,
		depth: tok.call.depth + 1, branch: tok.branch, arrived: tok.arrivals,
		path: tok.call.path + "/" + tok.node.n.ID + "/" + child.g.ID}
	cf.call = cf
	return cf
}

// resumeCall re-enters a sub-graph call that was in progress when the run halted.
func (r *run) resumeCall(ctx context.Context, tok *token) error {
	cf := tok.resume[0].call
	for cf.caller != tok.call {
		cf = cf.caller
	}
	cf.callerTok = tok
	return r.runCall(ctx, tok, cf, tok.resume)
}

// runCall drives the tokens of a call frame under the interceptors' InterceptFlow and
// reports how the call ended: nil when the sub-graph completed, errCallHalted when the
// run halted inside it, errCallCut when its branch was withdrawn, or the error that
// aborted it.
func (r *run) runCall(ctx context.Context, tok *token, cf *frame, seeds []*token) error {
	r.mu.Lock()
	if r.calls == nil {
		r.calls = make(map[*frame]struct{})
	}
	r.calls[cf] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.flushTrace(cf, time.Now())
		r.mu.Lock()
		delete(r.calls, cf)
		r.mu.Unlock()
	}()
	inv := &Invocation{Graph: cf.graph.g, Context: r.fc, Path: cf.path, Node: tok.node.n,
		Resumed: tok.mode == modeResumeCall, icpts: r.icpts, run: r, frame: cf, seeds: seeds}
	if len(r.icpts) > 0 {
		// Only interceptors see inv, and with them newRun formatted the id. Without
		// them the id may be formatted now, under the Context's lock, by a task in a
		// parallel branch (Context.RunID): reading it here would race with that.
		inv.RunID = r.id
	}
	err := inv.Invoke(ctx)
	if err == nil && !inv.invoked {
		err = errNotInvoked // the call's start token never ran, though a checkpoint counts it live
	}
	if err != nil && !inv.invoked && tok.mode == modeResumeCall && !r.aborted(tok) && r.cancelled(ctx, tok, err) {
		// The run was cancelled before the resumed call was entered again (an
		// interceptor waiting for it gave up): the call keeps its place, its parked
		// tokens the frontier, as a cancellation inside it would. Dropped, the
		// calling node would call the sub-graph afresh, running its completed nodes
		// again.
		r.park(tok)
		return errCallHalted
	}
	if err != nil {
		r.dropCall(cf) // the calling node fails (and may recover and go on)
		return r.nodeError(tok, CodeTask, fmt.Errorf("interceptor of sub-graph %q: %w", cf.graph.g.ID, err))
	}
	out := CallOutcome{Path: cf.path, Graph: cf.graph.g.ID, Status: StatusCompleted}
	defer func() { r.recordCall(out) }()
	if ne := cf.abort.Load(); ne != nil {
		out.Status = StatusFailed
		se := ToStructured(ne)
		out.Error = &se
		r.dropCall(cf)
		r.mu.Lock()
		for _, rec := range r.records {
			if rec.Path == cf.path && rec.Fallback != nil {
				out.Fallback = mergeState(out.Fallback, rec.Fallback)
			}
		}
		r.mu.Unlock()
		// Wrap the failure where it happened: its call path already names every call
		// between, and wrapping each level's error would make a deep chain's message
		// grow with the square of its depth.
		return r.nodeError(tok, ne.Code, fmt.Errorf("sub-graph %q: %w", cf.graph.g.ID, innermost(ne)))
	}
	r.mu.Lock()
	done := cf.pending == 0
	r.mu.Unlock()
	if !done {
		out.Status = StatusSuspended
		if runState(r.state.Load()) != stateSuspended {
			out.Status = StatusStopped
		}
		return errCallHalted
	}
	if cf.cut.Load() {
		out.Status = StatusInterrupted
		return errCallCut
	}
	return nil
}

// dropCall forgets the tokens a halt parked inside a call whose calling node fails
// for it. Resuming that node runs the call again from its start; kept in the
// frontier, those tokens would also run the rest of the failed call, and everything
// after the calling node twice.
func (r *run) dropCall(cf *frame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frontier = slices.DeleteFunc(r.frontier, func(t *token) bool { return t.call.within(cf) })
	for t := range r.live {
		if t.call.within(cf) {
			delete(r.live, t)
		}
	}
	if r.live != nil && cf.callerTok != nil {
		// The call's tokens stood for the calling node in checkpoints: the node is live
		// again, to run again on resume (its failure ends it, or moves it on).
		cf.callerTok.cp = position{node: cf.node, mode: modeExec, frame: cf.parent, branch: cf.branch, arrivals: cf.callerTok.arrivals}
		r.live[cf.callerTok] = struct{}{}
	}
}

// within reports whether call frame c is cf or a call made (at any depth) inside it.
func (c *frame) within(cf *frame) bool {
	for ; c != nil; c = c.caller {
		if c == cf {
			return true
		}
	}
	return false
}

// CallOutcome is how a sub-graph call ended, so the caller can tell a normal
// completion (the context holds the child's final state) from a fatal child whose
// fallback state was applied (Fallback lists it; Error is the child's terminal error),
// a call the run stopped or suspended in, and a call cut short because its branch was
// withdrawn or a call it ran in was aborted (StatusInterrupted).
type CallOutcome struct {
	Path     string           `json:"path"`
	Graph    string           `json:"graph"`
	Status   Status           `json:"status"`
	Fallback map[string]any   `json:"fallback,omitempty"`
	Error    *StructuredError `json:"error,omitempty"`
}

// CallOutcome returns how the last sub-graph call under the call path ended.
func (c *Context) CallOutcome(path string) (CallOutcome, bool) {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	o, ok := c.st.calls[path]
	return o, ok
}

func (r *run) recordCall(o CallOutcome) {
	r.st.mu.Lock()
	if r.st.calls == nil {
		r.st.calls = make(map[string]CallOutcome)
	}
	r.st.calls[o.Path] = o
	r.st.mu.Unlock()
}

func mergeState(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = make(map[string]any, len(src))
	}
	maps.Copy(dst, src)
	return dst
}

// driveCall runs the seeds of a call frame and waits for every goroutine the call
// started. Seeds inside deeper sub-graph calls (on resume) re-enter those calls.
func (r *run) driveCall(ctx context.Context, cf *frame, seeds []*token) {
	seeds = groupSeeds(r, cf, seeds)
	if r.withdrew.Load() {
		// Restored tokens of a withdrawn branch end at their first step. Ended first,
		// before a sibling branch can complete a node, no checkpoint lists them.
		kept := seeds[:0:0]
		for _, s := range seeds {
			if r.withdrawn(s) {
				r.drive(ctx, s)
			} else {
				kept = append(kept, s)
			}
		}
		if seeds = kept; len(seeds) == 0 {
			cf.wg.Wait()
			return
		}
	}
	if len(seeds) == 1 {
		r.drive(ctx, seeds[0])
		cf.wg.Wait()
		return
	}
	// A resumed run's parked parallel branches run concurrently again, as they did
	// before it halted: run one after the other, a branch waiting for a sibling would
	// wait for ever. The others run in order on this goroutine, as fanOut runs them.
	spawned := make([]bool, len(seeds))
	for i := 1; i < len(seeds); i++ {
		spawned[i] = inParallelBranch(seeds[i]) && r.spawn(seeds[i])
	}
	for i, s := range seeds {
		if !spawned[i] {
			r.drive(ctx, s)
		}
	}
	cf.wg.Wait()
}

// inParallelBranch reports whether the innermost split the token is in (within its
// call) is a parallel one.
func inParallelBranch(tok *token) bool {
	for f := tok.frame; f != nil && f.kind != frameCall; f = f.parent {
		if f.kind == frameSplit {
			return f.split.n.Type == Parallel
		}
	}
	return false
}

// groupSeeds returns the tokens to drive directly in cf: the parked tokens of cf
// itself, and one resume token per deeper call frame, at the node that called it.
func groupSeeds(r *run, cf *frame, seeds []*token) []*token {
	if len(seeds) == 1 && seeds[0].call == cf {
		return seeds
	}
	var out []*token
	nested := map[*frame]*token{}
	for _, s := range seeds {
		if s.call == cf {
			out = append(out, s)
			continue
		}
		c := s.call
		for c.caller != cf {
			c = c.caller
		}
		rt := nested[c]
		if rt == nil {
			rt = r.newToken(c.node, modeResumeCall, c.parent, c.branch)
			rt.resumed, rt.arrivals = true, c.arrived
			nested[c] = rt
			out = append(out, rt)
		}
		rt.resume = append(rt.resume, s)
	}
	return out
}

// flushTrace records the last node of a call into the FlowTrace.
func (r *run) flushTrace(cf *frame, now time.Time) {
	if rec, ok := lastRecord(cf, now); ok {
		r.st.mu.Lock()
		r.st.trace.Record(rec)
		r.st.mu.Unlock()
	}
}

// innermost returns the node error at the bottom of a chain of sub-graph failures.
func innermost(ne *NodeError) *NodeError {
	for {
		var deeper *NodeError
		if !errors.As(ne.Err, &deeper) {
			return ne
		}
		ne = deeper
	}
}

// endCallOnPanic, deferred by a sub-graph call's Invoke, handles a panic on the calling
// goroutine inside the call (an interceptor hook's; a task's is its node's error). The
// calling node's runNode turns it into that node's error, but first the call's branches
// on other goroutines must end: the call is aborted, as a failure inside it would
// abort it, and waited for, so no branch outlives the call.
func (r *run) endCallOnPanic(cf *frame) {
	p := recover()
	if p == nil {
		return
	}
	if cf.abort.CompareAndSwap(nil, r.nodeError(cf.callerTok, CodePanic, fmt.Errorf("%w: %v", ErrTaskPanic, p))) {
		cf.cancel()
	}
	cf.wg.Wait()
	r.dropCall(cf) // the calling node fails for it, as in runCall
	panic(p)
}

// endRootOnPanic, deferred by the root's Invoke when interceptors wrap the run, fails
// the run on a panic of the main branch (a hook's) and waits for the root's other
// branches before the panic passes back through the interceptors: an audit or a
// tracer around the run then sees every node execution end before the run does.
// (run.invoke does the same for a run without interceptors, and frees the Context.)
func (r *run) endRootOnPanic() {
	p := recover()
	if p == nil {
		return
	}
	r.halt(stateFailed, "", nil, fmt.Errorf("panic: %v", p))
	r.root.wg.Wait()
	panic(p)
}
