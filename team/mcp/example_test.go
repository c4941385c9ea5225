package mcp_test

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/mcp"
	"github.com/flowteam/flowteam/testkit"
)

// A ReAct agent with the tools of an MCP server (here in process, on the in-memory
// transport; a CommandTransport or StreamableClientTransport reaches a real one).
func ExampleConnect() {
	ctx := context.Background()
	server := sdk.NewServer(&sdk.Implementation{Name: "inventory"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "stock", Description: "Units in stock for a SKU"},
		func(_ context.Context, _ *sdk.CallToolRequest, in stockIn) (*sdk.CallToolResult, stockOut, error) {
			return nil, stockOut{Units: 12}, nil
		})
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverEnd, nil)
	if err != nil {
		panic(err)
	}
	defer ss.Wait()

	tools, err := mcp.Connect(ctx, clientEnd)
	if err != nil {
		panic(err)
	}
	defer tools.Close()
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("c1", "stock", `{"sku":"A-1"}`)),
		testkit.Reply("12 units of A-1."),
	)
	agent, err := team.NewReActAgent("clerk", model, team.WithTools(tools.Tools()...))
	if err != nil {
		panic(err)
	}
	ans, err := agent.Call(ctx, "How many A-1?", team.NewSession("s-1"))
	if err != nil {
		panic(err)
	}
	fmt.Println(model.Requests()[1].Messages[2].Content)
	fmt.Println(ans.Content)
	// Output:
	// {"status":"success","result":{"units":12}}
	// 12 units of A-1.
}

// A graph served as an MCP tool: its input schema lists the variables it reads, its
// result is the run's outcome.
func ExampleNewGraphServer() {
	ctx := context.Background()
	g, err := flow.LoadGraph("leave.yml", []byte(`
id: leave
layout:
  - {id: s, type: start, link: g}
  - {id: g, type: exclusive, link: [{nextId: director, when: "day >= 3"}, {nextId: e}]}
  - {id: director, task: 'context.put("director", true)', link: e}
  - {id: e, type: end}
`))
	if err != nil {
		panic(err)
	}
	server, err := mcp.NewGraphServer(flow.NewEngine(), []*flow.Graph{g})
	if err != nil {
		panic(err)
	}
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverEnd, nil)
	if err != nil {
		panic(err)
	}
	defer ss.Wait()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()

	fmt.Println(mcp.Inputs(g, nil))
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "leave", Arguments: map[string]any{"day": 5}})
	if err != nil {
		panic(err)
	}
	out := res.StructuredContent.(map[string]any)
	fmt.Println(out["status"], out["vars"])
	// Output:
	// [day]
	// completed map[day:5 director:true]
}
