package main

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/worker"
)

const runUsage = `Usage: flowteam run FILE|DIR|GLOB... [flags]

Loads the definition files (a directory loads its *.yml, *.yaml and *.json files, not
those of its sub-directories; a quoted glob is expanded) as one batch, so "#id" sub-graph tasks resolve across them,
and runs one graph. Flags may come before or after the files.

Only script tasks, "$meta" scripts, "#id" sub-graphs and the task "@wait" (see
"flowteam submit -h"; a script can also call context.suspendUntil(TIME_OR_DURATION))
can run from the command line: a definition that references another Go task ("@name")
fails to load. A run that waits suspends with the reason "until TIME"; with --store,
"flowteam resume" continues it (before TIME the node suspends again), and
"flowteam resume --queue" hands it to the workers, which wake it at TIME.

Flags:
  --graph ID        the graph to run; needed when the files hold several graphs and more
                    than one of them is not called as a sub-graph by the others
  --set KEY=VALUE   set a variable (repeatable); VALUE is parsed as JSON when it is
                    valid JSON (5, 2.5, true, null, "s", [1,2], {"a":1}), else it is
                    taken as a string; a number beyond float64 (1e999) or an
                    integer beyond int64 is an error, as in --vars; --set wins
                    over --vars. The engine's own variables, flow.executionErrors
                    and flow.branchFailures, cannot be set (exit 2)
  --vars FILE       read variables from a JSON object
  --steps N         step limit of the run, at least 1 (default: the engine's, 100000);
                    with --store it is kept with the instance, and each resume has
                    the same limit for its own steps
  --instance ID     instance id (default: a random one)
  --output FORMAT   text (default) or json
  --audit FILE      append the run's audit records to FILE (JSON Lines; read it with
                    "flowteam audit FILE"); if they cannot be written the run fails;
                    FILE is created only when the run starts. Written at least every
                    second; with --durability per-node each node's records are
                    written and synced before the node is saved, so after a crash
                    the audit has every node the stored instance counts done
  --store DSN       save the instance in a session store (memory:, file:DIR or
                    redis://HOST:PORT/DB; "flowteam resume -h" tells more) under
                    --instance, which must not exist yet (else exit 3)
  --durability M, --ttl DURATION
                    how the instance is saved, as for resume (with --store only)
  --redact KEYS, --redact-pattern RE
                    mask secrets in the output, the audit and the store, as for
                    resume
  --solon-types     read a node type flowteam does not know as an activity, as Solon
                    does, instead of refusing it; with --store it is kept with the
                    instance, and resume reads the files the same way
` + evaluatorUsage + depthUsage + `
Output (json): {"instance", "graph", "status", "reason" (suspended only), "steps",
"vars", "unprintable" (only if some variable cannot be written as JSON: their names),
"last" (call path -> last node), "frontier" (not completed only: pending
"callpath:node"), "error" ({"code", "node", "graph", "message"} or null), "errors"
(the execution error records, recoverable and fatal)}.

Exit codes: 0 completed, suspended or stopped; 1 the run failed; 2 bad input; 3 with
--store: the instance exists already.

Signals: SIGINT (Ctrl-C) or SIGTERM cancels the run: it ends failed with code
"cancelled", the nodes it cut short run again on resume, with --store the instance is
saved where it stood, the outcome is printed, and the command exits 1. A second signal
ends the process at once.
`

// runConfig is the parsed command line of "flowteam run".
type runConfig struct {
	files    []string
	graph    string
	sets     []string
	varsFile string
	steps    int
	instance string
	output   string
	audit    string
	store    storeFlags // --store and friends (store.go)
	eval     string     // --evaluator
	maxDepth int        // --max-depth; 0: the engine's
}

// setFlag collects the values of a repeatable flag (--set, --file, --admin, --redact,
// --redact-pattern): each use adds one.
type setFlag []string

func (s *setFlag) String() string     { return strings.Join(*s, " ") }
func (s *setFlag) Set(v string) error { *s = append(*s, v); return nil }

