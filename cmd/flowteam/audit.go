package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowteam/flowteam/trace"
)

const auditUsage = `Usage: flowteam audit FILE... [flags]

Reads audit records in JSON Lines (as written by "flowteam run --audit FILE" or the
interceptor package's JSONL sink; "-" reads standard input) and prints them as a
timeline: one block per run, in the order runs first appear, records in sequence order,
sub-graph nodes indented by call depth, with each record's branch and, once a node
ended, its duration, error or suspend reason. A record without "path" is on the path
of its graph, as written for root graphs. Flags may come before or after the files.

Flags:
  --instance ID   only the runs of this flow instance
  --run ID        only this run
  --node ID       only the records of this node: a plain id, or "callpath:node"
  --status S      only records with this status: STARTED, COMPLETED, FAILED,
                  INTERRUPTED or SUSPENDED (any case)
  --summary       instead of the timeline, print per node (qualified by its call
                  path) how many executions ended in each status, their total and mean
                  time, then the runs' outcomes and total time (with --status, any
                  status but STARTED)

Lines that are not audit records (a status other than the five, read in any case,
included) are reported on stderr and skipped, as is a last line cut short by a
process killed while writing it (a warning naming the line); a record seen
twice (same run and sequence number: a file given twice, or lines repeated by a log
rotation) is counted once.

Exit codes: 0 success (also when nothing matches); 2 bad usage or unreadable file.
`

// auditFilter is the parsed selection of "flowteam audit".
type auditFilter struct {
	instance, run, node string
	status              trace.Status
}

// keepRun reports whether a run's records are selected by the run-level filters.
func (f auditFilter) keepRun(run trace.Records) bool {
	if f.run != "" && run[0].RunID != f.run {
		return false
	}
	return f.instance == "" || run[0].InstanceID == f.instance
}

// keep reports whether a record of a selected run is shown.
func (f auditFilter) keep(r *trace.Record) bool {
	if f.node != "" && (r.IsRun() || (r.NodeID != f.node && r.Qualified() != f.node)) {
		return false
	}
	return f.status == "" || r.Status == f.status
}

// cmdAudit implements "flowteam audit". It returns the process exit code.
func cmdAudit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flowteam audit", flag.ContinueOnError)
	var f auditFilter
	var status string
	fs.StringVar(&f.instance, "instance", "", "")
	fs.StringVar(&f.run, "run", "", "")
	fs.StringVar(&f.node, "node", "", "")
	fs.StringVar(&status, "status", "", "")
	summary := fs.Bool("summary", false, "")
	files, help, err := parseCommandLine(fs, args)
	if err == nil {
		err = checkNotEmpty(fs, "instance", "run", "node", "status")
	}
	switch {
	case help:
		fmt.Fprint(stdout, auditUsage)
		return exitOK
	case err == nil && len(files) == 0:
		err = errors.New("no audit file given")
	case err == nil && status != "":
		f.status = trace.Status(strings.ToUpper(status))
		if !knownStatus(f.status) {
			err = fmt.Errorf("--status must be STARTED, COMPLETED, FAILED, INTERRUPTED or SUSPENDED, not %q", status)
		}
	}
	if err == nil && *summary && f.status == trace.Started {
		err = errors.New("--summary counts executions by how they ended: --status STARTED would select none")
	}
	if err != nil {
		return usageError(stderr, "audit", err)
	}

	var all trace.Records
	for _, name := range files {
		recs, err := readAudit(name, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "flowteam audit: %v\n", err)
			return exitUsage
		}
		all = append(all, recs...)
	}
	runs, dups := auditRuns(all)
	if dups > 0 {
		fmt.Fprintf(stderr, "flowteam audit: skipped %d duplicate %s (a run's sequence number seen twice)\n",
			dups, plural(dups, "record"))
	}
	selected := runs[:0]
	for _, run := range runs {
		if f.keepRun(run) {
			selected = append(selected, run)
		}
	}
	if *summary {
		err = writeAuditSummary(stdout, selected, f)
	} else {
		err = writeAuditTimeline(stdout, stderr, selected, f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "flowteam audit: write output: %v\n", err)
		return exitFail
	}
	return exitOK
}

// auditRuns splits records into runs, in order of first appearance, each sorted by
// sequence number. A record whose run and sequence number were seen already (a file
// given twice, lines repeated by a copying log rotation) is left out; dups counts them.
func auditRuns(all trace.Records) (runs []trace.Records, dups int) {
	sorted := all.Sorted()
	kept := sorted[:0]
	for _, r := range sorted {
		if n := len(kept); n > 0 && r.Seq > 0 && r.Seq == kept[n-1].Seq && r.RunID == kept[n-1].RunID {
			dups++
			continue
		}
		kept = append(kept, r)
	}
	sorted = kept
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].RunID == sorted[i].RunID {
			j++
		}
		runs = append(runs, sorted[i:j])
		i = j
	}
	return runs, dups
}

