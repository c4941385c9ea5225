package team_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// noneExist are the phrases a note or a merged answer uses to claim absence.
var noneExist = []string{"none exist", "no results", "found nothing", "valid empty"}

func assertNoAbsenceClaim(t *testing.T, text, about string) {
	t.Helper()
	low := strings.ToLower(text)
	for _, p := range noneExist {
		assert.NotContains(t, low, p, "%s: must not claim absence for a source it could not look at:\n%s", about, text)
	}
}

// One sub-agent is told by its source that nothing matches (a success with no
// results), one is told not_found, one cannot reach its source: the first is "none
// exist", the other two are gaps that say what the source answered, and no note of a
// gap claims absence.
func TestAdvCoverageNotFoundVersusUnavailable(t *testing.T) {
	clock := newSubClock()
	empty := &team.SubAgent{Task: "regulation", Source: "regulation_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return nil, nil }}
	notFound := &team.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) {
			return nil, team.NewError(team.TypeNotFound, "index market_2025 does not exist")
		}}
	attempts := 0
	unavailable := &team.SubAgent{Task: "patents", Source: "patent_db", Sleep: clock.Sleep, Now: clock.Now,
		Retry: flow.RetryPolicy{NoJitter: true, Max: 3}, Alternatives: []string{"use the WIPO search API"},
		Search: func(context.Context, string) ([]any, error) {
			attempts++
			return nil, team.NewError(team.TypeSourceUnavailable, "503 from patent_db")
		}}
	_, fc := runResearch(t, empty, notFound, unavailable)
	assert.Equal(t, 3, attempts, "a transient failure is retried locally, boundedly")
	cov := team.NewCoverage(team.GatherSubTasks(fc, "market", "regulation", "patents")...)

	reg, ok := cov.Note("regulation")
	require.True(t, ok)
	assert.Equal(t, team.CoverageValidEmpty, reg.Class)

	mk, ok := cov.Note("market")
	require.True(t, ok)
	assert.Equal(t, team.CoverageGap, mk.Class)
	assert.Equal(t, team.TypeNotFound, mk.ErrorType)
	assert.Equal(t, 1, mk.Attempts, "not_found is not retried")
	assert.Contains(t, mk.Text, "not_found")
	assertNoAbsenceClaim(t, mk.Text, "market")

	pt, ok := cov.Note("patents")
	require.True(t, ok)
	assert.Equal(t, team.CoverageGap, pt.Class)
	assert.Equal(t, team.GapAccessFailure, pt.Gap)
	assert.Equal(t, team.TypeSourceUnavailable, pt.ErrorType)
	assert.Equal(t, 3, pt.Attempts)
	assert.True(t, pt.Retryable)
	assertNoAbsenceClaim(t, pt.Text, "patents")
	assert.False(t, cov.Complete())
	assert.Len(t, cov.Gaps(), 2)
}

// The same three sub-agents as members of a Parallel team whose coordinator merges
// with its default merge: the merged answer must say the unavailable source failed
// and never report that it found nothing; the silent sub-agent (empty success after
// failed searches) must not read as "none exist" either.
func TestAdvParallelTeamMergeNeverClaimsAbsenceForGaps(t *testing.T) {
	clock := newSubClock()
	empty := &team.SubAgent{Task: "regulation", Source: "regulation_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return nil, nil }}
	unavailable := &team.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Retry: flow.RetryPolicy{NoJitter: true, Max: 2},
		Search: func(context.Context, string) ([]any, error) {
			return nil, team.NewError(team.TypeSourceUnavailable, "503 from market_reports")
		}}
	silent := team.RecordToolCalls(silentPatents(t))
	tm, _ := ttTeam(t, "research", team.WithProtocol(team.Parallel(team.ParallelBranchPolicy(flow.ContinueOnError))),
		team.WithMembers(empty, unavailable, silent))
	sess := team.NewSession("research-team-1")
	ans, err := tm.Call(context.Background(), "solid-state batteries", sess)
	require.NoError(t, err)
	t.Logf("merged answer:\n%s", ans.Content)

	sections := map[string]string{}
	for _, part := range strings.Split(ans.Content, "\n\n") {
		for _, m := range []string{"regulation", "market", "patents"} {
			if strings.HasPrefix(part, "["+m+"]") {
				sections[m] = part
			}
		}
	}
	require.Contains(t, sections, "market")
	assert.Contains(t, sections["market"], "failed")
	assert.Contains(t, sections["market"], string(team.TypeSourceUnavailable))
	assertNoAbsenceClaim(t, sections["market"], "market")

	// The silent member's own report says "success, results: []"; the merge must say
	// that its searches failed.
	require.Contains(t, sections, "patents")
	assert.Contains(t, sections["patents"], "gap", "the evidence of failed searches reaches the merge")

	// And the coverage notes, computed from the team's context, agree.
	cov := team.NewCoverage(team.GatherSubTasks(sess.Context(), "regulation", "market", "patents")...)
	for _, n := range cov.Notes {
		if n.Class == team.CoverageGap {
			assertNoAbsenceClaim(t, n.Text, n.Task)
		}
	}
	reg, _ := cov.Note("regulation")
	assert.Equal(t, team.CoverageValidEmpty, reg.Class)
	mk, _ := cov.Note("market")
	assert.Equal(t, team.CoverageGap, mk.Class)
	pt, _ := cov.Note("patents")
	assert.Equal(t, team.CoverageGap, pt.Class)
	assert.Equal(t, team.GapSilentFailure, pt.Gap)
}