// cmdRun implements "flowteam run". It returns the process exit code.
func cmdRun(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseRunArgs(args)
	switch {
	case help:
		fmt.Fprint(stdout, runUsage)
		return exitOK
	case err != nil:
		return usageError(stderr, "run", err)
	}

	fail := failer(stderr, "run")
	vars, err := runVars(cfg)
	if err != nil {
		return fail(exitUsage, err)
	}
	files, err := definitionFiles(cfg.files)
	if err != nil {
		return fail(exitUsage, err)
	}
	// The settings the run records with a store: its durability, steps and redaction.
	st, err := cfg.store.settings(cfg.steps)
	if err != nil {
		return fail(exitUsage, err)
	}
	red, err := st.redactor()
	if err != nil {
		return fail(exitUsage, err)
	}
	evalOpts, err := evaluatorOptions(cfg.eval)
	if err != nil {
		return fail(exitUsage, err)
	}
	evalOpts = append(evalOpts, depthOptions(cfg.maxDepth)...)
	evalOpts = append(evalOpts, flow.WithReadOptions(readOptions(cfg.store.solonTypes)...))
	eng, closeAudit, err := newEngine(cfg.audit, st.durability, stderr, red, evalOpts...)
	if err != nil {
		return fail(exitUsage, err)
	}
	defer closeAudit()
	graphs, err := eng.LoadFiles(files...)
	if err != nil {
		if errors.Is(err, flow.ErrUnknownTask) {
			// The engine's advice (register the task) is for Go programs.
			err = fmt.Errorf("%w\n\"@name\" tasks are Go code: from the command line only script tasks, "+
				"\"$meta\" scripts, \"#id\" sub-graphs and \"@wait\" can run", err)
		}
		return fail(exitUsage, err)
	}
	g, err := pickGraph(graphs, cfg.graph, "run")
	if err != nil {
		return fail(exitUsage, err)
	}

	if cfg.instance == "" {
		cfg.instance = newInstanceID()
	}
	ctx, stop := interruptible()
	defer stop()
	fc := flow.NewContextWith(cfg.instance, vars)
	res, code := cfg.store.eval(ctx, eng, g, files, fc, st, stderr)
	if res == nil {
		return code
	}

	out := newRunOutput(res, fc.Vars(), red)
	return writeOutcome(stdout, stderr, "run", out, cfg.output, code)
}

// newEngine returns the engine of run and resume, with the task "@wait" (as the
// workers have it, so one definition runs in both), the --audit interceptor when
// audit names a file (masking with red, keeping up with the store's durability d),
// and opts; closeAudit closes that file.
func newEngine(audit string, d session.Durability, stderr io.Writer, red *redact.Redactor, opts ...flow.Option) (eng *flow.Engine,
	closeAudit func(), err error) {
	closeAudit = func() {}
	if audit != "" {
		ra, err := openRunAudit(audit, d, stderr, red)
		if err != nil {
			return nil, nil, err
		}
		opts, closeAudit = append(opts, ra.option()), func() { ra.Close() }
	}
	eng = flow.NewEngine(opts...)
	eng.RegisterTask("wait", worker.WaitTask())
	return eng, closeAudit, nil
}

// writeOutcome prints the outcome of run or resume (command) in format (text or json)
// and returns the exit code: exitFail for a failed run or an output that could not be
// written, else code.
func writeOutcome(stdout, stderr io.Writer, command string, out *runOutput, format string, code int) int {
	var err error
	if format == "json" {
		err = out.writeJSON(stdout)
	} else {
		err = out.writeText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "flowteam %s: write output: %v\n", command, err)
		return exitFail
	}
	if out.Status == string(flow.StatusFailed) {
		return exitFail
	}
	return code
}

