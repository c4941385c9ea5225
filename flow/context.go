package flow

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"sync"

	"github.com/flowteam/flowteam/trace"
)

// Context is the FlowContext: the variables of a flow instance, shared by every
// branch of a run and by its sub-graphs, plus the run controls Stop, Interrupt and
// Suspend.
//
// The *Context a caller creates with NewContext is the instance's root view. Tasks
// receive a branch view of the same instance: it reads the branch's loop items (a loop
// item is visible only in the branch that iterates it) and its Interrupt ends only that
// branch. All views share one set of variables, guarded by one mutex, so concurrent
// branches may call Get and Set freely; use Update or Atomic for read-modify-write.
// Script tasks run while holding that mutex, so a script is applied atomically.
//
// A branch view belongs to the node execution it is given to (a task, a condition,
// an interceptor's OnNodeStart and OnNodeEnd): once that call returns, the token it
// views moves on to other nodes, unsynchronized, so the view must not be used from
// a goroutine the call leaves behind. Resumed, Attempt, BranchID, Get and its typed
// forms (which read the branch's loop items), Atomic, Interrupt, Suspend and Stop
// would then describe or act on wherever the branch has got to, and race with it.
// Only InstanceID, RunID and CallPath, which describe the execution itself, and the
// methods that touch nothing but the instance (Set, Delete, Update, Vars, Trace,
// LastNode, CallOutcome, ErrorKey) stay safe; a task that starts such a goroutine
// copies what else it needs first. Keeping the view per node execution is what
// lets the engine move a token from node to node without a lock or an allocation.
type Context struct {
	st  *contextState
	tok *token // nil for the root view
}

type contextState struct {
	mu         sync.Mutex
	vars       map[string]any
	instanceID string
	trace      trace.FlowTrace
	calls      map[string]CallOutcome // last outcome per sub-graph call path
	run        *run                   // the run in progress, if any
	errKey     string                 // the error key of the engine that last ran it ("": none yet)
}

// NewContext returns the root view of a new flow instance with the given id. An empty
// id is allowed; the engine then reports runs under an empty instance id.
func NewContext(instanceID string) *Context {
	return &Context{st: &contextState{instanceID: instanceID, vars: make(map[string]any)}}
}

// NewContextWith returns a new context holding a copy of vars.
func NewContextWith(instanceID string, vars map[string]any) *Context {
	c := NewContext(instanceID)
	maps.Copy(c.st.vars, vars)
	return c
}

// RestoreContext returns the root view of an instance restored from storage: its
// variables and its FlowTrace as they were saved.
func RestoreContext(instanceID string, vars map[string]any, tr trace.FlowTrace) *Context {
	c := NewContextWith(instanceID, vars)
	c.st.trace = tr.Clone()
	return c
}

// InstanceID returns the id of the flow instance.
func (c *Context) InstanceID() string { return c.st.instanceID }

// ErrorKey returns the variable under which the engine that runs this context, or
// last ran it, keeps the execution error records (WithErrorKey); DefaultErrorKey
// before any run. Code that reads the records from a context (ExecutionErrors) should
// use it rather than assume the default. The key is not part of the variables: a
// context made with RestoreContext reports DefaultErrorKey until an engine runs it, so
// code that reads a restored context outside a run must know the engine's key.
func (c *Context) ErrorKey() string {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	if c.st.errKey == "" {
		return DefaultErrorKey
	}
	return c.st.errKey
}

// Get returns the value of key: the branch's loop item of that name if there is one,
// else the shared variable.
func (c *Context) Get(key string) (any, bool) {
	if v, ok := c.tok.local(key); ok {
		return v, true
	}
	c.st.mu.Lock()
	v, ok := c.st.vars[key]
	c.st.mu.Unlock()
	return v, ok
}

// Value returns the value of key, or nil.
func (c *Context) Value(key string) any {
	v, _ := c.Get(key)
	return v
}

// Set stores a shared variable.
func (c *Context) Set(key string, value any) {
	c.st.mu.Lock()
	c.st.vars[key] = value
	c.st.mu.Unlock()
}

// Delete removes a shared variable.
func (c *Context) Delete(key string) {
	c.st.mu.Lock()
	delete(c.st.vars, key)
	c.st.mu.Unlock()
}

// Update atomically replaces key's value with fn(old, ok) and returns the new value.
// fn runs with the variables locked: it must not call other Context methods.
func (c *Context) Update(key string, fn func(old any, ok bool) any) any {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	old, ok := c.st.vars[key]
	v := fn(old, ok)
	c.st.vars[key] = v
	return v
}

