package subagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/subagent"
	"github.com/flowteam/flowteam/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var researchQueries = map[string]string{
	"market":     "solid-state battery market size 2025",
	"regulation": "solid-state battery regulation after 2024",
	"patents":    "solid-state battery patents 2024",
}

// researchGraph fans out to the three sub-agents on a parallel gateway whose branch
// policy is "continue", so that a failing sub-agent does not end the run.
func researchGraph(t *testing.T) *flow.Graph {
	t.Helper()
	s := flow.NewSpec("research")
	s.Start("start").LinkTo("fork")
	fork := s.Parallel("fork").SetMeta(flow.MetaBranchPolicy, "continue")
	for _, name := range []string{"market", "regulation", "patents"} {
		fork.LinkTo(name)
		s.Activity(name).SetTask("@"+name).SetMeta("agent", name).SetMeta(team.MetaPrompt, researchQueries[name]).LinkTo("join")
	}
	s.Parallel("join").LinkTo("end")
	s.End("end")
	g, err := s.Build()
	require.NoError(t, err)
	return g
}

func marketAgent(clock *subClock) *subagent.SubAgent {
	return &subagent.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) {
			return []any{
				map[string]any{"claim": "about USD 12 bn in 2025", "source": "https://example.org/report-a"},
				map[string]any{"claim": "about USD 11 bn in 2025", "source": "https://example.org/report-b"},
				map[string]any{"claim": "35% annual growth to 2030", "source": "https://example.org/report-c"},
			}, nil
		}}
}

func regulationAgent(clock *subClock) *subagent.SubAgent {
	return &subagent.SubAgent{Task: "regulation", Source: "regulation_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return []any{}, nil }}
}

func timingOutPatents(clock *subClock) *subagent.SubAgent {
	hits := []any{map[string]any{"title": "EP4012345"}, map[string]any{"title": "US11800000"}}
	return &subagent.SubAgent{Task: "patents", Source: "patent_db", Sleep: clock.Sleep, Now: clock.Now,
		Retry:        flow.RetryPolicy{NoJitter: true, Max: 3},
		Alternatives: []string{"use the WIPO search API", "narrow the range to 2024-H2"},
		Search: func(context.Context, string) ([]any, error) {
			return hits, team.NewError(team.TypeTimeout, "patent search timed out after 30s")
		}}
}

// silentPatents is the anti-pattern: a model-driven sub-agent whose searches fail and
// which then reports an empty success.
func silentPatents(t *testing.T) *team.ReActAgent {
	t.Helper()
	search := team.NewTool("patent_search", "Search the patent database",
		nil,
		func(context.Context, struct {
			Query string `json:"query"`
		}) ([]string, error) {
			return nil, team.NewError(team.TypeSourceUnavailable, "patent database returned 503")
		})
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("p1", "patent_search", `{"query":"solid-state battery patents 2024"}`)),
		testkit.CallTools(testkit.ToolCall("p2", "patent_search", `{"query":"solid-state battery patents 2024"}`)),
		testkit.Reply(`{"status":"success","results":[]}`),
	)
	a, err := team.NewReActAgent("patents", model, team.WithTools(search))
	require.NoError(t, err)
	return a
}

func runResearch(t *testing.T, agents ...team.Agent) (*flow.Result, *flow.Context) {
	t.Helper()
	eng := flow.NewEngine(team.WithAgents(agents...))
	fc := flow.NewContext("research-1")
	res, err := eng.EvalGraph(context.Background(), researchGraph(t), fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "one failing sub-task does not end the research")
	return res, fc
}

const (
	noteMarket     = "well supported — 3 results (market_reports)"
	noteRegulation = `searched, none exist — regulation_db returned no results for "solid-state battery regulation after 2024"`
	notePatents    = `gap — timeout after 3 attempts (patent_db: "solid-state battery patents 2024"), 2 partial results, retryable; ` +
		"alternatives: use the WIPO search API; narrow the range to 2024-H2"
	noteSilent = "gap — reported an empty success, but 2 tool calls failed (patent_search: source_unavailable) " +
		"with no successful retry: it could not look, so absence is not established"
)

