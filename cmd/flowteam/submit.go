package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/worker"
)

const submitUsage = `Usage: flowteam submit FILE|DIR|GLOB... --store redis://... [flags]

Records a new instance of a graph (suspended at its start, reason "queued") in the
Redis store and queues it for "flowteam worker" processes; it returns at once. The
definitions are loaded as by run, and the files are recorded with the instance.
Definitions may use the task "@wait" (meta wait: DURATION or until: RFC3339 time) to
suspend until a time; a worker wakes the instance then. With meta for: NAME it waits
for variable NAME (resume --queue --set NAME=...) and the time is a timeout, after
which it sets timedOut (or meta timeoutVar) to true for a gateway to route on.

Flags:
  --store DSN       the Redis store (required): redis://HOST:PORT/DB[?prefix=P]
  --graph ID        the graph, as for run
  --instance ID     instance id (default: a random one); it must not exist (else exit 3)
  --set KEY=VALUE   set a variable (repeatable), as for run
  --vars FILE       read variables from a JSON object
  --queue NAME      the queue (default "default")
  --redact KEYS     comma-separated variables declared secret (repeatable), as for
                    run: the queued snapshot holds *** for them, for the variables
                    under sensitive keys (password, token, api_key, ...) and for
                    their values where other text quotes them. The instance records
                    the rules, and every worker masks its runs' saves and its logs
                    with them. A masked variable is not given back to the run: one
                    the flow needs is supplied again by a queued resume (resume
                    --queue --set KEY=VALUE), whose updates wait in the queue's
                    stream until a worker takes them: sealed with
                    $FLOWTEAM_SESSION_KEY when it is set, else in clear
  --redact-pattern RE  also mask every match of the regular expression RE
                    (repeatable; recorded with the instance as --redact is)

With $FLOWTEAM_SESSION_KEY set (as for run and worker), the queued snapshot is
sealed with it, so that its variables are not in Redis in clear before a worker runs
it; the workers need the same key.

Output: "queued ID graph GRAPH on queue NAME". Exit codes: 0 queued, 2 bad input,
3 the instance exists.
`

// queueFlags are the flags of the commands that use a worker queue.
type queueFlags struct {
	dsn   string
	queue string
}

func (f *queueFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dsn, "store", "", "")
	fs.StringVar(&f.queue, "queue", worker.DefaultQueue, "")
}

// open opens the Redis store and its queue.
func (f *queueFlags) open() (*worker.Queue, func(), error) {
	if f.dsn == "" {
		return nil, nil, errors.New("--store redis://HOST:PORT/DB is required")
	}
	store, closeFn, err := openStore(f.dsn)
	if err != nil {
		return nil, nil, err
	}
	rs, ok := store.(*session.RedisStore)
	if !ok {
		closeFn()
		return nil, nil, fmt.Errorf("--store %q: workers share a Redis store: want redis://HOST:PORT/DB", shownDSN(f.dsn))
	}
	return worker.NewQueue(rs, worker.WithName(f.queue)), closeFn, nil
}

// loadForWorker loads the definition files into a new engine with the tasks queued
// instances may use ("@wait"), and returns it with the files' absolute paths.
func loadForWorker(args []string) (*flow.Engine, []*flow.Graph, []string, error) {
	files, err := definitionFiles(args)
	if err != nil {
		return nil, nil, nil, err
	}
	eng := flow.NewEngine()
	eng.RegisterTask("wait", worker.WaitTask())
	graphs, err := eng.LoadFiles(files...)
	if err != nil {
		return nil, nil, nil, err
	}
	abs, err := absPaths(files)
	return eng, graphs, abs, err
}

func cmdSubmit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flowteam submit", flag.ContinueOnError)
	var qf queueFlags
	var sets, redactNames, patterns setFlag
	var graph, instance, varsFile string
	qf.register(fs)
	fs.Var(&redactNames, "redact", "")
	fs.Var(&patterns, "redact-pattern", "")
	fs.StringVar(&graph, "graph", "", "")
	fs.StringVar(&instance, "instance", "", "")
	fs.StringVar(&varsFile, "vars", "", "")
	fs.Var(&sets, "set", "")
	pos, help, err := parseCommandLine(fs, args)
	switch {
	case help:
		fmt.Fprint(stdout, submitUsage)
		return exitOK
	case err == nil && len(pos) == 0:
		err = errors.New("no definition file given")
	}
	if err == nil {
		err = checkNotEmpty(fs, "graph", "instance", "vars", "store", "queue", "redact", "redact-pattern")
	}
	for _, s := range sets {
		if err == nil {
			err = checkSet(s)
		}
	}
	if err != nil {
		return usageError(stderr, "submit", err)
	}
	fail := failer(stderr, "submit")
	vars, err := runVars(runConfig{sets: sets, varsFile: varsFile})
	if err != nil {
		return fail(exitUsage, err)
	}
	eng, graphs, files, err := loadForWorker(pos)
	if err != nil {
		return fail(exitUsage, err)
	}
	g, err := pickGraph(graphs, graph, "submitted")
	if err != nil {
		return fail(exitUsage, err)
	}
	opts, err := submitOptions(files, redactNames, patterns)
	if err != nil {
		return fail(exitUsage, err)
	}
	q, closeStore, err := qf.open()
	if err != nil {
		return fail(exitUsage, err)
	}
	defer closeStore()
	if instance == "" {
		instance = newInstanceID()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := q.Submit(ctx, eng, g.ID, instance, vars, opts...); err != nil {
		return fail(sessionExit(err), err)
	}
	fmt.Fprintf(stdout, "queued %s graph %s on queue %s\n", instance, g.ID, qf.queue)
	return exitOK
}

// submitOptions returns the options of a submit of the definition files: the cipher
// of $FLOWTEAM_SESSION_KEY, and the Redactor of the --redact names and
// --redact-pattern expressions, whose rules the instance records for the workers.
func submitOptions(files, names, patterns []string) ([]worker.SubmitOption, error) {
	var sopts []session.Option
	c, err := cipherFromEnv()
	if err != nil {
		return nil, err
	}
	if c != nil {
		sopts = append(sopts, session.WithCipher(c))
	}
	st, err := redactSettings(names, patterns)
	if err != nil {
		return nil, err
	}
	red, err := st.redactor()
	if err != nil {
		return nil, err
	}
	opts := []worker.SubmitOption{worker.WithSources(files...)}
	if st.redacts() {
		sopts = append(sopts, session.WithRedactor(red))
		opts = append(opts, worker.WithMeta(st.redactMeta()...))
	}
	return append(opts, worker.WithSessionOptions(sopts...)), nil
}
