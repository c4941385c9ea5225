package flow

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors callers can branch on with errors.Is.
var (
	ErrGraphNotFound     = errors.New("graph not found")
	ErrGraphExists       = errors.New("graph already registered")
	ErrUnknownTask       = errors.New("unknown task")
	ErrUnknownCond       = errors.New("unknown condition")
	ErrUnknownNodeType   = errors.New("unknown node type")
	ErrCompile           = errors.New("does not compile")
	ErrStepLimit         = errors.New("step limit exceeded")
	ErrNoRoute           = errors.New("no link matched and there is no default link")
	ErrTaskPanic         = errors.New("task panicked")
	ErrJoinMismatch      = errors.New("branches of one split arrived at different joins")
	ErrLoopItems         = errors.New("loop items cannot be iterated")
	ErrCallDepth         = errors.New("sub-graph call depth exceeded")
	ErrNotResumable      = errors.New("nothing to resume")
	ErrBadCondition      = errors.New("condition did not produce a bool")
	ErrAllBranchesFailed = errors.New("every branch of the split failed")
	// ErrNoCheckpoint is Context.Effect's when no checkpoint will carry the effect:
	// the run takes none (no WithCheckpoint), or the view is not a running node's.
	ErrNoCheckpoint = errors.New("no checkpoint to carry the effect")
)

// Stable error codes, carried by NodeError.Code and by the structured errors of a run.
const (
	CodeTask              = "task_failed"
	CodeScript            = "script_error"
	CodeCondition         = "condition_error"
	CodePanic             = "task_panic"
	CodeNoRoute           = "exclusive_no_match"
	CodeStepLimit         = "step_limit"
	CodeCancelled         = "cancelled"
	CodeSubgraphNotFound  = "subgraph_not_found"
	CodeCallDepth         = "subgraph_depth"
	CodeJoinMismatch      = "join_mismatch"
	CodeLoopItems         = "loop_items"
	CodeCheckpoint        = "checkpoint_failed"
	CodeAllBranchesFailed = "all_branches_failed"
)

// NodeError is an error raised while a node ran: its task, its guard, the conditions of
// its links, or the engine's routing at that node. Use errors.As to get it.
type NodeError struct {
	Graph    string // id of the graph the node belongs to
	Path     string // call path of that graph
	Node     string // node id
	NodeType NodeType
	Title    string // node title
	Branch   string // branch id
	Step     int    // the run's step count when the node ran
	Code     string // stable code, one of the Code constants or the task error's own
	Err      error  // the cause: the task's error, or a sentinel such as ErrNoRoute
}

// Error names the node, its graph and (when it differs from the graph id) the call
// path, then the code and the cause; a *Error cause with the same code gives only
// its message, so the code is not said twice.
func (e *NodeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "node %q in graph %q", e.Node, e.Graph)
	if e.Path != "" && e.Path != e.Graph {
		fmt.Fprintf(&b, " (call path %s)", e.Path)
	}
	fmt.Fprintf(&b, ": %s: %s", e.Code, e.cause())
	return b.String()
}

// cause is the text of the underlying error; an *Error of the node's own code is
// given by its message, so that the code is not said twice.
func (e *NodeError) cause() string {
	if fe, ok := e.Err.(*Error); ok && fe.Code == e.Code {
		return fe.Message
	}
	return e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *NodeError) Unwrap() error { return e.Err }

// ErrorCode returns the stable code.
func (e *NodeError) ErrorCode() string { return e.Code }

func joinNodeErrors(errs []*NodeError) error {
	list := make([]error, len(errs))
	for i, e := range errs {
		list[i] = e
	}
	return errors.Join(list...)
}
