package team_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// A supervisor team: the supervisor model routes to a member by a tool call or by
// naming it, and finishes with the finish marker.
func ExampleNewTeam() {
	supervisor := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("1", team.RouteToolName, `{"to":"analyst","task":"rate the risk"}`)),
		testkit.Reply("writer"),
		testkit.Reply("FINISH"),
	)
	desk, err := team.NewTeam("desk",
		team.WithMembers(testkit.Analyst(), testkit.NewFixedAgent("writer", "Risk: HIGH.")),
		team.WithProtocol(team.Supervisor()),
		team.WithSupervisorModel(supervisor),
		team.WithMaxTurns(5))
	if err != nil {
		panic(err)
	}
	sess := team.NewSession("loan-42")
	ans, err := desk.Call(context.Background(), "Assess the loan", sess)
	if err != nil {
		panic(err)
	}
	tr := desk.Trace(sess.Context())
	fmt.Println(ans.Content)
	fmt.Println(strings.Join(tr.Route, " -> "))
	for _, d := range tr.Decisions {
		fmt.Println(strings.Join(strings.Fields(d.Action+" "+d.To+" "+d.Source), " "))
	}
	// Output:
	// Risk: HIGH.
	// analyst -> writer
	// route analyst tool
	// route writer text
	// finish text
}

// A team's events, consumed as an iterator; breaking the loop would cancel the run.
func ExampleTeamAgent_Stream() {
	duo, err := team.NewTeam("duo", team.WithMembers(testkit.NewFixedAgent("a", "first"), testkit.NewFixedAgent("b", "second")))
	if err != nil {
		panic(err)
	}
	for ev, err := range duo.Stream(context.Background(), "go", team.NewSession("duo-1")) {
		if err != nil {
			panic(err)
		}
		switch ev.Kind {
		case team.EventTeamStart, team.EventTeamEnd, team.EventNodeStart, team.EventNodeEnd:
			fmt.Println(strings.TrimSpace(fmt.Sprint(ev.Kind, " ", ev.Agent, " ", ev.Status)))
		}
	}
	// Output:
	// team_start duo started
	// node_start a
	// node_end a completed
	// node_start b
	// node_end b completed
	// team_end duo completed
}

// A custom merge of a Parallel team of sub-agents gets the members' coverage notes, so
// its answer can tell a source that holds nothing from one that could not be searched.
func ExampleParallelMergeWithCoverage() {
	market := &team.SubAgent{Task: "market", Search: func(ctx context.Context, q string) ([]any, error) {
		return []any{"20bn EUR in 2024"}, nil
	}}
	recalls := &team.SubAgent{Task: "recalls", Search: func(ctx context.Context, q string) ([]any, error) {
		return []any{}, nil // searched: none exist
	}}
	patents := &team.SubAgent{Task: "patents", Search: func(ctx context.Context, q string) ([]any, error) {
		return nil, &team.Error{Type: team.TypeAuthDenied, Message: "no licence for patent_db"}
	}}
	merge := team.ParallelMergeWithCoverage(func(ctx context.Context, tr *team.TeamTrace, cov team.Coverage) (string, error) {
		var b strings.Builder
		for _, n := range cov.Notes {
			fmt.Fprintln(&b, strings.TrimSpace(fmt.Sprintf("%s: %s %s %s", n.Task, n.Class, n.Gap, n.ErrorType)))
		}
		return b.String(), nil
	})
	research, err := team.NewTeam("research",
		team.WithMembers(market, recalls, patents),
		team.WithProtocol(team.Parallel(team.ParallelBranchPolicy(flow.ContinueOnError), merge)))
	if err != nil {
		panic(err)
	}
	ans, err := research.Call(context.Background(), "e-bikes in Europe", team.NewSession("research-1"))
	if err != nil {
		panic(err)
	}
	fmt.Print(ans.Content)
	// Output:
	// market: well_supported
	// recalls: valid_empty
	// patents: gap access_failure auth_denied
}
