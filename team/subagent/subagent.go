package subagent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/internal/retry"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/trace"
)

// SearchFunc runs one query against one source. It returns the results (an empty list
// when the source holds nothing: that is an answer, not a failure) or an error;
// results returned together with an error are partial results. Return an *Error to
// choose the error type; a context deadline is a timeout and any other error is
// source_unavailable. A SubAgent retries it, so it must be idempotent (a read).
type SearchFunc func(ctx context.Context, query string) ([]any, error)

// Searcher adapts a search with typed results to a SearchFunc.
func Searcher[T any](fn func(ctx context.Context, query string) ([]T, error)) SearchFunc {
	return func(ctx context.Context, query string) ([]any, error) {
		hits, err := fn(ctx, query)
		if hits == nil {
			return nil, err
		}
		out := make([]any, len(hits))
		for i, h := range hits {
			out[i] = h
		}
		return out, err
	}
}

// SubAgent is a sub-agent that answers by searching one source: it runs Search with
// the prompt as the query, retries retryable failures (timeout, rate_limited,
// source_unavailable) locally with bounded exponential backoff, records every attempt
// and reports a SubResult. Only what it cannot resolve reaches the coordinator, with
// what was tried, the partial results and the alternatives; an error is never turned
// into an empty success.
//
// As an Agent (a graph node through AsTask) it writes the SubResult to
// ResultKey(Task) in the session's FlowContext and answers with its JSON; when it
// could not resolve a failure it returns the failure as an *Error (its type is the
// node's error code, Attempts the attempts made), so the node fails and the failure is
// recorded like any node failure. Run sub-agents behind a parallel gateway with
// branchPolicy "continue" so that the other sub-tasks go on, and do not give their
// nodes a retry policy as well: the sub-agent has retried already.
//
// Each attempt is reported as a tool call (ToolStart, ToolEnd with the observation)
// named after the source, so a stream, an interceptor or RecordToolCalls sees them.
//
// Zero fields take defaults: 3 attempts, 500ms backoff doubling up to 30s (with
// jitter unless Retry.NoJitter), a Retry-After of at most a minute, no per-attempt
// timeout, no budget, a real sleep and time.Now. The fields must not change while the
// sub-agent runs.
type SubAgent struct {
	// Task names the sub-task; it is the agent's name.
	Task string
	// Source names what Search queries (a database, an API); the attempts and the
	// tool calls carry it. Default: Task.
	Source string
	// Search runs one query.
	Search SearchFunc
	// Retry bounds the attempts (Max, in all) and the backoff between them, as a
	// node's retry policy does.
	Retry flow.RetryPolicy
	// MaxRetryAfter bounds the Retry-After a source may ask for: it replaces the
	// backoff, and one longer is not waited for (the rate_limited error is reported
	// at once with its RetryAfter).
	MaxRetryAfter time.Duration
	// AttemptTimeout, when set, bounds each attempt; an attempt that runs out is a
	// timeout (retryable).
	AttemptTimeout time.Duration
	// Budget, when set, bounds the time spent on all attempts and waits: a retry whose
	// backoff would end past it is not made.
	Budget time.Duration
	// Alternatives are reported with a failure: other ways to get the answer.
	Alternatives []string
	// Sleep waits between attempts; Now reads the clock (durations, the budget).
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
}

var _ team.Agent = (*SubAgent)(nil)

// Name returns the sub-task's name.
func (s *SubAgent) Name() string { return s.Task }

// Role describes the sub-agent.
func (s *SubAgent) Role() string { return "searches " + s.source() }

func (s *SubAgent) source() string {
	if s.Source != "" {
		return s.Source
	}
	return s.Task
}

// Run searches query and reports the outcome; it never fails otherwise. Its
// attempts are reported as tool-call events of a run of the sub-agent to the sink of
// ctx, if any.
func (s *SubAgent) Run(ctx context.Context, query string) SubResult {
	ri := team.NewRunInfo(ctx, s.Task, nil)
	r, _ := s.call(ctx, ri, query)
	return r
}

