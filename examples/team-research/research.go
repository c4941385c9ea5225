package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/subagent"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/trace"
)

// Scenarios.
const (
	// ScenarioTimeout: the patent database times out on every attempt, after sending
	// two results.
	ScenarioTimeout = "timeout"
	// ScenarioSilent: the patents sub-agent is a model-driven agent whose two searches
	// fail and which then reports an empty success: the anti-pattern the coverage
	// notes must catch.
	ScenarioSilent = "silent"
)

// SubTask describes one sub-task of the research: the sub-agent's name (also its node
// id), the title the report shows and the query it is given.
type SubTask struct {
	Name, Title, Query string
}

// SubTasks are the research's three sub-tasks, in report order.
var SubTasks = []SubTask{
	{"market", "Market size", "solid-state battery market size 2025"},
	{"regulation", "Regulation", "solid-state battery regulation after 2024"},
	{"patents", "Patents", "solid-state battery patents 2024"},
}

// Finding is one result item of any sub-agent: a claim with its source, or a
// document with its link.
type Finding struct {
	Claim  string `json:"claim,omitempty"`
	Source string `json:"source,omitempty"`
	Title  string `json:"title,omitempty"`
	URL    string `json:"url,omitempty"`
}

// String is how a finding is cited: its claim and source, or its title and URL.
func (f Finding) String() string {
	if f.Claim != "" {
		return f.Claim + " (" + f.Source + ")"
	}
	return f.Title + " (" + f.URL + ")"
}

// Options configure a run. Sleep waits between a sub-agent's attempts (default: a
// real sleep); tests pass a recorder so that nothing sleeps.
type Options struct {
	Sleep   func(ctx context.Context, d time.Duration) error
	Backoff time.Duration
}

// Outcome is what a run produced: the report, its coverage notes, the flow result and
// the audit records.
type Outcome struct {
	Report   string
	Coverage subagent.Coverage
	Result   *flow.Result
	Audit    trace.Records
}

// searchAgent is a sub-agent over a deterministic source.
func searchAgent(name, source string, opts Options, search subagent.SearchFunc, alternatives ...string) team.Agent {
	return &subagent.SubAgent{Task: name, Source: source, Search: search, Alternatives: alternatives,
		Retry: flow.RetryPolicy{Max: 3, Backoff: opts.Backoff, MaxBackoff: time.Second, NoJitter: true},
		Sleep: opts.Sleep}
}

func findings(fs ...Finding) subagent.SearchFunc {
	return subagent.Searcher(func(context.Context, string) ([]Finding, error) { return fs, nil })
}

// marketSource answers with three independent estimates.
var marketSource = findings(
	Finding{Claim: "global market about USD 12 bn in 2025", Source: "https://example.org/report-a"},
	Finding{Claim: "global market about USD 11 bn in 2025", Source: "https://example.org/report-b"},
	Finding{Claim: "35% annual growth to 2030", Source: "https://example.org/report-c"},
)

// regulationSource was searched and holds nothing newer than 2024: a valid empty answer.
var regulationSource = findings()

// patentSource sends two results, then times out, every time.
func patentSource(_ context.Context, _ string) ([]Finding, error) {
	return []Finding{
			{Title: "EP4012345 Sulfide solid electrolyte", URL: "https://example.org/ep4012345"},
			{Title: "US11800000 Lithium-metal anode interlayer", URL: "https://example.org/us11800000"},
		},
		team.NewError(team.TypeTimeout, "patent_db gave no answer within 30s")
}

// silentPatents is a model-driven sub-agent on a scripted model: both its searches
// fail (source_unavailable) and it then reports {"status":"success","results":[]}.
func silentPatents() team.Agent {
	search := team.NewTool("patent_search", "Search the patent database",
		nil,
		func(context.Context, struct {
			Query string `json:"query"`
		}) ([]Finding, error) {
			return nil, team.NewError(team.TypeSourceUnavailable, "patent_db returned HTTP 503")
		})
	query := `{"query":"solid-state battery patents 2024"}`
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("p1", "patent_search", query)),
		testkit.CallTools(testkit.ToolCall("p2", "patent_search", query)),
		testkit.Reply(`{"status":"success","results":[]}`),
	)
	a, err := team.NewReActAgent("patents", model, team.WithTools(search),
		team.WithInstruction(`Search patents and answer with {"status":"success","results":[...]}.`))
	if err != nil {
		panic(err) // the definition above is valid
	}
	return a
}