// auditRunHeader describes a run from its run records (or its first record when the file
// holds only part of it).
func auditRunHeader(run trace.Records) string {
	if isTaskLog(run) {
		return taskLogHeader(run)
	}
	first, last := runEnds(run)
	// The run's graph is the root of the call path: when the file lost the run's
	// first records, the first one left may be a sub-graph's.
	root, _, _ := strings.Cut(first.Path, "/")
	if root == "" {
		root = first.GraphID
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run %s  instance %s  graph %s", auditID(first.RunID), auditOrDash(auditID(first.InstanceID)), auditID(root))
	if first.IsRun() {
		b.WriteString("  started " + first.Time.UTC().Format(time.RFC3339Nano))
	}
	if first.Resumed {
		b.WriteString("  (resumed)")
	}
	if last.IsRun() && last.Status.Terminal() {
		fmt.Fprintf(&b, "  -> %s in %s", last.Status, auditDuration(last.Duration))
		if last.Error != nil {
			fmt.Fprintf(&b, "  error %s: %s", last.Error.Code, auditOneLine(last.Error.Message))
		}
		if last.Reason != "" {
			fmt.Fprintf(&b, "  reason: %s", auditOneLine(last.Reason))
		}
	} else {
		b.WriteString("  (no end record: still running, or the writer stopped)")
	}
	return b.String()
}

// runEnds returns the first and last records of a run that are numbered. Orphan
// records (Seq 0: events after the run closed) sort first in their run and say nothing
// of its start or end.
func runEnds(run trace.Records) (first, last trace.Record) {
	first, last = run[0], run[len(run)-1]
	if i := slices.IndexFunc(run, func(r trace.Record) bool { return r.Seq != 0 }); i >= 0 {
		first = run[i]
	}
	for i := len(run) - 1; i >= 0; i-- {
		if run[i].Seq != 0 {
			last = run[i]
			break
		}
	}
	return first, last
}

func auditOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeAuditTimeline prints each selected run's header and its selected records.
func writeAuditTimeline(w, stderr io.Writer, runs []trace.Records, f auditFilter) error {
	bw := bufio.NewWriter(w)
	shown := 0
	for _, run := range runs {
		var lines []string
		for i := range run {
			r := &run[i]
			if r.IsRun() || !f.keep(r) {
				continue
			}
			lines = append(lines, auditLine(r))
		}
		if len(lines) == 0 && (f.node != "" || f.status != "") {
			continue
		}
		if shown > 0 {
			bw.WriteByte('\n')
		}
		shown++
		bw.WriteString(auditRunHeader(run))
		bw.WriteByte('\n')
		for _, l := range lines {
			bw.WriteString(l)
			bw.WriteByte('\n')
		}
	}
	if shown == 0 {
		fmt.Fprintln(stderr, "flowteam audit: no matching records")
	}
	return bw.Flush()
}

// auditLine formats one node record:
//
//	15:04:05.000123  #12  COMPLETED    review (activity)  [main/p:a]  1.2ms
func auditLine(r *trace.Record) string {
	if note := taskNote(r); note != "" {
		return fmt.Sprintf("  %s %5s  %-11s  %s  %s", r.Time.UTC().Format("15:04:05.000000"), "#0", r.Status, auditID(r.NodeID), note)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %s %5s  %-11s  %s%s", r.Time.UTC().Format("15:04:05.000000"), fmt.Sprintf("#%d", r.Seq), r.Status,
		strings.Repeat("    ", r.Depth()), auditID(r.NodeID))
	if r.NodeType != "" {
		fmt.Fprintf(&b, " (%s", r.NodeType)
		if r.Depth() > 0 {
			fmt.Fprintf(&b, " in %s", auditID(r.GraphID))
		}
		b.WriteByte(')')
	}
	if r.Title != "" {
		fmt.Fprintf(&b, " %q", r.Title)
	}
	fmt.Fprintf(&b, "  [%s]", auditID(r.BranchID))
	if r.Status.Terminal() {
		b.WriteString("  " + auditDuration(r.Duration))
	}
	if r.Agent != "" {
		b.WriteString("  agent=" + auditID(r.Agent))
	}
	if r.Arrivals > 0 {
		fmt.Fprintf(&b, "  arrivals=%d", r.Arrivals)
	}
	if r.Attempt > 1 {
		fmt.Fprintf(&b, "  attempt=%d", r.Attempt)
	}
	if r.Error != nil {
		fmt.Fprintf(&b, "  error %s: %s", r.Error.Code, auditOneLine(r.Error.Message))
	}
	if r.Retrying {
		b.WriteString("  (retrying)")
	}
	switch {
	case r.Recovered && r.Goto != "":
		b.WriteString("  (recovered, to " + auditOneLine(r.Goto) + ")")
	case r.Recovered:
		b.WriteString("  (recovered)")
	}
	if r.Reason != "" {
		b.WriteString("  reason: " + auditOneLine(r.Reason))
	}
	return b.String()
}

// auditOneLine keeps the first line of a message, marking what it cut.
func auditOneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// auditDuration prints a duration rounded for reading (four or five significant digits).
func auditDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond).String()
	}
	return d.String()
}