// The seeds' case: market size succeeds, regulation finds nothing, patents times out
// after 3 attempts with 2 partial results. The run completes; the coverage notes say
// exactly that.
func TestCoverageThreeSubAgents(t *testing.T) {
	clock := newSubClock()
	res, fc := runResearch(t, subagent.RecordToolCalls(marketAgent(clock)), subagent.RecordToolCalls(regulationAgent(clock)),
		subagent.RecordToolCalls(timingOutPatents(clock)))
	require.Len(t, res.BranchFailures, 1)
	assert.Equal(t, "patents", res.BranchFailures[0].Node)
	assert.Equal(t, "timeout", res.BranchFailures[0].Code)

	cov := subagent.NewCoverage(subagent.GatherSubTasks(fc, "market", "regulation", "patents")...)
	require.Len(t, cov.Notes, 3)
	m, r, p := cov.Notes[0], cov.Notes[1], cov.Notes[2]

	assert.Equal(t, subagent.CoverageWellSupported, m.Class)
	assert.Equal(t, 3, m.Results)
	assert.Equal(t, noteMarket, m.Text)

	assert.Equal(t, subagent.CoverageValidEmpty, r.Class)
	assert.Empty(t, r.Gap)
	assert.Equal(t, noteRegulation, r.Text)

	assert.Equal(t, subagent.CoverageGap, p.Class)
	assert.Equal(t, subagent.GapAccessFailure, p.Gap)
	assert.Equal(t, team.TypeTimeout, p.ErrorType)
	assert.Equal(t, 3, p.Attempts)
	assert.Equal(t, 2, p.PartialResults)
	assert.True(t, p.Retryable)
	assert.Equal(t, []string{"use the WIPO search API", "narrow the range to 2024-H2"}, p.Alternatives)
	assert.Equal(t, notePatents, p.Text)
	assert.NotContains(t, p.Text, "none exist")

	assert.Equal(t, "## Coverage notes\n"+
		"- market: "+noteMarket+"\n"+
		"- regulation: "+noteRegulation+"\n"+
		"- patents: "+notePatents+"\n", cov.Markdown())
	assert.False(t, cov.Complete())
	assert.Equal(t, []subagent.CoverageNote{p}, cov.Gaps())
	assert.Equal(t, []time.Duration{500 * time.Millisecond, time.Second}, clock.Waits())
}

// The silent case: patents reports an empty success while both its searches failed.
// The flow sees a completed node; the tool calls of its run give it away, and the note
// is a gap that never claims there are no patents. The evidence is found whether the
// agent was wrapped with RecordToolCalls or not (then from its ReAct trace).
func TestCoverageSilentEmptyIsUncovered(t *testing.T) {
	for _, wrap := range []bool{true, false} {
		name := map[bool]string{true: "recorded calls", false: "react trace"}[wrap]
		t.Run(name, func(t *testing.T) {
			clock := newSubClock()
			var patents team.Agent = silentPatents(t)
			if wrap {
				patents = subagent.RecordToolCalls(patents)
			}
			res, fc := runResearch(t, marketAgent(clock), regulationAgent(clock), patents)
			assert.Empty(t, res.BranchFailures, "to the flow, the silent sub-agent succeeded")

			tasks := subagent.GatherSubTasks(fc, "market", "regulation", "patents")
			require.NotNil(t, tasks[2].Result)
			assert.True(t, tasks[2].Result.Empty(), "the sub-agent claims an empty success")
			cov := subagent.NewCoverage(tasks...)
			p, ok := cov.Note("patents")
			require.True(t, ok)
			assert.Equal(t, subagent.CoverageGap, p.Class)
			assert.Equal(t, subagent.GapSilentFailure, p.Gap)
			assert.Equal(t, team.TypeSourceUnavailable, p.ErrorType)
			require.Len(t, p.FailedCalls, 2)
			assert.Equal(t, []string{"p1", "p2"}, []string{p.FailedCalls[0].CallID, p.FailedCalls[1].CallID})
			assert.Equal(t, noteSilent, p.Text)
			md := cov.Markdown()
			patentsLine := md[strings.Index(md, "- patents:"):]
			for _, claim := range []string{"none exist", "no patents", "No patents", "valid empty"} {
				assert.NotContains(t, patentsLine, claim)
			}
			// The other sub-tasks are classified as before.
			assert.Equal(t, subagent.CoverageWellSupported, cov.Notes[0].Class)
			assert.Equal(t, subagent.CoverageValidEmpty, cov.Notes[1].Class)
		})
	}
}