// parseRunArgs parses the command line (flags may come before or after the files).
// help is true when -h or --help was given.
func parseRunArgs(args []string) (cfg runConfig, help bool, err error) {
	fs := flag.NewFlagSet("flowteam run", flag.ContinueOnError)
	var sets setFlag
	fs.StringVar(&cfg.graph, "graph", "", "")
	fs.Var(&sets, "set", "")
	fs.StringVar(&cfg.varsFile, "vars", "", "")
	fs.IntVar(&cfg.steps, "steps", 0, "")
	fs.StringVar(&cfg.instance, "instance", "", "")
	outputFlag(fs, &cfg.output)
	fs.StringVar(&cfg.audit, "audit", "", "")
	evaluatorFlag(fs, &cfg.eval)
	solonTypesFlag(fs, &cfg.store.solonTypes)
	depthFlag(fs, &cfg.maxDepth)
	cfg.store.register(fs)

	files, help, err := parseCommandLine(fs, args)
	if help || err != nil {
		return cfg, help, err
	}
	cfg.files = files
	cfg.sets = sets
	if err := checkNotEmpty(fs, "graph", "vars", "instance", "audit", "store", "durability", "redact", "redact-pattern"); err != nil {
		return cfg, false, err
	}
	if _, err := cfg.store.redactor(); err != nil {
		return cfg, false, err
	}
	if cfg.store.dsn == "" {
		// Without a store they would be ignored: a user who asked for a save per node
		// would think there was one.
		for _, name := range []string{"durability", "ttl"} {
			if flagGiven(fs, name) {
				return cfg, false, fmt.Errorf("--%s applies with --store only", name)
			}
		}
	}
	switch {
	case len(cfg.files) == 0:
		return cfg, false, errors.New("no definition file given")
	}
	if err := cmp.Or(checkOutput(cfg.output), checkSteps(fs, cfg.steps), checkDepth(fs, cfg.maxDepth)); err != nil {
		return cfg, false, err
	}
	for _, s := range cfg.sets {
		if err := checkSet(s); err != nil {
			return cfg, false, err
		}
	}
	return cfg, false, nil
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) (given bool) {
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// runVars builds the run's variables: the --vars file, then each --set in order.
func runVars(cfg runConfig) (map[string]any, error) {
	vars := make(map[string]any)
	if cfg.varsFile != "" {
		data, err := os.ReadFile(cfg.varsFile)
		if err != nil {
			return nil, fmt.Errorf("--vars: %w", err)
		}
		vars, err = decodeVars(cfg.varsFile, data)
		if err != nil {
			return nil, fmt.Errorf("--vars: %w", err)
		}
		for k := range vars {
			if err := checkReserved(k); err != nil {
				return nil, fmt.Errorf("--vars %s: %w", cfg.varsFile, err)
			}
		}
	}
	for _, s := range cfg.sets {
		k, v, _ := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if err := checkReserved(k); err != nil {
			return nil, fmt.Errorf("--set: %w", err)
		}
		pv, err := parseValue(v)
		if err != nil {
			return nil, fmt.Errorf("--set %q: %w", s, err)
		}
		vars[k] = pv
	}
	return vars, nil
}

// definitionFiles expands the command line's FILE|DIR|GLOB arguments (flow.ExpandPaths).
// An empty one (an unset shell variable) is refused by name, where opening it would
// report "open : no such file or directory". A file named twice (a directory and a file
// in it, "./x.yml" and "x.yml", a link to it) is kept once, under its first name: loaded
// twice, its graph would be reported as defined twice, by itself.
func definitionFiles(args []string) ([]string, error) {
	if slices.ContainsFunc(args, func(a string) bool { return strings.TrimSpace(a) == "" }) {
		return nil, errors.New("an empty file name among the definition files")
	}
	files, err := flow.ExpandPaths(args...)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(files))
	return slices.DeleteFunc(files, func(f string) bool {
		target, err := filepath.EvalSymlinks(f)
		if err == nil {
			target, err = filepath.Abs(target)
		}
		if err != nil {
			return false // a file that cannot be resolved is left for loading to report
		}
		dup := seen[target]
		seen[target] = true
		return dup
	}), nil
}

// pickGraph chooses the graph to run (or export: verb names what the command does with
// it): the one named by id, the only one loaded, or the only one that no other loaded
// graph calls as a sub-graph ("#id").
func pickGraph(graphs []*flow.Graph, id, verb string) (*flow.Graph, error) {
	ids := make([]string, len(graphs))
	for i, g := range graphs {
		ids[i] = g.ID
	}
	slices.Sort(ids)
	if id != "" {
		for _, g := range graphs {
			if g.ID == id {
				return g, nil
			}
		}
		return nil, fmt.Errorf("--graph %q: no such graph among the loaded ones (%s)", id, strings.Join(ids, ", "))
	}
	if len(graphs) == 1 {
		return graphs[0], nil
	}
	called := make(map[string]bool)
	for _, g := range graphs {
		for _, sub := range g.Calls() {
			if sub != g.ID {
				called[sub] = true
			}
		}
	}
	var roots []*flow.Graph
	for _, g := range graphs {
		if !called[g.ID] {
			roots = append(roots, g)
		}
	}
	if len(roots) == 1 {
		return roots[0], nil
	}
	var names []string
	for _, g := range roots {
		names = append(names, g.ID)
	}
	if len(names) == 0 {
		names = ids // every graph calls another: all are candidates
	}
	slices.Sort(names)
	return nil, fmt.Errorf("%d graphs could be %s (%s): choose one with --graph", len(names), verb, strings.Join(names, ", "))
}

func newInstanceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return "i-" + hex.EncodeToString(b[:])
}
