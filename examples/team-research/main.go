// Command team-research is the seeds' research coordinator: three sub-agents search
// concurrently (market size, regulation, patents), each retrying transient failures
// locally and reporting a structured result; the coordinator goes on with what
// succeeded and ends its report with coverage notes that tell "searched, none exist"
// from "could not look".
//
//	start -> fork (parallel, branchPolicy continue) -> market, regulation, patents -> join -> coordinate -> end
//
// Scenario "timeout": market size is well supported, regulation was searched and
// holds nothing (a valid empty result), patents times out after 3 attempts with 2
// partial results: a gap, with what was tried and the alternatives.
//
// Scenario "silent": the patents sub-agent (a ReAct agent on a scripted model) sees
// both its searches fail and reports an empty success anyway. The flow sees a
// completed node; the coordinator checks the report against the tool calls of the
// sub-agent's run (kept by subagent.RecordToolCalls in the FlowContext, and on the node's
// audit record by subagent.ToolCallAttrs) and writes a gap, never "no patents".
//
// Everything is deterministic (Go search functions and testkit's scripted model);
// main_test.go runs both scenarios.
//
//	go run ./examples/team-research
//	go run ./examples/team-research -scenario silent
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

func main() {
	scenario := flag.String("scenario", ScenarioTimeout, "timeout or silent")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *scenario, Options{Backoff: 20 * time.Millisecond}); err != nil {
		fmt.Fprintln(os.Stderr, "team-research:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, scenario string, opts Options) error {
	out, err := Run(ctx, scenario, opts)
	if err != nil {
		return err
	}
	fmt.Fprint(w, out.Report)
	// What the audit shows for the sub-agents' nodes.
	fmt.Fprintln(w, "\nAudit of the sub-agent nodes:")
	for _, t := range SubTasks {
		for _, r := range out.Audit {
			if r.NodeID != t.Name || r.Status == "STARTED" {
				continue
			}
			line := fmt.Sprintf("  %-10s %-9s tool calls: %v, failed: %v", t.Name, r.Status, r.Attrs["tool_calls"], r.Attrs["failed_tool_calls"])
			if errs, ok := r.Attrs["tool_errors"].([]any); ok {
				line += fmt.Sprintf(" (%s)", strings.Trim(strings.Join(dedupe(errs), ", "), " "))
			}
			if r.Error != nil {
				line += ", node error: " + r.Error.Code
			}
			fmt.Fprintln(w, line)
		}
	}
	return nil
}

func dedupe(xs []any) []string {
	var out []string
	seen := map[string]int{}
	for _, x := range xs {
		s := fmt.Sprint(x)
		if seen[s] == 0 {
			out = append(out, s)
		}
		seen[s]++
	}
	for i, s := range out {
		if n := seen[s]; n > 1 {
			out[i] = fmt.Sprintf("%s ×%d", s, n)
		}
	}
	return out
}