// Everything the coverage is made of is plain data in the context: a session restored
// in another process gives the same notes.
func TestCoverageAfterSessionRestore(t *testing.T) {
	clock := newSubClock()
	_, fc := runResearch(t, subagent.RecordToolCalls(marketAgent(clock)), regulationAgent(clock), silentPatents(t))
	before := subagent.NewCoverage(subagent.GatherSubTasks(fc, "market", "regulation", "patents")...)

	data, err := team.MarshalSession(team.SessionOf(fc))
	require.NoError(t, err)
	restored, err := team.UnmarshalSession(data)
	require.NoError(t, err)
	after := subagent.NewCoverage(subagent.GatherSubTasks(restored.Context(), "market", "regulation", "patents")...)

	bj, err := json.Marshal(before)
	require.NoError(t, err)
	aj, err := json.Marshal(after)
	require.NoError(t, err)
	assert.JSONEq(t, string(bj), string(aj))
	assert.Equal(t, before.Markdown(), after.Markdown())
	assert.Equal(t, subagent.GapSilentFailure, after.Notes[2].Gap)
}

func failedCall(id, args string, typ team.ErrorType) subagent.ToolCallRecord {
	return subagent.ToolCallRecord{CallID: id, Tool: "search", Args: json.RawMessage(args), Status: team.StatusError,
		Error: team.NewError(typ, "failed")}
}

func okCall(id, args string) subagent.ToolCallRecord {
	return subagent.ToolCallRecord{CallID: id, Tool: "search", Args: json.RawMessage(args), Status: team.StatusSuccess}
}

