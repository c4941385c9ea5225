package flow

import (
	"context"
	"maps"
	"sync"

	"github.com/flowteam/flowteam/trace"
)

// Checkpoint is the state of a run after a node completed, as given to the function set
// with WithCheckpoint. Frontier lists every branch's next position, so a process that
// dies after a checkpoint was saved can resume without running a completed node again.
// A node that was running in another branch when the checkpoint was taken is in the
// frontier and runs again on resume (at-least-once for nodes in flight).
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
	// receiver owns it.
	Vars map[string]any
	// Trace is the FlowTrace as of the checkpoint (the last node per call path); the
	// receiver owns it.
	Trace trace.FlowTrace
}

// WithCheckpoint calls fn after every completed node with the run's current frontier
// (durability per node). Checkpoints are taken one at a time, in order; an error from
// fn fails the run. Without this option the engine keeps no bookkeeping for it, so it
// costs nothing.
func WithCheckpoint(fn func(ctx context.Context, cp Checkpoint) error) EvalOption {
	return func(c *evalConfig) { c.checkpoint = fn }
}

// position is where a token stands, as last committed for checkpoints.
type position struct {
	node    *cnode
	mode    tokenMode
	frame   *frame
	branch  string
	failure *NodeError
}

type checkpointer struct {
	fn  func(ctx context.Context, cp Checkpoint) error
	mu  sync.Mutex // one checkpoint at a time, in order
	seq int64
}

// commitLocked records the token's current position as its checkpoint position and
// marks it live. The caller holds r.mu.
func (r *run) commitLocked(t *token) {
	t.cp = position{node: t.node, mode: t.mode, frame: t.frame, branch: t.branch, failure: t.failure}
	r.live[t] = struct{}{}
}

// commit records a token's position after it moved along a link.
func (r *run) commit(t *token) {
	r.mu.Lock()
	r.commitLocked(t)
	r.mu.Unlock()
}

// checkpoint builds the frontier of the live tokens and hands it to the checkpoint
// function.
func (r *run) checkpoint(ctx context.Context, done *token) error {
	c := r.ckpt
	c.mu.Lock()
	defer c.mu.Unlock()
	// Lock order st.mu before r.mu, as scripts (which may stop the run) do.
	r.st.mu.Lock()
	vars := maps.Clone(r.st.vars)
	r.mu.Lock()
	fr := &Frontier{graph: r.root.graph, tokens: make([]*token, 0, len(r.live))}
	for t := range r.live {
		p := t.cp
		fr.tokens = append(fr.tokens, &token{node: p.node, mode: p.mode, frame: p.frame, call: p.frame.call, branch: p.branch, failure: p.failure})
	}
	st := fr.State()
	tr := r.st.trace.Clone()
	r.recordLive(&tr)
	r.mu.Unlock()
	r.st.mu.Unlock()
	c.seq++
	return c.fn(ctx, Checkpoint{Seq: c.seq, Node: done.node.n.ID, Path: done.call.path, Frontier: st, Vars: vars, Trace: tr})
}
