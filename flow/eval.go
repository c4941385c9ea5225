package flow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/flowteam/flowteam/trace"
)

// Status is how a run ended.
type Status string

// Run statuses.
const (
	StatusCompleted Status = "completed" // every branch reached its end
	StatusSuspended Status = "suspended" // a task called Suspend; resumable
	StatusStopped   Status = "stopped"   // a task called Stop with something left to run; resumable
	StatusFailed    Status = "failed"    // a node failed, the step limit was hit or ctx ended
	// StatusInterrupted is a sub-graph call's (CallOutcome) only: the call was cut
	// short because the ContinueOnError branch it ran in was withdrawn, or because a
	// failure aborted a sub-graph call it ran in. A run never ends with it.
	StatusInterrupted Status = "interrupted"
)

// Result is the outcome of Eval or Resume. Unless the run's state is recycled, it is
// allocated together with that state (about 1 KB, which references the
// context.Context the run was given), so code that keeps many results should keep the
// fields it needs rather than the *Result.
type Result struct {
	runID    string
	runSeq   uint64 // formats runID when RunID is called (see run.runIDLocked)
	Instance string
	Graph    string
	Status   Status
	// Steps is the number of node executions in this evaluation.
	Steps int
	last  []lastNode
	// Reason is the suspend reason.
	Reason string
	// Err is the error that ended a failed run: a *NodeError naming the node, wrapping
	// ErrStepLimit, ErrNoRoute, context.Canceled and so on.
	Err error
	// Errors lists every node failure of the run in the order they were recorded,
	// including failures a ContinueOnError split survived and sub-graph failures.
	Errors []*NodeError
	// BranchFailures lists the branches a ContinueOnError split withdrew.
	BranchFailures []BranchFailure
	// ExecutionErrors are the records of every node failure of this evaluation,
	// recoverable and fatal (the context's error key holds those of every evaluation of
	// the instance).
	ExecutionErrors []ExecutionError
	// Fallback is the business state applied on fatal paths (already in the context).
	Fallback map[string]any
	// Retries counts the node retries the error policy decided on, each failed
	// attempt's NodeEnd said Retrying for, including one a cancellation then put off
	// (the node runs again on resume, as its first attempt there); Fallbacks the
	// recovered errors that went to a fallback node.
	Retries, Fallbacks int
	// Frontier is where the run stands when it did not complete; pass it to Resume.
	Frontier *Frontier
	// Duration is the wall time of this evaluation.
	Duration time.Duration

	lastBuf [1]lastNode // last's backing array for the usual single call path
}

type lastNode struct{ path, node string }

// RunID returns the id of the run (WithRunID's or a generated one). A generated id is
// built when it is first asked for, so each call formats it again (same value).
func (res *Result) RunID() string {
	if res.runID == "" && res.runSeq != 0 {
		return formatRunID(res.runSeq)
	}
	return res.runID
}

// Last maps each call path to the last node it reached (the FlowTrace). It returns a
// new map on every call: the run does not build one unless asked, as most callers only
// look at the status.
func (res *Result) Last() map[string]string {
	m := make(map[string]string, len(res.last))
	for _, l := range res.last {
		m[l.path] = l.node
	}
	return m
}

// LastNode returns the last node reached at a call path ("" when none).
func (res *Result) LastNode(path string) string {
	for _, l := range res.last {
		if l.path == path {
			return l.node
		}
	}
	return ""
}

// Frontier is the exact place a halted run stands: its pending tokens (node, mode,
// branch, call path) and the frames they are in (join arrivals, loop positions,
// inclusive activation counts, sub-graph calls). Resume continues from it; a Frontier
// is not modified by resuming, so it can be resumed more than once (the session
// package makes sure a stored one is not).
type Frontier struct {
	graph  *compiled
	tokens []*token
}

// Graph returns the id of the root graph.
func (f *Frontier) Graph() string { return f.graph.g.ID }

// Pending lists the pending nodes as "callpath:node" strings, for messages and tests.
func (f *Frontier) Pending() []string {
	out := make([]string, len(f.tokens))
	for i, t := range f.tokens {
		out[i] = t.call.path + ":" + t.node.n.ID
	}
	return out
}

// EvalOption configures one evaluation.
type EvalOption func(*evalConfig)

type evalConfig struct {
	maxSteps   int
	icpts      []indexedInterceptor
	runID      string
	checkpoint func(ctx context.Context, cp Checkpoint) error
	copyVars   func(dst, src map[string]any) // WithCheckpointVars
	result     *Result
}

