package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/workflow"
)

// exitNotPermitted is the exit code of a task command the controller refused.
const exitNotPermitted = 4

const taskUsage = `Usage:
  flowteam task claim   DEFS --graph ID --instance ID --store DSN --actor V [flags]
  flowteam task find    DEFS --graph ID --instance ID --store DSN [--actor-key K]
  flowteam task next    DEFS --graph ID --instance ID --store DSN [--actor-key K] [--actor V]
  flowteam task state   DEFS --graph ID --instance ID --store DSN --node N
  flowteam task submit  DEFS --graph ID --instance ID --store DSN --node N
                        --action A --actor V [flags]
  flowteam task history --instance ID --store DSN

Approval tasks on a graph: a node whose meta names an actor (meta: {actor: tl})
waits for that actor to claim and submit it; a node without one moves on by
itself, running its script. DEFS is a file or directory as for run. The first
claim or submit of an unknown instance creates it.

  claim    the first task the actor may operate becomes waiting and is printed
           (none: "task": null, exit 0)
  find     where the instance stands (no permission check)
  next     every task the instance waits for, in every branch
  state    the state of one node's task: unknown, waiting, completed, terminated
  submit   apply an action to a node's task: forward (complete it), back (send it
           to the step before), forward_jump and back_jump (move to the node),
           restart (clear every task), terminate (stop until a restart);
           forward and back need the node's actor and a task the instance
           waits on, the others an administrator
  history  every submit of the instance: node, action, actor, time, variables,
           comment

Flags:
  --graph ID         the graph (needed when DEFS hold several)
  --instance ID      the instance
  --store DSN        memory:, file:DIR or redis://HOST:PORT/DB (see flowteam resume -h)
  --actor V          who calls: compared with the node's meta value for --actor-key
  --actor-key K      the meta key naming a node's actor (default actor); the
                     instance keeps the one it was created with, and another
                     is refused (exit 2): it decides which nodes wait
  --admin V          an actor value that may operate every node and submit every
                     action (repeatable)
  --node N           the node (a called sub-graph's node: GRAPH:NODE)
  --action A         forward, forward_jump, back, back_jump, restart or terminate
  --if-waiting       submit only if the task is waiting (else exit 3)
  --set KEY=VALUE    set an instance variable first, as for run (repeatable)
  --comment TEXT     a comment for the history
  --redact KEYS      comma-separated variables declared secret (repeatable), as
                     for run: their values are masked as *** in the output (text
                     and json), error messages, the audit and the store, also
                     where other text quotes them (another variable, a comment,
                     the history); variables under sensitive keys (password,
                     token, api_key, ...) are masked in the output and the audit
                     always, in the store too once --redact or --redact-pattern
                     is given. The instance records them at its next save, and
                     every later command masks them again, --redact or not. The
                     store holds *** for a masked variable, so a command knows
                     the value only from --set: set it again where a script or
                     a condition needs it, or a comment quotes it
  --redact-pattern RE  also mask every match of the regular expression RE
                     (repeatable; recorded with the instance as --redact is)
  --audit FILE       claim, submit: append a task record of what took effect to
                     FILE (JSON Lines, as "flowteam run --audit" writes; read it
                     with "flowteam audit FILE"): STARTED for a claim, COMPLETED
                     for a submit, with attrs task, action, actor, comment and
                     status, run "task:<instance>"; a record that cannot be
                     written is exit 1, though what it records took effect
  --output FORMAT    text (default) or json

Output (json): claim, find: {"instance","graph","status","task"} where status is
running, completed or terminated and task is {"node","title","state","meta"} or
null; next: {"instance","graph","tasks":[...]}; state: {"instance","node","state"};
submit: {"instance","graph","node","action","status"}; history:
{"instance","graph","status","history":[{"node","action","actor","time","vars",
"comment"}]}.

Exit codes: 0 done; 1 a script or condition failed; 2 bad input (usage, unknown
graph, node, action or instance); 3 conflict (another submit saved the instance
first, --if-waiting on a task that is not waiting, forward or back of a task the
instance does not wait on, a terminated instance); 4 not permitted (the
controller refused the actor).
`

