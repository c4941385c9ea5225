package flow

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/flowteam/flowteam/trace"
)

// Interceptor observes and wraps runs. InterceptFlow is an around-hook for every
// evaluation of a graph, the root graph and each sub-graph call (on resume too): it
// must call inv.Invoke to run the graph, and may pass a derived context (a span, a
// deadline) to it (a sub-graph call's deadline is the call's: a child task failing
// because it passed fails its node, and so the calling node, not the run); returning nil without invoking it fails the run (for a sub-graph
// call, the calling node), since nothing ran. OnNodeStart and OnNodeEnd observe every
// node execution; every OnNodeStart is followed by exactly one OnNodeEnd for the same
// node and view,
// whatever happens (stop, interrupt, suspend, panic, cancellation, step limit), and
// NodeEnd says how the node ended. Hooks of parallel branches run concurrently.
//
// Embed NopInterceptor to implement only some of the methods.
type Interceptor interface {
	InterceptFlow(ctx context.Context, inv *Invocation) error
	OnNodeStart(ctx context.Context, c *Context, n *Node)
	OnNodeEnd(ctx context.Context, c *Context, n *Node, end NodeEnd)
}

// NodeStarter is an Interceptor that gives each node execution a context of its own,
// such as a tracer that puts the node's span in it, so that what the node's task does
// (an HTTP call, a model call, a sub-graph it calls, with that sub-graph's
// InterceptFlow and nodes, a run it starts itself) is traced under the node. The
// engine calls StartNode in place of OnNodeStart, in the interceptors' order, each
// given the context the ones before returned, and the node's guard and task run with
// the context the last one returned. It must derive that context from ctx (nil keeps
// ctx). The conditions of the node's links and OnNodeEnd keep the run's context; a
// retried node gets a new context per attempt. A context with its own cancellation
// (a deadline per node) is the interceptor's to cancel, in OnNodeEnd; a task that
// fails because of it fails its node (it is not an interruption of the run).
type NodeStarter interface {
	Interceptor
	StartNode(ctx context.Context, c *Context, n *Node) context.Context
}

// NodeTimer is an optional interface of an Interceptor: NodeTimes reports whether
// its OnNodeEnd (or its NodeStarter's) reads NodeEnd's Start and Duration. An
// interceptor that does not implement it gets them. The engine reads the clock around
// a node only when some interceptor of the run wants the times; when none does, Start
// and Duration are zero. A hook that only counts nodes, or logs their outcome, says
// false and saves two clock reads per node.
type NodeTimer interface {
	NodeTimes() bool
}

// NopInterceptor implements Interceptor with hooks that do nothing but invoke.
type NopInterceptor struct{}

// InterceptFlow invokes the graph.
func (NopInterceptor) InterceptFlow(ctx context.Context, inv *Invocation) error {
	return inv.Invoke(ctx)
}

// OnNodeStart does nothing.
func (NopInterceptor) OnNodeStart(context.Context, *Context, *Node) {}

// OnNodeEnd does nothing.
func (NopInterceptor) OnNodeEnd(context.Context, *Context, *Node, NodeEnd) {}

// NodeStatus is how a node execution ended.
type NodeStatus = trace.Status

// Node outcomes, as given to OnNodeEnd.
const (
	nodeCompleted   = trace.Completed
	nodeFailed      = trace.Failed
	nodeInterrupted = trace.Interrupted // Interrupt, or cancelled because the run failed or stopped elsewhere
	nodeSuspended   = trace.Suspended
)

// NodeEnd describes how a node execution ended.
type NodeEnd struct {
	// Status is COMPLETED, FAILED, INTERRUPTED or SUSPENDED. A node whose task called
	// Stop completed; the run then stops before the next node.
	Status NodeStatus
	// Err is the node's error when Status is FAILED (a *NodeError).
	Err error
	// Reason is the suspend reason when Status is SUSPENDED.
	Reason string
	// Start is when the execution began: the run's start plus the monotonic time
	// since, as the engine measured it (no extra clock read). Start plus Duration is
	// when it ended.
	Start time.Time
	// Duration is how long the node took.
	Duration time.Duration
	// Step is the run's step number of this execution.
	Step int
	// Arrivals is, for a join, how many branches it waited for (0 for other nodes).
	Arrivals int
	// Attempt numbers the executions of the node for one arrival (retries count up).
	Attempt int
	// Retrying is true on a failed attempt that will be retried.
	Retrying bool
	// Recovered is true on a failure the error policy recovered from.
	Recovered bool
	// Goto is the fallback node a recovered failure continues at ("" when the run
	// follows the node's own links).
	Goto string
}