// Each classification, from constructed sub-tasks.
func TestCoverageClassification(t *testing.T) {
	empty := &subagent.SubResult{Status: subagent.ResultSuccess, Results: []any{}}
	found := &subagent.SubResult{Status: subagent.ResultSuccess, Results: []any{"a"}}
	for _, tc := range []struct {
		name  string
		task  subagent.SubTask
		class subagent.CoverageClass
		gap   subagent.GapReason
		text  string
	}{
		{"a retried call that worked resolves its failure",
			subagent.SubTask{Result: empty, Calls: []subagent.ToolCallRecord{
				failedCall("1", `{"q":"x","n":1}`, team.TypeTimeout), okCall("2", `{"n":1, "q":"x"}`)}},
			subagent.CoverageValidEmpty, "", "searched, none exist — the sub-agent searched and reported no results"},
		{"a call with other arguments does not",
			subagent.SubTask{Result: empty, Calls: []subagent.ToolCallRecord{
				failedCall("1", `{"q":"x"}`, team.TypeTimeout), okCall("2", `{"q":"y"}`)}},
			subagent.CoverageGap, subagent.GapSilentFailure,
			"gap — reported an empty success, but 1 tool call failed (search: timeout) with no successful retry: " +
				"it could not look, so absence is not established"},
		{"a success before the failure does not either",
			subagent.SubTask{Result: empty, Calls: []subagent.ToolCallRecord{
				okCall("1", `{"q":"x"}`), failedCall("2", `{"q":"x"}`, team.TypeRateLimited)}},
			subagent.CoverageGap, subagent.GapSilentFailure,
			"gap — reported an empty success, but 1 tool call failed (search: rate_limited) with no successful retry: " +
				"it could not look, so absence is not established"},
		{"results with a failed call are supported, with a caveat",
			subagent.SubTask{Result: found, Calls: []subagent.ToolCallRecord{failedCall("1", `{}`, team.TypeAuthDenied)}},
			subagent.CoverageWellSupported, "",
			"well supported — 1 result; caveat: 1 tool call failed (search: auth_denied), so coverage may be incomplete"},
		{"an empty success whose node failed",
			subagent.SubTask{Result: empty, Failure: team.NewError(team.TypeTimeout, "deadline")},
			subagent.CoverageGap, subagent.GapSilentFailure,
			"gap — reported an empty success, but its node failed (timeout: deadline), so absence is not established"},
		{"a failure without a report",
			subagent.SubTask{Failure: &team.Error{Type: team.TypeAuthDenied, Message: "token expired"}},
			subagent.CoverageGap, subagent.GapAgentFailure, "gap — the sub-agent failed without a report: auth_denied: token expired"},
		{"a free-text answer",
			subagent.SubTask{Answer: "No patents were found."},
			subagent.CoverageGap, subagent.GapNoReport,
			"gap — the sub-agent answered in free text without a structured result; nothing it says about absence can be relied on"},
		{"nothing at all",
			subagent.SubTask{}, subagent.CoverageGap, subagent.GapNoReport, "gap — no report (the sub-agent did not run or did not report)"},
		{"an inconsistent report",
			subagent.SubTask{Result: &subagent.SubResult{Status: subagent.ResultSuccess, ErrorType: team.TypeTimeout}},
			subagent.CoverageGap, subagent.GapInvalidReport, `gap — inconsistent report: status success with error type "timeout"`},
		{"a non-retryable access failure without partial results",
			subagent.SubTask{Result: &subagent.SubResult{Status: subagent.ResultError, ErrorType: team.TypeAuthDenied,
				Attempted: []subagent.QueryAttempt{{Query: "q", Attempts: 1}}}},
			subagent.CoverageGap, subagent.GapAccessFailure, `gap — auth_denied after 1 attempt ("q"), no partial results, not retryable`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.task.Name = "x"
			n := subagent.NewCoverage(tc.task).Notes[0]
			assert.Equal(t, tc.class, n.Class)
			assert.Equal(t, tc.gap, n.Gap)
			assert.Equal(t, tc.text, n.Text)
			assert.Equal(t, "x: "+tc.text, n.String())
		})
	}
}

// A sub-agent that fails outright (no report) is a gap naming its error, and the other
// sub-tasks go on.
func TestCoverageFailingSubAgent(t *testing.T) {
	clock := newSubClock()
	res, fc := runResearch(t, marketAgent(clock), regulationAgent(clock),
		testkit.FailingWith("patents", team.TypeAuthDenied, "patent API key rejected"))
	require.Len(t, res.BranchFailures, 1)
	tasks := subagent.GatherSubTasks(fc, "market", "regulation", "patents")
	tasks[2].Title = "Patents"
	p := subagent.NewCoverage(tasks...).Notes[2]
	assert.Equal(t, subagent.GapAgentFailure, p.Gap)
	assert.Equal(t, team.TypeAuthDenied, p.ErrorType)
	assert.Equal(t, "Patents: gap — the sub-agent failed without a report: auth_denied: patent API key rejected", p.String())
}

func ExampleNewCoverage() {
	empty := func(context.Context, string) ([]any, error) { return []any{}, nil }
	timeout := func(context.Context, string) ([]any, error) {
		return []any{"EP4012345"}, team.NewError(team.TypeTimeout, "no answer within 30s")
	}
	noWait := func(context.Context, time.Duration) error { return nil }
	regulation := (&subagent.SubAgent{Task: "regulation", Source: "regulation_db", Search: empty}).
		Run(context.Background(), "battery regulation after 2024")
	patents := (&subagent.SubAgent{Task: "patents", Source: "patent_db", Search: timeout, Sleep: noWait,
		Alternatives: []string{"use the WIPO search API"}}).
		Run(context.Background(), "battery patents 2024")

	cov := subagent.NewCoverage(
		subagent.SubTask{Name: "regulation", Result: &regulation},
		subagent.SubTask{Name: "patents", Result: &patents},
	)
	fmt.Print(cov.Markdown())
	// Output:
	// ## Coverage notes
	// - regulation: searched, none exist — regulation_db returned no results for "battery regulation after 2024"
	// - patents: gap — timeout after 3 attempts (patent_db: "battery patents 2024"), 1 partial result, retryable; alternatives: use the WIPO search API
}