// Agents returns the three sub-agents of a scenario, each wrapped so that the tool
// calls of its run are kept in the FlowContext for the coordinator to check.
func Agents(scenario string, opts Options) ([]team.Agent, error) {
	market := searchAgent("market", "market_reports", opts, marketSource)
	regulation := searchAgent("regulation", "regulation_db", opts, regulationSource)
	var patents team.Agent
	switch scenario {
	case ScenarioTimeout:
		patents = searchAgent("patents", "patent_db", opts, subagent.Searcher(patentSource),
			"use the WIPO search API", "narrow the range to 2024-H2")
	case ScenarioSilent:
		patents = silentPatents()
	default:
		return nil, fmt.Errorf("unknown scenario %q (want %s or %s)", scenario, ScenarioTimeout, ScenarioSilent)
	}
	return []team.Agent{subagent.RecordToolCalls(market), subagent.RecordToolCalls(regulation), subagent.RecordToolCalls(patents)}, nil
}

// Graph fans the sub-tasks out on a parallel gateway whose branch policy is
// "continue" (a failing sub-agent is withdrawn from the join instead of failing the
// run), then the coordinator merges what came back:
//
//	start -> fork -> market, regulation, patents -> join -> coordinate -> end
func Graph() (*flow.Graph, error) {
	s := flow.NewSpec("research")
	s.Title = "Solid-state battery research"
	s.Start("start").LinkTo("fork")
	fork := s.Parallel("fork").SetMeta(flow.MetaBranchPolicy, "continue")
	for _, t := range SubTasks {
		fork.LinkTo(t.Name)
		s.Activity(t.Name).SetTitle(t.Title).SetTask("@"+t.Name).
			SetMeta("agent", t.Name).SetMeta(team.MetaPrompt, t.Query).LinkTo("join")
	}
	s.Parallel("join").LinkTo("coordinate")
	s.Activity("coordinate").SetTitle("merge and write coverage notes").DoFunc(coordinate).LinkTo("end")
	s.End("end")
	return s.Build()
}

// Context variables the coordinator writes.
const (
	VarReport   = "report"
	VarCoverage = "coverage"
)

// coordinate runs after the join: it goes on with whatever succeeded, checks every
// report against the tool calls of its run, and writes the report with its coverage
// notes.
func coordinate(_ context.Context, c *flow.Context, _ *flow.Node) error {
	names := make([]string, len(SubTasks))
	for i, t := range SubTasks {
		names[i] = t.Name
	}
	tasks := subagent.GatherSubTasks(c, names...)
	for i := range tasks {
		tasks[i].Title = SubTasks[i].Title
	}
	cov := subagent.NewCoverage(tasks...)

	var b strings.Builder
	b.WriteString("# Solid-state batteries: research brief\n")
	for i, t := range tasks {
		note := cov.Notes[i]
		fmt.Fprintf(&b, "\n## %s\n", t.Title)
		switch note.Class {
		case subagent.CoverageWellSupported:
			writeFindings(&b, t.Result.Results)
		case subagent.CoverageValidEmpty:
			b.WriteString("Nothing found: the source was searched and holds no matching entries.\n")
		default:
			if t.Result != nil && len(t.Result.PartialResults) > 0 {
				fmt.Fprintf(&b, "Incomplete (%s); partial results only:\n", note.ErrorType)
				writeFindings(&b, t.Result.PartialResults)
			} else {
				b.WriteString("Not covered: the sub-agent could not search (see the coverage notes).\n")
			}
		}
	}
	b.WriteByte('\n')
	b.WriteString(cov.Markdown())
	c.Set(VarReport, b.String())
	c.Set(VarCoverage, cov)
	return nil
}

func writeFindings(b *strings.Builder, items []any) {
	fs, err := subagent.ResultsAs[Finding](items)
	if err != nil {
		fmt.Fprintf(b, "- (%d results that could not be read: %v)\n", len(items), err)
		return
	}
	for _, f := range fs {
		b.WriteString("- " + f.String() + "\n")
	}
}

// Run runs the research for a scenario. The audit keeps, on each sub-agent's node
// record, how many tool calls its run made and which failed.
func Run(ctx context.Context, scenario string, opts Options) (*Outcome, error) {
	agents, err := Agents(scenario, opts)
	if err != nil {
		return nil, err
	}
	g, err := Graph()
	if err != nil {
		return nil, err
	}
	mem := interceptor.NewMemory()
	audit := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithAttrs(subagent.ToolCallAttrs))
	eng := flow.NewEngine(team.WithAgents(agents...), flow.WithInterceptor(audit, 0))
	fc := flow.NewContext("research-" + scenario)
	res, err := eng.EvalGraph(ctx, g, fc)
	if err != nil {
		return nil, err
	}
	if res.Err != nil {
		return nil, res.Err
	}
	report, _ := fc.GetString(VarReport)
	cov, _ := flow.GetAs[subagent.Coverage](fc, VarCoverage)
	return &Outcome{Report: report, Coverage: cov, Result: res, Audit: mem.Records()}, nil
}