// A supervisor-merged Parallel team: the coordinator model is told which members could
// not look, so its prompt carries the gap, not an empty list.
func TestAdvParallelCoordinatorPromptCarriesGaps(t *testing.T) {
	clock := newSubClock()
	unavailable := &team.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Retry: flow.RetryPolicy{NoJitter: true, Max: 1},
		Search: func(context.Context, string) ([]any, error) {
			return nil, team.NewError(team.TypeSourceUnavailable, "503 from market_reports")
		}}
	silent := team.RecordToolCalls(silentPatents(t))
	coord := testkit.NewScriptedModel(testkit.Reply("merged"))
	tm, _ := ttTeam(t, "research", team.WithProtocol(team.Parallel(team.ParallelBranchPolicy(flow.ContinueOnError))),
		team.WithMembers(unavailable, silent), team.WithSupervisorModel(coord))
	_, err := tm.Call(context.Background(), "solid-state batteries", team.NewSession("research-team-2"))
	require.NoError(t, err)
	reqs := coord.Requests()
	require.Len(t, reqs, 1)
	prompt := reqs[0].LastUserMessage()
	t.Logf("coordinator prompt:\n%s", prompt)
	assert.Contains(t, prompt, "[market] failed")
	i := strings.Index(prompt, "[patents]")
	require.GreaterOrEqual(t, i, 0)
	assert.Contains(t, prompt[i:], "gap")
}

// A custom merge given the coverage notes sees the gap of a sub-agent whose own report
// says "success, no results" while its searches failed.
func TestParallelMergeWithCoverage(t *testing.T) {
	silent := team.RecordToolCalls(silentPatents(t))
	var got team.Coverage
	merge := team.ParallelMergeWithCoverage(func(_ context.Context, tr *team.TeamTrace, cov team.Coverage) (string, error) {
		got = cov
		return "merged: " + cov.Markdown(), nil
	})
	tm, _ := ttTeam(t, "research", team.WithProtocol(team.Parallel(team.ParallelBranchPolicy(flow.ContinueOnError), merge)),
		team.WithMembers(silent))
	ans, err := tm.Call(context.Background(), "solid-state batteries", team.NewSession("research-team-3"))
	require.NoError(t, err)
	require.Len(t, got.Notes, 1)
	assert.Equal(t, "patents", got.Notes[0].Task)
	assert.Equal(t, team.CoverageGap, got.Notes[0].Class)
	assert.Contains(t, ans.Content, "gap")
}

// jsonThenFail is a model-driven sub-agent: its first call answers in the seeds' JSON
// format with two results, every later call fails.
type jsonThenFail struct{ calls int }

func (j *jsonThenFail) Name() string { return "patents" }
func (j *jsonThenFail) Role() string { return "searches patents" }
func (j *jsonThenFail) Call(context.Context, string, *team.AgentSession) (*team.Answer, error) {
	j.calls++
	if j.calls == 1 {
		return &team.Answer{Agent: "patents", Content: `{"status":"success","results":[{"id":"EP1"},{"id":"EP2"}]}`}, nil
	}
	return nil, team.NewError(team.TypeRateLimited, "quota of 10/min used")
}

// skipOn skips a member when the team's prompt is the given one.
type skipOn struct {
	team.NopTeamInterceptor
	member, prompt string
}

func (s skipOn) ShouldAgentContinue(_ context.Context, tr *team.TeamTrace, m team.Agent) bool {
	return m.Name() != s.member || tr.Prompt != s.prompt
}

