package subagent_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/subagent"
)

// sampleResults are sub-results of every kind, with values as they come back from JSON
// (strings, float64, map[string]any), so a round trip must reproduce them exactly.
func sampleResults() []subagent.SubResult {
	return []subagent.SubResult{
		{Task: "market", Status: subagent.ResultSuccess,
			Results: []any{map[string]any{"claim": "USD 12 bn in 2025", "source": "https://example.org/report-a"}, "plain", 3.5},
			Attempted: []subagent.QueryAttempt{{Query: "market size", Source: "market_reports", Attempts: 1, Result: "3 results",
				Outcomes: []subagent.AttemptOutcome{{Attempt: 1, Status: team.StatusSuccess, Results: 3, Duration: time.Second}}}}},
		{Task: "regulation", Status: subagent.ResultSuccess, Results: []any{}},
		{Task: "patents", Status: subagent.ResultPartialFailure, ErrorType: team.TypeTimeout, Retryable: true,
			Message: "patent search timed out after 30s",
			Attempted: []subagent.QueryAttempt{{Query: "solid-state battery patents 2024", Source: "patent_db", Attempts: 3,
				Result: "timeout: patent search timed out after 30s",
				Outcomes: []subagent.AttemptOutcome{
					{Attempt: 1, Status: team.StatusError, ErrorType: team.TypeTimeout, Message: "t/o"},
					{Attempt: 2, Status: team.StatusError, ErrorType: team.TypeTimeout, Message: "t/o", Backoff: 500 * time.Millisecond},
					{Attempt: 3, Status: team.StatusError, ErrorType: team.TypeTimeout, Message: "t/o", Backoff: time.Second},
				}}},
			PartialResults: []any{map[string]any{"title": "EP4012345"}, map[string]any{"title": "US11800000"}},
			Alternatives:   []string{"use the WIPO search API", "narrow the range to 2024-H2"}},
		{Task: "pricing", Status: subagent.ResultError, ErrorType: team.TypeAuthDenied, Message: "token expired",
			Attempted: []subagent.QueryAttempt{{Query: "q", Attempts: 1}}},
	}
}

// A sub-result survives JSON unchanged, and its wire form is the seeds': a success
// always has "results" (an empty list, never null) and no "retryable"; a failure
// always has "retryable".
func TestSubResultJSONRoundTrip(t *testing.T) {
	for _, r := range sampleResults() {
		t.Run(r.Task, func(t *testing.T) {
			data, err := json.Marshal(r)
			require.NoError(t, err)
			var back subagent.SubResult
			require.NoError(t, json.Unmarshal(data, &back))
			assert.Equal(t, r, back)
			again, err := json.Marshal(back)
			require.NoError(t, err)
			assert.JSONEq(t, string(data), string(again))

			var wire map[string]any
			require.NoError(t, json.Unmarshal(data, &wire))
			if r.Status == subagent.ResultSuccess {
				assert.Contains(t, wire, "results")
				assert.NotNil(t, wire["results"])
				assert.NotContains(t, wire, "retryable")
			} else {
				assert.Contains(t, wire, "retryable")
				assert.NotContains(t, wire, "results")
			}
		})
	}

	// A success with nil results still says "results": [].
	data, err := json.Marshal(subagent.SubResult{Status: subagent.ResultSuccess})
	require.NoError(t, err)
	assert.JSONEq(t, `{"status":"success","results":[]}`, string(data))
	// A failure says it is not retryable rather than leaving it out.
	data, err = json.Marshal(subagent.SubResult{Status: subagent.ResultError, ErrorType: team.TypeAuthDenied})
	require.NoError(t, err)
	assert.JSONEq(t, `{"status":"error","error_type":"auth_denied","retryable":false}`, string(data))
}

