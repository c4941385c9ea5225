package team_test

import (
	"context"
	"fmt"
	"strings"

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