// GatherSubTasks reads the failures under the error key of the engine that ran the
// context, not only under the default one.
func TestCoverageFailingSubAgentWithErrorKey(t *testing.T) {
	clock := newSubClock()
	eng := flow.NewEngine(flow.WithErrorKey("research.errors"),
		team.WithAgents(marketAgent(clock), regulationAgent(clock), testkit.FailingWith("patents", team.TypeAuthDenied, "patent API key rejected")))
	fc := flow.NewContext("research-2")
	res, err := eng.EvalGraph(context.Background(), researchGraph(t), fc)
	require.NoError(t, err)
	require.Len(t, res.BranchFailures, 1)
	assert.Equal(t, "research.errors", fc.ErrorKey())
	p := subagent.NewCoverage(subagent.GatherSubTasks(fc, "market", "regulation", "patents")...).Notes[2]
	assert.Equal(t, subagent.GapAgentFailure, p.Gap)
	assert.Equal(t, team.TypeAuthDenied, p.ErrorType)
}

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
func TestCoverageNotFoundVersusUnavailable(t *testing.T) {
	clock := newSubClock()
	empty := &subagent.SubAgent{Task: "regulation", Source: "regulation_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return nil, nil }}
	notFound := &subagent.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) {
			return nil, team.NewError(team.TypeNotFound, "index market_2025 does not exist")
		}}
	attempts := 0
	unavailable := &subagent.SubAgent{Task: "patents", Source: "patent_db", Sleep: clock.Sleep, Now: clock.Now,
		Retry: flow.RetryPolicy{NoJitter: true, Max: 3}, Alternatives: []string{"use the WIPO search API"},
		Search: func(context.Context, string) ([]any, error) {
			attempts++
			return nil, team.NewError(team.TypeSourceUnavailable, "503 from patent_db")
		}}
	_, fc := runResearch(t, empty, notFound, unavailable)
	assert.Equal(t, 3, attempts, "a transient failure is retried locally, boundedly")
	cov := subagent.NewCoverage(subagent.GatherSubTasks(fc, "market", "regulation", "patents")...)

	reg, ok := cov.Note("regulation")
	require.True(t, ok)
	assert.Equal(t, subagent.CoverageValidEmpty, reg.Class)

	mk, ok := cov.Note("market")
	require.True(t, ok)
	assert.Equal(t, subagent.CoverageGap, mk.Class)
	assert.Equal(t, team.TypeNotFound, mk.ErrorType)
	assert.Equal(t, 1, mk.Attempts, "not_found is not retried")
	assert.Contains(t, mk.Text, "not_found")
	assertNoAbsenceClaim(t, mk.Text, "market")

	pt, ok := cov.Note("patents")
	require.True(t, ok)
	assert.Equal(t, subagent.CoverageGap, pt.Class)
	assert.Equal(t, subagent.GapAccessFailure, pt.Gap)
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
func TestParallelTeamMergeNeverClaimsAbsenceForUncoveredTasks(t *testing.T) {
	clock := newSubClock()
	empty := &subagent.SubAgent{Task: "regulation", Source: "regulation_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return nil, nil }}
	unavailable := &subagent.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Retry: flow.RetryPolicy{NoJitter: true, Max: 2},
		Search: func(context.Context, string) ([]any, error) {
			return nil, team.NewError(team.TypeSourceUnavailable, "503 from market_reports")
		}}
	silent := subagent.RecordToolCalls(silentPatents(t))
	tm, _ := ttTeam(t, "research", team.WithProtocol(team.Parallel), team.WithMergeNotes(subagent.Notes), team.WithBranchPolicy(flow.ContinueOnError),
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
	cov := subagent.NewCoverage(subagent.GatherSubTasks(sess.Context(), "regulation", "market", "patents")...)
	for _, n := range cov.Notes {
		if n.Class == subagent.CoverageGap {
			assertNoAbsenceClaim(t, n.Text, n.Task)
		}
	}
	reg, _ := cov.Note("regulation")
	assert.Equal(t, subagent.CoverageValidEmpty, reg.Class)
	mk, _ := cov.Note("market")
	assert.Equal(t, subagent.CoverageGap, mk.Class)
	pt, _ := cov.Note("patents")
	assert.Equal(t, subagent.CoverageGap, pt.Class)
	assert.Equal(t, subagent.GapSilentFailure, pt.Gap)
}

// A supervisor-merged Parallel team: the coordinator model is told which members could
// not look, so its prompt carries the gap, not an empty list.
func TestParallelCoordinatorPromptCarriesCoverage(t *testing.T) {
	clock := newSubClock()
	unavailable := &subagent.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Retry: flow.RetryPolicy{NoJitter: true, Max: 1},
		Search: func(context.Context, string) ([]any, error) {
			return nil, team.NewError(team.TypeSourceUnavailable, "503 from market_reports")
		}}
	silent := subagent.RecordToolCalls(silentPatents(t))
	coord := testkit.NewScriptedModel(testkit.Reply("merged"))
	tm, _ := ttTeam(t, "research", team.WithProtocol(team.Parallel), team.WithMergeNotes(subagent.Notes), team.WithBranchPolicy(flow.ContinueOnError),
		team.WithMembers(unavailable, silent), team.WithSupervisorModel(coord))
	_, err := tm.Call(context.Background(), "solid-state batteries", team.NewSession("research-team-2"))
	require.NoError(t, err)
	reqs := coord.Requests()
	require.Len(t, reqs, 1)
	prompt := testkit.LastUserMessage(reqs[0])
	t.Logf("coordinator prompt:\n%s", prompt)
	assert.Contains(t, prompt, "[market] failed")
	i := strings.Index(prompt, "[patents]")
	require.GreaterOrEqual(t, i, 0)
	assert.Contains(t, prompt[i:], "gap")
}

