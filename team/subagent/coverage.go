package subagent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
)

// CoverageClass is how well a coordinator's sub-task is covered.
type CoverageClass string

// Coverage classes.
const (
	// CoverageWellSupported: the sub-agent searched and found results.
	CoverageWellSupported CoverageClass = "well_supported"
	// CoverageValidEmpty: the sub-agent searched and found nothing, and nothing it did
	// contradicts that: "none exist" is a finding.
	CoverageValidEmpty CoverageClass = "valid_empty"
	// CoverageGap: the sub-task is not covered; GapReason says why.
	CoverageGap CoverageClass = "gap"
)

// GapReason says why a sub-task is a gap.
type GapReason string

// Gap reasons.
const (
	// GapAccessFailure: the sub-agent reported an access failure (timeout,
	// rate_limited, auth_denied, ...) it could not resolve.
	GapAccessFailure GapReason = "access_failure"
	// GapSilentFailure: the sub-agent reported an empty success, but tool calls of its
	// run failed and no identical call succeeded afterwards, or its own report shows
	// every attempt at a query failing: it could not look.
	GapSilentFailure GapReason = "silent_failure"
	// GapAgentFailure: the sub-agent failed without a structured report.
	GapAgentFailure GapReason = "agent_failure"
	// GapInvalidReport: the report contradicts itself (see SubResult.Validate).
	GapInvalidReport GapReason = "invalid_report"
	// GapNoReport: there is no report (the sub-agent did not run, or answered in free
	// text).
	GapNoReport GapReason = "no_report"
)

// SubTask is one sub-task as a coordinator sees it once its sub-agent ran: the report,
// and the evidence of what happened, which the report is checked against.
type SubTask struct {
	// Name identifies the sub-task; GatherSubTasks uses it as the sub-agent's name
	// and node id.
	Name string
	// Title is the name a report shows (default Name).
	Title string
	// Result is the sub-agent's report; nil when it reported nothing structured.
	Result *SubResult
	// Answer is the sub-agent's free-text answer when it gave no structured report.
	Answer string
	// Calls are the tool calls made during its run, in order (from RecordToolCalls or
	// the agent's ReActTrace).
	Calls []ToolCallRecord
	// Failure is the failure of its node, if it failed (from the execution error
	// records).
	Failure *team.Error
}

// GatherSubTasks collects, after the sub-agents ran (after the join), what a
// coordinator needs to write coverage notes. For each name (the sub-agent's name and
// its node's id) it reads from c:
//
//   - the report: the SubResult at ResultKey(name), else the agent's answer at
//     AnswerKey(name) parsed as a SubResult (a model-driven sub-agent answering in the
//     seeds' JSON format), else the answer as free text;
//   - the tool calls of its run: those RecordToolCalls kept, else those of the
//     ReActTrace the session keeps for the agent;
//   - its node's failure: the last execution error record of the node (under the
//     context's error key, flow.Context.ErrorKey, which keeps the records of every
//     evaluation of the instance: a failure of an earlier evaluation counts against
//     an empty success, which errs on the side of a gap).
//
// Everything it reads is plain data in the context, so it works on a context restored
// from a session snapshot in another process; but under an engine with
// flow.WithErrorKey, a restored context knows that key only once the engine has run it
// (flow.Context.ErrorKey), so before that the node failures are looked for under
// flow.DefaultErrorKey.
func GatherSubTasks(c *flow.Context, names ...string) []SubTask {
	errs := flow.ExecutionErrors(c, c.ErrorKey())
	sess := team.SessionOf(c)
	out := make([]SubTask, 0, len(names))
	for _, name := range names {
		t := SubTask{Name: name, Title: name}
		if r, ok := c.Get(ResultKey(name)); ok {
			if res, ok := SubResultOf(r); ok {
				t.Result = &res
			}
		}
		if t.Result == nil {
			if a, ok := c.GetString(team.AnswerKey(name)); ok {
				if res, err := ParseSubResult(a); err == nil {
					t.Result = &res
				} else {
					t.Answer = a
				}
			}
		}
		if _, ok := c.Get(toolCallsKey(name)); ok {
			t.Calls = ToolCallsIn(c, name)
		} else {
			t.Calls = ToolCallsOfTrace(sess.ReActTrace(name))
		}
		for i := len(errs) - 1; i >= 0; i-- {
			if errs[i].NodeID != name {
				continue
			}
			se := errs[i].Error
			typ := se.Code
			if typ == "" {
				typ = se.Type
			}
			// A *Error's message as flow records it starts with its type again.
			msg := strings.TrimPrefix(se.Message, typ+": ")
			t.Failure = &team.Error{Type: team.ErrorType(typ), Message: msg, Attempts: errs[i].Attempts}
			break
		}
		out = append(out, t)
	}
	return out
}

