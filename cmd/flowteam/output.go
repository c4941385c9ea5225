package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
)

// runOutput is what "flowteam run" prints: with --output json, exactly this object.
type runOutput struct {
	Instance string `json:"instance"`
	Graph    string `json:"graph"`
	Status   string `json:"status"`
	// Reason is present when the run was suspended (possibly "").
	Reason *string `json:"reason,omitempty"`
	Steps  int     `json:"steps"`
	// Vars holds every variable that can be written as JSON.
	Vars map[string]any `json:"vars"`
	// Unprintable names the variables left out of Vars because their values cannot be
	// written as JSON (a Go func or channel a task stored, a NaN); absent when none.
	Unprintable []string          `json:"unprintable,omitempty"`
	Last        map[string]string `json:"last"`
	// Frontier lists the pending "callpath:node" entries when the run did not complete.
	Frontier *[]string `json:"frontier,omitempty"`
	Error    *runError `json:"error"`
	// Errors lists the instance's execution error records, recoverable and fatal.
	Errors []flow.ExecutionError `json:"errors"`
}

// runError is the error that ended a failed run.
type runError struct {
	Code    string `json:"code"`
	Node    string `json:"node"`
	Graph   string `json:"graph"`
	Message string `json:"message"`
}

// newRunOutput builds the output of a run's result with its variables vars, redacted
// with red (see redactOutput): the output often lands in a log.
func newRunOutput(res *flow.Result, vars map[string]any, red *redact.Redactor) *runOutput {
	out := &runOutput{
		Instance: res.Instance, Graph: res.Graph, Status: string(res.Status), Steps: res.Steps,
		Vars: make(map[string]any, len(vars)), Last: res.Last(),
	}
	if out.Last == nil {
		out.Last = map[string]string{}
	}
	out.Errors = flow.ExecutionErrorsOf(vars[flow.DefaultErrorKey])
	if out.Errors == nil {
		out.Errors = []flow.ExecutionError{}
	}
	for k, v := range vars {
		if strings.HasPrefix(k, "flow.") {
			continue // the engine's own keys: errors are listed under "errors"
		}
		if printable(v) {
			out.Vars[k] = v
		} else {
			out.Unprintable = append(out.Unprintable, k)
		}
	}
	slices.Sort(out.Unprintable)
	if res.Status == flow.StatusSuspended {
		out.Reason = &res.Reason
	}
	if res.Status != flow.StatusCompleted {
		pending := []string{}
		if res.Frontier != nil {
			pending = res.Frontier.Pending()
		}
		out.Frontier = &pending
	}
	if res.Err != nil {
		out.Error = newRunError(res.Err)
	}
	out.redactOutput(red, vars)
	return out
}

func newRunError(err error) *runError {
	var ne *flow.NodeError
	if errors.As(err, &ne) {
		msg := ne.Error()
		if ne.Err != nil {
			msg = flow.ToStructured(ne).Message // the cause, without the code again
		}
		return &runError{Code: ne.Code, Node: ne.Node, Graph: ne.Graph, Message: msg}
	}
	re := &runError{Code: "run_failed", Message: err.Error()}
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) && coded.ErrorCode() != "" {
		re.Code = coded.ErrorCode()
	}
	return re
}

// printable reports whether v can be written as JSON. A MarshalJSON that panics makes
// the value unprintable rather than ending the command.
func printable(v any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_, err := json.Marshal(v)
	return err == nil
}

func (o *runOutput) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(o)
}

