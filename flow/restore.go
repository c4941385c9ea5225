package flow

import (
	"errors"
	"fmt"
	"slices"
)

// ErrBadFrontier is returned when a frontier state does not fit its graph.
var ErrBadFrontier = errors.New("invalid frontier")

// badFrontier returns an error wrapping ErrBadFrontier.
func badFrontier(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadFrontier, fmt.Sprintf(format, args...))
}

// RestoreFrontier rebuilds a Frontier for root (the graph the run started from) from its
// serialized state. Sub-graph frames are resolved through the calling node, as at run
// time. Every reference is checked, and so is each frame's pending count against the
// tokens and frames inside it (see checkPending); on any mismatch nothing is returned
// and the error (wrapping ErrBadFrontier) says what did not fit.
func (e *Engine) RestoreFrontier(root *Graph, st FrontierState) (*Frontier, error) {
	cg, err := e.prepare(root)
	if err != nil {
		return nil, err
	}
	if st.Graph != root.ID {
		return nil, badFrontier("state is for graph %q, not %q", st.Graph, root.ID)
	}
	if len(st.Tokens) == 0 {
		return nil, badFrontier("no pending tokens")
	}
	r := &restorer{e: e, root: cg, frames: make([]*frame, len(st.Frames))}
	for i, fs := range st.Frames {
		if r.frames[i], err = r.frame(i, fs); err != nil {
			return nil, err
		}
	}
	if len(r.frames) == 0 {
		return nil, badFrontier("no frames")
	}
	fr := &Frontier{graph: cg}
	for i, ts := range st.Tokens {
		t, err := r.token(i, ts)
		if err != nil {
			return nil, err
		}
		fr.tokens = append(fr.tokens, t)
	}
	if err := checkPending(st, r.frames); err != nil {
		return nil, err
	}
	return fr, nil
}

// restorer rebuilds the frames of a frontier state in order, parents first.
type restorer struct {
	e      *Engine
	root   *compiled
	frames []*frame
}

// ref returns frame i, referenced from frame (or token) self: nil for -1, ok=false
// unless i comes before self (parents come first).
func (r *restorer) ref(i, self int) (*frame, bool) {
	if i == -1 {
		return nil, true
	}
	if i < 0 || i >= self {
		return nil, false
	}
	return r.frames[i], true
}

// frame rebuilds frame i.
func (r *restorer) frame(i int, fs FrameState) (*frame, error) {
	parent, ok := r.ref(fs.Parent, i)
	if !ok {
		return nil, badFrontier("frame %d: parent %d out of order", i, fs.Parent)
	}
	if fs.Pending < 0 {
		return nil, badFrontier("frame %d: negative pending count", i)
	}
	f := &frame{parent: parent, pending: fs.Pending, branch: fs.Branch}
	var err error
	switch fs.Kind {
	case "call":
		err = r.callFrame(f, i, fs)
	case "split", "loop":
		call, ok := r.ref(fs.Call, i)
		if !ok || call == nil || call.kind != frameCall || parent == nil || parent.call != call {
			return nil, badFrontier("frame %d: bad call frame %d", i, fs.Call)
		}
		f.call = call
		if fs.Kind == "split" {
			err = restoreSplit(f, i, fs)
		} else {
			err = restoreLoop(f, i, fs)
		}
	default:
		return nil, badFrontier("frame %d: unknown kind %q", i, fs.Kind)
	}
	if err != nil {
		return nil, err
	}
	if len(fs.Failed) > 0 && f.kind != frameSplit {
		return nil, badFrontier("frame %d: failed branches in a %s frame", i, fs.Kind)
	}
	return f, nil
}