// CoverageNote is the coverage of one sub-task: its class, why it is a gap, and the
// facts the sentence in Text is made of.
type CoverageNote struct {
	Task  string        `json:"task"`
	Title string        `json:"title,omitempty"`
	Class CoverageClass `json:"class"`
	Gap   GapReason     `json:"gap,omitempty"`
	// Results counts the results of a success.
	Results int `json:"results"`
	// ErrorType, Retryable, Attempts, Attempted, PartialResults and Alternatives
	// describe an access failure.
	ErrorType      team.ErrorType `json:"error_type,omitempty"`
	Retryable      bool           `json:"retryable,omitempty"`
	Attempts       int            `json:"attempts,omitempty"`
	Attempted      []QueryAttempt `json:"attempted,omitempty"`
	PartialResults int            `json:"partial_results,omitempty"`
	Alternatives   []string       `json:"alternatives,omitempty"`
	// FailedCalls are the failed tool calls of the run that no later identical call
	// resolved: for an empty success they make it a gap, for a success with results a
	// caveat.
	FailedCalls []ToolCallRecord `json:"failed_calls,omitempty"`
	// Text is the note's sentence (without the title).
	Text string `json:"text"`
}

// String returns "Title: text".
func (n CoverageNote) String() string {
	title := n.Title
	if title == "" {
		title = n.Task
	}
	return title + ": " + n.Text
}

// Coverage is the coverage notes of a coordinator's sub-tasks, in the sub-tasks'
// order.
type Coverage struct {
	Notes []CoverageNote `json:"notes"`
}

// NewCoverage classifies each sub-task (see CoverageClass and GapReason) and writes
// its note. A success with no results is a valid empty answer only when no failed tool
// call of the run contradicts it; otherwise it is a gap that says what failed and never
// claims absence.
func NewCoverage(tasks ...SubTask) Coverage {
	c := Coverage{Notes: make([]CoverageNote, 0, len(tasks))}
	for _, t := range tasks {
		c.Notes = append(c.Notes, classify(t))
	}
	return c
}

// Note returns the note of the named sub-task.
func (c Coverage) Note(task string) (CoverageNote, bool) {
	for _, n := range c.Notes {
		if n.Task == task {
			return n, true
		}
	}
	return CoverageNote{}, false
}

// Gaps returns the notes of the sub-tasks that are gaps.
func (c Coverage) Gaps() []CoverageNote {
	var out []CoverageNote
	for _, n := range c.Notes {
		if n.Class == CoverageGap {
			out = append(out, n)
		}
	}
	return out
}

// Complete reports whether no sub-task is a gap.
func (c Coverage) Complete() bool { return len(c.Gaps()) == 0 }

