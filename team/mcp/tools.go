package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flowteam/flowteam/team"
)

// Option configures Connect and Tools.
type Option func(*config)

type config struct {
	prefix  string
	timeout time.Duration
}

// WithPrefix puts prefix before the name of every tool, so that two servers that
// both have a "search" tool can serve one agent.
func WithPrefix(prefix string) Option { return func(c *config) { c.prefix = prefix } }

// WithCallTimeout bounds each tool call: a call that takes longer is a timeout
// observation (retryable) and the agent goes on. Without it a call lasts as long as
// the agent's context allows.
func WithCallTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// Toolset is a client session with one MCP server and the server's tools as team
// tools. Close ends the session (and, over a CommandTransport, the server process).
type Toolset struct {
	session *sdk.ClientSession
	tools   []team.Tool
}

// Connect connects to an MCP server over t (an *sdk.CommandTransport for a server
// command, an *sdk.StreamableClientTransport for a URL, an in-memory transport in
// tests) and lists its tools. The session is closed when listing fails.
func Connect(ctx context.Context, t sdk.Transport, opts ...Option) (*Toolset, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "flowteam"}, nil)
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: connect: %w", err)
	}
	tools, err := Tools(ctx, cs, opts...)
	if err != nil {
		_ = cs.Close()
		return nil, err
	}
	return &Toolset{session: cs, tools: tools}, nil
}

// Tools returns the tools the server listed, as given to team.WithTools.
func (s *Toolset) Tools() []team.Tool { return s.tools }

// Session returns the MCP client session, for what the toolset does not cover
// (resources, prompts).
func (s *Toolset) Session() *sdk.ClientSession { return s.session }

// Close ends the session. A tool called afterwards fails with source_unavailable.
func (s *Toolset) Close() error { return s.session.Close() }

// Tools lists the tools of the server cs is connected to and returns each as a
// team.Tool. Its input schema becomes the tool's Schema, so the agent validates
// arguments before a call as it does for its own tools. A call's outcome is an
// observation: a result with isError is a tool_error with the result's text; a
// server that is gone, or dies during the call, is source_unavailable; a call cut by
// its context (or WithCallTimeout) is timeout or cancelled. A tool whose schema cannot be read fails the listing.
func Tools(ctx context.Context, cs *sdk.ClientSession, opts ...Option) ([]team.Tool, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	var tools []team.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp: list tools: %w", err)
		}
		schema, err := toolSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %q: %w", t.Name, err)
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		tools = append(tools, team.Tool{
			Name: cfg.prefix + t.Name, Description: desc, Schema: schema,
			Func: caller(cs, t.Name, cfg.timeout),
		})
	}
	return tools, nil
}

// caller returns the function that calls the server's tool name.
func caller(cs *sdk.ClientSession, name string, timeout time.Duration) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, args json.RawMessage) (any, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return nil, callError(ctx, name, err)
		}
		return result(name, res)
	}
}

// callError classifies a failed call: the context's end, the server's refusal of the
// request, or a server that cannot be reached (any other error is the transport's).
func callError(ctx context.Context, name string, err error) error {
	if ctx.Err() != nil {
		e := team.ContextError(ctx)
		e.Message = fmt.Sprintf("mcp tool %q: %s", name, e.Message)
		return e
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) && !transportCodes[rpc.Code] {
		t := team.TypeToolFailed
		switch rpc.Code {
		case jsonrpc.CodeInvalidParams:
			t = team.TypeInvalidArguments
		case jsonrpc.CodeMethodNotFound:
			t = team.TypeNotFound
		}
		return &team.Error{Type: t, Message: fmt.Sprintf("mcp tool %q: %s", name, rpc.Message), Code: fmt.Sprint(rpc.Code), Err: err}
	}
	return &team.Error{Type: team.TypeSourceUnavailable, Retry: true,
		Message: fmt.Sprintf("mcp tool %q: server unavailable: %v", name, err), Err: err}
}

// transportCodes are the SDK's JSON-RPC codes for a request that never reached the
// server or whose answer could not come back (client closing, server closing,
// rejected by the transport: an HTTP request that failed), which are not the
// server's refusal of the request.
var transportCodes = map[int64]bool{-32003: true, -32004: true, -32005: true}

// result turns a call's result into the tool's: the structured content when there
// is one, else the text (one string, or a list for several texts), else the content
// items as the protocol writes them. A result flagged isError is a tool_error whose
// message is the result's text.
func result(name string, res *sdk.CallToolResult) (any, error) {
	if res.IsError {
		msg := strings.Join(texts(res.Content), "\n")
		if msg == "" {
			msg = "the tool reported an error"
		}
		return nil, &team.Error{Type: team.TypeToolFailed, Message: fmt.Sprintf("mcp tool %q: %s", name, msg)}
	}
	if res.StructuredContent != nil {
		return res.StructuredContent, nil
	}
	ts := texts(res.Content)
	switch {
	case len(ts) != len(res.Content):
		return res.Content, nil
	case len(ts) == 1:
		return ts[0], nil
	}
	return ts, nil
}

// texts returns the text of the text items of content.
func texts(content []sdk.Content) []string {
	var out []string
	for _, c := range content {
		if t, ok := c.(*sdk.TextContent); ok {
			out = append(out, t.Text)
		}
	}
	return out
}
