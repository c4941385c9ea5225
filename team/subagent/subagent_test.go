package subagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/subagent"
	"github.com/flowteam/flowteam/testkit"
)

// subClock is a fake clock and sleeper: sleeping advances the clock and records the
// wait, so retry tests never sleep.
type subClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
	// step is how long each search attempt takes on the fake clock.
	step time.Duration
}

func newSubClock() *subClock {
	return &subClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *subClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *subClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *subClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

func (c *subClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// scriptedSearch answers attempt n with outcomes[n-1] (the last one repeats) and counts
// the attempts.
type scriptedSearch struct {
	clock    *subClock
	mu       sync.Mutex
	n        int
	outcomes []searchOutcome
}

type searchOutcome struct {
	hits []any
	err  error
}

func (s *scriptedSearch) Search(_ context.Context, _ string) ([]any, error) {
	s.mu.Lock()
	s.n++
	o := s.outcomes[min(s.n, len(s.outcomes))-1]
	s.mu.Unlock()
	if s.clock != nil {
		s.clock.advance(s.clock.step)
	}
	return o.hits, o.err
}

func (s *scriptedSearch) Attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func timeoutErr() error { return team.NewError(team.TypeTimeout, "patent search timed out after 30s") }

// Retryable failures are retried with exponential backoff up to MaxAttempts; the
// partial results of every attempt are kept once each; the failure is reported with
// what was tried, never as an empty success.
func TestSubAgentRetriesTimeoutWithBoundedBackoff(t *testing.T) {
	clock := newSubClock()
	clock.step = 30 * time.Second
	hits := []any{map[string]any{"title": "EP4012345"}, map[string]any{"title": "US11800000"}}
	search := &scriptedSearch{clock: clock, outcomes: []searchOutcome{
		{hits: hits[:1], err: timeoutErr()},
		{hits: hits, err: timeoutErr()}, // the first hit again, and one more
		{err: timeoutErr()},
	}}
	sa := &subagent.SubAgent{
		Task: "patents", Source: "patent_db", Search: search.Search,
		Retry:        flow.RetryPolicy{NoJitter: true, Max: 3, Backoff: 100 * time.Millisecond, MaxBackoff: time.Second},
		Alternatives: []string{"use the WIPO search API", "narrow the range to 2024-H2"},
		Sleep:        clock.Sleep, Now: clock.Now,
	}
	r := sa.Run(context.Background(), "solid-state battery patents 2024")

	assert.Equal(t, 3, search.Attempts())
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, clock.Waits())
	assert.Equal(t, subagent.ResultPartialFailure, r.Status)
	assert.Equal(t, team.TypeTimeout, r.ErrorType)
	assert.True(t, r.Retryable)
	assert.Nil(t, r.Results)
	assert.Equal(t, hits, r.PartialResults, "partial results of all attempts, each once")
	assert.Equal(t, []string{"use the WIPO search API", "narrow the range to 2024-H2"}, r.Alternatives)
	require.Len(t, r.Attempted, 1)
	a := r.Attempted[0]
	assert.Equal(t, "solid-state battery patents 2024", a.Query)
	assert.Equal(t, "patent_db", a.Source)
	assert.Equal(t, 3, a.Attempts)
	assert.Equal(t, "timeout: patent search timed out after 30s", a.Result)
	require.Len(t, a.Outcomes, 3)
	for i, o := range a.Outcomes {
		assert.Equal(t, i+1, o.Attempt)
		assert.Equal(t, team.StatusError, o.Status)
		assert.Equal(t, team.TypeTimeout, o.ErrorType)
		assert.Equal(t, 30*time.Second, o.Duration, "durations come from the injected clock")
	}
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond},
		[]time.Duration{a.Outcomes[0].Backoff, a.Outcomes[1].Backoff, a.Outcomes[2].Backoff})
	assert.Equal(t, 3, r.Attempts())
	require.NoError(t, r.Validate())
	assert.ErrorIs(t, r.Err(), team.ErrTimeout)
}