// A custom merge given the coverage notes sees the gap of a sub-agent whose own report
// says "success, no results" while its searches failed.
func TestParallelMergeWithCoverage(t *testing.T) {
	silent := subagent.RecordToolCalls(silentPatents(t))
	var got subagent.Coverage
	merge := team.WithMerge(subagent.Merge([]team.Agent{silent}, func(_ context.Context, tr *team.TeamTrace, cov subagent.Coverage) (string, error) {
		got = cov
		return "merged: " + cov.Markdown(), nil
	}))
	tm, _ := ttTeam(t, "research", team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError), merge,
		team.WithMembers(silent))
	ans, err := tm.Call(context.Background(), "solid-state batteries", team.NewSession("research-team-3"))
	require.NoError(t, err)
	require.Len(t, got.Notes, 1)
	assert.Equal(t, "patents", got.Notes[0].Task)
	assert.Equal(t, subagent.CoverageGap, got.Notes[0].Class)
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
func TestParallelMergeCoverageIsThisRuns(t *testing.T) {
	clock := newSubClock()
	regulation := &subagent.SubAgent{Task: "regulation", Source: "regulation_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return nil, nil }}
	market := &subagent.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return []any{"report"}, nil }}
	var notes subagent.Coverage
	members := []team.Agent{regulation, &jsonThenFail{}, market}
	tm, _ := ttTeam(t, "research", team.WithMembers(members...),
		team.WithInterceptor(skipOn{member: "market", prompt: "q2"}),
		team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError),
		team.WithMerge(subagent.Merge(members, func(_ context.Context, _ *team.TeamTrace, cov subagent.Coverage) (string, error) {
			notes = cov
			return cov.Markdown(), nil
		})))
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
	assert.Equal(t, subagent.CoverageGap, pt.Class)
	assert.Equal(t, subagent.GapAgentFailure, pt.Gap)
	assert.Equal(t, team.TypeRateLimited, pt.ErrorType)
	mk, ok := notes.Note("market")
	require.True(t, ok)
	assert.Equal(t, subagent.CoverageGap, mk.Class)
	assert.Equal(t, subagent.GapNoReport, mk.Gap)
	assertNoAbsenceClaim(t, pt.Text, "patents")
	assertNoAbsenceClaim(t, mk.Text, "market")
	reg, ok := notes.Note("regulation")
	require.True(t, ok)
	assert.Equal(t, subagent.CoverageValidEmpty, reg.Class, "the sub-agent that ran is unaffected")
}

