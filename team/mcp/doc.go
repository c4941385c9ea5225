// Package mcp connects agents to the Model Context Protocol, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk/mcp): a ReAct agent uses the tools of MCP
// servers, and an MCP client (an IDE, another agent) runs flow graphs as tools.
//
// An agent with the tools of a server started as a command:
//
//	tools, err := mcp.Connect(ctx, &sdk.CommandTransport{Command: exec.Command("inventory-server")})
//	if err != nil {
//		return err
//	}
//	defer tools.Close()
//	agent, err := team.NewReActAgent("clerk", model, team.WithTools(tools.Tools()...))
//
// Over HTTP, connect with &sdk.StreamableClientTransport{Endpoint: url}.
//
// # Tools
//
// Each tool's input schema, a full JSON Schema, becomes its team.Tool Schema, so the
// agent validates arguments before a call as it does for its own tools. The model
// sees an observation, as for any tool: the result (structured content, else the
// text), or a typed error: tool_error for a result the server flagged isError,
// invalid_arguments for arguments the schema or the server refused (the SDK's servers
// refuse a tool they no longer have so too), not_found for a server without the
// tools/call method, source_unavailable (retryable) for a server that cannot be
// reached or dies during the call, timeout or cancelled for a call its context (or
// WithCallTimeout) cut short. A call never outlasts its context.
//
// # Graphs as tools
//
// NewGraphServer serves flow graphs as MCP tools, one per graph, its input the
// run's variables (the schema lists the graph's Inputs), its result the run's
// outcome; "flowteam mcp DEFS" serves definition files on stdio:
//
//	srv, err := mcp.NewGraphServer(eng, graphs)
//	if err != nil {
//		return err
//	}
//	return srv.Run(ctx, &sdk.StdioTransport{})
package mcp
