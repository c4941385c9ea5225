package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/internal/jsonvars"
)

// GraphOption configures NewGraphServer.
type GraphOption func(*graphConfig)

type graphConfig struct {
	impl     sdk.Implementation
	outcome  func(res *flow.Result, vars map[string]any) any
	vars     func(args json.RawMessage) (map[string]any, error)
	evalOpts []flow.EvalOption
	logger   *slog.Logger
}

// WithOutcome sets what a graph tool returns for a run, given its result and final
// variables (default: an Outcome). It must be JSON-encodable.
func WithOutcome(fn func(res *flow.Result, vars map[string]any) any) GraphOption {
	return func(c *graphConfig) { c.outcome = fn }
}

// WithArguments sets how a call's arguments (a JSON object) become the run's
// variables (default: an integer becomes an int and any other number a float64, as
// the YAML reader and the expression engine produce them; a number beyond float64, or
// an integer beyond int64, is an error). A call without arguments, or with null, runs
// with no variables and does not call fn.
func WithArguments(fn func(args json.RawMessage) (map[string]any, error)) GraphOption {
	return func(c *graphConfig) { c.vars = fn }
}

// WithEvalOptions adds options to every run (a step limit, interceptors).
func WithEvalOptions(opts ...flow.EvalOption) GraphOption {
	return func(c *graphConfig) { c.evalOpts = append(c.evalOpts, opts...) }
}

// WithServerInfo sets the name and version the server reports to clients (default
// "flowteam").
func WithServerInfo(name, version string) GraphOption {
	return func(c *graphConfig) { c.impl = sdk.Implementation{Name: name, Version: version} }
}

// WithLogger sets the server's logger (default: none).
func WithLogger(l *slog.Logger) GraphOption { return func(c *graphConfig) { c.logger = l } }

// Outcome is the default result of a graph tool: how the run ended.
type Outcome struct {
	Instance string `json:"instance"`
	Graph    string `json:"graph"`
	Status   string `json:"status"`
	Steps    int    `json:"steps"`
	// Vars holds the run's variables, less the engine's own ("flow." keys).
	Vars  map[string]any        `json:"vars"`
	Error *flow.StructuredError `json:"error"`
}

// NewOutcome returns the Outcome of a run.
func NewOutcome(res *flow.Result, vars map[string]any) any {
	out := &Outcome{Instance: res.Instance, Graph: res.Graph, Status: string(res.Status), Steps: res.Steps,
		Vars: make(map[string]any, len(vars))}
	for k, v := range vars {
		if !strings.HasPrefix(k, "flow.") {
			out.Vars[k] = v
		}
	}
	if res.Err != nil {
		se := flow.ToStructured(res.Err)
		out.Error = &se
	}
	return out
}

// NewGraphServer returns an MCP server with one tool per graph, named by the graph's
// id. A tool's input is a JSON object of the run's variables: its schema lists the
// graph's Inputs and stays open to any other variable (Go tasks and other script
// languages read variables no text shows). A call runs the graph on eng in a new
// instance and returns its outcome (WithOutcome) as structured content and as JSON
// text; a run that failed is a result flagged isError, so a client's model sees it as
// a failure, with the outcome saying which node failed and why. The run ends with
// the call: a client that cancels the request cancels the run. Serve it with
// server.Run(ctx, &sdk.StdioTransport{}) or an sdk.StreamableHTTPHandler.
func NewGraphServer(eng *flow.Engine, graphs []*flow.Graph, opts ...GraphOption) (*sdk.Server, error) {
	cfg := graphConfig{impl: sdk.Implementation{Name: "flowteam"}, outcome: NewOutcome, vars: decodeArguments}
	for _, o := range opts {
		o(&cfg)
	}
	if len(graphs) == 0 {
		return nil, errors.New("mcp: no graphs to serve")
	}
	srv := sdk.NewServer(&cfg.impl, &sdk.ServerOptions{Logger: cfg.logger})
	for _, g := range graphs {
		srv.AddTool(&sdk.Tool{Name: g.ID, Title: g.Title, Description: graphDescription(g), InputSchema: inputSchema(g, graphs)},
			graphHandler(eng, g, &cfg))
	}
	return srv, nil
}

func graphDescription(g *flow.Graph) string {
	name := g.Title
	if name == "" {
		name = g.ID
	}
	return fmt.Sprintf("Runs the flow graph %q with the given variables and returns the run's outcome "+
		"(status, variables, error) as JSON.", name)
}

// inputSchema is the JSON Schema of a graph tool's arguments.
func inputSchema(g *flow.Graph, graphs []*flow.Graph) map[string]any {
	props := map[string]any{}
	for _, name := range Inputs(g, graphs) {
		props[name] = map[string]any{"description": "variable read by the graph"}
	}
	return map[string]any{"type": "object", "properties": props}
}

func graphHandler(eng *flow.Engine, g *flow.Graph, cfg *graphConfig) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		vars, err := callVars(req.Params.Arguments, cfg.vars)
		if err != nil {
			return errorResult("invalid arguments: " + err.Error()), nil
		}
		fc := flow.NewContextWith(newInstanceID(), vars)
		res, err := eng.EvalGraph(ctx, g, fc, cfg.evalOpts...)
		if res == nil { // the run could not start; a failed run has a result
			return errorResult(fmt.Sprintf("graph %q: %v", g.ID, err)), nil
		}
		b, err := json.Marshal(cfg.outcome(res, fc.Vars()))
		if err != nil {
			return errorResult(fmt.Sprintf("graph %q: outcome is not JSON: %v", g.ID, err)), nil
		}
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: string(b)}},
			StructuredContent: json.RawMessage(b),
			IsError:           res.Status == flow.StatusFailed,
		}, nil
	}
}

func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: msg}}, IsError: true}
}

// callVars reads a call's arguments with decode; a call without arguments (null or
// nothing) has no variables.
func callVars(args json.RawMessage, decode func(json.RawMessage) (map[string]any, error)) (map[string]any, error) {
	if t := bytes.TrimSpace(args); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return map[string]any{}, nil
	}
	return decode(args)
}

// decodeArguments reads a JSON object of variables as jsonvars.Object does.
func decodeArguments(args json.RawMessage) (map[string]any, error) { return jsonvars.Object(args) }

func newInstanceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return "mcp-" + hex.EncodeToString(b[:])
}
