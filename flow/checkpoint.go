package flow

import (
	"context"
	"maps"
	"math"
	"sync"

	"github.com/flowteam/flowteam/trace"
)

// Checkpoint is the state of a run after a node completed, as given to the function set
// with WithCheckpoint. Frontier lists every branch's next position, so a process that
// dies after a checkpoint was saved can resume without running a completed node again.
// A node that was running in another branch when the checkpoint was taken is in the
// frontier and runs again on resume (at-least-once for nodes in flight).
//
// Vars, Trace.Last and the Frames and Tokens of Frontier are made for the checkpoint:
// the receiver owns them. A receiver that is done with those of an earlier checkpoint
// of the same run may hand them back with Recycle, and the engine fills them again
// instead of allocating new ones (a checkpoint per node then allocates almost nothing).
type Checkpoint struct {
	// Seq increases with every checkpoint of the run; checkpoints are delivered in order.
	Seq int64
	// Node is the node whose completion triggered the checkpoint.
	Node string
	// Path is the call path of that node's graph.
	Path string
	// Frontier is where every live branch of the run stands.
	Frontier FrontierState
	// Vars is a copy of the instance's variables taken together with the frontier; the
	// receiver owns it (the values themselves are shared with the run).
	Vars map[string]any
	// Trace is the FlowTrace as of the checkpoint (the last node per call path); the
	// receiver owns it.
	Trace trace.FlowTrace
	// Effects are the writes Node's task queued with Context.Effect, in the order
	// queued (nil when none): the receiver makes them in the step that saves the
	// checkpoint, or not at all. The receiver owns the slice.
	Effects []any

	c *checkpointer
}

// Recycle hands back the Vars map, the Trace.Last map and the frontier's Frames and
// Tokens slices of an earlier checkpoint of the same run, or others of these types the
// caller owns, such as the copy of the variables (Context.Vars) and the State of the
// start frontier saved before the run started (any of them may be nil), for the
// engine to clear and fill at a later checkpoint. The caller must not read, keep
// or hand out any of them afterwards, nor recycle them twice: only what it owns and
// nothing else refers to. Recycle is an optimization; not calling it is always fine.
func (cp Checkpoint) Recycle(vars map[string]any, tr trace.FlowTrace, fr *FrontierState) {
	c := cp.c
	if c == nil {
		return
	}
	c.spareMu.Lock()
	defer c.spareMu.Unlock()
	if vars != nil {
		c.spare.vars = vars
	}
	if tr.Last != nil {
		c.spare.trace = tr.Last
	}
	if fr != nil {
		if fr.Frames != nil {
			c.spare.frames = fr.Frames
		}
		if fr.Tokens != nil {
			c.spare.tokens = fr.Tokens
		}
	}
}

// WithCheckpoint calls fn after every completed node with the run's current frontier
// (durability per node). Checkpoints are taken one at a time, in order; an error from
// fn fails the run. Without this option the engine keeps no bookkeeping for it, so it
// costs nothing.
func WithCheckpoint(fn func(ctx context.Context, cp Checkpoint) error) EvalOption {
	return func(c *evalConfig) { c.checkpoint = fn }
}

// WithCheckpointVars sets how a checkpoint copies the variables (src) into the map it
// hands over (dst: empty, or the Vars of a checkpoint the receiver recycled, with
// whatever it left in it). copyVars must leave in dst exactly the keys of src, each
// with src's value or one the receiver holds for the same (such as a copy it made
// before), and nothing else. It runs with the variables locked, so it must be quick
// and must not use the Context; it lets a receiver that converts every value anyway
// do it in the one pass over the variables instead of a second one.
func WithCheckpointVars(copyVars func(dst, src map[string]any)) EvalOption {
	return func(c *evalConfig) { c.copyVars = copyVars }
}

// position is where a token stands, as last committed for checkpoints.
type position struct {
	node     *cnode
	mode     tokenMode
	frame    *frame
	branch   string
	failure  *NodeError
	arrivals int // a fired join's, for its node's run (and record) on resume
}

type checkpointer struct {
	fn       func(ctx context.Context, cp Checkpoint) error
	copyVars func(dst, src map[string]any) // nil: copyVars
	mu       sync.Mutex                    // one checkpoint at a time, in order
	seq      int64
	// Scratch of one checkpoint, guarded by mu: the live tokens at their committed
	// positions and the frame index of the frontier being built.
	toks  []token
	ptrs  []*token
	index map[*frame]int

	spareMu sync.Mutex
	spare   spare // what the receiver recycled, for the next checkpoint
}