// Markdown renders the notes as the section a report ends with:
//
//	## Coverage notes
//	- Market size: well supported — 3 results (market_reports)
//	- Regulation: searched, none exist — regulation_db returned no results for "..."
//	- Patents: gap — timeout after 3 attempts (patent_db: "..."); 2 partial results; ...
func (c Coverage) Markdown() string {
	var b strings.Builder
	b.WriteString("## Coverage notes\n")
	for _, n := range c.Notes {
		b.WriteString("- ")
		b.WriteString(n.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func classify(t SubTask) CoverageNote {
	n := CoverageNote{Task: t.Name, Title: t.Title, FailedCalls: unresolvedFailures(t.Calls)}
	if n.Title == "" {
		n.Title = t.Name
	}
	r := t.Result
	switch {
	case r == nil && t.Failure != nil:
		n.Class, n.Gap = CoverageGap, GapAgentFailure
		n.ErrorType, n.Attempts = t.Failure.Type, t.Failure.Attempts
		n.Text = "gap — the sub-agent failed without a report: " + t.Failure.Error()
	case r == nil && t.Answer != "":
		n.Class, n.Gap = CoverageGap, GapNoReport
		n.Text = "gap — the sub-agent answered in free text without a structured result; nothing it says about absence can be relied on"
	case r == nil:
		n.Class, n.Gap = CoverageGap, GapNoReport
		n.Text = "gap — no report (the sub-agent did not run or did not report)"
	case r.Validate() != nil:
		n.Class, n.Gap = CoverageGap, GapInvalidReport
		n.Text = "gap — inconsistent report: " + strings.TrimPrefix(r.Validate().Error(), "sub-result: ")
	case r.OK() && len(r.Results) > 0:
		n.Class, n.Results, n.Attempted, n.Attempts = CoverageWellSupported, len(r.Results), r.Attempted, r.Attempts()
		n.Text = "well supported — " + plural(len(r.Results), "result") + sourcesOf(r.Attempted)
		if a := r.Attempts(); a > len(r.Attempted) {
			n.Text += fmt.Sprintf(" after %d attempts", a)
		}
		if len(n.FailedCalls) > 0 {
			n.Text += fmt.Sprintf("; caveat: %s failed (%s), so coverage may be incomplete",
				plural(len(n.FailedCalls), "tool call"), failureSummary(n.FailedCalls))
		}
	case r.OK() && len(unansweredQueries(r.Attempted)) > 0:
		// The report contradicts itself: no attempt at a query got an answer, so
		// its source was not searched, whatever the status says.
		qs := unansweredQueries(r.Attempted)
		last := qs[len(qs)-1].Outcomes
		n.Class, n.Gap, n.Attempted = CoverageGap, GapSilentFailure, r.Attempted
		n.ErrorType, n.Attempts = last[len(last)-1].ErrorType, r.Attempts()
		var parts []string
		for _, q := range qs {
			parts = append(parts, q.label()+" ("+string(q.Outcomes[len(q.Outcomes)-1].ErrorType)+")")
		}
		n.Text = "gap — reported an empty success, but every attempt failed for " + strings.Join(parts, "; ") +
			": it could not look, so absence is not established"
	case r.OK() && (len(n.FailedCalls) > 0 || t.Failure != nil):
		// The anti-pattern the seeds warn about: an error swallowed into an empty
		// success. The note says what failed and never claims absence.
		n.Class, n.Gap, n.Attempted = CoverageGap, GapSilentFailure, r.Attempted
		if len(n.FailedCalls) > 0 {
			n.ErrorType = n.FailedCalls[len(n.FailedCalls)-1].Error.Type
			n.Text = fmt.Sprintf("gap — reported an empty success, but %s failed (%s) with no successful retry: "+
				"it could not look, so absence is not established",
				plural(len(n.FailedCalls), "tool call"), failureSummary(n.FailedCalls))
		} else {
			n.ErrorType = t.Failure.Type
			n.Text = "gap — reported an empty success, but its node failed (" + t.Failure.Error() +
				"), so absence is not established"
		}
	case r.OK():
		n.Class, n.Attempted, n.Attempts = CoverageValidEmpty, r.Attempted, r.Attempts()
		n.Text = "searched, none exist — " + emptySearches(r.Attempted)
	default:
		n.Class, n.Gap = CoverageGap, GapAccessFailure
		n.ErrorType, n.Retryable, n.Attempts, n.Attempted = r.ErrorType, r.Retryable, r.Attempts(), r.Attempted
		n.PartialResults, n.Alternatives = len(r.PartialResults), slices.Clone(r.Alternatives)
		n.FailedCalls = nil // reported: Attempted says it all
		n.Text = accessGap(r)
	}
	return n
}

// accessGap writes the note of an access failure: what failed, after how many
// attempts, on which query and source, the partial results, and what to try instead.
func accessGap(r *SubResult) string {
	var b strings.Builder
	b.WriteString("gap — ")
	b.WriteString(string(r.ErrorType))
	if a := r.Attempts(); a > 0 {
		b.WriteString(" after " + plural(a, "attempt"))
	}
	if len(r.Attempted) > 0 {
		var qs []string
		for _, a := range r.Attempted {
			qs = append(qs, a.label())
		}
		b.WriteString(" (" + strings.Join(qs, "; ") + ")")
	}
	if p := len(r.PartialResults); p > 0 {
		b.WriteString(", " + plural(p, "partial result"))
	} else {
		b.WriteString(", no partial results")
	}
	if r.Retryable {
		b.WriteString(", retryable")
	} else {
		b.WriteString(", not retryable")
	}
	if len(r.Alternatives) > 0 {
		b.WriteString("; alternatives: " + strings.Join(r.Alternatives, "; "))
	}
	return b.String()
}

// label names the query and its source: `patent_db: "solid-state battery patents"`.
func (a QueryAttempt) label() string {
	if a.Source == "" {
		return strconv.Quote(a.Query)
	}
	return a.Source + ": " + strconv.Quote(a.Query)
}

// sourcesOf names the sources a success came from: " (a, b)".
func sourcesOf(as []QueryAttempt) string {
	var srcs []string
	for _, a := range as {
		if a.Source != "" && !slices.Contains(srcs, a.Source) {
			srcs = append(srcs, a.Source)
		}
	}
	if len(srcs) == 0 {
		return ""
	}
	return " (" + strings.Join(srcs, ", ") + ")"
}

// emptySearches says which searches came back empty.
func emptySearches(as []QueryAttempt) string {
	switch len(as) {
	case 0:
		return "the sub-agent searched and reported no results"
	case 1:
		src := as[0].Source
		if src == "" {
			src = "the source"
		}
		return fmt.Sprintf("%s returned no results for %q", src, as[0].Query)
	}
	return plural(len(as), "search") + " returned no results"
}

// failureSummary lists the failed tools and error types: "patent_search:
// source_unavailable".
func failureSummary(calls []ToolCallRecord) string {
	var parts []string
	for _, c := range calls {
		if p := c.failure(); !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

// unansweredQueries returns the attempted queries whose recorded outcomes are all
// failures (a query without outcomes says nothing either way).
func unansweredQueries(as []QueryAttempt) []QueryAttempt {
	var out []QueryAttempt
	for _, a := range as {
		if len(a.Outcomes) > 0 && !slices.ContainsFunc(a.Outcomes, func(o AttemptOutcome) bool { return o.Status == team.StatusSuccess }) {
			out = append(out, a)
		}
	}
	return out
}

// unresolvedFailures returns the failed calls that no later call of the same tool with
// the same arguments answered successfully. A retry that worked resolves a failure;
// a call with other arguments does not (it searched for something else).
func unresolvedFailures(calls []ToolCallRecord) []ToolCallRecord {
	var out []ToolCallRecord
	for i, c := range calls {
		if !c.Failed() {
			continue
		}
		resolved := slices.ContainsFunc(calls[i+1:], func(l ToolCallRecord) bool {
			return !l.Failed() && l.Tool == c.Tool && sameArgs(l.Args, c.Args)
		})
		if !resolved {
			if c.Error == nil {
				c.Error = &team.Error{Type: team.TypeToolFailed}
			}
			out = append(out, c)
		}
	}
	return out
}
