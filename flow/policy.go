package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/flowteam/flowteam/internal/jsonvars"
)

// Severity says whether an execution error let the run go on.
type Severity string

// Severities.
const (
	Recoverable Severity = "recoverable"
	Fatal       Severity = "fatal"
)

// ErrorTypeFlow is the default type of a structured error.
const ErrorTypeFlow = "flow_error"

// DefaultErrorKey is the context variable that holds a run's []ExecutionError.
const DefaultErrorKey = "flow.executionErrors"

// StructuredError is the stable, serializable form of an error: what programs branch
// on (Type, Code) and what people read (Message).
type StructuredError struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ExecutionError is the record of one node failure, kept in the run's state under the
// engine's error key (DefaultErrorKey), returned on Result.ExecutionErrors and stored in
// snapshots. Recoverable errors are recorded too: nothing is dropped.
type ExecutionError struct {
	Severity Severity        `json:"severity"`
	Graph    string          `json:"graph"`
	Path     string          `json:"path"`
	NodeID   string          `json:"node"`
	NodeName string          `json:"name,omitempty"`
	NodeType string          `json:"type"`
	Branch   string          `json:"branch"`
	Step     int             `json:"step"`
	Attempts int             `json:"attempts"`
	Time     time.Time       `json:"time"`
	Error    StructuredError `json:"error"`
	// Goto is the node a recovered error continued at, if the policy chose one.
	Goto string `json:"goto,omitempty"`
	// Fallback is the business state applied because of this error on a fatal path.
	Fallback map[string]any `json:"fallback,omitempty"`
}

// ToStructured describes err as a StructuredError. The code comes from the first error
// in the chain with ErrorCode() string, Code() string or Code() int/int32/int64
// (written in decimal), the type from ErrorType() string (default "flow_error").
func ToStructured(err error) StructuredError {
	if err == nil {
		return StructuredError{}
	}
	se := StructuredError{Type: ErrorTypeFlow, Code: errorCode(err), Message: err.Error()}
	var ne *NodeError
	if errors.As(err, &ne) {
		se.Message = ne.cause()
	}
	var t interface{ ErrorType() string }
	if errors.As(err, &t) && t.ErrorType() != "" {
		se.Type = t.ErrorType()
	}
	return se
}

// errorCode extracts the code an error declares about itself, if any.
func errorCode(err error) string {
	for e := err; e != nil; {
		switch c := e.(type) {
		case interface{ ErrorCode() string }:
			return c.ErrorCode()
		case interface{ Code() string }:
			return c.Code()
		case interface{ Code() int }:
			return strconv.Itoa(c.Code())
		case interface{ Code() int32 }:
			return strconv.FormatInt(int64(c.Code()), 10)
		case interface{ Code() int64 }:
			return strconv.FormatInt(c.Code(), 10)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			e = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if c := errorCode(inner); c != "" {
					return c
				}
			}
			return ""
		default:
			return ""
		}
	}
	return ""
}

// Error is a structured error a task (or a script, with raise) can return.
type Error struct {
	Code    string // stable code; the node error takes it as its own
	Message string
	Type    string // default "flow_error"
	Recover bool   // recoverable by the default policy
	Retry   bool   // worth retrying on an idempotent node
}

// Error returns "code: message", or the message alone when there is no code.
func (e *Error) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Code + ": " + e.Message
}

// ErrorCode returns the code.
func (e *Error) ErrorCode() string { return e.Code }

// ErrorType returns the type.
func (e *Error) ErrorType() string {
	if e.Type == "" {
		return ErrorTypeFlow
	}
	return e.Type
}

// Recoverable reports whether the default policy lets the run go on.
func (e *Error) Recoverable() bool { return e.Recover }

// Retryable reports whether a retry may help.
func (e *Error) Retryable() bool { return e.Retry }

// NewRecoverableError returns a recoverable error with the given message.
func NewRecoverableError(msg string) error { return &Error{Message: msg, Recover: true} }

type marked struct {
	error
	recoverable, retryable bool
}

func (m marked) Unwrap() error     { return m.error }
func (m marked) Recoverable() bool { return m.recoverable || IsRecoverable(m.error) }
func (m marked) Retryable() bool   { return m.retryable || IsRetryable(m.error) }

// MarkRecoverable wraps err so the default policy treats it as recoverable.
func MarkRecoverable(err error) error {
	if err == nil {
		return nil
	}
	return marked{error: err, recoverable: true}
}

// MarkRetryable wraps err so a node with a retry policy retries it.
func MarkRetryable(err error) error {
	if err == nil {
		return nil
	}
	return marked{error: err, retryable: true}
}