// The seeds' example reads as it is written.
func TestSubResultSeedFormat(t *testing.T) {
	const seed = `{
	  "status": "partial_failure",
	  "error_type": "timeout",
	  "retryable": true,
	  "attempted": [
	    {"query": "solid-state battery patents 2024", "source": "patent_db", "attempts": 3, "result": "timeout after 30s"}
	  ],
	  "partial_results": [{"title": "EP4012345 ...", "url": "https://example.org/ep4012345"}],
	  "alternatives": ["改用 WIPO 检索接口", "把时间范围缩小到 2024-H2"]
	}`
	r, err := subagent.ParseSubResult(seed)
	require.NoError(t, err)
	require.NoError(t, r.Validate())
	assert.Equal(t, subagent.ResultPartialFailure, r.Status)
	assert.Equal(t, team.TypeTimeout, r.ErrorType)
	assert.True(t, r.Retryable)
	assert.Equal(t, 3, r.Attempts())
	assert.Equal(t, "timeout after 30s", r.Attempted[0].Result)
	assert.Len(t, r.PartialResults, 1)
	assert.Equal(t, []string{"改用 WIPO 检索接口", "把时间范围缩小到 2024-H2"}, r.Alternatives)
	assert.ErrorIs(t, r.Err(), team.ErrTimeout)

	// A model's answer in a code fence reads too; text that is not a report does not.
	fenced, err := subagent.ParseSubResult("```json\n{\"status\":\"success\",\"results\":[]}\n```")
	require.NoError(t, err)
	assert.True(t, fenced.Empty())
	for _, bad := range []string{"No patents found.", `{"results":[]}`, `{"status":`} {
		_, err := subagent.ParseSubResult(bad)
		assert.Error(t, err, bad)
	}
}

// A sub-result is found again in any form a context may hold it: the value, a
// pointer, JSON text, or the plain maps of a session restored in another process.
func TestSubResultThroughSession(t *testing.T) {
	want := sampleResults()[2]
	sess := team.NewSession("research-1")
	sess.Context().Set(subagent.ResultKey("patents"), want)
	data, err := team.MarshalSession(sess)
	require.NoError(t, err)
	restored, err := team.UnmarshalSession(data)
	require.NoError(t, err)
	v := restored.Context().Value(subagent.ResultKey("patents"))
	assert.IsType(t, map[string]any{}, v, "a restored snapshot holds plain data")
	got, ok := subagent.SubResultOf(v)
	require.True(t, ok)
	// Integral numbers come back as int64 from a session and are re-encoded as the
	// same JSON; compare the wire forms.
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	assert.JSONEq(t, string(wantJSON), string(gotJSON))

	for _, v := range []any{want, &want, string(wantJSON)} {
		got, ok := subagent.SubResultOf(v)
		require.True(t, ok)
		assert.Equal(t, want.Status, got.Status)
		assert.Equal(t, want.Attempted, got.Attempted)
	}
	for _, v := range []any{nil, (*subagent.SubResult)(nil), 42, "not json", map[string]any{"results": []any{}}} {
		_, ok := subagent.SubResultOf(v)
		assert.False(t, ok, "%v", v)
	}
}

func TestSubResultValidate(t *testing.T) {
	for _, tc := range []struct {
		r   subagent.SubResult
		err string
	}{
		{subagent.SubResult{Status: subagent.ResultSuccess}, ""},
		{subagent.SubResult{Status: subagent.ResultError, ErrorType: team.TypeNotFound}, ""},
		{subagent.SubResult{}, "no status"},
		{subagent.SubResult{Status: "ok"}, `unknown status "ok"`},
		{subagent.SubResult{Status: subagent.ResultSuccess, ErrorType: team.TypeTimeout}, `status success with error type "timeout"`},
		{subagent.SubResult{Status: subagent.ResultSuccess, PartialResults: []any{1}}, "status success with partial results"},
		{subagent.SubResult{Status: subagent.ResultError}, "status error without an error type"},
		{subagent.SubResult{Status: subagent.ResultPartialFailure, ErrorType: team.TypeTimeout}, "partial_failure without partial results"},
	} {
		err := tc.r.Validate()
		if tc.err == "" {
			assert.NoError(t, err)
		} else {
			assert.ErrorContains(t, err, tc.err)
		}
	}
}

// Results is never nil on a result the SubAgent reports as a success, and a failure
// always carries its error: the coordinator cannot mistake one for the other.
func TestSubResultErr(t *testing.T) {
	ok := subagent.SubResult{Status: subagent.ResultSuccess, Results: []any{}}
	assert.NoError(t, ok.Err())
	failed := subagent.SubResult{Task: "x", Status: subagent.ResultError, ErrorType: team.TypeRateLimited, Retryable: true,
		Attempted: []subagent.QueryAttempt{{Attempts: 2}, {Attempts: 1}}}
	var te *team.Error
	require.ErrorAs(t, failed.Err(), &te)
	assert.Equal(t, team.TypeRateLimited, te.Type)
	assert.True(t, te.Retryable())
	assert.Equal(t, 3, te.Attempts)
	assert.Equal(t, `rate_limited: sub-task "x" failed`, te.Error())
}
