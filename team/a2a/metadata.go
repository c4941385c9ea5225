package a2a

import (
	spec "github.com/a2aproject/a2a-go/a2a"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
)

// Metadata keys of a failed task. The server writes them on the task (the outer
// metadata, which clients read first) and mirrors them on status.message.metadata for
// clients of the older interaction spec; status.message.parts carries the text for
// people.
const (
	KeyObjectType   = "object_type"   // "error" on a structured failure
	KeyErrorType    = "error_type"    // team.ErrorType: timeout, rate_limited, ...
	KeyErrorCode    = "error_code"    // the string code (team.Error.Code, else the failure's code)
	KeyErrorMessage = "error_message" // the message, without the type
	KeyRetryable    = "retryable"     // whether trying again may help
	KeyTaskState    = "task_state"    // failed, canceled or rejected
	KeyResponseID   = "response_id"   // the run id of the remote agent's run
)

// ObjectError is the object_type of a structured failure.
const ObjectError = "error"

// ErrorMetadata returns the structured fields describing err as the terminal failure
// of a task in the given state; runID is the remote run's id (may be empty). The
// code is the *team.Error's Code, else the code the error declares about itself
// (flow.ToStructured), else its type.
func ErrorMetadata(err error, state spec.TaskState, runID string) map[string]any {
	e := team.AsError(err, team.TypeAgentFailed)
	code := e.Code
	if code == "" {
		code = flow.ToStructured(err).Code
	}
	if code == "" {
		code = string(e.Type)
	}
	md := map[string]any{
		KeyObjectType:   ObjectError,
		KeyErrorType:    string(e.Type),
		KeyErrorCode:    code,
		KeyErrorMessage: messageOf(e),
		KeyRetryable:    e.Retry,
		KeyTaskState:    string(state),
	}
	if runID != "" {
		md[KeyResponseID] = runID
	}
	return md
}

// messageOf returns the message of e for people: its Message, else its cause's (what
// e.Error() shows after the type and HTTP status), else its type.
func messageOf(e *team.Error) string {
	switch {
	case e.Message != "":
		return e.Message
	case e.Err != nil:
		return e.Err.Error()
	}
	return string(e.Type)
}

// errorFromMetadata rebuilds the structured error md describes. It reports false when
// md is not a structured failure or a field has the wrong type: a malformed record
// is not trusted in part.
func errorFromMetadata(md map[string]any) (*team.Error, bool) {
	if md[KeyObjectType] != ObjectError {
		return nil, false
	}
	typ, ok := md[KeyErrorType].(string)
	if !ok || typ == "" {
		return nil, false
	}
	e := team.NewError(team.ErrorType(typ), "")
	for key, dst := range map[string]*string{KeyErrorMessage: &e.Message, KeyErrorCode: &e.Code} {
		if v, present := md[key]; present {
			s, ok := v.(string)
			if !ok {
				return nil, false
			}
			*dst = s
		}
	}
	if v, present := md[KeyRetryable]; present {
		r, ok := v.(bool)
		if !ok {
			return nil, false
		}
		e.Retry = r
	}
	return e, true
}
