package team_test

import (
	"context"
	"fmt"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

type stockArgs struct {
	SKU string `json:"sku"`
}

// A ReAct agent with one tool, on a scripted model.
func ExampleReActAgent() {
	stock := team.NewTool("stock", "Units in stock for a SKU",
		team.Object(map[string]*team.Schema{"sku": team.String("stock keeping unit")}),
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
		team.Object(map[string]*team.Schema{"order": team.String("order id")}),
		func(_ context.Context, a struct{ Order string }) (string, error) { return "refunded " + a.Order, nil })
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