// A sub-agent member skipped in the team's first run has no report of any run: it is
// still a gap ("no report"), so the coverage is not complete, as it would be if only
// members with evidence got notes.
func TestSkippedSubAgentWithoutAnyReportIsUncovered(t *testing.T) {
	clock := newSubClock()
	regulation := &subagent.SubAgent{Task: "regulation", Source: "regulation_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return []any{"rule"}, nil }}
	market := &subagent.SubAgent{Task: "market", Source: "market_reports", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return []any{"report"}, nil }}
	recorded := subagent.RecordToolCalls(&subagent.SubAgent{Task: "patents", Source: "patent_db", Sleep: clock.Sleep, Now: clock.Now,
		Search: func(context.Context, string) ([]any, error) { return []any{"patent"}, nil }})
	for _, skipped := range []string{"market", "patents"} {
		var notes subagent.Coverage
		members := []team.Agent{regulation, market, recorded}
		tm, _ := ttTeam(t, "research", team.WithMembers(members...),
			team.WithInterceptor(skipOn{member: skipped, prompt: "q1"}),
			team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError),
			team.WithMerge(subagent.Merge(members, func(_ context.Context, _ *team.TeamTrace, cov subagent.Coverage) (string, error) {
				notes = cov
				return cov.Markdown(), nil
			})))
		_, err := tm.Call(context.Background(), "q1", team.NewSession("research-"+skipped))
		require.NoError(t, err)
		require.False(t, notes.Complete(), "%s skipped: %s", skipped, notes.Markdown())
		n, ok := notes.Note(skipped)
		require.True(t, ok, "%s skipped: %s", skipped, notes.Markdown())
		assert.Equal(t, subagent.CoverageGap, n.Class)
		assert.Equal(t, subagent.GapNoReport, n.Gap)
		assertNoAbsenceClaim(t, n.Text, skipped)
		reg, ok := notes.Note("regulation")
		require.True(t, ok)
		assert.Equal(t, subagent.CoverageWellSupported, reg.Class)
	}
}

// An empty success whose own report says every attempt at a query failed is not a
// finding: the source never answered that query, so the note is a gap that never
// claims absence (a report written by a model, checked against itself when no tool
// calls were recorded).
func TestCoverageEmptySuccessWithOnlyFailedAttempts(t *testing.T) {
	failed := subagent.QueryAttempt{Query: "solid-state patents", Source: "patent_db", Attempts: 2, Outcomes: []subagent.AttemptOutcome{
		{Attempt: 1, Status: team.StatusError, ErrorType: team.TypeTimeout},
		{Attempt: 2, Status: team.StatusError, ErrorType: team.TypeTimeout},
	}}
	answered := subagent.QueryAttempt{Query: "solid-state regulation", Source: "regulation_db", Attempts: 2, Outcomes: []subagent.AttemptOutcome{
		{Attempt: 1, Status: team.StatusError, ErrorType: team.TypeTimeout},
		{Attempt: 2, Status: team.StatusSuccess},
	}}
	cov := subagent.NewCoverage(
		subagent.SubTask{Name: "patents", Result: &subagent.SubResult{Status: subagent.ResultSuccess, Results: []any{},
			Attempted: []subagent.QueryAttempt{answered, failed}}},
		subagent.SubTask{Name: "regulation", Result: &subagent.SubResult{Status: subagent.ResultSuccess, Results: []any{},
			Attempted: []subagent.QueryAttempt{answered}}},
	)
	n, ok := cov.Note("patents")
	require.True(t, ok)
	assert.Equal(t, subagent.CoverageGap, n.Class)
	assert.Equal(t, subagent.GapSilentFailure, n.Gap)
	assert.Equal(t, team.TypeTimeout, n.ErrorType)
	assert.Contains(t, n.Text, "patent_db")
	assertNoAbsenceClaim(t, n.Text, "patents")
	assert.False(t, cov.Complete())

	reg, ok := cov.Note("regulation")
	require.True(t, ok)
	assert.Equal(t, subagent.CoverageValidEmpty, reg.Class, "a retry that answered resolves the failure")
}