// taskConfig is the parsed command line of "flowteam task".
type taskConfig struct {
	sub, graph, instance, dsn, node, action, comment, output string
	audit                                                    string
	actor, actorKey                                          string
	admins, sets                                             setFlag
	redact, patterns                                         setFlag // --redact, --redact-pattern
	ifWaiting                                                bool
	files                                                    []string
	actorGiven                                               bool
}

// cmdTask implements "flowteam task". It returns the process exit code.
func cmdTask(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseTaskArgs(args)
	switch {
	case help:
		fmt.Fprint(stdout, taskUsage)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "flowteam task %s: %v\n\n%s", cfg.sub, err, taskUsage)
		return exitUsage
	}
	var red *redact.Redactor // masks the error messages once the rules are known
	fail := func(err error) int {
		if errors.Is(err, workflow.ErrWrongController) {
			err = fmt.Errorf("%w (give every command of an instance the same --actor-key)", err)
		}
		fmt.Fprintf(stderr, "flowteam task %s: %s\n", cfg.sub, red.String(err.Error()))
		return taskExit(err)
	}
	open := openExistingStore
	if cfg.sub == "claim" || cfg.sub == "submit" {
		open = openStore
	}
	store, closeStore, err := open(cfg.dsn)
	if err != nil {
		return fail(badInput{err})
	}
	defer closeStore()
	ctx, stop := interruptible()
	defer stop()
	vars, err := runVars(runConfig{sets: cfg.sets})
	if err != nil {
		return fail(badInput{err})
	}
	st, red, err := taskRedactor(ctx, store, cfg, vars)
	if err != nil {
		return fail(err)
	}
	repo := workflow.NewStoreRepository(store)
	if st.redacts() {
		repo = repo.WithRedactor(red).WithMeta(st.redactMeta()...)
	}
	var ta *taskAudit
	if cfg.audit != "" {
		ra, err := openRunAudit(cfg.audit, session.PerNode, stderr, red) // each record written and synced at once
		if err != nil {
			return fail(badInput{err})
		}
		defer ra.Close()
		ta = &taskAudit{audit: ra.audit}
	}
	var out any
	if cfg.sub == "history" {
		out, err = taskHistory(ctx, repo, cfg.instance, red)
	} else {
		out, err = runTask(ctx, cfg, repo, vars, ta.options()...)
	}
	if err != nil {
		return fail(err)
	}
	if err := writeTaskOutput(stdout, cfg.output, out); err != nil {
		return fail(fmt.Errorf("write output: %w", err))
	}
	if ta != nil && ta.err != nil {
		fmt.Fprintf(stderr, "flowteam task %s: it took effect, but its audit record was not written: %s\n", cfg.sub, red.String(ta.err.Error()))
		return exitFail
	}
	return exitOK
}

// taskRedactor returns the redaction settings of a task command on cfg.instance (the
// --redact names and patterns, and those the stored instance records) and their
// Redactor, which has learned the secret values of the stored variables and of vars,
// the --set ones.
func taskRedactor(ctx context.Context, store session.Store, cfg taskConfig, vars map[string]any) (settings, *redact.Redactor, error) {
	snap, err := store.Load(ctx, cfg.instance)
	if err != nil && !errors.Is(err, session.ErrNotFound) {
		return settings{}, nil, err
	}
	st, red, err := instanceRedaction(cfg.redact, cfg.patterns, snap)
	if err != nil {
		return st, nil, err // a pattern the instance records that no longer compiles (the flags' were checked)
	}
	if snap != nil {
		red = red.ForVars(snap.Vars)
	}
	return st, red.ForVars(vars), nil
}

// taskAudit writes the claims and submits of one command to the --audit file.
type taskAudit struct {
	audit *interceptor.Audit
	err   error // the first record that could not be written
}