// Invocation is one evaluation of a graph, as seen by InterceptFlow.
type Invocation struct {
	// Graph is the graph being evaluated.
	Graph *Graph
	// Context is the instance's root view.
	Context *Context
	// RunID identifies the run; it is shared by the sub-graph invocations of a run.
	RunID string
	// Path is the call path of this evaluation.
	Path string
	// Node is the calling node for a sub-graph call, nil for the root graph.
	Node *Node
	// Resumed is true when the evaluation continues a stopped run.
	Resumed bool

	icpts   []indexedInterceptor
	next    int
	run     *run
	frame   *frame
	seeds   []*token
	invoked bool // the chain reached the graph
}

// errNotInvoked is the error of an InterceptFlow that returned nil without invoking
// the graph: nothing ran, and going on as if the graph had completed would lose it.
var errNotInvoked = errors.New("returned without invoking the graph (InterceptFlow must call inv.Invoke)")

// Outcome reports how the evaluation ended; it is meaningful once Invoke has returned.
// For the root graph it is the run's status (the suspend reason, and the error of a
// failed run); for a sub-graph call, how that call ended: completed, failed (its
// error), interrupted (its branch was withdrawn, see StatusInterrupted), or
// suspended/stopped when the run halted inside it. A call that was still in
// progress when the run failed elsewhere (a sibling branch) reports failed with the
// run's first error, which is not the call's own: tell the two apart by comparing
// that error's call path (NodeError.Path) with the call's Path.
func (inv *Invocation) Outcome() (Status, string, error) {
	r, cf := inv.run, inv.frame
	if cf.caller == nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch runState(r.state.Load()) {
		case stateStopped:
			return r.stoppedStatus(), "", nil
		case stateSuspended:
			return StatusSuspended, r.reason, nil
		case stateFailed:
			return StatusFailed, "", r.err
		}
		return StatusCompleted, "", nil
	}
	if ne := cf.abort.Load(); ne != nil {
		return StatusFailed, "", ne
	}
	r.mu.Lock()
	pending := cf.pending
	reason := r.reason
	r.mu.Unlock()
	if pending == 0 {
		if cf.cut.Load() {
			return StatusInterrupted, "", nil
		}
		return StatusCompleted, "", nil
	}
	if runState(r.state.Load()) == stateSuspended {
		return StatusSuspended, reason, nil
	}
	if runState(r.state.Load()) == stateFailed {
		return StatusFailed, "", r.firstErr()
	}
	return StatusStopped, "", nil
}

// Invoke runs the rest of the interceptor chain and then the graph.
func (inv *Invocation) Invoke(ctx context.Context) error {
	if inv.next < len(inv.icpts) {
		i := inv.icpts[inv.next].i
		inv.next++
		return i.InterceptFlow(ctx, inv)
	}
	cf := inv.frame
	if cf.caller != nil {
		// A sub-graph call gets its own cancellation, so a failure inside it can stop
		// its branches without failing the caller's siblings.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		cf.cancel = cancel
		defer inv.run.endCallOnPanic(cf)
	} else if len(inv.icpts) > 0 {
		defer inv.run.endRootOnPanic()
	}
	cf.ctx = ctx
	inv.invoked = true
	inv.run.driveCall(ctx, cf, inv.seeds)
	return nil
}

type indexedInterceptor struct {
	i       Interceptor
	starter NodeStarter // i, when it is one
	index   int
	timed   bool // i wants node times (NodeTimer)
}

// timed reports whether an interceptor of list wants node times (NodeTimer).
func timed(list []indexedInterceptor) bool {
	return slices.ContainsFunc(list, func(i indexedInterceptor) bool { return i.timed })
}

func addInterceptor(list []indexedInterceptor, i Interceptor, index int) []indexedInterceptor {
	s, _ := i.(NodeStarter)
	t, ok := i.(NodeTimer)
	list = append(slices.Clone(list), indexedInterceptor{i, s, index, !ok || t.NodeTimes()})
	slices.SortStableFunc(list, func(a, b indexedInterceptor) int { return cmp.Compare(a.index, b.index) })
	return list
}
