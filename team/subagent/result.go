package subagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flowteam/flowteam/team"
)

// ResultStatus is the outcome of a sub-task as its sub-agent reports it.
type ResultStatus string

// Sub-agent result statuses.
const (
	// ResultSuccess: the source was searched; Results is the answer, possibly empty.
	ResultSuccess ResultStatus = "success"
	// ResultPartialFailure: access failed, but some results arrived before it did
	// (PartialResults).
	ResultPartialFailure ResultStatus = "partial_failure"
	// ResultError: access failed and nothing usable arrived.
	ResultError ResultStatus = "error"
)

// ResultKey returns the context variable a sub-agent writes its SubResult to:
// "<name>.result".
func ResultKey(name string) string { return name + ".result" }

// SubResult is what a sub-agent reports to its coordinator: a success whose Results
// may be empty (a valid finding: the source was searched and holds nothing), or an
// access failure with its type, whether a retry may help, what was attempted, the
// partial results and the alternatives.
//
// Its JSON follows the seeds' format:
//
//	{"status":"partial_failure","error_type":"timeout","retryable":true,
//	 "attempted":[{"query":"solid-state battery patents 2024","source":"patent_db","attempts":3,"result":"timeout after 30s"}],
//	 "partial_results":[{"title":"EP4012345"}],"alternatives":["use the WIPO search API"]}
//
// A success always carries "results" (an empty list when nothing was found) and no
// "retryable"; a failure always carries "retryable". Result items are any JSON values;
// after a trip through JSON (a session snapshot) objects are map[string]any and
// numbers float64: ResultsAs decodes them into a type.
type SubResult struct {
	// Task names the sub-task (by convention the sub-agent's name).
	Task   string       `json:"task,omitempty"`
	Status ResultStatus `json:"status"`
	// Results is the answer of a success; an empty list means "none exist".
	Results []any `json:"results"`
	// ErrorType classifies a failure (timeout, rate_limited, auth_denied, not_found,
	// invalid_query, source_unavailable, ...).
	ErrorType team.ErrorType `json:"error_type,omitempty"`
	// Retryable says whether trying again later may help.
	Retryable bool `json:"retryable"`
	// Message is the last error's message, for people.
	Message string `json:"message,omitempty"`
	// Attempted lists each query tried on each source.
	Attempted []QueryAttempt `json:"attempted,omitempty"`
	// PartialResults are what arrived before access failed.
	PartialResults []any `json:"partial_results,omitempty"`
	// Alternatives are other ways to get the answer (another source, other terms, a
	// narrower range).
	Alternatives []string `json:"alternatives,omitempty"`
}

// QueryAttempt records one query sent to one source: how many attempts were made,
// how the last one ended (Result, as the seeds write it) and the outcome of each.
type QueryAttempt struct {
	Query    string           `json:"query"`
	Source   string           `json:"source,omitempty"`
	Attempts int              `json:"attempts"`
	Result   string           `json:"result,omitempty"`
	Outcomes []AttemptOutcome `json:"outcomes,omitempty"`
}

// AttemptOutcome is how one attempt ended: a success with a number of results, or an
// error with its type. Backoff is the wait before the attempt (zero for the first).
type AttemptOutcome struct {
	Attempt   int            `json:"attempt"`
	Status    string         `json:"status"` // StatusSuccess or StatusError
	Results   int            `json:"results,omitempty"`
	ErrorType team.ErrorType `json:"error_type,omitempty"`
	Message   string         `json:"message,omitempty"`
	Backoff   time.Duration  `json:"backoff_ns,omitempty"`
	Duration  time.Duration  `json:"duration_ns,omitempty"`
}

// subResultJSON is the wire form: results always present on a success, retryable
// always present on a failure.
type subResultJSON struct {
	Task           string         `json:"task,omitempty"`
	Status         ResultStatus   `json:"status"`
	Results        *[]any         `json:"results,omitempty"`
	ErrorType      team.ErrorType `json:"error_type,omitempty"`
	Retryable      *bool          `json:"retryable,omitempty"`
	Message        string         `json:"message,omitempty"`
	Attempted      []QueryAttempt `json:"attempted,omitempty"`
	PartialResults []any          `json:"partial_results,omitempty"`
	Alternatives   []string       `json:"alternatives,omitempty"`
}

