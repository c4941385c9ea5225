package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team/mcp"
)

const mcpUsage = `Usage: flowteam mcp FILE|DIR|GLOB... [flags]

Serves the graphs of the definition files as tools of a Model Context Protocol
server on stdin and stdout (MCP's stdio transport), so that an MCP client (an IDE,
an agent) can run a flow. The files load as for run: "#id" sub-graphs resolve across
them, and "@name" Go tasks cannot be served.

Each graph is one tool, named by the graph's id. Its input is a JSON object of the
run's variables, read as "flowteam run --vars" reads its file. The input schema
lists the variables the graph's expr scripts and conditions (and its sub-graphs')
read and never write; it stays open to others, which a script in Solon's Java (not
read) or a variable a script also sets may need. Every call runs the graph in a new
instance, without a store or an audit.

A call's result is the run's outcome: the JSON "flowteam run --output json" prints,
as structured content and as text. A failed run is a result flagged isError with
the same outcome (its "error" names the node and the code). A client that cancels a
call cancels its run.

Flags:
  --steps N         step limit of each run (default: the engine's, 100000)
  --redact KEYS, --redact-pattern RE
                    mask secrets in the outcomes, as for run
` + evaluatorUsage + `
Logs go to stderr. Exit codes: 0 the client closed the connection, or SIGINT or
SIGTERM ended the server; 1 the connection failed; 2 bad input.
`

// mcpConfig is the parsed command line of "flowteam mcp".
type mcpConfig struct {
	files []string
	steps int
	eval  string
	store storeFlags // only --redact and --redact-pattern are registered
}

// cmdMCP implements "flowteam mcp", serving on stdin and stdout until the client
// closes stdin. It returns the process exit code.
func cmdMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, help, err := parseMCPArgs(args)
	switch {
	case help:
		fmt.Fprint(stdout, mcpUsage)
		return exitOK
	case err != nil:
		return usageError(stderr, "mcp", err)
	}
	srv, err := newMCPServer(cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "flowteam mcp: %v\n", err)
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()
	err = srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "flowteam mcp: %v\n", err)
		return exitFail
	}
	return exitOK
}

// newMCPServer loads the definitions and builds the server whose tools run them, with
// run's outcome and variable reading.
func newMCPServer(cfg mcpConfig, stderr io.Writer) (*sdk.Server, error) {
	files, err := definitionFiles(cfg.files)
	if err != nil {
		return nil, err
	}
	red, err := cfg.store.redactor()
	if err != nil {
		return nil, err
	}
	evalOpts, err := evaluatorOptions(cfg.eval)
	if err != nil {
		return nil, err
	}
	eng := flow.NewEngine(evalOpts...)
	graphs, err := eng.LoadFiles(files...)
	if err != nil {
		if errors.Is(err, flow.ErrUnknownTask) {
			err = fmt.Errorf("%w\n\"@name\" tasks are Go code: the command line serves only script tasks, "+
				"\"$meta\" scripts and \"#id\" sub-graphs", err)
		}
		return nil, err
	}
	opts := []mcp.GraphOption{
		mcp.WithServerInfo("flowteam", ""),
		mcp.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		// A call's arguments read as run reads a --vars file (mcp turns null into none).
		mcp.WithArguments(func(args json.RawMessage) (map[string]any, error) { return decodeVars("arguments", args) }),
		mcp.WithOutcome(func(res *flow.Result, vars map[string]any) any { return newRunOutput(res, vars, red) }),
	}
	if cfg.steps > 0 {
		opts = append(opts, mcp.WithEvalOptions(flow.WithSteps(cfg.steps)))
	}
	return mcp.NewGraphServer(eng, graphs, opts...)
}

// parseMCPArgs parses the command line (flags may come before or after the files).
func parseMCPArgs(args []string) (cfg mcpConfig, help bool, err error) {
	fs := flag.NewFlagSet("flowteam mcp", flag.ContinueOnError)
	fs.IntVar(&cfg.steps, "steps", 0, "")
	evaluatorFlag(fs, &cfg.eval)
	fs.Var(&cfg.store.redact, "redact", "")
	fs.Var(&cfg.store.patterns, "redact-pattern", "")
	cfg.files, help, err = parseCommandLine(fs, args)
	if help || err != nil {
		return cfg, help, err
	}
	if err := checkNotEmpty(fs, "redact", "redact-pattern"); err != nil {
		return cfg, false, err
	}
	if _, err := cfg.store.redactor(); err != nil {
		return cfg, false, err
	}
	switch {
	case len(cfg.files) == 0:
		return cfg, false, errors.New("no definition file given")
	case cfg.steps < 0:
		return cfg, false, fmt.Errorf("--steps must not be negative, got %d", cfg.steps)
	case cfg.steps == 0 && flagGiven(fs, "steps"):
		return cfg, false, errZeroSteps
	}
	return cfg, false, nil
}

// nopWriteCloser keeps the server's end of the connection from closing stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
