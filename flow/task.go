package flow

import "context"

// Task is the work a node does. c is the run's FlowContext as seen from the node's
// branch (loop items are visible, Interrupt ends only this branch); n is the node.
// A task that blocks must honour ctx.
type Task interface {
	Run(ctx context.Context, c *Context, n *Node) error
}

// TaskFunc adapts a function to the Task interface.
type TaskFunc func(ctx context.Context, c *Context, n *Node) error

// Run calls f.
func (f TaskFunc) Run(ctx context.Context, c *Context, n *Node) error { return f(ctx, c, n) }

// Condition decides whether a link (or a node's task guard) holds. It is registered on
// the engine by name and referenced as "@name".
type Condition interface {
	Test(ctx context.Context, c *Context) (bool, error)
}

// ConditionFunc adapts a function to the Condition interface.
type ConditionFunc func(ctx context.Context, c *Context) (bool, error)

// Test calls f.
func (f ConditionFunc) Test(ctx context.Context, c *Context) (bool, error) { return f(ctx, c) }

// Meta keys with a meaning to the engine.
const (
	// MetaFor names the loop variable of an opening loop node.
	MetaFor = "$for"
	// MetaIn is what an opening loop node iterates: a list, the name of a context
	// variable, or a stepper "start:end[:step]" / "start...end" (end excluded).
	MetaIn = "$in"
	// MetaBranchPolicy on a parallel node or in the graph's meta chooses how a failing
	// branch is handled: "fail-fast" (default) or "continue".
	MetaBranchPolicy = "branchPolicy"
)
