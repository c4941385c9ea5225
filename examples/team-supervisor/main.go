// Command team-supervisor runs an editorial desk, a supervisor team (package desk), on
// scripted models: the supervisor sends the researcher to look up facts, the writer to
// write a brief and the reviewer to check it, then finishes.
//
//	start → supervisor → route ─┬→ researcher ─┐
//	           ↑                ├→ writer ─────┤
//	           │                ├→ reviewer ───┤
//	           └────────────────┴──────────────┘   route → end (finish)
//
// The team runs on the flow engine, so the engine's audit interceptor writes every
// node execution to a JSON Lines file (-audit); the team's events stream to the
// terminal as they happen; and the team's graph exports like any graph (-puml writes
// the PlantUML picture, desk.puml beside this file).
//
//	go run ./examples/team-supervisor
//	go run ./examples/team-supervisor -audit /tmp/desk.jsonl -puml examples/team-supervisor/desk.puml
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"

	"github.com/flowteam/flowteam/examples/team-supervisor/desk"
)

// Prompt is the desk's assignment.
const Prompt = "Write a brief on the European e-bike market for our investors."

// ScriptedModels are the scripts of the supervisor and the members: what a model
// would answer, with token usage (think tokens included) so the metrics add up.
func ScriptedModels() desk.Models {
	sup := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("d1", team.RouteToolName, `{"to":"researcher","task":"find the market size and the rules"}`)).
			WithReasoning("Facts first.").WithUsage(testkit.Tokens(210, 30, 12, 0)),
		testkit.CallTools(testkit.ToolCall("d2", team.RouteToolName, `{"to":"writer","task":"write the brief for investors"}`)).
			WithUsage(testkit.Tokens(320, 25, 8, 128)),
		testkit.Reply("reviewer").WithUsage(testkit.Tokens(400, 3, 4, 256)),
		testkit.Reply("The reviewer approved. FINISH").WithUsage(testkit.Tokens(450, 8, 0, 256)),
	)
	res := testkit.NewScriptedModel(
		testkit.CallTools(
			testkit.ToolCall("l1", "lookup", `{"topic":"e-bike market"}`),
			testkit.ToolCall("l2", "lookup", `{"topic":"e-bike regulation"}`),
		).WithUsage(testkit.Tokens(150, 40, 20, 0)),
		testkit.Reply("Market: about 20bn EUR in 2024, +9% a year. Rules: 25 km/h and 250 W, faster bikes are mopeds.").
			WithUsage(testkit.Tokens(260, 35, 0, 0)),
	)
	writer := testkit.NewScriptedModel(testkit.Reply(
		"Europe's e-bike market reached about 20bn EUR in 2024 and grows 9% a year. " +
			"EU rules (25 km/h, 250 W) keep e-bikes out of moped regulation, which keeps buying simple.").
		WithUsage(testkit.Tokens(300, 60, 0, 0)))
	reviewer := testkit.NewScriptedModel(testkit.Reply("APPROVED").WithUsage(testkit.Tokens(280, 2, 15, 0)))
	return desk.Models{Supervisor: sup, Researcher: res, Writer: writer, Reviewer: reviewer}
}

func main() {
	audit := flag.String("audit", filepath.Join(os.TempDir(), "flowteam-desk-audit.jsonl"), "JSON Lines audit file to append to")
	puml := flag.String("puml", "", "write the team graph as PlantUML to this file")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *audit, *puml); err != nil {
		fmt.Fprintln(os.Stderr, "team-supervisor:", err)
		os.Exit(1)
	}
}

// run builds the desk on the scripted models with an audit on its engine, streams one
// run's events to out and prints the answer and the team's trace.
func run(ctx context.Context, out io.Writer, auditPath, pumlPath string) error {
	sink, err := interceptor.OpenJSONL(auditPath)
	if err != nil {
		return err
	}
	defer sink.Close()
	tm, err := desk.New(ScriptedModels(),
		team.WithEngineOptions(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(sink)), 0)))
	if err != nil {
		return err
	}
	if pumlPath != "" {
		if err := WritePlantUML(tm, pumlPath); err != nil {
			return err
		}
	}
	sess := team.NewSession("desk-1")
	for ev, err := range team.Stream(ctx, tm, Prompt, sess) {
		if err != nil {
			return err
		}
		if line := describe(ev); line != "" {
			fmt.Fprintln(out, line)
		}
	}
	tr := tm.Trace(sess.Context())
	fmt.Fprintf(out, "\nanswer: %s\n", tr.FinalAnswer)
	fmt.Fprintf(out, "route: %s (%d turns)\n", strings.Join(tr.Route, " → "), tr.Turns)
	m := tr.Metrics
	fmt.Fprintf(out, "tokens: prompt %d, completion %d (think %d), cached %d, total %d; model calls %d (supervisor %d), tool calls %d\n",
		m.PromptTokens, m.CompletionTokens, m.ThinkTokens, m.CachedTokens, m.TotalTokens, m.ModelCalls, tr.Supervisor.ModelCalls, m.ToolCalls)
	fmt.Fprintf(out, "audit: %s\n", auditPath)
	return nil
}

// WritePlantUML writes the team's graph as a PlantUML state diagram.
func WritePlantUML(tm *team.TeamAgent, path string) error {
	data, err := export.PlantUML(tm.Graph(), export.WithTaskNamer(tm.TaskNamer))
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// describe renders the events worth a line: the team's and the members' starts and
// ends, decisions and tool calls (streamed deltas and model steps are left out).
func describe(ev team.Event) string {
	indent := strings.Repeat("  ", strings.Count(ev.Branch, "/"))
	switch ev.Kind {
	case team.EventTeamStart:
		return fmt.Sprintf("%s▶ team %s %s: %q", indent, ev.Agent, ev.Status, ev.Prompt)
	case team.EventTeamEnd:
		return fmt.Sprintf("%s■ team %s %s", indent, ev.Agent, ev.Status)
	case team.EventDecision:
		d := ev.Route
		if d.Action == team.ActionRoute {
			return strings.TrimRight(fmt.Sprintf("%s  ↳ %s decides: %s (%s) %s", indent, ev.Agent, d.To, d.Source, d.Task), " ")
		}
		return fmt.Sprintf("%s  ↳ %s decides: finish (%s, %s)", indent, ev.Agent, d.Source, d.Reason)
	case team.EventNodeStart:
		return fmt.Sprintf("%s  ▷ %s", indent, ev.Agent)
	case team.EventNodeEnd:
		return fmt.Sprintf("%s  □ %s %s: %s", indent, ev.Agent, ev.Status, oneLine(ev.Content))
	case team.EventToolEnd:
		return fmt.Sprintf("%s    · %s %s → %s", indent, ev.Call.Name, ev.Call.Args, ev.Observation.Status)
	}
	return ""
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 72 {
		s = s[:69] + "..."
	}
	return s
}