// WithSteps sets the step limit of this evaluation.
func WithSteps(n int) EvalOption { return func(c *evalConfig) { c.maxSteps = n } }

// WithEvalInterceptor adds an interceptor to this evaluation only; it is ordered by
// index together with the engine's interceptors.
func WithEvalInterceptor(i Interceptor, index int) EvalOption {
	return func(c *evalConfig) { c.icpts = addInterceptor(c.icpts, i, index) }
}

// WithRunID sets the run id (by default a unique id is generated).
func WithRunID(id string) EvalOption { return func(c *evalConfig) { c.runID = id } }

// WithResult makes the evaluation fill res and return it instead of allocating a new
// Result: a loop that runs a graph many times and reads each outcome before the next
// run keeps its Result and allocates nothing for it. Every field of res is overwritten,
// so nothing may still read res (or use its Frontier) once the evaluation starts, and
// two evaluations in progress must not share one. A nil res means a new Result, as
// without the option. Create the option once and pass it to every run: creating it
// allocates.
func WithResult(res *Result) EvalOption { return func(c *evalConfig) { c.result = res } }

// ErrContextBusy is returned when a Context is passed to a run while another run
// uses it.
var ErrContextBusy = errors.New("context is in use by another run")

// applyOptions sets what opts configure. The options take a pointer to the
// configuration, which escapes; the run's scratch copy is already on the heap, so
// applying them allocates nothing. It returns the run id they set, if any.
func (r *run) applyOptions(opts []EvalOption) (runID string) {
	cfg := &r.opts
	cfg.maxSteps = int(r.maxSteps)
	for _, o := range opts {
		o(cfg)
	}
	for _, i := range cfg.icpts {
		r.icpts = addInterceptor(r.icpts, i.i, i.index)
	}
	runID, r.maxSteps, r.out = cfg.runID, int64(cfg.maxSteps), cfg.result
	if cfg.checkpoint != nil {
		r.ckpt = &checkpointer{fn: cfg.checkpoint, copyVars: cfg.copyVars}
		r.live = make(map[*token]struct{})
	}
	*cfg = evalConfig{}
	return runID
}

func (e *Engine) newRun(cg *compiled, fc *Context, opts []EvalOption) *run {
	r := e.newRunState(cg)
	r.e, r.fc, r.st = e, fc, fc.st
	r.icpts, r.maxSteps = e.interceptors, int64(e.maxSteps)
	id := ""
	if len(opts) > 0 {
		id = r.applyOptions(opts)
	}
	r.timed = timed(r.icpts)
	r.id, r.seq = id, 0
	if id == "" {
		r.seq = runIDs.seq.Add(1)
		if len(r.icpts) > 0 {
			r.runIDLocked() // every interceptor is told the id (Invocation.RunID)
		}
	}
	// Field by field: r is fresh or reset, and copying a whole struct literal into it
	// costs a bulk write barrier while the garbage collector runs.
	r.root = &r.rootFrame
	r.root.kind, r.root.graph, r.root.path, r.root.branch = frameCall, cg, cg.g.ID, "main"
	r.root.call = r.root
	if r.root.run != r { // a recycled run has it already
		r.root.run = r
	}
	return r
}

func (e *Engine) start(ctx context.Context, cg *compiled, fc *Context, opts []EvalOption) (*Result, error) {
	if fc == nil {
		fc = NewContext("")
	}
	r := e.newRun(cg, fc, opts)
	r.root.pending = 1
	t := &r.startTok
	t.node, t.mode, t.frame, t.call, t.branch = cg.start, modeArrive, r.root, r.root, "main"
	t.view.st, t.view.tok = r.st, t
	r.seed[0] = t
	return r.runRoot(ctx, r.seed[:], false)
}

func (e *Engine) resume(ctx context.Context, fr *Frontier, fc *Context, opts []EvalOption) (*Result, error) {
	if fc == nil {
		return nil, errors.New("resume: nil context")
	}
	r := e.newRun(fr.graph, fc, opts)
	root, seeds := cloneFrontier(r, fr)
	r.root, root.run = root, r
	return r.runRoot(ctx, seeds, true)
}