// auditNodeSummary is the summary line of one node.
type auditNodeSummary struct {
	id                                           string
	completed, failed, interrupted, suspended, n int
	total                                        time.Duration
}

// auditSummary is what "flowteam audit --summary" prints: the node executions of the
// selected runs by how they ended, and the runs' outcomes.
type auditSummary struct {
	order   []string // node ids, qualified by call path, in order of first appearance
	byNode  map[string]*auditNodeSummary
	byRun   map[trace.Status]int // runs by status; "UNFINISHED" for those without an end record
	runTime time.Duration
	nRuns   int
}

// summarizeAudit counts the executions of the records f keeps, per node and per run.
func summarizeAudit(runs []trace.Records, f auditFilter) *auditSummary {
	sum := &auditSummary{byNode: map[string]*auditNodeSummary{}, byRun: map[trace.Status]int{}}
	for _, run := range runs {
		if isTaskLog(run) {
			continue // claims and submits, not node executions
		}
		matched := false
		first, _ := runEnds(run)
		for i := range run {
			r := &run[i]
			// An orphan repeats an execution its run already ended (as trace's
			// Records.Metrics counts them): counted only in a run with no other record.
			if r.IsRun() || !r.Status.Terminal() || !f.keep(r) || (r.Seq == 0 && first.Seq != 0) {
				continue
			}
			matched = true
			sum.add(r)
		}
		if !matched && (f.node != "" || f.status != "") {
			continue
		}
		sum.nRuns++
		if _, last := runEnds(run); last.IsRun() && last.Status.Terminal() {
			sum.byRun[last.Status]++
			sum.runTime += last.Duration
		} else {
			sum.byRun["UNFINISHED"]++
		}
	}
	return sum
}

// add counts the node execution that r ended.
func (sum *auditSummary) add(r *trace.Record) {
	id := auditID(r.Qualified())
	s := sum.byNode[id]
	if s == nil {
		s = &auditNodeSummary{id: id}
		sum.byNode[id] = s
		sum.order = append(sum.order, id)
	}
	s.n++
	s.total += r.Duration
	switch r.Status {
	case trace.Completed:
		s.completed++
	case trace.Failed:
		s.failed++
	case trace.Interrupted:
		s.interrupted++
	case trace.Suspended:
		s.suspended++
	}
}

// writeAuditSummary prints, per node (qualified by its call path, in order of first
// appearance), the executions that ended in each status and their total time, then a
// line per run status. Node ids longer than 40 characters do not widen the column.
func writeAuditSummary(w io.Writer, runs []trace.Records, f auditFilter) error {
	sum := summarizeAudit(runs, f)
	rows := [][]string{{"NODE", "EXECS", "COMPLETED", "FAILED", "INTERRUPTED", "SUSPENDED", "TOTAL TIME", "MEAN"}}
	var total auditNodeSummary
	for _, id := range sum.order {
		s := sum.byNode[id]
		rows = append(rows, []string{s.id, strconv.Itoa(s.n), strconv.Itoa(s.completed), strconv.Itoa(s.failed),
			strconv.Itoa(s.interrupted), strconv.Itoa(s.suspended), auditDuration(s.total), auditDuration(s.total / time.Duration(s.n))})
		total.n += s.n
		total.completed += s.completed
		total.failed += s.failed
		total.interrupted += s.interrupted
		total.suspended += s.suspended
		total.total += s.total
	}
	rows = append(rows, []string{"(all nodes)", strconv.Itoa(total.n), strconv.Itoa(total.completed), strconv.Itoa(total.failed),
		strconv.Itoa(total.interrupted), strconv.Itoa(total.suspended), auditDuration(total.total), ""})
	if err := writeTable(w, rows); err != nil {
		return err
	}
	var parts []string
	for _, st := range []trace.Status{trace.Completed, trace.Failed, trace.Suspended, trace.Interrupted, "UNFINISHED"} {
		if n := sum.byRun[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ToLower(string(st))))
		}
	}
	line := fmt.Sprintf("\n%d %s", sum.nRuns, plural(sum.nRuns, "run"))
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	_, err := fmt.Fprintf(w, "%s; total run time %s\n", line, auditDuration(sum.runTime))
	return err
}
