package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/subagent"
	"github.com/flowteam/flowteam/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waits records the sub-agents' backoffs instead of sleeping.
type waits struct {
	mu sync.Mutex
	ds []time.Duration
}

func (w *waits) Sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.ds = append(w.ds, d)
	w.mu.Unlock()
	return ctx.Err()
}

func testOptions(w *waits) Options { return Options{Sleep: w.Sleep, Backoff: 100 * time.Millisecond} }

const coverageTimeout = `## Coverage notes
- Market size: well supported — 3 results (market_reports)
- Regulation: searched, none exist — regulation_db returned no results for "solid-state battery regulation after 2024"
- Patents: gap — timeout after 3 attempts (patent_db: "solid-state battery patents 2024"), 2 partial results, retryable; alternatives: use the WIPO search API; narrow the range to 2024-H2
`

const coverageSilent = `## Coverage notes
- Market size: well supported — 3 results (market_reports)
- Regulation: searched, none exist — regulation_db returned no results for "solid-state battery regulation after 2024"
- Patents: gap — reported an empty success, but 2 tool calls failed (patent_search: source_unavailable) with no successful retry: it could not look, so absence is not established
`

// nodeEnd returns the terminal audit record of a node.
func nodeEnd(t *testing.T, recs trace.Records, node string) trace.Record {
	t.Helper()
	for _, r := range recs {
		if r.NodeID == node && r.Status != trace.Started {
			return r
		}
	}
	t.Fatalf("no terminal audit record for %q", node)
	return trace.Record{}
}

// Market size succeeds, regulation finds nothing, patents times out after 3 attempts
// with 2 partial results: the research completes and its report ends with coverage
// notes that say exactly that.
func TestTimeoutScenario(t *testing.T) {
	w := &waits{}
	out, err := Run(context.Background(), ScenarioTimeout, testOptions(w))
	require.NoError(t, err)

	assert.True(t, strings.HasSuffix(out.Report, "\n"+coverageTimeout), out.Report)
	notes := out.Coverage.Notes
	require.Len(t, notes, 3)
	assert.Equal(t, subagent.CoverageWellSupported, notes[0].Class)
	assert.Equal(t, subagent.CoverageValidEmpty, notes[1].Class)
	assert.Equal(t, subagent.CoverageGap, notes[2].Class)
	assert.Equal(t, subagent.GapAccessFailure, notes[2].Gap)
	assert.Equal(t, team.TypeTimeout, notes[2].ErrorType)
	assert.Equal(t, 3, notes[2].Attempts)
	assert.Equal(t, 2, notes[2].PartialResults)

	// The coordinator went on with what succeeded and used the partial results.
	assert.Contains(t, out.Report, "- global market about USD 12 bn in 2025 (https://example.org/report-a)")
	assert.Contains(t, out.Report, "Incomplete (timeout); partial results only:\n- EP4012345 Sulfide solid electrolyte")

	// Local retries: 3 attempts, waiting 100ms then 200ms; only the patents sub-agent
	// retried.
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, w.ds)

	// The unresolved failure is a branch failure the parallel gateway survived, and a
	// FAILED audit record with the node's error code.
	require.Len(t, out.Result.BranchFailures, 1)
	assert.Equal(t, "patents", out.Result.BranchFailures[0].Node)
	p := nodeEnd(t, out.Audit, "patents")
	assert.Equal(t, trace.Failed, p.Status)
	assert.Equal(t, "timeout", p.Error.Code)
	assert.EqualValues(t, 3, p.Attrs["failed_tool_calls"])
	assert.Equal(t, trace.Completed, nodeEnd(t, out.Audit, "regulation").Status)
}

// Patents silently returns an empty success while its tool calls failed: to the flow
// the node completed, but the coverage note is a gap and the report never claims
// there are no patents.
func TestSilentScenario(t *testing.T) {
	out, err := Run(context.Background(), ScenarioSilent, testOptions(&waits{}))
	require.NoError(t, err)

	assert.True(t, strings.HasSuffix(out.Report, "\n"+coverageSilent), out.Report)
	p, ok := out.Coverage.Note("patents")
	require.True(t, ok)
	assert.Equal(t, subagent.CoverageGap, p.Class)
	assert.Equal(t, subagent.GapSilentFailure, p.Gap)
	assert.Equal(t, team.TypeSourceUnavailable, p.ErrorType)
	assert.Len(t, p.FailedCalls, 2)
	r, ok := out.Coverage.Note("regulation")
	require.True(t, ok)
	assert.Equal(t, subagent.CoverageValidEmpty, r.Class, "the real empty result is still a finding")

	// Nothing about patents claims absence: not the note, not the report's section.
	patents := out.Report[strings.Index(out.Report, "## Patents"):strings.Index(out.Report, "## Coverage notes")]
	for _, text := range []string{p.Text, patents} {
		for _, claim := range []string{"none exist", "no patents", "No patents", "Nothing found"} {
			assert.NotContains(t, text, claim)
		}
	}
	assert.Equal(t, "## Patents\nNot covered: the sub-agent could not search (see the coverage notes).\n\n", patents)

	// The flow saw a success; the audit record of the node carries the failed calls.
	assert.Empty(t, out.Result.BranchFailures)
	rec := nodeEnd(t, out.Audit, "patents")
	assert.Equal(t, trace.Completed, rec.Status)
	assert.EqualValues(t, 2, rec.Attrs["tool_calls"])
	assert.EqualValues(t, 2, rec.Attrs["failed_tool_calls"])
	assert.Equal(t, []any{"patent_search: source_unavailable", "patent_search: source_unavailable"}, rec.Attrs["tool_errors"])
}

// main's output: the report, then the audit summary.
func TestMainOutput(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, run(context.Background(), &buf, ScenarioSilent, testOptions(&waits{})))
	out := buf.String()
	assert.Contains(t, out, coverageSilent)
	assert.Contains(t, out, "patents    COMPLETED tool calls: 2, failed: 2 (patent_search: source_unavailable ×2)")

	assert.ErrorContains(t, run(context.Background(), &buf, "other", Options{}), `unknown scenario "other"`)
}