// callFrame fills f, frame i, as a sub-graph call frame (or the root's).
func (r *restorer) callFrame(f *frame, i int, fs FrameState) error {
	f.kind, f.call = frameCall, f
	caller, ok := r.ref(fs.Caller, i)
	if !ok {
		return badFrontier("frame %d: caller %d out of order", i, fs.Caller)
	}
	if caller == nil {
		if f.parent != nil || i != 0 {
			return badFrontier("frame %d: a root call frame must come first and have no parent", i)
		}
		f.graph, f.path = r.root, r.root.g.ID
		return nil
	}
	if f.parent == nil || f.parent.call != caller {
		return badFrontier("frame %d: call frame's parent is not in its caller", i)
	}
	cn := caller.graph.node(fs.Node)
	if cn == nil || cn.kind != taskSubgraph {
		return badFrontier("frame %d: node %q of graph %q does not call a sub-graph", i, fs.Node, caller.graph.g.ID)
	}
	child, err := r.e.resolveCall(cn)
	if err != nil {
		return badFrontier("frame %d: %v", i, err)
	}
	if child.g.ID != fs.Graph {
		return badFrontier("frame %d: node %q calls %q, state says %q", i, fs.Node, child.g.ID, fs.Graph)
	}
	if fs.Arrived < 0 || (fs.Arrived > 0 && !cn.join) {
		return badFrontier("frame %d: %d arrivals for node %q, which is not a join", i, fs.Arrived, fs.Node)
	}
	f.graph, f.node, f.caller, f.depth = child, cn, caller, caller.depth+1
	f.path = caller.path + "/" + cn.n.ID + "/" + child.g.ID
	f.arrived = fs.Arrived
	return nil
}

// restoreSplit fills f, frame i, as a split frame: its split and join nodes, arrivals,
// branch policy and failed branches.
func restoreSplit(f *frame, i int, fs FrameState) error {
	g := f.call.graph
	f.kind = frameSplit
	if f.split = g.node(fs.Split); f.split == nil || len(f.split.links) < 2 {
		return badFrontier("frame %d: %q is not a split node of graph %q", i, fs.Split, g.g.ID)
	}
	if fs.Pending > len(f.split.links) {
		// A split starts one branch per true link at most, and only ends them.
		return badFrontier("frame %d (split %q): %d branches pending, but the node has %d links", i, fs.Split, fs.Pending, len(f.split.links))
	}
	if fs.Join != "" {
		if f.join = g.node(fs.Join); f.join == nil || !f.join.join {
			return badFrontier("frame %d: %q is not a join node of graph %q", i, fs.Join, g.g.ID)
		}
	}
	if fs.Arrived < 0 || (fs.Arrived > 0) != (f.join != nil) {
		// A join is set by the first arrival: arrivals without one would fire
		// a join at no node, a join without arrivals would never fire.
		return badFrontier("frame %d (split %q): %d arrivals at join %q", i, fs.Split, fs.Arrived, fs.Join)
	}
	f.arrived = fs.Arrived
	var err error
	if f.policy, err = ParseBranchPolicy(fs.Policy); err != nil {
		return badFrontier("frame %d: %v", i, err)
	}
	if len(fs.Failed) > 0 && (f.split.n.Type != Parallel || f.policy != ContinueOnError) {
		// Only a ContinueOnError parallel split withdraws failed branches
		// (fatal): restored elsewhere, they would fail the split with
		// all_branches_failed for branches that never failed there.
		return badFrontier("frame %d: failed branches in split %q, which is not a parallel split with branch policy continue", i, fs.Split)
	}
	for j, fb := range fs.Failed {
		n := g.node(fb.Node)
		if n == nil {
			return badFrontier("frame %d: failed branch %d: no node %q in graph %q", i, j, fb.Node, g.g.ID)
		}
		f.failed = append(f.failed, &NodeError{Graph: n.n.graph.ID, Path: f.call.path, Node: n.n.ID, NodeType: n.n.Type,
			Title: n.n.Title, Branch: fb.Branch, Code: fb.Error.Code, Err: errors.New(fb.Error.Message)})
		f.failedIn = append(f.failedIn, f.branchOf(fb.Branch))
	}
	return nil
}

