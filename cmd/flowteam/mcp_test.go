package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpOutcome calls a graph tool and returns the result's flag and outcome.
func mcpOutcome(t *testing.T, cs *sdk.ClientSession, name string, args any) (isError bool, out map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	text := res.Content[0].(*sdk.TextContent).Text
	require.NoError(t, json.Unmarshal([]byte(text), &out), text)
	return res.IsError, out
}

// The tool's result is what "flowteam run --output json" prints for the same run.
func TestMCPServesGraphsAsRunDoes(t *testing.T) {
	noLeaks(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		defer outW.Close()
		done <- cmdMCP([]string{leaveYML, "--redact", "secret"}, inR, outW, &stderr)
	}()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	assert.Equal(t, "leave", tools.Tools[0].Name)
	schema, _ := json.Marshal(tools.Tools[0].InputSchema)
	assert.JSONEq(t, `{"type":"object","properties":{"day":{"description":"variable read by the graph"}}}`, string(schema))

	isError, got := mcpOutcome(t, cs, "leave", map[string]any{"day": 5, "secret": "s3"})
	assert.False(t, isError)
	code, want, stderrRun := callJSON(t, cmdRun, leaveYML, "--set", "day=5", "--set", "secret=s3", "--redact", "secret")
	require.Equal(t, exitOK, code, stderrRun)
	delete(got, "instance")
	delete(want, "instance")
	assert.Equal(t, want, got)
	assert.Equal(t, "***", got["vars"].(map[string]any)["secret"])

	isError, got = mcpOutcome(t, cs, "leave", nil) // no day: the gateway fails
	assert.True(t, isError, "a failed run is an error result")
	assert.Equal(t, "failed", got["status"])
	assert.Equal(t, "g1", got["error"].(map[string]any)["node"])

	require.NoError(t, cs.Close())
	inW.Close()
	assert.Equal(t, exitOK, <-done, stderr.String())
}

func TestMCPUsage(t *testing.T) {
	code, stdout, _ := call(t, dispatch, "help", "mcp")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "flowteam mcp FILE|DIR|GLOB...")
	for _, args := range [][]string{{}, {leaveYML, "--steps", "0"}, {leaveYML, "--evaluator", "lua"}, {"testdata/misc/gotask.yml"}} {
		var stdout, stderr bytes.Buffer
		code := cmdMCP(args, bytes.NewReader(nil), &stdout, &stderr)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Empty(t, stdout.String(), "%v", args)
		assert.NotEmpty(t, stderr.String(), "%v", args)
	}
}

// The built binary serves over stdio to a client that starts it as a command.
func TestMCPCommandOverStdio(t *testing.T) {
	bin := buildFlowteam(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx,
		&sdk.CommandTransport{Command: exec.Command(bin, "mcp", leaveYML)}, nil)
	require.NoError(t, err)
	defer cs.Close()
	isError, out := mcpOutcome(t, cs, "leave", map[string]any{"day": 1})
	assert.False(t, isError)
	assert.Equal(t, "completed", out["status"])
	assert.Equal(t, []any{"manager"}, out["vars"].(map[string]any)["approvedBy"])
}