// options returns the executor options that send its events to the audit (none
// for a nil taskAudit).
func (ta *taskAudit) options() []workflow.Option {
	if ta == nil {
		return nil
	}
	return []workflow.Option{workflow.WithObserver(func(ctx context.Context, ev workflow.Event) {
		err := ta.audit.Task(ctx, interceptor.TaskEvent{Kind: ev.Kind, Time: ev.Time, Graph: ev.Graph, Instance: ev.Instance,
			Node: ev.Node, Action: string(ev.Action), Actor: ev.Actor.String(), Comment: ev.Comment, Status: string(ev.Status)})
		if ta.err == nil {
			ta.err = err
		}
	})}
}

// badInput marks an error of the command line or its files (exit 2).
type badInput struct{ error }

func (b badInput) Unwrap() error { return b.error }

// taskExit maps an error to the command's exit code.
func taskExit(err error) int {
	var bad badInput
	var te *workflow.TaskError
	switch {
	case errors.Is(err, workflow.ErrNotPermitted):
		return exitNotPermitted
	case errors.Is(err, workflow.ErrConflict):
		return exitConflict
	case errors.As(err, &te):
		return exitFail
	case errors.As(err, &bad), errors.Is(err, workflow.ErrNotFound), errors.Is(err, workflow.ErrUnknownNode),
		errors.Is(err, workflow.ErrUnknownAction), errors.Is(err, workflow.ErrNotReached),
		errors.Is(err, workflow.ErrWrongGraph), errors.Is(err, workflow.ErrWrongController), errors.Is(err, flow.ErrGraphNotFound), errors.Is(err, session.ErrInvalidID):
		return exitUsage
	}
	return exitFail
}

// parseTaskArgs parses "flowteam task SUB [DEFS] flags".
func parseTaskArgs(args []string) (cfg taskConfig, help bool, err error) {
	fs := flag.NewFlagSet("flowteam task", flag.ContinueOnError)
	fs.StringVar(&cfg.graph, "graph", "", "")
	fs.StringVar(&cfg.instance, "instance", "", "")
	fs.StringVar(&cfg.dsn, "store", "", "")
	fs.StringVar(&cfg.node, "node", "", "")
	fs.StringVar(&cfg.action, "action", "", "")
	fs.StringVar(&cfg.comment, "comment", "", "")
	fs.StringVar(&cfg.audit, "audit", "", "")
	fs.StringVar(&cfg.actor, "actor", "", "")
	fs.StringVar(&cfg.actorKey, "actor-key", "actor", "")
	fs.Var(&cfg.admins, "admin", "")
	fs.Var(&cfg.sets, "set", "")
	fs.Var(&cfg.redact, "redact", "")
	fs.Var(&cfg.patterns, "redact-pattern", "")
	fs.BoolVar(&cfg.ifWaiting, "if-waiting", false, "")
	outputFlag(fs, &cfg.output)
	pos, help, err := parseCommandLine(fs, args)
	if help || err != nil {
		return cfg, help, err
	}
	if len(pos) == 0 {
		return cfg, false, errors.New("no subcommand: want claim, find, next, state, submit or history")
	}
	cfg.sub, cfg.files = pos[0], pos[1:]
	cfg.actorGiven = flagGiven(fs, "actor")
	if err := checkNotEmpty(fs, "graph", "instance", "store", "node", "action", "actor", "actor-key", "admin", "audit",
		"redact", "redact-pattern"); err != nil {
		return cfg, false, err
	}
	return cfg, false, checkTaskArgs(fs, &cfg)
}