// restoreLoop fills f, frame i, as a loop frame: its loop node, items, index and the
// closing node the iteration reached.
func restoreLoop(f *frame, i int, fs FrameState) error {
	g := f.call.graph
	f.kind = frameLoop
	if f.loop = g.node(fs.Loop); f.loop == nil || f.loop.loopVar == "" {
		return badFrontier("frame %d: %q is not an opening loop node of graph %q", i, fs.Loop, g.g.ID)
	}
	if fs.Index < 0 || fs.Index >= len(fs.Items) {
		return badFrontier("frame %d: loop index %d outside %d items", i, fs.Index, len(fs.Items))
	}
	f.index = fs.Index
	f.items = slices.Clone(fs.Items)
	switch {
	case fs.Closing == fs.Loop:
		f.left = true
	case fs.Closing != "":
		if f.closing = g.node(fs.Closing); f.closing == nil || !f.closing.isClose {
			return badFrontier("frame %d: %q is not a closing loop node of graph %q", i, fs.Closing, g.g.ID)
		}
		if !f.loop.closers[f.closing] { // another loop's: the flow would go on from there
			return badFrontier("frame %d: %q does not close loop %q", i, fs.Closing, fs.Loop)
		}
	}
	return nil
}

// token rebuilds token i.
func (r *restorer) token(i int, ts TokenState) (*token, error) {
	f, ok := r.ref(ts.Frame, len(r.frames))
	if !ok || f == nil {
		return nil, badFrontier("token %d: bad frame %d", i, ts.Frame)
	}
	n := f.call.graph.node(ts.Node)
	if n == nil {
		return nil, badFrontier("token %d: no node %q in graph %q", i, ts.Node, f.call.graph.g.ID)
	}
	mode := slices.Index(modeNames[:], ts.Mode)
	if mode < 0 || tokenMode(mode) == modeResumeCall {
		return nil, badFrontier("token %d: bad mode %q", i, ts.Mode)
	}
	if ts.Arrivals < 0 {
		return nil, badFrontier("token %d: negative arrivals %d", i, ts.Arrivals)
	}
	t := &token{node: n, mode: tokenMode(mode), frame: f, call: f.call, branch: ts.Branch, arrivals: ts.Arrivals}
	if t.mode == modeFailed {
		if ts.Error == nil {
			return nil, badFrontier("token %d: a failed token without its error", i)
		}
		t.failure = &NodeError{Graph: n.n.graph.ID, Path: f.call.path, Node: n.n.ID, NodeType: n.n.Type, Title: n.n.Title,
			Branch: ts.Branch, Code: ts.Error.Code, Err: errors.New(ts.Error.Message)}
	}
	if t.mode == modeBody && (f.kind != frameLoop || f.loop != n) {
		return nil, badFrontier("token %d: a loop body token at %q outside the loop frame of that node", i, ts.Node)
	}
	return t, nil
}

// checkPending checks each frame's pending count against what the state holds inside
// the frame. The count is what makes a join fire, a loop go on and a call return: too
// high and they never do, too low and they do early (the count then goes negative and
// they never do again). The engine counts one unit per token whose innermost frame it
// is and one per frame nested directly in it: a split or loop frame stands for the
// branch or iteration that opened it, a sub-graph call frame for its calling token,
// which waits outside the frontier. Branches that arrived at the join, ended or failed
// are no longer counted. Every frame of a frontier has something in it, and a loop
// runs one iteration at a time.
func checkPending(st FrontierState, frames []*frame) error {
	units := make([]int, len(frames))
	for _, fs := range st.Frames {
		if fs.Parent >= 0 {
			units[fs.Parent]++
		}
	}
	for _, ts := range st.Tokens {
		units[ts.Frame]++
	}
	for i, f := range frames {
		switch {
		case units[i] == 0:
			return fmt.Errorf("%w: frame %d (%s): nothing is inside it", ErrBadFrontier, i, f.describe())
		case f.pending != units[i]:
			return fmt.Errorf("%w: frame %d (%s): pending %d, but %d tokens or frames are inside it",
				ErrBadFrontier, i, f.describe(), f.pending, units[i])
		case f.kind == frameLoop && f.pending != 1:
			return fmt.Errorf("%w: frame %d (%s): %d units inside, but a loop runs one iteration at a time",
				ErrBadFrontier, i, f.describe(), f.pending)
		}
	}
	return nil
}

// describe names a frame for messages.
func (f *frame) describe() string {
	switch f.kind {
	case frameSplit:
		return fmt.Sprintf("split %q in %s", f.split.n.ID, f.call.path)
	case frameLoop:
		return fmt.Sprintf("loop %q in %s", f.loop.n.ID, f.call.path)
	}
	return fmt.Sprintf("call of %q at %s", f.graph.g.ID, f.path)
}