type searchArgs struct {
	Q string `json:"q"`
}

// A search a human skipped with an empty substitute did not run: the model saw "no
// results", but the tool call records say the call did not run, so a coordinator's
// note is a gap, never "searched, none exist". Both records of the calls agree: the
// agent's trace (ToolCallsOfTrace) and the events (RecordToolCalls).
func TestSkippedSearchIsNotAnEmptySearch(t *testing.T) {
	ran := 0
	search := team.NewTool("patent_search", "Search the patent database",
		nil,
		func(_ context.Context, a searchArgs) ([]string, error) { ran++; return []string{"EP-1"}, nil })
	search.Sensitive = team.Always("a search costs money")
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("c1", "patent_search", `{"q":"solid-state"}`)),
		testkit.Reply(`{"status":"success","results":[]}`),
	)
	agent, err := team.NewReActAgent("patents", model, team.WithTools(search))
	require.NoError(t, err)
	recorded := subagent.RecordToolCalls(agent)
	sess := team.NewSession("s-1")

	ans, err := recorded.Call(context.Background(), "find patents", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.NoError(t, sess.Decide("patents", team.Skip("c1", []any{})))
	_, err = recorded.Call(context.Background(), "find patents", sess)
	require.NoError(t, err)
	require.Zero(t, ran, "a skipped call does not run")

	for source, calls := range map[string][]subagent.ToolCallRecord{
		"trace":  subagent.ToolCallsOfTrace(sess.ReActTrace("patents")),
		"events": subagent.ToolCallsIn(sess.Context(), "patents"),
	} {
		require.Len(t, calls, 1, source)
		assert.True(t, calls[0].Failed(), "%s: a skipped call is not a search that succeeded", source)
		require.NotNil(t, calls[0].Error, source)
		assert.Equal(t, team.TypeSkipped, calls[0].Error.Type, source)

		cov := subagent.NewCoverage(subagent.SubTask{Name: "patents",
			Result: &subagent.SubResult{Status: subagent.ResultSuccess, Results: []any{}}, Calls: calls})
		n, ok := cov.Note("patents")
		require.True(t, ok, source)
		assert.Equal(t, subagent.CoverageGap, n.Class, "%s: %s", source, n.Text)
		assert.Equal(t, subagent.GapSilentFailure, n.Gap, source)
		assertNoAbsenceClaim(t, n.Text, "patents")
		assert.False(t, cov.Complete(), source)
	}
}

// A number beyond float64 in a stored session is an error naming the variable, not a
// string in its place (bad input is rejected, never loaded as something else).
func TestUnmarshalSessionRejectsOutOfRangeNumbers(t *testing.T) {
	data, err := team.MarshalSession(team.NewSession("s-1"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	doc["vars"] = map[string]any{"big": json.Number("1e400"), "ok": json.Number("3")}
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	_, err = team.UnmarshalSession(data)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `variable "big"`)
	assert.Contains(t, err.Error(), "1e400")

	doc["vars"] = map[string]any{"ok": json.Number("3"), "list": []any{json.Number("1.5")}}
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	sess, err := team.UnmarshalSession(data)
	require.NoError(t, err)
	assert.Equal(t, int64(3), sess.Context().Value("ok"))
	assert.Equal(t, []any{1.5}, sess.Context().Value("list"))
}
