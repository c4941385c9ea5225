package team

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is a Go function a ReAct agent may call. Schema, a JSON Schema, describes its
// arguments to the model and guards them: the agent resolves it once, when it is
// built, and validates each call's arguments against it (empty arguments count as
// {}) before Func runs, so Func sees only arguments that match; a nil Schema leaves
// them unchecked. Func returns the result (any JSON-encodable value; nil and empty
// lists are valid successes) or an error, which the model sees as a structured
// observation {type, retryable, message}: return an *Error to choose the type.
//
// Sensitive marks calls that need a human decision before they run: set it to
// Always for every call, or to a predicate on the (validated) arguments that returns
// true and a comment for the reviewer.
type Tool struct {
	Name        string
	Description string
	Schema      *jsonschema.Schema
	Func        func(ctx context.Context, args json.RawMessage) (any, error)
	Sensitive   func(args json.RawMessage) (sensitive bool, comment string)

	err error // why NewTool could not infer the schema; NewReActAgent reports it
}

// Always is a Sensitive predicate that asks for a decision on every call.
func Always(comment string) func(json.RawMessage) (bool, string) {
	return func(json.RawMessage) (bool, string) { return true, comment }
}

// def returns what the model is told about the tool.
func (t *Tool) def() ToolDef {
	return ToolDef{Name: t.Name, Description: t.Description, Parameters: t.Schema}
}

// NewTool builds a Tool from a typed function: the arguments are validated against
// schema, then decoded into A and passed to fn.
//
// A nil schema is inferred from A with [jsonschema.For]: a struct's fields are the
// properties, named as encoding/json names them, required unless tagged omitempty or
// omitzero, described by their `jsonschema:"..."` tag; no other property is allowed.
// Pass a schema to say more (enums, patterns, bounds). An A that has no JSON Schema (a
// channel, a func) makes NewReActAgent fail.
func NewTool[A, R any](name, description string, schema *jsonschema.Schema, fn func(ctx context.Context, args A) (R, error)) Tool {
	var err error
	if schema == nil {
		schema, err = jsonschema.For[A](nil)
	}
	return Tool{
		Name: name, Description: description, Schema: schema, err: err,
		Func: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a A
			if len(bytes.TrimSpace(raw)) > 0 {
				if err := json.Unmarshal(raw, &a); err != nil {
					return nil, &Error{Type: TypeInvalidArguments, Message: err.Error(), Err: err}
				}
			}
			return fn(ctx, a)
		},
	}
}

// Observation is what a tool call produced, as the model sees it: a success with a
// result, or an error. Its JSON is {"status":"success","result":...} or
// {"status":"error","error":{"type":...,"retryable":...,"message":...}}, never a bare
// string, so a model (and code) can tell "nothing found" from "could not look".
type Observation struct {
	Status string          `json:"status"` // "success" or "error"
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Success returns a successful observation of result (nil is encoded as null).
func Success(result any) Observation {
	b, err := json.Marshal(result)
	if err != nil {
		return failure(&Error{Type: TypeToolFailed, Message: "result is not JSON: " + err.Error(), Err: err})
	}
	return Observation{Status: StatusSuccess, Result: b}
}

// failure returns an error observation (Observation{Status: StatusError, Error: e}).
func failure(e *Error) Observation { return Observation{Status: StatusError, Error: e} }

// OK reports whether the observation is a success.
func (o Observation) OK() bool { return o.Status == StatusSuccess }

// json returns the observation's JSON form, the content of the tool message.
func (o Observation) json() string {
	if o.Status == StatusSuccess && o.Result == nil {
		o.Result = json.RawMessage("null")
	}
	b, err := json.Marshal(o)
	if err != nil { // cannot happen: results are validated JSON
		return fmt.Sprintf(`{"status":"error","error":{"type":%q,"retryable":false,"message":%q}}`, TypeToolFailed, err.Error())
	}
	return string(b)
}

// parseObservation reads a tool message's content back into an Observation.
func parseObservation(content string) (Observation, error) {
	var o Observation
	err := json.Unmarshal([]byte(content), &o)
	return o, err
}

// Permission decides in code whether the agent may make a tool call: nil allows it; an
// error refuses it, and the model sees a permission_denied observation with the error's
// message. It runs before a call is shown to a human, so a human is never asked to
// approve what code forbids. (A static list of allowed tools needs no Permission:
// give the agent only those tools.)
type Permission func(ctx context.Context, run RunInfo, call ToolCall) error

// toolError converts a tool's error into its structured form. An error that declares
// no type becomes tool_error; cancellation and deadlines keep their meaning.
func toolError(err error) *Error {
	e := AsError(err, TypeToolFailed)
	if e.Message == "" && e.Err != nil {
		e = &Error{Type: e.Type, Retry: e.Retry, Message: e.Err.Error(), Status: e.Status, Code: e.Code, Err: e.Err}
	}
	return e
}

// validateArgs checks a call's arguments against a tool's resolved schema (nil checks
// nothing). Empty arguments count as an empty object: models often send "" for a call
// without arguments.
func validateArgs(rs *jsonschema.Resolved, args json.RawMessage) error {
	if rs == nil {
		return nil
	}
	if args = bytes.TrimSpace(args); len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("arguments are not JSON: %w", err)
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Errorf("arguments do not match the schema: %w", err)
	}
	return nil
}

var errNoFunc = errors.New("tool has no function")
