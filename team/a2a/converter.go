package a2a

import (
	"fmt"

	spec "github.com/a2aproject/a2a-go/a2a"

	"github.com/flowteam/flowteam/team"
)

// Failure is a remote task that ended failed, canceled or rejected, as a Converter
// sees it: Metadata is the task's (the outer metadata), Message its final status
// message, whose metadata mirrors the outer one on servers that follow ErrorMetadata.
type Failure struct {
	TaskID   string
	State    spec.TaskState
	Metadata map[string]any
	Message  *spec.Message
}

// Converter turns a remote task's failure into the error a Client returns. It is the
// one place to adapt a provider whose metadata differs; returning nil falls back to
// DefaultConverter.
type Converter func(Failure) *team.Error

// TaskError is the cause of the errors a Client returns for a remote task: the task
// and the state it ended in (errors.As on the *team.Error's chain finds it).
type TaskError struct {
	TaskID string
	State  spec.TaskState
}

// Error says which task ended how.
func (e *TaskError) Error() string { return fmt.Sprintf("a2a: remote task %s %s", e.TaskID, e.State) }

// DefaultConverter reads the structured fields of ErrorMetadata from the outer
// metadata first and from the status message's metadata second. Without a usable
// record (none, or a field of the wrong type) the error's type comes from the state
// (failed: agent_error, canceled: cancelled, rejected: rejected) and its message
// from the status message's text.
func DefaultConverter(f Failure) *team.Error {
	e, ok := errorFromMetadata(f.Metadata)
	if !ok && f.Message != nil {
		e, ok = errorFromMetadata(f.Message.Metadata)
	}
	if !ok {
		t := team.TypeAgentFailed
		switch f.State {
		case spec.TaskStateCanceled:
			t = team.TypeCancelled
		case spec.TaskStateRejected:
			t = team.TypeRejected
		}
		e = team.NewError(t, "remote task %s", f.State)
		if f.Message != nil {
			if text := textOf(f.Message.Parts); text != "" {
				e.Message = text
			}
		}
	}
	e.Err = &TaskError{TaskID: f.TaskID, State: f.State}
	return e
}
