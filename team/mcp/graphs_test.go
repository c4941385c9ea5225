package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/mcp"
	"github.com/flowteam/flowteam/testkit"
)

const routeYAML = `
id: route
title: Route an order
layout:
  - {id: s, type: start, link: check}
  - id: check
    task: 'let limit = 100; context.put("big", amount > limit || context.get("vip") == true)'
    link: g
  - id: g
    type: exclusive
    link:
      - {nextId: sum, when: 'big'}
      - {nextId: e}
  - {id: sum, task: '#total', link: e}
  - {id: e, type: end, task: 'context.put("done", true)'}
`

const totalYAML = `
id: total
layout:
  - {id: s, type: start, link: each}
  - {id: each, type: loop, meta: {$for: line, $in: lines}, link: add}
  - {id: add, task: 'context.put("sum", getOrZero + line)', link: close}
  - {id: close, type: loop, link: e}
  - {id: e, type: end, task: 'context.containsKey("currency") ? nil : raise("no_currency", "currency is not set")'}
`

func loadGraphs(t testing.TB, docs map[string]string) (*flow.Engine, []*flow.Graph) {
	t.Helper()
	eng := flow.NewEngine()
	var graphs []*flow.Graph
	for file, doc := range docs {
		g, err := flow.LoadGraph(file, []byte(doc))
		require.NoError(t, err)
		require.NoError(t, eng.Register(g))
		graphs = append(graphs, g)
	}
	return eng, graphs
}

func graphByID(graphs []*flow.Graph, id string) *flow.Graph {
	for _, g := range graphs {
		if g.ID == id {
			return g
		}
	}
	return nil
}

func TestInputs(t *testing.T) {
	_, graphs := loadGraphs(t, map[string]string{"route.yml": routeYAML, "total.yml": totalYAML})
	// route reads amount and vip, and through #total lines, getOrZero and currency;
	// big, sum and done are written, line is the loop's, limit a let.
	assert.Equal(t, []string{"amount", "currency", "getOrZero", "lines", "vip"}, mcp.Inputs(graphByID(graphs, "route"), graphs))
	assert.Equal(t, []string{"currency", "getOrZero", "lines"}, mcp.Inputs(graphByID(graphs, "total"), graphs))

	leave, err := flow.NewEngine().LoadFile("../../examples/leave/leave.yml")
	require.NoError(t, err)
	assert.Equal(t, []string{"day"}, mcp.Inputs(leave, []*flow.Graph{leave}))
}

// graphSession connects an MCP client to a graph server over the in-memory transport.
func graphSession(t testing.TB, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

func callGraph(t *testing.T, cs *sdk.ClientSession, name, args string) (*sdk.CallToolResult, mcp.Outcome) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	require.NoError(t, err)
	var out mcp.Outcome
	if !res.IsError || res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &out))
		require.Len(t, res.Content, 1)
		assert.JSONEq(t, string(b), res.Content[0].(*sdk.TextContent).Text, "the text is the same JSON")
	}
	return res, out
}

func TestGraphServer(t *testing.T) {
	eng, graphs := loadGraphs(t, map[string]string{"route.yml": routeYAML, "total.yml": totalYAML})
	srv, err := mcp.NewGraphServer(eng, graphs, mcp.WithEvalOptions(flow.WithSteps(50)))
	require.NoError(t, err)
	cs := graphSession(t, srv)

	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 2)
	for _, tool := range tools.Tools {
		if tool.Name == "route" {
			assert.Equal(t, "Route an order", tool.Title)
			schema, _ := json.Marshal(tool.InputSchema)
			assert.JSONEq(t, `{"type":"object","properties":{
				"amount":{"description":"variable read by the graph"},"currency":{"description":"variable read by the graph"},
				"getOrZero":{"description":"variable read by the graph"},"lines":{"description":"variable read by the graph"},
				"vip":{"description":"variable read by the graph"}}}`, string(schema))
		}
	}

	res, out := callGraph(t, cs, "route", `{"amount": 20}`)
	assert.False(t, res.IsError)
	assert.Equal(t, "completed", out.Status)
	assert.Equal(t, map[string]any{"amount": 20.0, "big": false, "done": true}, out.Vars)
	assert.Nil(t, out.Error)

	res, out = callGraph(t, cs, "route", `{"amount": 500, "lines": [1, 2.5], "getOrZero": 0, "currency": "EUR"}`)
	assert.False(t, res.IsError)
	assert.Equal(t, "completed", out.Status)
	assert.Equal(t, 2.5, out.Vars["sum"], "the sub-graph ran on the caller's variables")

	res, out = callGraph(t, cs, "route", `{"amount": 500, "lines": [], "getOrZero": 0}`)
	assert.True(t, res.IsError, "a failed run is an error result")
	assert.Equal(t, "failed", out.Status)
	require.NotNil(t, out.Error)
	assert.Equal(t, "no_currency", out.Error.Code)

	res, _ = callGraph(t, cs, "route", `{"amount": 1e999}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "invalid arguments")

	_, out = callGraph(t, cs, "route", `null`)
	assert.NotEmpty(t, out.Status, "null arguments are no variables: the run starts")
	assert.NotContains(t, out.Vars, "amount")
}

// A ReAct agent runs a flow through the graph server's tool, over MCP.
func TestAgentRunsGraphOverMCP(t *testing.T) {
	eng, graphs := loadGraphs(t, map[string]string{"route.yml": routeYAML, "total.yml": totalYAML})
	srv, err := mcp.NewGraphServer(eng, graphs)
	require.NoError(t, err)
	ts := inMemory(t, srv)
	obs := observe(t, context.Background(), ts.Tools(),
		testkit.ToolCall("small", "route", `{"amount": 3}`),
		testkit.ToolCall("failed", "route", `{"amount": 300, "lines": []}`))
	require.True(t, obs["small"].OK())
	var out mcp.Outcome
	require.NoError(t, json.Unmarshal(obs["small"].Result, &out))
	assert.Equal(t, "completed", out.Status)
	assert.Equal(t, team.TypeToolFailed, errType(t, obs["failed"]))
	assert.Contains(t, obs["failed"].Error.Message, "no_currency")
}

// A client that gives up cancels the run.
func TestGraphRunEndsWithTheCall(t *testing.T) {
	eng, graphs := loadGraphs(t, map[string]string{"spin.yml": `
id: spin
layout:
  - {id: s, type: start, link: add}
  - {id: add, task: 'context.incr("n")', link: g}
  - {id: g, type: exclusive, link: [{nextId: add, when: "n > 0"}, {nextId: e}]}
  - {id: e, type: end}
`})
	srv, err := mcp.NewGraphServer(eng, graphs, mcp.WithEvalOptions(flow.WithSteps(1<<40)))
	require.NoError(t, err)
	cs := graphSession(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "spin", Arguments: map[string]any{}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	// The session closes (Cleanup) only once the server's handler has returned: a run
	// that ignored the cancellation would hold it until the loop's end.
}
