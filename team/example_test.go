package team_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

type stockArgs struct {
	SKU string `json:"sku" jsonschema:"stock keeping unit"`
}

// A ReAct agent with one tool, on a scripted model.
func ExampleReActAgent() {
	stock := team.NewTool("stock", "Units in stock for a SKU",
		nil,
		func(_ context.Context, a stockArgs) (map[string]int, error) {
			return map[string]int{a.SKU: 12}, nil
		})
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("call-1", "stock", `{"sku":"A-1"}`)),
		testkit.Reply("12 units of A-1 are in stock."),
	)
	agent, err := team.NewReActAgent("clerk", model, team.WithTools(stock))
	if err != nil {
		panic(err)
	}
	ans, err := agent.Call(context.Background(), "How many A-1?", team.NewSession("s-1"))
	if err != nil {
		panic(err)
	}
	fmt.Println(ans.Content)
	fmt.Println(model.Requests()[1].Messages[2].Content)
	// Output:
	// 12 units of A-1 are in stock.
	// {"status":"success","result":{"A-1":12}}
}

// A sensitive tool holds the batch until a human decides; the decision applies to the
// same call.
func ExampleAgentSession_Decide() {
	refund := team.NewTool("refund", "Refund an order",
		nil,
		func(_ context.Context, a struct {
			Order string `json:"order"`
		}) (string, error) {
			return "refunded " + a.Order, nil
		})
	refund.Sensitive = team.Always("refunds need a manager")
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("r1", "refund", `{"order":"O-9"}`)),
		testkit.Reply("Refund done."),
	)
	agent, _ := team.NewReActAgent("support", model, team.WithTools(refund))
	sess := team.NewSession("ticket-42")

	ans, _ := agent.Call(context.Background(), "Refund O-9", sess)
	for _, c := range ans.Pending.Calls {
		fmt.Println("pending:", c.ID, c.Name, string(c.Args), "-", c.Comment)
	}
	_ = sess.Decide("support", team.Approve("r1"))
	ans, _ = agent.Resume(context.Background(), sess)
	fmt.Println(ans.Content, model.Calls())
	// Output:
	// pending: r1 refund {"order":"O-9"} - refunds need a manager
	// Refund done. 2
}

// Agents are flow tasks, registered by name.
func ExampleWithAgents() {
	g, err := flow.LoadGraph("risk.yml", []byte(`
id: risk
layout:
  - {id: analyst, type: start, task: "@analyst", link: route}
  - {id: route, type: exclusive, link: [{nextId: manual, when: 'context.get("analysis.result") == "HIGH"'}, {nextId: auto}]}
  - {id: manual, type: end, task: 'context.put("route.result", "MANUAL")'}
  - {id: auto, type: end, task: 'context.put("route.result", "AUTO")'}
`))
	if err != nil {
		panic(err)
	}
	eng := flow.NewEngine(team.WithAgents(testkit.Analyst()))
	fc := flow.NewContext("case-1")
	if _, err := eng.EvalGraph(context.Background(), g, fc); err != nil {
		panic(err)
	}
	fmt.Println(fc.Value("analyst.answer"), fc.Value("route.result"))
	// Output: HIGH MANUAL
}

// Events of a run, as an iterator.
func ExampleStream() {
	model := testkit.NewScriptedModel(testkit.Reply("Hello there"))
	agent, _ := team.NewSimpleAgent("greeter", model)
	for ev, err := range team.Stream(context.Background(), agent, "hi", nil) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s %q\n", ev.Kind, ev.Delta)
	}
	// Output:
	// run_start ""
	// reason_start ""
	// reason_delta "Hello "
	// reason_delta "there"
	// reason_end ""
	// run_end ""
}

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
		team.WithProtocol(team.Supervisor),
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
func ExampleStream_team() {
	duo, err := team.NewTeam("duo", team.WithMembers(testkit.NewFixedAgent("a", "first"), testkit.NewFixedAgent("b", "second")))
	if err != nil {
		panic(err)
	}
	for ev, err := range team.Stream(context.Background(), duo, "go", team.NewSession("duo-1")) {
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