// MarshalJSON encodes the result in the seeds' format: a success has "results" (an
// empty list rather than null) and no "retryable"; a failure has "retryable" and
// "results" only if it has some.
func (r SubResult) MarshalJSON() ([]byte, error) {
	w := subResultJSON{Task: r.Task, Status: r.Status, ErrorType: r.ErrorType, Message: r.Message,
		Attempted: r.Attempted, PartialResults: r.PartialResults, Alternatives: r.Alternatives}
	results := r.Results
	if r.Status == ResultSuccess {
		if results == nil {
			results = []any{} // "none exist" is an answer, never null
		}
		w.Results = &results
	} else {
		if len(results) > 0 {
			w.Results = &results
		}
		retry := r.Retryable
		w.Retryable = &retry
	}
	return json.Marshal(w)
}

// OK reports whether the sub-agent succeeded (with or without results).
func (r SubResult) OK() bool { return r.Status == ResultSuccess }

// Empty reports whether the result is a valid empty answer: a success with no results.
func (r SubResult) Empty() bool { return r.Status == ResultSuccess && len(r.Results) == 0 }

// Attempts returns the attempts made over every query and source.
func (r SubResult) Attempts() int {
	n := 0
	for _, a := range r.Attempted {
		n += a.Attempts
	}
	return n
}

// Err returns the failure as a *team.Error (nil for a success), so that callers can
// branch with errors.Is(err, team.ErrTimeout).
func (r SubResult) Err() error {
	if r.Status == ResultSuccess {
		return nil
	}
	t := r.ErrorType
	if t == "" {
		t = team.TypeAgentFailed
	}
	msg := r.Message
	if msg == "" {
		msg = fmt.Sprintf("sub-task %q failed", r.Task)
	}
	return &team.Error{Type: t, Retry: r.Retryable, Message: msg, Attempts: r.Attempts()}
}

// Validate checks that the report is consistent: a known status; a success without an
// error type or partial results; a failure with an error type; a partial failure with
// partial results.
func (r SubResult) Validate() error {
	switch r.Status {
	case ResultSuccess:
		if r.ErrorType != "" {
			return fmt.Errorf("sub-result: status success with error type %q", r.ErrorType)
		}
		if len(r.PartialResults) > 0 {
			return errors.New("sub-result: status success with partial results")
		}
	case ResultError, ResultPartialFailure:
		if r.ErrorType == "" {
			return fmt.Errorf("sub-result: status %s without an error type", r.Status)
		}
		if r.Status == ResultPartialFailure && len(r.PartialResults) == 0 {
			return errors.New("sub-result: status partial_failure without partial results")
		}
	case "":
		return errors.New("sub-result: no status")
	default:
		return fmt.Errorf("sub-result: unknown status %q", r.Status)
	}
	return nil
}

// SubResultOf reads a SubResult kept in a context variable: the value itself, a
// pointer to it, the plain maps a restored snapshot holds, or JSON text (an agent's
// answer). It reports false when v is none of these or has no status.
func SubResultOf(v any) (SubResult, bool) {
	switch t := v.(type) {
	case nil:
		return SubResult{}, false
	case SubResult:
		return t, t.Status != ""
	case *SubResult:
		if t == nil {
			return SubResult{}, false
		}
		return *t, t.Status != ""
	case string:
		r, err := ParseSubResult(t)
		return r, err == nil
	}
	r, err := viaJSON[SubResult](v)
	if err != nil || r.Status == "" {
		return SubResult{}, false
	}
	return r, true
}

// ParseSubResult reads a SubResult from text, such as a model-driven sub-agent's
// answer; a Markdown code fence around the JSON is allowed. Text that is not a JSON
// object with a status is an error.
func ParseSubResult(text string) (SubResult, error) {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:] // drop the fence's language tag
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
	}
	if !strings.HasPrefix(s, "{") {
		return SubResult{}, errors.New("sub-result: not a JSON object")
	}
	var r SubResult
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return SubResult{}, fmt.Errorf("sub-result: %w", err)
	}
	if r.Status == "" {
		return SubResult{}, errors.New("sub-result: no status")
	}
	return r, nil
}

// ResultsAs decodes result items (Results or PartialResults, whatever JSON trips they
// made) into T.
func ResultsAs[T any](items []any) ([]T, error) {
	out := make([]T, 0, len(items))
	for i, it := range items {
		if v, ok := it.(T); ok {
			out = append(out, v)
			continue
		}
		v, err := viaJSON[T](it)
		if err != nil {
			return nil, fmt.Errorf("result %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// viaJSON converts v into a T through its JSON: the plain maps, slices and float64s a
// value holds after a trip through JSON (a session snapshot) become T's fields again.
func viaJSON[T any](v any) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	return out, err
}