// Call runs the search with prompt as the query, writes the SubResult to
// ResultKey(name) in the session's context and answers with the result's JSON. When
// the failure could not be resolved it returns it as an *Error and no answer.
func (s *SubAgent) Call(ctx context.Context, prompt string, sess *team.AgentSession) (*team.Answer, error) {
	if sess == nil {
		sess = team.NewSession("")
	}
	ri := team.NewRunInfo(ctx, s.Task, sess)
	r, ans := s.call(ctx, ri, prompt)
	sess.Context().Set(ResultKey(s.Task), r)
	if !r.OK() {
		err := r.Err()
		if e, ok := err.(*team.Error); ok && ctx.Err() != nil && (e.Type == team.TypeCancelled || e.Type == team.TypeTimeout) {
			// The caller gave up, not the source: the error holds the context's, which
			// is how flow tells a node cut short (INTERRUPTED, run again on resume, and
			// so is a team member's turn) from a failed one.
			e.Err = ctx.Err()
		}
		return nil, err
	}
	return ans, nil
}

// call runs the attempts inside one reported run.
func (s *SubAgent) call(ctx context.Context, ri team.RunInfo, query string) (SubResult, *team.Answer) {
	now := s.Now
	if now == nil {
		now = time.Now
	}
	began := now()
	start := ri.Event(team.EventRunStart)
	start.Prompt = query
	team.Emit(ctx, start)

	r := s.attempts(ctx, ri, query, now)

	ans := &team.Answer{Agent: s.Task, RunID: ri.RunID}
	ans.Metrics.Duration = now().Sub(began)
	ans.Metrics.ToolCalls = r.Attempts()
	end := ri.Event(team.EventRunEnd)
	end.Duration = ans.Metrics.Duration
	if r.OK() {
		b, err := json.Marshal(r)
		if err != nil { // results a search returned that JSON cannot encode
			r = SubResult{Task: s.Task, Status: ResultError, ErrorType: team.TypeBadResponse, Message: "results are not JSON: " + err.Error(),
				Attempted: r.Attempted, Alternatives: s.Alternatives}
		} else {
			ans.Content = string(b)
			end.Status, end.Content, end.Answer = team.RunCompleted, ans.Content, ans
		}
	}
	if !r.OK() {
		end.Status, end.Error = team.RunFailed, team.AsError(r.Err(), team.TypeAgentFailed)
	}
	team.Emit(ctx, end)
	return r, ans
}

// attempts makes the attempts: at most the policy's, while the failure is retryable,
// the backoff (or the Retry-After asked for) is within bounds and within the budget.
func (s *SubAgent) attempts(ctx context.Context, ri team.RunInfo, query string, now func() time.Time) SubResult {
	p := retry.Defaults(s.Retry)
	maxAfter := cmp.Or(s.MaxRetryAfter, retry.MaxAfter)
	sleep := s.Sleep
	if sleep == nil {
		sleep = sleepContext
	}
	args, _ := json.Marshal(map[string]string{"query": query})
	tried := QueryAttempt{Query: query, Source: s.source()}
	var (
		partial []any
		seen    = map[string]bool{}
		last    *team.Error
		wait    time.Duration
		stop    string // why retrying stopped early, for the message
	)
	began := now()
	for n := 1; ; n++ {
		if s.Search == nil {
			last = team.NewError(team.TypeInvalidQuery, "sub-agent %q has no search function", s.Task)
			break
		}
		hits, out, err := s.attempt(ctx, ri, n, query, args, now)
		out.Backoff = wait
		tried.Attempts, tried.Outcomes = n, append(tried.Outcomes, out)
		if err == nil {
			tried.Result = plural(len(hits), "result")
			return SubResult{Task: s.Task, Status: ResultSuccess, Results: hits, Attempted: []QueryAttempt{tried}}
		}
		last = err
		for _, h := range hits {
			if key := jsonKey(h); !seen[key] {
				seen[key] = true
				partial = append(partial, h)
			}
		}
		if !last.Retry || n >= p.Max || ctx.Err() != nil {
			break
		}
		var ok bool
		if wait, ok = retry.Wait(p, maxAfter, last, n); !ok {
			stop = fmt.Sprintf("the source asked to wait %s", last.RetryAfter)
			break
		}
		if s.Budget > 0 && now().Sub(began)+wait > s.Budget {
			stop = fmt.Sprintf("retry budget of %s spent", s.Budget)
			break
		}
		trace.Count(ctx, trace.CountRetry, 1)
		if err := sleep(ctx, wait); err != nil {
			last = team.AsError(err, team.TypeCancelled)
			break
		}
	}
	return s.failed(tried, last, stop, partial)
}

