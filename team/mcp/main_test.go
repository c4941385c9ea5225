package mcp_test

import (
	"context"
	"errors"
	"os"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// serverEnv makes the test binary, run again as a subprocess, an MCP server on stdio.
const serverEnv = "FLOWTEAM_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		if err := newFixture(nil).Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

type stockIn struct {
	SKU string `json:"sku" jsonschema:"stock keeping unit"`
}

type stockOut struct {
	Units int `json:"units"`
}

// newFixture returns the MCP server the tests call: stock (typed, with a tool error
// for an unknown SKU), code (a string with a pattern), wait (answers
// when its context ends), drop (the server goes away mid-call: die, when given,
// makes it go, and the call returns when the channel die returns is closed).
func newFixture(die func(*sdk.CallToolRequest) <-chan struct{}) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "fixture"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "stock", Description: "Units in stock for a SKU"},
		func(_ context.Context, _ *sdk.CallToolRequest, in stockIn) (*sdk.CallToolResult, stockOut, error) {
			if in.SKU == "none" {
				return nil, stockOut{}, errors.New("no such SKU")
			}
			return nil, stockOut{Units: 12}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "code", Description: "Echo a product code",
		InputSchema: map[string]any{"type": "object", "required": []string{"code"},
			"properties": map[string]any{"code": map[string]any{"type": "string", "pattern": "^[A-Z]-[0-9]+$"}}}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	srv.AddTool(&sdk.Tool{Name: "drop", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if die == nil {
				os.Exit(3) // the server process dies with the call unanswered
			}
			select {
			case <-die(req):
			case <-ctx.Done():
			}
			return nil, errors.New("dropped")
		})
	return srv
}