// writeText writes a short human summary.
func (o *runOutput) writeText(w io.Writer) error {
	var b strings.Builder
	prep := "after"
	if o.Status == string(flow.StatusCompleted) {
		prep = "in"
	}
	steps := "steps"
	if o.Steps == 1 {
		steps = "step"
	}
	fmt.Fprintf(&b, "graph %s: %s %s %d %s (instance %s)\n", o.Graph, o.Status, prep, o.Steps, steps, o.Instance)
	if o.Reason != nil {
		fmt.Fprintf(&b, "reason: %s\n", *o.Reason)
	}
	if o.Error != nil {
		where := ""
		if o.Error.Node != "" {
			where = fmt.Sprintf(" at node %q in graph %q", o.Error.Node, o.Error.Graph)
		}
		fmt.Fprintf(&b, "error: %s%s: %s\n", o.Error.Code, where, o.Error.Message)
	}
	if len(o.Vars)+len(o.Unprintable) > 0 {
		b.WriteString("vars:\n")
		keys := slices.Sorted(maps.Keys(o.Vars))
		width := padWidth(append(keys, o.Unprintable...))
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, k, compactJSON(o.Vars[k]))
		}
		for _, k := range o.Unprintable {
			fmt.Fprintf(&b, "  %-*s  (not printable)\n", width, k)
		}
	}
	o.writeTextErrors(&b)
	if len(o.Last) > 0 {
		b.WriteString("last nodes:\n")
		paths := slices.Sorted(maps.Keys(o.Last))
		width := padWidth(paths)
		for _, p := range paths {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, p, o.Last[p])
		}
	}
	if o.Frontier != nil && len(*o.Frontier) > 0 {
		fmt.Fprintf(&b, "pending: %s\n", strings.Join(*o.Frontier, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTextErrors lists the execution error records other than the one the error line
// shows already: a run that completed despite a recovered node or a failed branch
// (continue policy) must not read as clean.
func (o *runOutput) writeTextErrors(b *strings.Builder) {
	var recs []flow.ExecutionError
	for _, e := range o.Errors {
		if o.Error != nil && e.Severity == flow.Fatal && e.NodeID == o.Error.Node && e.Graph == o.Error.Graph &&
			e.Error.Code == o.Error.Code {
			continue
		}
		recs = append(recs, e)
	}
	if len(recs) == 0 {
		return
	}
	b.WriteString("errors:\n")
	width := 0
	for _, e := range recs {
		width = max(width, len(e.Severity))
	}
	for _, e := range recs {
		fmt.Fprintf(b, "  %-*s  node %q in graph %q (branch %s, step %d): %s: %s", width, e.Severity, e.NodeID, e.Graph,
			e.Branch, e.Step, e.Error.Code, auditOneLine(e.Error.Message))
		if e.Goto != "" {
			fmt.Fprintf(b, ", continued at %q", e.Goto)
		}
		b.WriteByte('\n')
	}
}

// maxPad is the widest a first column of text output is padded to. A longer value (a
// deep call path, a long variable name) is printed as it is, followed by the column's
// gap, and does not widen the column: one such value would otherwise push every other
// line's second column far to the right.
const maxPad = 40

// padWidth returns the width the first column pads its values to: the widest of them
// not longer than maxPad.
func padWidth(values []string) int {
	width := 0
	for _, v := range values {
		if n := len(v); n <= maxPad {
			width = max(width, n)
		}
	}
	return width
}

// writeTable writes rows as columns two spaces apart: the first column left-aligned
// and padded to padWidth, the others right-aligned to their widest value (numbers,
// durations). No line ends in spaces.
func writeTable(w io.Writer, rows [][]string) error {
	var first []string
	var widths []int
	for _, r := range rows {
		first = append(first, r[0])
		for i := 1; i < len(r); i++ {
			if i >= len(widths) {
				widths = append(widths, make([]int, i+1-len(widths))...)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	pad := padWidth(first)
	var b, line strings.Builder
	for _, r := range rows {
		line.Reset()
		line.WriteString(r[0])
		line.WriteString(strings.Repeat(" ", max(pad-len(r[0]), 0)))
		for i := 1; i < len(r); i++ {
			line.WriteString(strings.Repeat(" ", 2+widths[i]-utf8.RuneCountInString(r[i])))
			line.WriteString(r[i])
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// compactJSON writes v as one line of JSON without HTML escaping.
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "(not printable)"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