// The backoff doubles and is capped at MaxBackoff; the number of attempts is bounded.
func TestSubAgentBackoffBounds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy flow.RetryPolicy
		waits  []time.Duration
	}{
		{"capped", flow.RetryPolicy{NoJitter: true, Max: 5, Backoff: 100 * time.Millisecond, MaxBackoff: 250 * time.Millisecond},
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond, 250 * time.Millisecond}},
		{"defaults", flow.RetryPolicy{NoJitter: true}, []time.Duration{500 * time.Millisecond, time.Second}},
		{"no retry", flow.RetryPolicy{Max: 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newSubClock()
			search := &scriptedSearch{outcomes: []searchOutcome{{err: team.NewError(team.TypeSourceUnavailable, "503")}}}
			sa := &subagent.SubAgent{Task: "t", Search: search.Search, Retry: tc.policy, Sleep: clock.Sleep, Now: clock.Now}
			r := sa.Run(context.Background(), "q")
			assert.Equal(t, tc.waits, clock.Waits())
			assert.Equal(t, len(tc.waits)+1, search.Attempts())
			assert.Equal(t, subagent.ResultError, r.Status)
			assert.Equal(t, team.TypeSourceUnavailable, r.ErrorType)
			assert.Equal(t, len(tc.waits)+1, r.Attempts())
		})
	}

	t.Run("jitter stays within [d/2, d]", func(t *testing.T) {
		clock := newSubClock()
		search := &scriptedSearch{outcomes: []searchOutcome{{err: timeoutErr()}}}
		sa := &subagent.SubAgent{Task: "t", Search: search.Search, Sleep: clock.Sleep, Now: clock.Now,
			Retry: flow.RetryPolicy{Max: 4, Backoff: 100 * time.Millisecond, MaxBackoff: time.Second}}
		sa.Run(context.Background(), "q")
		waits := clock.Waits()
		require.Len(t, waits, 3)
		for i, w := range waits {
			d := 100 * time.Millisecond << i
			assert.GreaterOrEqual(t, w, d/2)
			assert.LessOrEqual(t, w, d)
		}
	})
}