// runRoot runs the root invocation and builds the result.
func (r *run) runRoot(ctx context.Context, seeds []*token, resumed bool) (*Result, error) {
	r.began = now()
	if err := r.claimContext(); err != nil {
		return nil, err
	}
	ierr := r.driveRoot(ctx, seeds, resumed)
	elapsed := time.Since(r.began) // a monotonic read is cheaper than time.Now
	res, recycle := r.releaseContext(r.began.Add(elapsed), ierr)
	if r.panicked != nil { // the branch goroutines are done: raise it in the caller's
		panic(r.panicked)
	}
	r.fillResult(res, elapsed)
	if recycle {
		r.recycle()
	}
	if res.Status == StatusFailed {
		return res, res.Err
	}
	return res, nil
}

// claimContext makes r the Context's run, or fails with ErrContextBusy.
func (r *run) claimContext() error {
	st := r.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.run != nil {
		return ErrContextBusy
	}
	st.run = r
	if st.errKey != r.e.errKey { // compared first: the usual run writes nothing
		st.errKey = r.e.errKey
	}
	return nil
}

// driveRoot runs the root call, through the interceptors if any, until its branches end,
// and returns the error an interceptor returned.
func (r *run) driveRoot(ctx context.Context, seeds []*token, resumed bool) error {
	r.rctx.parent = ctx
	ctx = &r.rctx
	r.root.ctx = ctx
	if r.live != nil {
		r.mu.Lock()
		for _, t := range seeds {
			r.commitLocked(t)
		}
		r.mu.Unlock()
	}
	var ierr error
	if len(r.icpts) == 0 {
		r.driveCall(ctx, r.root, seeds) // what Invoke does when no interceptor wraps it
	} else {
		ierr = r.invoke(ctx, seeds, resumed)
		r.root.wg.Wait() // in case an interceptor returned before the graph's branches ended
	}
	// Whatever a task started with the run's context learns that the run is over (a
	// private run gave its context to nobody).
	if !r.private() {
		r.rctx.finish()
	}
	return ierr
}

// releaseContext records the run's last node in the Context's trace, frees the Context
// for the next run and returns the Result to fill (the caller's, from WithResult, or
// the run's own unless the run state is recycled) with its last nodes set.
func (r *run) releaseContext(ended time.Time, ierr error) (res *Result, recycle bool) {
	st := r.st
	rec, recorded := lastRecord(r.root, ended)
	st.mu.Lock()
	defer st.mu.Unlock()
	if recorded {
		st.trace.Record(rec)
	}
	// From here on nothing but this goroutine reaches r: the run's goroutines are done,
	// and Context.Stop, Suspend and Trace look the run up under st.mu.
	st.run = nil
	if ierr != nil && r.err == nil {
		r.err = fmt.Errorf("interceptor of graph %q: %w", r.root.graph.g.ID, ierr)
		r.state.Store(int32(stateFailed))
	}
	recycle = r.recyclable()
	res = &r.res
	switch {
	case r.out != nil:
		res = r.out
	case recycle:
		res = new(Result)
	}
	if recorded && len(st.trace.Last) == 1 {
		res.lastBuf[0] = lastNode{rec.Path, rec.NodeID} // the usual case, without a map iteration
		res.last = res.lastBuf[:]
	} else {
		res.last = res.last[:0]
		for k, v := range st.trace.Last {
			res.last = append(res.last, lastNode{k, v.NodeID})
		}
	}
	return res, recycle
}

// fillResult writes the run's outcome into res, field by field as in newRun.
func (r *run) fillResult(res *Result, elapsed time.Duration) {
	res.runID, res.runSeq, res.Instance, res.Graph, res.Steps = r.id, r.seq, r.st.instanceID, r.root.graph.g.ID, int(r.steps.Load())
	res.Reason, res.Err, res.Errors, res.BranchFailures = r.reason, r.err, r.errs, r.failures
	res.ExecutionErrors, res.Fallback = r.records, r.fallback
	res.Retries, res.Fallbacks, res.Duration = int(r.retries.Load()), int(r.fallbacks.Load()), elapsed
	switch runState(r.state.Load()) {
	case stateRunning:
		res.Status = StatusCompleted
	case stateStopped:
		res.Status = r.stoppedStatus()
	case stateSuspended:
		res.Status = StatusSuspended
	case stateFailed:
		res.Status = StatusFailed
	}
	res.Frontier = nil
	if res.Status != StatusCompleted && len(r.frontier) > 0 {
		res.Frontier = &Frontier{graph: r.root.graph, tokens: r.frontier}
	}
}

