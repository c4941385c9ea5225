package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// toolThenAnswer calls the stock tool when the last message is the user's and
// answers once the observation is in (as team's benchmark model does).
type toolThenAnswer struct{}

func (toolThenAnswer) Chat(_ context.Context, req *team.ChatRequest) (*team.ChatResponse, error) {
	if req.Messages[len(req.Messages)-1].Role == team.RoleUser {
		return &team.ChatResponse{Message: team.Message{Role: team.RoleAssistant,
			ToolCalls: []team.ToolCall{testkit.ToolCall("call-1", "stock", `{"sku":"A-1"}`)}}}, nil
	}
	return &team.ChatResponse{Message: team.AssistantMessage("12 units of A-1 are in stock.")}, nil
}

// benchTools returns the stock tool in process and the fixture's stock tool over the
// in-memory transport.
func benchTools(b *testing.B) map[string]team.Tool {
	direct := team.NewTool("stock", "Units in stock for a SKU",
		nil,
		func(_ context.Context, _ stockIn) (stockOut, error) { return stockOut{Units: 12}, nil })
	return map[string]team.Tool{"direct": direct, "mcp-in-memory": findTool(b, inMemory(b, newFixture(nil)).Tools(), "stock")}
}

// BenchmarkToolCall is one tool call: a Go function in process beside the same tool
// on an MCP server over the in-memory transport (JSON-RPC encoding, the pipe, the
// server's schema validation, the result's decoding).
func BenchmarkToolCall(b *testing.B) {
	args := json.RawMessage(`{"sku":"A-1"}`)
	for name, tool := range benchTools(b) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tool.Func(ctx, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAgentToolCall is a ReAct agent's whole call (model turn, tool call,
// answering turn) with each tool, as team's BenchmarkReActToolCall measures it.
func BenchmarkAgentToolCall(b *testing.B) {
	for name, tool := range benchTools(b) {
		b.Run(name, func(b *testing.B) {
			agent, err := team.NewReActAgent("clerk", toolThenAnswer{}, team.WithTools(tool))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := agent.Call(ctx, "How many A-1?", team.NewSession("s-1")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