// IsRecoverable reports whether an error in err's chain says it is recoverable.
func IsRecoverable(err error) bool {
	var r interface{ Recoverable() bool }
	return errors.As(err, &r) && r.Recoverable()
}

// IsRetryable reports whether an error in err's chain says it is worth retrying.
func IsRetryable(err error) bool {
	var r interface{ Retryable() bool }
	return errors.As(err, &r) && r.Retryable()
}

// ErrorDecision is what the error policy decides for a node failure.
type ErrorDecision struct {
	// Recover lets the run go on: along the node's links, or to Goto.
	Recover bool
	// Retryable allows a retry, on a node with a retry policy that is idempotent.
	Retryable bool
	// Goto is the node (in the same graph) where a recovered run continues. From inside
	// a loop body, a goto to a node of the body stays in the iteration; a goto elsewhere
	// leaves the loop, as a break would: the loop takes no further item, does not pass
	// its closing node, and the flow goes on once from the goto node without the loop
	// item. A goto from outside a loop into its body opens no iteration: the body runs
	// without the item and the closing node runs as an ordinary node (export.Validate
	// warns about such a goto).
	Goto string
	// Update is applied to the context when the error is recovered.
	Update map[string]any
	// Fallback is the business state applied when the error is fatal, before the run
	// (or the sub-graph call) ends; the result carries it with the terminal error.
	Fallback map[string]any
	// Error, when set, replaces the structured form of the error in the record.
	Error *StructuredError
}

// ErrorPolicy decides what a node failure does. def is the engine's default decision
// (from the error's own Recoverable/Retryable methods, the engine's recoverable rules
// and the node's onError meta); a policy usually returns def with changes.
type ErrorPolicy func(ctx context.Context, c *Context, n *Node, err error, def ErrorDecision) ErrorDecision

// WithErrorPolicy sets the engine's error policy.
func WithErrorPolicy(p ErrorPolicy) Option { return func(e *Engine) { e.errPolicy = p } }

// WithRecoverable adds a rule to the default policy: errors it matches are recoverable.
func WithRecoverable(match func(error) bool) Option {
	return func(e *Engine) { e.recoverable = append(e.recoverable, match) }
}

// WithRecoverableErrors adds errors.Is rules to the default policy.
func WithRecoverableErrors(targets ...error) Option {
	return WithRecoverable(func(err error) bool {
		for _, t := range targets {
			if errors.Is(err, t) {
				return true
			}
		}
		return false
	})
}

// WithErrorKey sets the context variable that holds the execution error records
// (default DefaultErrorKey). Code handed only a context finds the key with
// Context.ErrorKey.
func WithErrorKey(key string) Option { return func(e *Engine) { e.errKey = key } }