// Atomic runs fn with the variables locked, so several reads and writes apply as one.
// fn must not call other Context methods; it uses the Vars it is given.
func (c *Context) Atomic(fn func(v Vars) error) error {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return fn((*lockedView)(c))
}

// Vars returns a copy of the shared variables.
func (c *Context) Vars() map[string]any {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return maps.Clone(c.st.vars)
}

// GetString returns key's value if it is a string.
func (c *Context) GetString(key string) (string, bool) {
	v, _ := c.Get(key)
	s, ok := v.(string)
	return s, ok
}

// GetBool returns key's value if it is a bool.
func (c *Context) GetBool(key string) (bool, bool) {
	v, _ := c.Get(key)
	b, ok := v.(bool)
	return b, ok
}

// GetInt returns key's value as an int64 if it is a number with no fractional part.
func (c *Context) GetInt(key string) (int64, bool) {
	v, _ := c.Get(key)
	return AsInt64(v)
}

// GetFloat returns key's value as a float64 if it is a number.
func (c *Context) GetFloat(key string) (float64, bool) {
	v, _ := c.Get(key)
	return toFloat64(v)
}

// GetAs returns key's value if it holds a T.
func GetAs[T any](c *Context, key string) (T, bool) {
	v, _ := c.Get(key)
	t, ok := v.(T)
	return t, ok
}

// Stop ends the whole run, parent graphs and sub-graphs included, once the current
// node finishes. The nodes that would have run next stay in the run's frontier. When
// nothing would have run next (Stop in the end node, or in the last node of the last
// branch), the run completed: there is nothing to stop or resume.
func (c *Context) Stop() {
	c.st.mu.Lock()
	(*lockedView)(c).Stop()
	c.st.mu.Unlock()
}

// Interrupt ends the current branch once the current node finishes; other branches go
// on, and a join waiting for this branch stops waiting for it. In a loop body it ends
// the current iteration (the loop goes on with its next item, like continue); in a
// sub-graph, the child's branch (a child with no branch left has completed, and its
// caller goes on). On the root view it does nothing.
func (c *Context) Interrupt() {
	if c.tok != nil {
		c.tok.interrupted = true
	}
}

// Suspend stops the run with a reason, like Stop, and marks the current node to run
// again when the run is resumed, so a task can check for the decision it waited for.
func (c *Context) Suspend(reason string) {
	c.st.mu.Lock()
	(*lockedView)(c).Suspend(reason)
	c.st.mu.Unlock()
}

// Effect queues e, a write outside the instance (a counter, a message to send), for
// the checkpoint that records the completion of the node this view runs: the
// checkpoint's receiver makes it in the step that saves the checkpoint (a
// transactional outbox), so it is made if and only if the checkpoint is. A node that
// does not complete drops what it queued: an attempt that fails (a retry starts with
// none), a node that suspends, is interrupted, is cancelled or whose run halts before
// it completes. A process that dies before the checkpoint is saved leaves neither; on
// resume from the last saved checkpoint the node runs again and queues its effects
// again, so each is made once.
//
// Each branch and each node of a sub-graph call queues its own, delivered in
// Checkpoint.Effects in the order queued. What e may be is the receiver's contract
// (session.EffectStore). Effect returns ErrNoCheckpoint when the run takes no
// checkpoints (no WithCheckpoint) or on a view that is not a running node's (the root
// view, Engine.RunTask): the caller then cannot have the write made exactly once. A
// nil e is an error. It may be called from goroutines of the task until it returns.
func (c *Context) Effect(e any) error {
	if r := c.ownRun(); r == nil || r.ckpt == nil {
		return ErrNoCheckpoint
	}
	if e == nil {
		return errors.New("flow: nil effect")
	}
	t := c.tok
	c.st.mu.Lock()
	if t.effects == nil {
		t.effects = new([]any)
	}
	*t.effects = append(*t.effects, e)
	c.st.mu.Unlock()
	return nil
}

// RunID returns the id of the run: for the view a task or a hook is given, the run
// its node execution belongs to, also once that run is over (an interceptor ending
// the executions a panic abandoned, a goroutine a task left behind); for the root
// view, the run in progress ("" outside a run).
func (c *Context) RunID() string {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	r := c.st.run
	if c.tok != nil {
		root := c.tok.call // set when the token is made, never moved
		for root.caller != nil {
			root = root.caller
		}
		if own := root.run; own != nil && own != r {
			// The run is over: no one formats its id any more, and runRoot may be
			// reading it unlocked, so it is formatted here without being kept.
			if own.id == "" && own.seq != 0 {
				return formatRunID(own.seq)
			}
			return own.id
		}
	}
	if r != nil {
		return r.runIDLocked()
	}
	return ""
}