// checkTaskArgs checks that the subcommand has the flags it needs and no others.
func checkTaskArgs(fs *flag.FlagSet, cfg *taskConfig) error {
	need := map[string][]string{
		"claim": {"instance", "store", "actor"}, "find": {"instance", "store"}, "next": {"instance", "store"},
		"state": {"instance", "store", "node"}, "submit": {"instance", "store", "node", "action", "actor"},
		"history": {"instance", "store"},
	}
	allowed := map[string]string{ // and, to every subcommand, redact and redact-pattern
		"claim":   "graph instance store actor actor-key admin set audit output",
		"find":    "graph instance store actor-key output",
		"next":    "graph instance store actor actor-key admin output",
		"state":   "graph instance store node output",
		"submit":  "graph instance store node action actor actor-key admin if-waiting set comment audit output",
		"history": "instance store output",
	}
	names, ok := need[cfg.sub]
	if !ok {
		return fmt.Errorf("unknown subcommand %q: want claim, find, next, state, submit or history", cfg.sub)
	}
	for _, n := range names {
		if !flagGiven(fs, n) {
			return fmt.Errorf("--%s is required", n)
		}
	}
	var extra error
	fs.Visit(func(f *flag.Flag) {
		if extra == nil && !strings.Contains(" "+allowed[cfg.sub]+" redact redact-pattern ", " "+f.Name+" ") {
			extra = fmt.Errorf("--%s does not apply to %s", f.Name, cfg.sub)
		}
	})
	switch {
	case extra != nil:
		return extra
	case cfg.sub == "history" && len(cfg.files) > 0:
		return fmt.Errorf("history takes no definition files, got %q", cfg.files)
	case cfg.sub != "history" && len(cfg.files) == 0:
		return errors.New("no definition file given")
	}
	if err := checkOutput(cfg.output); err != nil {
		return err
	}
	for _, s := range cfg.sets {
		if err := checkSet(s); err != nil {
			return err
		}
	}
	st, err := redactSettings(cfg.redact, cfg.patterns)
	if err == nil {
		_, err = st.redactor() // a pattern that does not compile
	}
	return err
}

// runTask loads the definitions and runs a subcommand other than history.
// vars are the --set variables.
func runTask(ctx context.Context, cfg taskConfig, repo workflow.Repository, vars map[string]any, opts ...workflow.Option) (any, error) {
	files, err := definitionFiles(cfg.files)
	if err != nil {
		return nil, badInput{err}
	}
	eng := flow.NewEngine()
	graphs, err := eng.LoadFiles(files...)
	if err != nil {
		return nil, badInput{err}
	}
	g, err := pickGraph(graphs, cfg.graph, "used")
	if err != nil {
		return nil, badInput{err}
	}
	ctrl := workflow.NewActorController(cfg.actorKey).WithAdmins(cfg.admins...)
	x := workflow.NewExecutor(eng, ctrl, repo, opts...)
	var actor workflow.Actor
	if cfg.actorGiven {
		actor = workflow.As(cfg.actorKey, cfg.actor)
	}
	switch cfg.sub {
	case "claim":
		task, err := x.ClaimTask(ctx, g.ID, cfg.instance, actor, vars)
		return standing(ctx, x, g.ID, cfg.instance, task, err)
	case "find":
		task, err := x.FindTask(ctx, g.ID, cfg.instance)
		return standing(ctx, x, g.ID, cfg.instance, task, err)
	case "next":
		tasks, err := x.FindNextTasks(ctx, g.ID, cfg.instance, actor)
		out := taskList{Instance: cfg.instance, Graph: g.ID, Tasks: []taskJSON{}}
		for i := range tasks {
			out.Tasks = append(out.Tasks, *newTaskJSON(&tasks[i]))
		}
		return out, err
	case "state":
		st, err := x.State(ctx, g.ID, cfg.instance, cfg.node)
		return stateJSON{Instance: cfg.instance, Node: cfg.node, State: st}, err
	}
	s := workflow.Submit{Node: cfg.node, Action: workflow.Action(cfg.action), Actor: actor, Vars: vars, Comment: cfg.comment}
	submit := x.SubmitTask
	if cfg.ifWaiting {
		submit = x.SubmitTaskIfWaiting
	}
	o, err := submit(ctx, g.ID, cfg.instance, s)
	if err != nil {
		return nil, err
	}
	return submitJSON{Instance: o.Instance, Graph: o.Graph, Node: o.Node, Action: o.Action, Status: o.Status}, nil
}