// attempt makes attempt n, reported as a tool call. On failure it returns the
// results that came with the error (partial results) and the error.
func (s *SubAgent) attempt(ctx context.Context, ri team.RunInfo, n int, query string, args json.RawMessage, now func() time.Time) ([]any, AttemptOutcome, *team.Error) {
	call := team.ToolCall{ID: ri.RunID + "-" + strconv.Itoa(n), Name: s.source(), Args: args}
	ev := ri.Event(team.EventToolStart)
	ev.Step, ev.Call = n, &call
	team.Emit(ctx, ev)
	t0 := now()
	hits, err := s.search(ctx, query)
	out := AttemptOutcome{Attempt: n, Duration: now().Sub(t0)}
	var (
		obs  team.Observation
		fail *team.Error
	)
	if err == nil {
		if hits == nil {
			hits = []any{} // the search's "nothing" is an empty answer
		}
		out.Status, out.Results = team.StatusSuccess, len(hits)
		obs = team.Success(hits)
	} else {
		fail = team.AsError(err, team.TypeSourceUnavailable)
		if ctx.Err() != nil { // the caller gave up: that, not the attempt, is the outcome
			fail = team.ContextError(ctx)
		}
		out.Status, out.ErrorType, out.Message = team.StatusError, fail.Type, fail.Message
		obs = team.Observation{Status: team.StatusError, Error: fail}
	}
	end := ri.Event(team.EventToolEnd)
	end.Step, end.Call, end.Observation, end.Duration = n, &call, &obs, out.Duration
	team.Emit(ctx, end)
	return hits, out, fail
}

// failed reports the failure that ended the attempts.
func (s *SubAgent) failed(tried QueryAttempt, last *team.Error, stop string, partial []any) SubResult {
	tried.Result = last.Error()
	msg := last.Message
	if stop != "" {
		msg += " (" + stop + ")"
	}
	status := ResultError
	if len(partial) > 0 {
		status = ResultPartialFailure
	}
	var attempted []QueryAttempt
	if tried.Attempts > 0 {
		attempted = []QueryAttempt{tried}
	}
	return SubResult{Task: s.Task, Status: status, ErrorType: last.Type, Retryable: last.Retry, Message: msg,
		Attempted: attempted, PartialResults: partial, Alternatives: slices.Clone(s.Alternatives)}
}

// search makes one attempt, bounded by AttemptTimeout.
func (s *SubAgent) search(ctx context.Context, query string) ([]any, error) {
	if s.AttemptTimeout <= 0 {
		return s.Search(ctx, query)
	}
	actx, cancel := context.WithTimeoutCause(ctx, s.AttemptTimeout, errAttemptTimeout)
	defer cancel()
	hits, err := s.Search(actx, query)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout) {
		err = &team.Error{Type: team.TypeTimeout, Retry: true, Message: fmt.Sprintf("no answer within %s", s.AttemptTimeout), Err: err}
	}
	return hits, err
}

var errAttemptTimeout = errors.New("attempt timed out")

// jsonKey identifies a result for de-duplication: the partial results of several
// attempts are merged, each once.
func jsonKey(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