// BranchID returns the id of the branch this view belongs to ("" for the root view).
// It is derived from the gateways and links that created the branch, so it is stable
// across runs of the same graph and across a restored frontier: "main" for the run's
// first branch; a split's branch appends "/" + split id + ":" + target id; a loop
// iteration "/" + loop id + "[" + index + "]"; a sub-graph call "/" + calling node
// id + "/" + graph id. When several links of one split lead to the same node, the
// branch of the i-th target (counting from 0 the targets the split takes, in
// priority order) that repeats an earlier one gets "#i" after the target id, appended
// again for as long as the result is the id of a node the split links to: links to
// a, a and a node named "a#1" give the branches a, a#1#1 and a#1. The branches of one
// split therefore always have different ids.
func (c *Context) BranchID() string {
	if c.tok == nil {
		return ""
	}
	return c.tok.branch
}

// Resumed reports whether this view's node execution continues a resumed frontier:
// the node is where a token of the frontier given to Resume stood, past its arrival
// (a node that suspended, was cancelled by the halt or failed runs again; a calling
// node re-enters its sub-graph call), and the token has not moved on since. It is
// false in a fresh evaluation, at every later node, at a node the halted run had not
// started (the node after a Stop, a branch parked before its next node, a join or a
// loop's closing node that the step limit refused), and when a later loop iteration,
// a cycle or an error policy's goto comes back to the same node. A task that keeps
// state between its suspension and its resume (an agent waiting for a human) uses it
// to tell a resume from a new evaluation that merely finds the old state in the
// variables.
func (c *Context) Resumed() bool { return c.tok != nil && c.tok.resumed }

// Attempt returns the attempt of the node execution in progress: 1, then 2 and up
// when a retry policy runs the node again (NodeEnd.Attempt says the same to
// interceptors); 0 for the root view, outside any node.
func (c *Context) Attempt() int {
	if c.tok == nil {
		return 0
	}
	return int(c.tok.retries) + 1
}

// CallPath returns the call path of the graph this view's node belongs to: the root
// graph id, then "/node/graph" for each sub-graph call.
func (c *Context) CallPath() string {
	if c.tok == nil {
		return ""
	}
	return c.tok.call.path
}

// Trace returns a copy of the FlowTrace: the last node reached per call path.
// During a run it includes the graphs still in progress.
func (c *Context) Trace() trace.FlowTrace {
	c.st.mu.Lock()
	defer c.st.mu.Unlock() // the run is reached only under the lock (recycle.go)
	t := c.st.trace.Clone()
	if r := c.st.run; r != nil {
		r.mu.Lock()
		r.recordLive(&t)
		r.mu.Unlock()
	}
	return t
}

// LastNode returns the id of the last node reached under the call path ("" if none).
func (c *Context) LastNode(path string) string {
	t := c.Trace()
	return t.LastNode(path)
}

// Vars is the variable access given to code that runs with the variables locked
// (Atomic, scripts). Get also sees the branch's loop items.
type Vars interface {
	Get(key string) (any, bool)
	Put(key string, value any)
	Remove(key string)
}

// Scope is what a compiled script sees: locked variable access plus the run controls.
type Scope interface {
	Vars
	Stop()
	Interrupt()
	Suspend(reason string)
}

// lockedView is a Context whose caller holds the variable mutex.
type lockedView Context

func (l *lockedView) Get(key string) (any, bool) {
	if v, ok := l.tok.local(key); ok {
		return v, true
	}
	v, ok := l.st.vars[key]
	return v, ok
}
func (l *lockedView) Put(key string, value any) { l.st.vars[key] = value }
func (l *lockedView) Remove(key string)         { delete(l.st.vars, key) }
func (l *lockedView) Interrupt()                { (*Context)(l).Interrupt() }

// Stop and Suspend read the run directly: the caller holds the mutex, which is what
// keeps a run from being recycled under them (recycle.go).
func (l *lockedView) Stop() {
	if r := l.st.run; r != nil {
		r.halt(stateStopped, "", nil, nil)
	}
}

func (l *lockedView) Suspend(reason string) {
	if r := l.st.run; r != nil {
		r.halt(stateSuspended, reason, l.tok, nil)
	}
}

// AsInt64 converts a context value to an integer as Context.GetInt does: any Go
// integer that fits, a float without a fraction, or a json.Number (what a restored
// snapshot holds).
func AsInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint:
		return int64(n), n <= math.MaxInt64
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return int64(n), n <= math.MaxInt64
	case float32:
		return int64(n), float32(int64(n)) == n
	case float64:
		return int64(n), float64(int64(n)) == n
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func toFloat64(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	if i, ok := AsInt64(v); ok {
		return float64(i), true
	}
	return 0, false
}