// What retrying cannot fix is reported at once; a retry that works is a success that
// says how many attempts it took.
func TestSubAgentRetryDecisions(t *testing.T) {
	t.Run("auth_denied is not retried", func(t *testing.T) {
		clock := newSubClock()
		search := &scriptedSearch{outcomes: []searchOutcome{{err: team.NewError(team.TypeAuthDenied, "token expired")}}}
		sa := &subagent.SubAgent{Task: "t", Source: "db", Search: search.Search, Sleep: clock.Sleep, Now: clock.Now}
		r := sa.Run(context.Background(), "q")
		assert.Equal(t, 1, search.Attempts())
		assert.Empty(t, clock.Waits())
		assert.Equal(t, subagent.ResultError, r.Status)
		assert.Equal(t, team.TypeAuthDenied, r.ErrorType)
		assert.False(t, r.Retryable)
		assert.ErrorIs(t, r.Err(), team.ErrAuthDenied)
	})
	t.Run("invalid_query is not retried", func(t *testing.T) {
		search := &scriptedSearch{outcomes: []searchOutcome{{err: team.NewError(team.TypeInvalidQuery, "bad syntax")}}}
		sa := &subagent.SubAgent{Task: "t", Search: search.Search, Sleep: newSubClock().Sleep}
		r := sa.Run(context.Background(), "q")
		assert.Equal(t, 1, search.Attempts())
		assert.Equal(t, team.TypeInvalidQuery, r.ErrorType)
	})
	t.Run("rate limited, then results", func(t *testing.T) {
		clock := newSubClock()
		rl := team.NewError(team.TypeRateLimited, "slow down")
		rl.RetryAfter = 2 * time.Second
		search := &scriptedSearch{outcomes: []searchOutcome{{err: rl}, {hits: []any{"a", "b", "c"}}}}
		sa := &subagent.SubAgent{Task: "t", Source: "db", Search: search.Search, Sleep: clock.Sleep, Now: clock.Now}
		r := sa.Run(context.Background(), "q")
		assert.Equal(t, []time.Duration{2 * time.Second}, clock.Waits(), "Retry-After replaces the backoff")
		assert.Equal(t, subagent.ResultSuccess, r.Status)
		assert.Equal(t, []any{"a", "b", "c"}, r.Results)
		require.Len(t, r.Attempted, 1)
		assert.Equal(t, 2, r.Attempted[0].Attempts)
		assert.Equal(t, "3 results", r.Attempted[0].Result)
		assert.NoError(t, r.Err())
	})
	t.Run("a Retry-After beyond the bound is not waited for", func(t *testing.T) {
		clock := newSubClock()
		rl := team.NewError(team.TypeRateLimited, "quota")
		rl.RetryAfter = time.Hour
		search := &scriptedSearch{outcomes: []searchOutcome{{err: rl}}}
		sa := &subagent.SubAgent{Task: "t", Search: search.Search, Sleep: clock.Sleep, Now: clock.Now}
		r := sa.Run(context.Background(), "q")
		assert.Equal(t, 1, search.Attempts())
		assert.Empty(t, clock.Waits())
		assert.Equal(t, team.TypeRateLimited, r.ErrorType)
		assert.Contains(t, r.Message, "asked to wait 1h0m0s")
	})
	t.Run("the budget bounds attempts and waits", func(t *testing.T) {
		clock := newSubClock()
		clock.step = time.Second
		search := &scriptedSearch{clock: clock, outcomes: []searchOutcome{{err: timeoutErr()}}}
		sa := &subagent.SubAgent{Task: "t", Search: search.Search, Sleep: clock.Sleep, Now: clock.Now, Budget: 3 * time.Second,
			Retry: flow.RetryPolicy{NoJitter: true, Max: 10, Backoff: 500 * time.Millisecond}}
		r := sa.Run(context.Background(), "q")
		// 1s + 0.5s + 1s = 2.5s; waiting 1s more would pass 3s.
		assert.Equal(t, 2, search.Attempts())
		assert.Equal(t, []time.Duration{500 * time.Millisecond}, clock.Waits())
		assert.Contains(t, r.Message, "retry budget of 3s spent")
	})
	t.Run("an untyped error is source_unavailable", func(t *testing.T) {
		search := &scriptedSearch{outcomes: []searchOutcome{{err: errors.New("connection refused")}}}
		sa := &subagent.SubAgent{Task: "t", Search: search.Search, Sleep: newSubClock().Sleep, Retry: flow.RetryPolicy{Max: 1}}
		r := sa.Run(context.Background(), "q")
		assert.Equal(t, team.TypeSourceUnavailable, r.ErrorType)
		assert.Equal(t, "connection refused", r.Message)
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		search := &scriptedSearch{outcomes: []searchOutcome{{err: timeoutErr()}}}
		sleep := func(ctx context.Context, d time.Duration) error { cancel(); return context.Cause(ctx) }
		sa := &subagent.SubAgent{Task: "t", Search: search.Search, Sleep: sleep}
		r := sa.Run(ctx, "q")
		assert.Equal(t, 1, search.Attempts())
		assert.Equal(t, team.TypeCancelled, r.ErrorType)
		assert.False(t, r.Retryable)
	})
	t.Run("an attempt that runs out of time is a timeout", func(t *testing.T) {
		// The search waits for its context: the per-attempt deadline ends it.
		block := func(ctx context.Context, _ string) ([]any, error) { <-ctx.Done(); return nil, ctx.Err() }
		clock := newSubClock()
		sa := &subagent.SubAgent{Task: "t", Search: block, AttemptTimeout: time.Millisecond, Sleep: clock.Sleep,
			Retry: flow.RetryPolicy{NoJitter: true, Max: 2}}
		r := sa.Run(context.Background(), "q")
		assert.Equal(t, team.TypeTimeout, r.ErrorType)
		assert.Equal(t, 2, r.Attempts())
		assert.Equal(t, "no answer within 1ms", r.Message)
	})
}