// spare holds the recycled parts of earlier checkpoints.
type spare struct {
	vars   map[string]any
	trace  map[string]trace.NodeRecord
	frames []FrameState
	tokens []TokenState
}

// commitLocked records the token's current position as its checkpoint position and
// marks it live. The caller holds r.mu.
func (r *run) commitLocked(t *token) {
	t.cp = position{node: t.node, mode: t.mode, frame: t.frame, branch: t.branch, failure: t.failure, arrivals: t.arrivals}
	r.live[t] = struct{}{}
}

// commit records a token's position after it moved along a link.
func (r *run) commit(t *token) {
	r.mu.Lock()
	r.commitLocked(t)
	r.mu.Unlock()
}

// checkpoint builds the frontier of the live tokens and hands it to the checkpoint
// function. The maps and slices it hands over are recycled ones when the receiver gave
// some back, so a checkpoint costs copies, not allocations, and nothing in it grows
// with the history of the run.
func (r *run) checkpoint(ctx context.Context, done *token, effects []any) error {
	c := r.ckpt
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spareMu.Lock()
	sp := c.spare
	c.spare = spare{}
	c.spareMu.Unlock()

	// Lock order st.mu before r.mu, as scripts (which may stop the run) do.
	r.st.mu.Lock()
	vars := sp.vars
	if vars == nil {
		vars = make(map[string]any, len(r.st.vars))
	}
	if c.copyVars != nil {
		c.copyVars(vars, r.st.vars)
	} else {
		copyVars(vars, r.st.vars)
	}
	r.mu.Lock()
	c.toks, c.ptrs = c.toks[:0], c.ptrs[:0]
	for t := range r.live {
		p := t.cp
		c.toks = append(c.toks, token{node: p.node, mode: p.mode, frame: p.frame, call: p.frame.call, branch: p.branch, failure: p.failure,
			arrivals: p.arrivals})
	}
	for i := range c.toks {
		c.ptrs = append(c.ptrs, &c.toks[i])
	}
	if c.index == nil {
		c.index = map[*frame]int{}
	}
	clear(sp.frames) // a recycled slice holds no loop items of earlier checkpoints
	st := FrontierState{Frames: sp.frames[:0], Tokens: sp.tokens[:0]}
	fr := Frontier{graph: r.root.graph, tokens: c.ptrs}
	fr.appendState(&st, c.index)
	clear(c.index)
	clear(c.toks) // no references to frames kept past the checkpoint
	clear(c.ptrs)
	if len(st.Frames) == 0 {
		st.Frames = nil // as State returns it
	}
	if len(st.Tokens) == 0 {
		st.Tokens = nil
	}
	tr := trace.FlowTrace{Last: sp.trace}
	if tr.Last == nil {
		tr.Last = make(map[string]trace.NodeRecord, len(r.st.trace.Last)+1+len(r.calls))
	} else {
		for k := range tr.Last { // cheaper than clear for the few paths of a trace
			delete(tr.Last, k)
		}
	}
	maps.Copy(tr.Last, r.st.trace.Last)
	r.recordLive(&tr)
	r.mu.Unlock()
	r.st.mu.Unlock()
	c.seq++
	return c.fn(ctx, Checkpoint{Seq: c.seq, Node: done.node.n.ID, Path: done.call.path, Frontier: st, Vars: vars, Trace: tr,
		Effects: effects, c: c})
}

// copyVars makes dst (empty or recycled) a copy of src. Updating a recycled map is
// cheaper than clearing and filling it: the variables of consecutive checkpoints
// mostly have the same names, and mostly the same values, which need no write.
func copyVars(dst, src map[string]any) {
	for k, v := range src {
		if old, ok := dst[k]; !ok || !sameScalar(old, v) {
			dst[k] = v
		}
	}
	if len(dst) != len(src) {
		for k := range dst {
			if _, ok := src[k]; !ok {
				delete(dst, k)
			}
		}
	}
}

// sameScalar reports whether a and b are equal values of one of the usual scalar
// types, so that either may stand for the other.
func sameScalar(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y) // -0 is not 0
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}
