// Command mcp-tools shows a ReAct agent using the tools of an MCP server: an
// inventory server (built with the official MCP Go SDK, in this process, on the
// in-memory transport) offers "stock"; the agent, on a scripted model, asks for a
// SKU that exists, one that does not (the server's tool error reaches the model as
// a tool_error observation) and one with arguments the tool's schema refuses (the
// agent rejects them before the server sees them).
//
//	go run ./examples/mcp-tools
//
// With a server started as a command, connect with &sdk.CommandTransport{...}; with
// one on HTTP, with &sdk.StreamableClientTransport{Endpoint: url}.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/mcp"
	"github.com/flowteam/flowteam/testkit"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-tools:", err)
		os.Exit(1)
	}
}

type stockIn struct {
	SKU string `json:"sku" jsonschema:"stock keeping unit, such as A-1"`
}

type stockOut struct {
	SKU   string `json:"sku"`
	Units int    `json:"units"`
}

// inventory is the MCP server: one typed tool, whose input schema the SDK infers.
func inventory() *sdk.Server {
	units := map[string]int{"A-1": 12, "B-7": 0}
	srv := sdk.NewServer(&sdk.Implementation{Name: "inventory"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "stock", Description: "Units in stock for a SKU"},
		func(_ context.Context, _ *sdk.CallToolRequest, in stockIn) (*sdk.CallToolResult, stockOut, error) {
			n, ok := units[in.SKU]
			if !ok {
				return nil, stockOut{}, fmt.Errorf("unknown SKU %q", in.SKU)
			}
			return nil, stockOut{SKU: in.SKU, Units: n}, nil
		})
	return srv
}

func run(ctx context.Context, w io.Writer) error {
	client, server := sdk.NewInMemoryTransports()
	ss, err := inventory().Connect(ctx, server, nil)
	if err != nil {
		return err
	}
	tools, err := mcp.Connect(ctx, client)
	if err != nil {
		return errors.Join(err, ss.Close())
	}
	defer func() { _ = tools.Close(); _ = ss.Wait() }()

	model := testkit.NewScriptedModel(
		testkit.CallTools(
			testkit.ToolCall("c1", "stock", `{"sku":"A-1"}`),
			testkit.ToolCall("c2", "stock", `{"sku":"Z-9"}`),
			testkit.ToolCall("c3", "stock", `{"code":"A-1"}`),
		),
		testkit.Reply("A-1: 12 units. Z-9 is not a SKU we carry."),
	)
	agent, err := team.NewReActAgent("clerk", model, team.WithTools(tools.Tools()...))
	if err != nil {
		return err
	}
	ans, err := agent.Call(ctx, "How many A-1 and Z-9 do we have?", team.NewSession("s-1"))
	if err != nil {
		return err
	}
	for _, m := range model.Requests()[1].Messages {
		if m.Role == team.RoleTool {
			fmt.Fprintf(w, "%s %s\n", m.ToolCallID, m.Content)
		}
	}
	fmt.Fprintln(w, "answer:", ans.Content)
	return nil
}