// A parallel team asked twice in one session: the second time one sub-agent fails and
// one is skipped. Their reports of the first run are still in the context, but the
// coordinator's coverage notes are about this run: both are gaps, neither is "well
// supported" by the earlier run's results.
func TestAdvParallelMergeCoverageIsThisRuns(t *testing.T) {
	clock := newSubClock()
	regulation := &team.SubAgent{Task: "regulation", Source: "regulation_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return nil, nil }}
	market := &team.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return []any{"report"}, nil }}
	var notes team.Coverage
	tm, _ := ttTeam(t, "research", team.WithMembers(regulation, &jsonThenFail{}, market),
		team.WithTeamInterceptor(skipOn{member: "market", prompt: "q2"}, 0),
		team.WithProtocol(team.Parallel(team.ParallelBranchPolicy(flow.ContinueOnError),
			team.ParallelMergeWithCoverage(func(_ context.Context, _ *team.TeamTrace, cov team.Coverage) (string, error) {
				notes = cov
				return cov.Markdown(), nil
			}))))
	sess := team.NewSession("research-twice")
	_, err := tm.Call(context.Background(), "q1", sess)
	require.NoError(t, err)
	require.True(t, notes.Complete(), "first run: %s", notes.Markdown())

	ans, err := tm.Call(context.Background(), "q2", sess)
	require.NoError(t, err)
	t.Logf("second run:\n%s", ans.Content)
	assert.NotContains(t, ans.Content, "well supported")
	pt, ok := notes.Note("patents")
	require.True(t, ok)
	assert.Equal(t, team.CoverageGap, pt.Class)
	assert.Equal(t, team.GapAgentFailure, pt.Gap)
	assert.Equal(t, team.TypeRateLimited, pt.ErrorType)
	mk, ok := notes.Note("market")
	require.True(t, ok)
	assert.Equal(t, team.CoverageGap, mk.Class)
	assert.Equal(t, team.GapNoReport, mk.Gap)
	assertNoAbsenceClaim(t, pt.Text, "patents")
	assertNoAbsenceClaim(t, mk.Text, "market")
	reg, ok := notes.Note("regulation")
	require.True(t, ok)
	assert.Equal(t, team.CoverageValidEmpty, reg.Class, "the sub-agent that ran is unaffected")
}

// A sub-agent member skipped in the team's first run has no report of any run: it is
// still a gap ("no report"), so the coverage is not complete, as it would be if only
// members with evidence got notes.
func TestAdvSkippedSubAgentWithoutAnyReportIsAGap(t *testing.T) {
	clock := newSubClock()
	regulation := &team.SubAgent{Task: "regulation", Source: "regulation_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return []any{"rule"}, nil }}
	market := &team.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return []any{"report"}, nil }}
	recorded := team.RecordToolCalls(&team.SubAgent{Task: "patents", Source: "patent_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return []any{"patent"}, nil }})
	for _, skipped := range []string{"market", "patents"} {
		var notes team.Coverage
		tm, _ := ttTeam(t, "research", team.WithMembers(regulation, market, recorded),
			team.WithTeamInterceptor(skipOn{member: skipped, prompt: "q1"}, 0),
			team.WithProtocol(team.Parallel(team.ParallelBranchPolicy(flow.ContinueOnError),
				team.ParallelMergeWithCoverage(func(_ context.Context, _ *team.TeamTrace, cov team.Coverage) (string, error) {
					notes = cov
					return cov.Markdown(), nil
				}))))
		_, err := tm.Call(context.Background(), "q1", team.NewSession("research-"+skipped))
		require.NoError(t, err)
		require.False(t, notes.Complete(), "%s skipped: %s", skipped, notes.Markdown())
		n, ok := notes.Note(skipped)
		require.True(t, ok, "%s skipped: %s", skipped, notes.Markdown())
		assert.Equal(t, team.CoverageGap, n.Class)
		assert.Equal(t, team.GapNoReport, n.Gap)
		assertNoAbsenceClaim(t, n.Text, skipped)
		reg, ok := notes.Note("regulation")
		require.True(t, ok)
		assert.Equal(t, team.CoverageWellSupported, reg.Class)
	}
}

// An empty success whose own report says every attempt at a query failed is not a
// finding: the source never answered that query, so the note is a gap that never
// claims absence (a report written by a model, checked against itself when no tool
// calls were recorded).
func TestAdvCoverageEmptySuccessWithOnlyFailedAttempts(t *testing.T) {
	failed := team.QueryAttempt{Query: "solid-state patents", Source: "patent_db", Attempts: 2, Outcomes: []team.AttemptOutcome{
		{Attempt: 1, Status: team.StatusError, ErrorType: team.TypeTimeout},
		{Attempt: 2, Status: team.StatusError, ErrorType: team.TypeTimeout},
	}}
	answered := team.QueryAttempt{Query: "solid-state regulation", Source: "regulation_db", Attempts: 2, Outcomes: []team.AttemptOutcome{
		{Attempt: 1, Status: team.StatusError, ErrorType: team.TypeTimeout},
		{Attempt: 2, Status: team.StatusSuccess},
	}}
	cov := team.NewCoverage(
		team.SubTask{Name: "patents", Result: &team.SubResult{Status: team.ResultSuccess, Results: []any{},
			Attempted: []team.QueryAttempt{answered, failed}}},
		team.SubTask{Name: "regulation", Result: &team.SubResult{Status: team.ResultSuccess, Results: []any{},
			Attempted: []team.QueryAttempt{answered}}},
	)
	n, ok := cov.Note("patents")
	require.True(t, ok)
	assert.Equal(t, team.CoverageGap, n.Class)
	assert.Equal(t, team.GapSilentFailure, n.Gap)
	assert.Equal(t, team.TypeTimeout, n.ErrorType)
	assert.Contains(t, n.Text, "patent_db")
	assertNoAbsenceClaim(t, n.Text, "patents")
	assert.False(t, cov.Complete())

	reg, ok := cov.Note("regulation")
	require.True(t, ok)
	assert.Equal(t, team.CoverageValidEmpty, reg.Class, "a retry that answered resolves the failure")
}