// An empty list is a valid success, not a failure: it is not retried.
func TestSubAgentEmptyIsSuccess(t *testing.T) {
	for _, hits := range [][]any{nil, {}} {
		clock := newSubClock()
		search := &scriptedSearch{outcomes: []searchOutcome{{hits: hits}}}
		sa := &subagent.SubAgent{Task: "regulation", Source: "regulation_db", Search: search.Search, Sleep: clock.Sleep}
		r := sa.Run(context.Background(), "battery regulation after 2024")
		assert.Equal(t, 1, search.Attempts())
		assert.Empty(t, clock.Waits())
		assert.Equal(t, subagent.ResultSuccess, r.Status)
		assert.NotNil(t, r.Results)
		assert.Empty(t, r.Results)
		assert.True(t, r.Empty())
		assert.Empty(t, r.ErrorType)
		require.NoError(t, r.Validate())
	}
}

// As an agent the sub-agent writes its result to the context, reports each attempt as
// a tool call, and fails with the structured error it could not resolve.
func TestSubAgentAsAgent(t *testing.T) {
	clock := newSubClock()
	search := &scriptedSearch{outcomes: []searchOutcome{{hits: []any{"EP1"}, err: timeoutErr()}}}
	sa := &subagent.SubAgent{Task: "patents", Source: "patent_db", Search: search.Search, Sleep: clock.Sleep, Now: clock.Now}
	sess := team.NewSession("s1")
	evs, err := testkit.Events(context.Background(), sa, "q", sess)

	var te *team.Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, team.TypeTimeout, te.Type)
	assert.Equal(t, 3, te.Attempts)
	assert.Equal(t, []team.EventKind{team.EventRunStart,
		team.EventToolStart, team.EventToolEnd, team.EventToolStart, team.EventToolEnd, team.EventToolStart, team.EventToolEnd,
		team.EventRunEnd}, kinds(evs))
	assert.Equal(t, "patent_db", evs[2].Call.Name)
	assert.JSONEq(t, `{"query":"q"}`, string(evs[2].Call.Args))
	assert.Equal(t, team.TypeTimeout, evs[2].Observation.Error.Type)
	assert.Equal(t, team.RunFailed, evs[7].Status)

	r, ok := subagent.SubResultOf(sess.Context().Value(subagent.ResultKey("patents")))
	require.True(t, ok)
	assert.Equal(t, subagent.ResultPartialFailure, r.Status)
	assert.Equal(t, []any{"EP1"}, r.PartialResults)

	// A success answers with the result's JSON.
	ok2 := &subagent.SubAgent{Task: "regulation", Search: func(context.Context, string) ([]any, error) { return nil, nil },
		Now: clock.Now}
	ans, err := ok2.Call(context.Background(), "q", sess)
	require.NoError(t, err)
	assert.JSONEq(t, `{"task":"regulation","status":"success","results":[],
		"attempted":[{"query":"q","source":"regulation","attempts":1,"result":"0 results","outcomes":[{"attempt":1,"status":"success"}]}]}`,
		ans.Content)
}

// Searcher adapts typed results; ResultsAs reads them back after a JSON trip.
func TestSearcherAndResultsAs(t *testing.T) {
	type hit struct {
		Title string `json:"title"`
		Year  int    `json:"year"`
	}
	search := subagent.Searcher(func(context.Context, string) ([]hit, error) {
		return []hit{{"EP1", 2024}, {"EP2", 2025}}, nil
	})
	r := (&subagent.SubAgent{Task: "p", Search: search}).Run(context.Background(), "q")
	require.Equal(t, subagent.ResultSuccess, r.Status)
	data, err := r.MarshalJSON()
	require.NoError(t, err)
	var back subagent.SubResult
	require.NoError(t, json.Unmarshal(data, &back))
	hits, err := subagent.ResultsAs[hit](back.Results)
	require.NoError(t, err)
	assert.Equal(t, []hit{{"EP1", 2024}, {"EP2", 2025}}, hits)
}
