package flow

import (
	"context"
	"sync"
	"sync/atomic"
)

// A run is a set of tokens moving over the graph. Where a token fans out, joins,
// iterates or calls a sub-graph, a frame records what must happen when the units
// inside it are done. Frames and tokens are plain data, so the frontier of a stopped
// run (its parked tokens and the frames they reference) is exactly what a resume
// continues from: nothing is kept on a goroutine's stack.
type frameKind uint8

const (
	frameCall  frameKind = iota // a graph invocation: the root graph or a sub-graph call
	frameSplit                  // the branches of one split, waiting for their join
	frameLoop                   // the iterations of one loop node
)

type frame struct {
	kind frameKind
	// policy (a split's), left (a loop's) and cut (a call's) sit by kind, where the
	// padding would be: a frame then stays in its allocation size class.
	policy  BranchPolicy
	left    bool        // loop: an error policy's goto left it (leaveLoop): no further item, no closing node
	cut     atomic.Bool // call: a token of it ended because its branch was withdrawn (endsWithdrawn, cutUnderAbort): the call did not reach its end
	parent  *frame      // enclosing frame; nil for the root call
	call    *frame      // innermost call frame (itself for a call frame)
	pending int         // units (tokens or nested frames) still running inside; guarded by run.mu
	branch  string      // branch id of the token that opened the frame

	// split
	split   *cnode
	join    *cnode       // where the first branch arrived
	arrived int          // split: branches arrived at the join; call: those the calling join waited for
	failed  []*NodeError // branches a ContinueOnError split withdrew because they failed
	// failedIn holds, for each of failed, the id of this split's branch it withdrew
	// (see withdrawn): the failing token's branch may be nested deeper.
	failedIn []string

	// loop
	loop    *cnode
	items   []any
	index   int
	closing *cnode

	// call
	graph     *compiled
	path      string
	node      *cnode // the calling node in the caller's graph; nil for the root
	caller    *frame // the caller's call frame
	callerTok *token // the caller's token, blocked until the call returns
	depth     int
	wg        sync.WaitGroup
	last      atomic.Int32    // index+1 of the last node started in this call (FlowTrace); an int avoids a pointer write barrier per node
	ctx       context.Context // the context the call's tokens run under
	cancel    context.CancelFunc
	abort     atomic.Pointer[NodeError] // a failure that ends this sub-graph call
	run       *run                      // the root call's run, for the views of its tokens (Context.RunID)
}

// tokenMode says what a token does next at its node.
type tokenMode uint8

const (
	modeArrive     tokenMode = iota // arrive at the node: join and loop-closing checks, then run it
	modeExec                        // run the node again (it suspended, was cancelled by a halt or failed)
	modeFollow                      // the node ran: follow its links
	modeBody                        // start one iteration: follow an opening loop node's links
	modeResumeCall                  // re-enter a sub-graph call frame on resume
	modeFailed                      // report failure (every branch of a split failed) at node
	// modeBegin runs the node for the first time, its arrival already handled (a join
	// that fired, a loop's closing node): as modeExec, but a token restored in it is
	// not resumed (Context.Resumed), as its node never ran.
	modeBegin
)

// token's fields are ordered so that it fits the 192-byte allocation size class.
type token struct {
	node        *cnode
	frame       *frame
	call        *frame
	branch      string
	view        Context
	mode        tokenMode
	interrupted bool
	suspended   bool
	resumed     bool       // restored from the frontier being resumed, until it moves on from that node (Context.Resumed)
	retries     int32      // retries of the node execution in progress so far (Context.Attempt), until it moves on
	reason      string     // the reason this token's task suspended with, for its NodeEnd
	arrivals    int        // how many branches the join this token fires waited for
	resume      []*token   // modeResumeCall: the parked tokens inside the call
	cp          position   // last committed position, kept only when checkpointing
	completed   *cnode     // the node this token just completed, for the checkpoint
	effects     *[]any     // what the node in progress queued with Context.Effect, for its checkpoint
	failure     *NodeError // modeFailed: the failure to report
}

// local returns the item of the innermost loop whose variable is key.
func (t *token) local(key string) (any, bool) {
	if t == nil {
		return nil, false
	}
	for f := t.frame; f != nil; f = f.parent {
		if f.kind == frameLoop && f.loop.loopVar == key {
			return f.items[f.index], true
		}
	}
	return nil, false
}

func (r *run) newToken(n *cnode, mode tokenMode, f *frame, branch string) *token {
	t := &token{node: n, mode: mode, frame: f, call: f.call, branch: branch}
	t.view = Context{st: r.st, tok: t}
	return t
}
