package workflow

import (
	"errors"
	"fmt"

	"github.com/flowteam/flowteam/session"
)

// Errors callers can branch on with errors.Is.
var (
	// ErrConflict: another submit saved the instance first (it is session.ErrConflict,
	// so a store's conflict matches either).
	ErrConflict = session.ErrConflict
	// ErrNotWaiting: SubmitTaskIfWaiting found the task not waiting. It wraps
	// ErrConflict: the task was taken, or was never there to take.
	ErrNotWaiting = fmt.Errorf("task is not waiting: %w", ErrConflict)
	// ErrNotActive: a person (not an administrator) submitted forward or back for a
	// task the instance does not wait on: one already done, or not reached yet. It
	// wraps ErrConflict.
	ErrNotActive = fmt.Errorf("task is not active: %w", ErrConflict)
	// ErrTerminated: the instance is terminated; only a restart moves it. It wraps
	// ErrConflict.
	ErrTerminated = fmt.Errorf("instance is terminated: %w", ErrConflict)
	// ErrNotFound: no instance is stored under the id (it is session.ErrNotFound).
	ErrNotFound = session.ErrNotFound
	// ErrNotPermitted: the controller refused the actor.
	ErrNotPermitted = errors.New("not permitted")
	// ErrUnknownNode: the graph has no such node.
	ErrUnknownNode = errors.New("unknown node")
	// ErrUnknownAction: the action is not one of the six.
	ErrUnknownAction = errors.New("unknown action")
	// ErrNotReached: a jump did not reach its target node (it is not ahead of, or
	// behind, where the instance stands).
	ErrNotReached = errors.New("target node not reached")
	// ErrWrongController: the instance was created with a controller of another name
	// (Named), such as other actor keys.
	ErrWrongController = errors.New("instance was created with another controller")
	// ErrWrongGraph: the instance belongs to another graph.
	ErrWrongGraph = errors.New("instance belongs to another graph")
)

// TaskError is a task's script or Go task failing while an instance moved on. It
// names the node; Err is the task's error.
type TaskError struct {
	Node string
	Err  error
}

// Error names the node and the task's error.
func (e *TaskError) Error() string { return fmt.Sprintf("task of node %q failed: %v", e.Node, e.Err) }

// Unwrap returns the task's error.
func (e *TaskError) Unwrap() error { return e.Err }
