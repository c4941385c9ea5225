// Command flowteam runs and inspects flowteam graph definitions.
//
// Usage:
//
//	flowteam run FILE|DIR|GLOB... [flags]        run a graph and print the outcome
//	flowteam validate FILE|DIR|GLOB... [flags]   check definitions
//	flowteam export FILE|DIR... --format F       write a graph as yaml, json or a diagram
//	flowteam resume ID --store DSN [flags]       continue a stored instance
//	flowteam sessions list|show|delete ...       inspect the session store
//	flowteam audit FILE... [flags]               print an audit file
//	flowteam task claim|find|next|state|submit|history ...   approval tasks
//	flowteam serve DEFS --store DSN [flags]      a console in the browser
//	flowteam mcp FILE|DIR|GLOB... [flags]        serve graphs as MCP tools on stdio
//	flowteam submit FILE|DIR|GLOB... [flags]     queue a new instance for the workers
//	flowteam worker FILE|DIR|GLOB... [flags]     run queued instances (Redis)
//	flowteam workers --store DSN [flags]         list a queue's live workers
//	flowteam version                             print the module and Go versions
//	flowteam help [COMMAND]                      print the help
//
// help takes at most one command ("flowteam -h run" is "flowteam help run"); more
// arguments are a usage error, as are arguments after a command's -h ("flowteam run -h
// extra"). A usage error prints the error and one line naming the command's -h, not
// the whole help, so that the error stays in sight.
//
// Run "flowteam COMMAND -h" for the flags of a command. A flag that takes a value may be
// given once; --set, --file, --admin, --redact and --redact-pattern repeat. Exit codes: 0 the command
// succeeded (for run and resume: the run completed, was suspended or was stopped), 1
// the run failed, 2 bad input (usage, an unreadable or invalid definition), 3 conflict
// (run --store: the instance exists already; resume: another process resumed it
// first, it is running, or it completed).
//
// SIGINT (Ctrl-C) and SIGTERM cancel a run or resume: it ends failed with code
// "cancelled", is saved where it stood (with a store) and printed, and the command
// exits 1; a second signal ends the process at once.
//
// run --store records how the instance is run with it (its --durability, --steps,
// --solon-types, --redact names and patterns and --ttl), and each resume runs it the
// same way: a flag given to resume replaces the recorded setting (--redact and
// --redact-pattern add), and is recorded in turn for later resumes. A step limit guards
// one evaluation against a loop that does not end, so it counts the steps of the run,
// or of one resume, not the instance's total: an instance resumed many times over its
// life is not stopped for having lived long, and one stopped at the limit continues
// from where it stopped when resumed again (with a higher --steps if need be).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes shared by every subcommand.
const (
	exitOK    = 0 // success; for run: completed, suspended or stopped
	exitFail  = 1 // the run (or the checked thing) failed
	exitUsage = 2 // bad input: usage, unreadable or invalid definition
)

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// dispatch runs the subcommand named by args[0] and returns the process exit code.
// Each subcommand is a func(args []string, stdout, stderr io.Writer) int that parses
// its own flags, so tests call it directly with buffers.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageError(stderr, "", errors.New("no command given"))
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdout, stderr)

	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "export":
		return cmdExport(args[1:], stdout, stderr)
	case "audit":
		return cmdAudit(args[1:], stdout, stderr)
	case "resume":
		return cmdResume(args[1:], stdout, stderr)
	case "sessions":
		return cmdSessions(args[1:], stdout, stderr)
	case "task":
		return cmdTask(args[1:], stdout, stderr)
	case "version":
		return cmdVersion(args[1:], stdout, stderr)
	case "serve":
		return cmdServe(args[1:], stdout, stderr)
	case "mcp":
		return cmdMCP(args[1:], os.Stdin, stdout, stderr)
	case "submit":
		return cmdSubmit(args[1:], stdout, stderr)
	case "worker":
		return cmdWorker(args[1:], stdout, stderr)
	case "workers":
		return cmdWorkers(args[1:], stdout, stderr)
	// ---- more subcommands: add one case line each, above this comment ----
	// Also list the new command in usage below.

	case "help", "-h", "-help", "--help":
		switch {
		case len(args) > 2:
			// Printing some help and exiting 0 would let a script's mistake pass.
			return usageError(stderr, "help", fmt.Errorf("help takes one command, got %d arguments", len(args)-1))
		case len(args) == 2 && !isHelp(args[1]):
			return dispatch([]string{args[1], "--help"}, stdout, stderr) // "help run" is "run --help"
		}
		usage(stdout)
		return exitOK
	default:
		return usageError(stderr, "", fmt.Errorf("unknown command %q", args[0]))
	}
}

// failer returns the fail function of command ("run", "resume", ...): it reports
// err as "flowteam COMMAND: err" and returns code, the exit code to end with.
func failer(stderr io.Writer, command string) func(code int, err error) int {
	return func(code int, err error) int {
		fmt.Fprintf(stderr, "flowteam %s: %v\n", command, err)
		return code
	}
}

// usageError reports err, a usage error of command ("run", "sessions list"; "" for
// flowteam itself), with one line pointing at the command's -h, and returns exitUsage.
// The whole help is not printed: it would push the error out of sight.
func usageError(stderr io.Writer, command string, err error) int {
	name, help := "flowteam", "flowteam"
	if command != "" {
		name += " " + command
		if c, _, _ := strings.Cut(command, " "); c != "help" {
			help += " " + c
		}
	}
	arg, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if c, _, _ := strings.Cut(command, " "); unknown && (c == "resume" || c == "sessions") {
		// An instance id that starts with "-" reads as a flag: say how to give it.
		err = fmt.Errorf("%w (an id that starts with \"-\" goes after \"--\": %s [flags] -- %s)", err, name, arg)
	}
	fmt.Fprintf(stderr, "%s: %v\nRun \"%s -h\" for usage.\n", name, err, help)
	return exitUsage
}

func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprint(w, `flowteam runs graph workflows defined in Solon Flow's YAML/JSON layout.

Usage:
  flowteam <command> [arguments]

Commands:
  run       run a graph and print its outcome (flowteam run -h for flags)
  validate  check definitions: file:line: severity code: message (flowteam validate -h)
  export    write a graph as yaml, json, plantuml, mermaid or dot (flowteam export -h)
  resume    continue a stored instance (flowteam resume -h)
  sessions  list, show or delete stored instances (flowteam sessions -h)
  audit     print an audit file as a timeline or a per-node summary (flowteam audit -h)
  task      claim and submit approval tasks (flowteam task -h)
  serve     a console in the browser: pictures, instances, the task inbox (flowteam serve -h)
  mcp       serve graphs as tools of an MCP server on stdio (flowteam mcp -h)
  submit    queue a new instance for worker processes (flowteam submit -h)
  worker    run queued instances, with other workers on one Redis (flowteam worker -h)
  workers   list a queue's live workers, depth and oldest entry (flowteam workers -h)
  version   print flowteam's module version and the Go version it was built with
  help      print this help, or with a command its help (flowteam help run)

A flag that takes a value may be given once; --set, --file, --admin, --redact
and --redact-pattern repeat. "--" ends the flags: the arguments after it are ids or
files even when they start with "-" (flowteam resume --store DSN -- -x).

Exit codes: 0 success (run: completed, suspended or stopped), 1 the run failed,
2 bad input (usage, unreadable or invalid definition), 3 conflict (run --store,
resume: another process started or resumed the instance first).

SIGINT (Ctrl-C) or SIGTERM cancels a run or resume, which is saved and printed as
failed (exit 1); a second signal ends the process at once.
`)
}