// Clock lets tests replace the time the engine waits between retries.
type Clock interface {
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// WithClock replaces the clock used for retry backoff.
func WithClock(c Clock) Option { return func(e *Engine) { e.clock = c } }

// RetryPolicy bounds the retries of a node: at most Max attempts in all, waiting
// Backoff, then twice as long each time up to MaxBackoff, with jitter (each wait is
// drawn from [d/2, d]). It applies only to errors the policy calls retryable and only
// to nodes marked idempotent; interceptors see each attempt. In YAML: meta `retry:
// {max: 3, backoff: 10ms, maxBackoff: 1s}` and `idempotent: true`.
//
// A wait that a cancellation cuts short (the caller's, or a fail-fast sibling's
// failure) puts the retry off: the attempt's end said it was retrying, the error
// policy does not decide on the failure, and the node runs again on resume.
type RetryPolicy struct {
	Max        int
	Backoff    time.Duration
	MaxBackoff time.Duration
	NoJitter   bool
}

// Meta keys of the error model.
const (
	MetaOnError    = "onError"
	MetaRetry      = "retry"
	MetaIdempotent = "idempotent"
)

// delay returns the wait before the given retry (1 = first retry).
func (p *RetryPolicy) delay(retry int) time.Duration {
	return Backoff(p.Backoff, p.MaxBackoff, retry, !p.NoJitter)
}

// Backoff is the exponential backoff shared by every retry in flowteam: the wait before
// the given retry (1 = the first) is base, doubled for each retry after the first, capped
// at max (no cap when max is 0); with jitter it is drawn from [d/2, d].
func Backoff(base, max time.Duration, retry int, jitter bool) time.Duration {
	d := base
	for i := 1; i < retry && (max <= 0 || d < max); i++ {
		d *= 2
	}
	if max > 0 && d > max {
		d = max
	}
	if jitter && d > 1 {
		d = d/2 + rand.N(d/2+1)
	}
	return d
}

// onError is a node's declared error handling (meta onError): goto is where a
// recoverable error continues, recover adds codes (or true: every error) to what is
// recoverable, set is applied when recovering and fallback on the fatal path. A plain
// string is a goto. Whether an error is recoverable stays the error's own (or the
// policy's) decision unless recover says otherwise.
type onError struct {
	gotoID     string
	recoverAll bool
	codes      []string
	update     map[string]any
	fallback   map[string]any
}

func parseOnError(v any) (*onError, error) {
	switch m := v.(type) {
	case nil:
		return nil, nil
	case string:
		return &onError{gotoID: m}, nil
	case map[string]any:
		oe := &onError{}
		for k, val := range m {
			switch k {
			case "goto":
				s, ok := val.(string)
				if !ok {
					return nil, fmt.Errorf("onError.goto must be a node id")
				}
				oe.gotoID = s
			case "recover":
				switch r := val.(type) {
				case bool:
					oe.recoverAll = r
				case string:
					oe.codes = append(oe.codes, r)
				case []any:
					for _, c := range r {
						oe.codes = append(oe.codes, fmt.Sprint(c))
					}
				default:
					return nil, fmt.Errorf("onError.recover must be true, a code or a list of codes")
				}
			case "set":
				mm, ok := val.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("onError.set must be a map")
				}
				oe.update = mm
			case "fallback":
				mm, ok := val.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("onError.fallback must be a map")
				}
				oe.fallback = mm
			default:
				return nil, fmt.Errorf("unknown onError key %q (want goto, recover, set, fallback)", k)
			}
		}
		return oe, nil
	}
	return nil, fmt.Errorf("onError must be a node id or a map, not %T", v)
}

func parseRetry(v any) (*RetryPolicy, error) {
	switch m := v.(type) {
	case nil:
		return nil, nil
	case RetryPolicy:
		return &m, nil
	case *RetryPolicy:
		return m, nil
	case map[string]any:
		p := &RetryPolicy{Max: 3, Backoff: 100 * time.Millisecond, MaxBackoff: 10 * time.Second}
		for k, val := range m {
			switch k {
			case "max":
				n, ok := AsInt64(val)
				if !ok || n < 1 {
					return nil, fmt.Errorf("retry.max must be a positive integer")
				}
				p.Max = int(n)
			case "backoff", "maxBackoff":
				d, err := parseDuration(val)
				if err != nil {
					return nil, fmt.Errorf("retry.%s: %v", k, err)
				}
				if k == "backoff" {
					p.Backoff = d
				} else {
					p.MaxBackoff = d
				}
			case "jitter":
				b, ok := val.(bool)
				if !ok {
					return nil, fmt.Errorf("retry.jitter must be a bool")
				}
				p.NoJitter = !b
			default:
				return nil, fmt.Errorf("unknown retry key %q (want max, backoff, maxBackoff, jitter)", k)
			}
		}
		return p, nil
	}
	return nil, fmt.Errorf("retry must be a map, not %T", v)
}

func parseDuration(v any) (time.Duration, error) {
	switch d := v.(type) {
	case string:
		return time.ParseDuration(d)
	case time.Duration:
		return d, nil
	}
	if n, ok := AsInt64(v); ok {
		return time.Duration(n) * time.Millisecond, nil // a bare number is milliseconds
	}
	return 0, fmt.Errorf("%v is not a duration", v)
}

// ExecutionErrors returns the execution error records kept in the context under key:
// pass c.ErrorKey(), the key of the engine that ran c (DefaultErrorKey unless it was
// configured with WithErrorKey). It also reads records that went through JSON (a
// restored snapshot holds them as plain maps).
func ExecutionErrors(c *Context, key string) []ExecutionError {
	v, _ := c.Get(key)
	return ExecutionErrorsOf(v)
}

// ExecutionErrorsOf converts a stored value into execution error records. The
// numbers of a record's Fallback come back as a restored frontier's loop items do: an
// integral one as an int64, any other as a float64.
func ExecutionErrorsOf(v any) []ExecutionError {
	switch l := v.(type) {
	case nil:
		return nil
	case []ExecutionError:
		return l
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out []ExecutionError
	if jsonvars.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

func isTrue(v any) bool {
	b, ok := v.(bool)
	if ok {
		return b
	}
	s, ok := v.(string)
	return ok && strings.EqualFold(s, "true")
}
