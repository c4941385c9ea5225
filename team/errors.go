package team

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrorType classifies a failure so that a caller (a coordinator, a retry loop, a
// model reading a tool observation) can decide what to do without parsing a message.
type ErrorType string

// Error types. The first six are the access failures of the seeds' sub-agent model;
// the others are raised by agents and tools.
const (
	TypeTimeout           ErrorType = "timeout"            // retryable
	TypeRateLimited       ErrorType = "rate_limited"       // retryable, see Error.RetryAfter
	TypeAuthDenied        ErrorType = "auth_denied"        // credentials missing, wrong or not allowed
	TypeNotFound          ErrorType = "not_found"          // the model, route or resource does not exist
	TypeInvalidQuery      ErrorType = "invalid_query"      // the request itself is wrong
	TypeSourceUnavailable ErrorType = "source_unavailable" // the provider failed (5xx, connection refused); retryable

	TypeBadResponse      ErrorType = "bad_response"      // the provider answered something unreadable
	TypeCancelled        ErrorType = "cancelled"         // the caller's context ended
	TypeStepLimit        ErrorType = "step_limit"        // a ReAct loop used all its steps
	TypeToolFailed       ErrorType = "tool_error"        // a tool returned an error without a type
	TypeInvalidArguments ErrorType = "invalid_arguments" // tool arguments failed schema validation
	TypeUnknownTool      ErrorType = "unknown_tool"      // the model called a tool the agent does not have
	TypePermissionDenied ErrorType = "permission_denied" // the agent's permission code refused the call
	TypeRejected         ErrorType = "rejected"          // a human rejected the call
	TypeSkipped          ErrorType = "skipped"           // a human skipped the call: it did not run (in call records, not shown to the model)
	TypeAgentFailed      ErrorType = "agent_error"       // an agent failed without a type
)

// Error is a structured failure: a type programs branch on, whether trying again may
// help, and a message for people. Tools return it (or any error, which is converted)
// and the model sees it as a JSON observation; chat models return it for provider
// failures. Its JSON form is {"type", "retryable", "message"} plus the optional fields.
//
// errors.Is(err, ErrRateLimited) matches any *Error of that type; errors.As gives the
// details.
type Error struct {
	Type ErrorType `json:"type"`
	// Retry says whether trying again may help (the JSON field "retryable").
	Retry   bool   `json:"retryable"`
	Message string `json:"message"`
	// Status is the HTTP status of a provider failure.
	Status int `json:"status,omitempty"`
	// Code is the provider's own error code, if it sent one.
	Code string `json:"code,omitempty"`
	// RetryAfter is how long the provider asked to wait (429 and 503 responses).
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	// Attempts is how many attempts were made before giving up (0 when not retried).
	Attempts int `json:"attempts,omitempty"`
	// Err is the underlying cause, if any.
	Err error `json:"-"`
}

// NewError returns an *Error of the given type; retryable is decided by the type
// (timeout, rate_limited and source_unavailable are).
func NewError(t ErrorType, format string, args ...any) *Error {
	return &Error{Type: t, Retry: t.retryable(), Message: fmt.Sprintf(format, args...)}
}

// retryable reports whether failures of this type are usually transient.
func (t ErrorType) retryable() bool {
	return t == TypeTimeout || t == TypeRateLimited || t == TypeSourceUnavailable
}

// Error returns the type, the HTTP status when there is one, and the message (or,
// without one, the cause's).
func (e *Error) Error() string {
	msg := string(e.Type)
	if e.Status != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Err != nil && e.Message == "" {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches a sentinel of the same type (an *Error with only a Type set).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Err == nil && t.Status == 0 && t.Type == e.Type
}

// ErrorType returns the type, as flow.ToStructured reads it.
func (e *Error) ErrorType() string { return string(e.Type) }

// ErrorCode returns the type as the stable code of a flow node failure.
func (e *Error) ErrorCode() string { return string(e.Type) }

// Retryable reports whether a retry may help (flow's retry policy reads it).
func (e *Error) Retryable() bool { return e.Retry }

// AsError converts err into an *Error: an *Error in its chain is returned as it is,
// context cancellation and deadlines become cancelled and timeout, anything else gets
// the fallback type with its message.
func AsError(err error, fallback ErrorType) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Type: TypeTimeout, Retry: true, Message: err.Error(), Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Type: TypeCancelled, Message: err.Error(), Err: err}
	}
	var typed interface{ ErrorType() string }
	if errors.As(err, &typed) && typed.ErrorType() != "" {
		var r interface{ Retryable() bool }
		retry := errors.As(err, &r) && r.Retryable()
		return &Error{Type: ErrorType(typed.ErrorType()), Retry: retry, Message: err.Error(), Err: err}
	}
	return &Error{Type: fallback, Retry: fallback.retryable(), Message: err.Error(), Err: err}
}

// ContextError converts the end of ctx into a structured error (TypeCancelled, or
// the cause's own type). Its chain holds ctx.Err() whatever the cause: flow tells a
// task its run's end cut short (INTERRUPTED, run again on resume) from one that
// failed by errors.Is(err, ctx.Err()), and a cause the caller gave
// (context.WithCancelCause) alone would make the cut a failure. An Agent written
// outside this package returns it when its context ends.
func ContextError(ctx context.Context) *Error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if err == nil || errors.Is(cause, err) {
		return AsError(cause, TypeCancelled)
	}
	e := AsError(err, TypeCancelled)
	e.Message, e.Err = cause.Error(), fmt.Errorf("%w: %w", err, cause)
	return e
}