// invoke runs the root call through the interceptors. A panic escaping them (a hook's:
// a task's panic is its node's error) fails the run, lets the root's branches end and
// frees the Context before it goes on up to the caller, so the instance can run again.
func (r *run) invoke(ctx context.Context, seeds []*token, resumed bool) error {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		r.halt(stateFailed, "", nil, fmt.Errorf("panic: %v", p))
		r.root.wg.Wait()
		r.rctx.finish()
		r.st.mu.Lock()
		r.st.run = nil
		r.st.mu.Unlock()
		panic(p)
	}()
	inv := &Invocation{Graph: r.root.graph.g, Context: r.fc, RunID: r.id, Path: r.root.path, Resumed: resumed,
		icpts: r.icpts, run: r, frame: r.root, seeds: seeds}
	err := inv.Invoke(ctx)
	if err == nil && !inv.invoked {
		for _, s := range seeds { // nothing ran: the run stands where it started
			r.park(s)
		}
		err = errNotInvoked
	}
	return err
}

// lastRecord returns the FlowTrace record of a call's last node. Its Time is when the
// record was taken (the call ended, a checkpoint, Context.Trace): the engine does not
// read the clock for every node.
func lastRecord(cf *frame, now time.Time) (trace.NodeRecord, bool) {
	i := cf.last.Load()
	if i == 0 {
		return trace.NodeRecord{}, false
	}
	cn := &cf.graph.nodes[i-1]
	return trace.NodeRecord{Path: cf.path, GraphID: cf.graph.g.ID, NodeID: cn.n.ID, NodeType: cn.n.Type.String(),
		Title: cn.n.Title, Time: now.UTC()}, true
}

// recordLive adds the last nodes of the calls still in progress to t. The caller holds
// r.mu.
func (r *run) recordLive(t *trace.FlowTrace) {
	now := time.Now()
	if rec, ok := lastRecord(r.root, now); ok {
		t.Record(rec)
	}
	for f := range r.calls {
		if rec, ok := lastRecord(f, now); ok {
			t.Record(rec)
		}
	}
}

// StartFrontier returns the frontier of a run of g that has not started: one token at
// the start node. Storing it before the first node runs lets a process that dies
// before any checkpoint be resumed from the beginning.
func (e *Engine) StartFrontier(g *Graph) (*Frontier, error) {
	cg, err := e.prepare(g)
	if err != nil {
		return nil, err
	}
	root := &frame{kind: frameCall, graph: cg, path: g.ID, branch: "main", pending: 1}
	root.call = root
	return &Frontier{graph: cg, tokens: []*token{{node: cg.start, mode: modeArrive, frame: root, call: root, branch: "main"}}}, nil
}

// cloneFrontier copies the frames and tokens of a frontier into a new run, so the
// stored frontier stays untouched. It returns the new root frame.
func cloneFrontier(r *run, fr *Frontier) (*frame, []*token) {
	frames := map[*frame]*frame{}
	var cp func(f *frame) *frame
	cp = func(f *frame) *frame {
		if f == nil {
			return nil
		}
		if c, ok := frames[f]; ok {
			return c
		}
		c := &frame{kind: f.kind, pending: f.pending, branch: f.branch, split: f.split, join: f.join,
			arrived: f.arrived, policy: f.policy, loop: f.loop, items: f.items, index: f.index, closing: f.closing, left: f.left,
			graph: f.graph, path: f.path, node: f.node, depth: f.depth,
			failed: slices.Clone(f.failed), failedIn: slices.Clone(f.failedIn)} // if no branch arrives, the split still fails
		frames[f] = c
		if len(c.failed) > 0 {
			r.withdrew.Store(true)
		}
		c.parent = cp(f.parent)
		if f.kind == frameCall {
			c.call = c
			c.caller = cp(f.caller)
		} else {
			c.call = cp(f.call)
		}
		return c
	}
	root := cp(fr.tokens[0].call)
	for root.caller != nil {
		root = root.caller
	}
	toks := make([]*token, len(fr.tokens))
	for i, t := range fr.tokens {
		nt := r.newToken(t.node, t.mode, cp(t.frame), t.branch)
		// A token parked as it arrived, or before its join or loop's closing node began
		// (the step limit refused it, the run halted first), has not started its node:
		// the resume runs it for the first time, as the evaluation would have, so it is
		// not a resumed one.
		nt.failure, nt.arrivals, nt.resumed = t.failure, t.arrivals, t.mode != modeArrive && t.mode != modeBegin
		toks[i] = nt
	}
	return root, toks
}

func (r *run) firstErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
