package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flowteam/flowteam/session"
)

const sessionsUsage = `Usage:
  flowteam sessions list --store DSN [--status S] [--output text|json]
  flowteam sessions show ID --store DSN
  flowteam sessions delete ID --store DSN

Flags may come before or after the command and the id.

list prints the stored instances (with --status only those with that status:
running, suspended, stopped, failed or completed, in any case), sorted by id; an
instance that cannot be read is named on stderr, and list then exits 2. show prints one
instance's snapshot as JSON: its definition hash and files, status, version, variables
(redacted ones masked), frontier, FlowTrace, errors, and in "meta" the settings a
resume applies again ("durability=...", "steps=N", one "redact=NAME" per name); an
encrypted snapshot is opened with $` + keyEnv + `, or shown sealed without it.
delete removes an instance.

` + storeUsage + `
Exit codes: 0 success; 1 the store failed; 2 bad input, unknown or corrupt instance.
`

// sessionEntry is one line of "sessions list".
type sessionEntry struct {
	Instance string    `json:"instance"`
	Status   string    `json:"status"`
	Version  int64     `json:"version"`
	Graph    string    `json:"graph"`
	Updated  time.Time `json:"updated"`
	Reason   string    `json:"reason,omitempty"`
	Sealed   bool      `json:"sealed,omitempty"`
}

// cmdSessions implements "flowteam sessions".
func cmdSessions(args []string, stdout, stderr io.Writer) int {
	// One flag set for every subcommand, so that flags may come before the
	// subcommand as well as after it: the subcommand is the first positional argument.
	fs := flag.NewFlagSet("flowteam sessions", flag.ContinueOnError)
	var dsn, status, output string
	fs.StringVar(&dsn, "store", "", "")
	fs.StringVar(&status, "status", "", "")
	outputFlag(fs, &output)
	pos, help, err := parseCommandLine(fs, args)
	if err == nil && len(pos) > 1 && pos[0] == "help" {
		err = fmt.Errorf("help takes no arguments, got %q", pos[1:])
	}
	if help || (err == nil && len(pos) > 0 && pos[0] == "help") {
		fmt.Fprint(stdout, sessionsUsage)
		return exitOK
	}
	sub := ""
	if len(pos) > 0 {
		sub, pos = pos[0], pos[1:]
	}
	usageErr := func(err error) int {
		fmt.Fprintf(stderr, "flowteam sessions %s: %v\n\n%s", sub, err, sessionsUsage)
		return exitUsage
	}
	want := 1
	if sub == "list" {
		want = 0
	}
	var listOnly string // a flag of list given to another subcommand
	fs.Visit(func(f *flag.Flag) {
		if sub != "list" && listOnly == "" && (f.Name == "status" || f.Name == "output") {
			listOnly = f.Name
		}
	})
	// An empty flag (an unset shell variable: "--status $S") taken for one not given
	// would list every instance.
	emptyErr := checkNotEmpty(fs, "store", "status", "output")
	switch {
	case err != nil: // no positional arguments then, so no subcommand to name
		fmt.Fprintf(stderr, "flowteam sessions: %v\n\n%s", err, sessionsUsage)
		return exitUsage
	case sub == "":
		fmt.Fprintf(stderr, "flowteam sessions: no command given: want list, show or delete\n\n%s", sessionsUsage)
		return exitUsage
	case sub != "list" && sub != "show" && sub != "delete":
		fmt.Fprintf(stderr, "flowteam sessions: unknown command %q\n\n%s", sub, sessionsUsage)
		return exitUsage
	case listOnly != "":
		return usageErr(fmt.Errorf("--%s applies to list only", listOnly))
	case emptyErr != nil:
		return usageErr(emptyErr)
	case dsn == "":
		return usageErr(errors.New("--store is required"))
	case len(pos) != want:
		return usageErr(fmt.Errorf("want %d instance id argument(s), got %d", want, len(pos)))
	case status != "" && !session.Status(strings.ToLower(status)).Valid():
		return usageErr(fmt.Errorf("--status %q: want running, suspended, stopped, failed or completed", status))
	case output != "" && output != "text" && output != "json":
		return usageErr(fmt.Errorf("--output must be text or json, not %q", output))
	}
	store, closeStore, err := openExistingStore(dsn)
	if err != nil {
		return usageErr(err)
	}
	defer closeStore()
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "flowteam sessions %s: %v\n", sub, err)
		return sessionExit(err)
	}
	switch sub {
	case "list":
		ids, err := store.List(ctx, session.Status(strings.ToLower(status)))
		if err != nil {
			return fail(err)
		}
		entries := []sessionEntry{}
		code := exitOK
		for _, id := range ids {
			s, err := store.Load(ctx, id)
			if errors.Is(err, session.ErrNotFound) {
				continue // deleted or expired since List
			}
			if errors.Is(err, session.ErrCorrupt) || errors.Is(err, session.ErrFormat) {
				// One unreadable instance must not hide the others: name it, go on,
				// and end with its exit code.
				code = fail(err)
				continue
			}
			if err != nil {
				return fail(err)
			}
			entries = append(entries, sessionEntry{Instance: s.Instance, Status: string(s.Status), Version: s.Version,
				Graph: s.Graph, Updated: s.Updated, Reason: s.Reason, Sealed: s.Sealed != nil})
		}
		if output == "json" {
			enc := json.NewEncoder(stdout)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			err = enc.Encode(entries)
		} else {
			err = writeSessionList(stdout, entries)
		}
		if err != nil {
			return fail(err)
		}
		return code
	case "show":
		s, err := store.Load(ctx, pos[0])
		if err != nil {
			return fail(err)
		}
		c, err := cipherFromEnv()
		if err != nil {
			return usageErr(err)
		}
		if c != nil && s.Sealed != nil {
			if s, err = c.Open(s); err != nil {
				return fail(err)
			}
		}
		data, err := session.Encode(s)
		if err != nil {
			return fail(err)
		}
		var b bytes.Buffer
		if err := json.Indent(&b, data, "", "  "); err != nil {
			return fail(err)
		}
		b.WriteByte('\n')
		if _, err := stdout.Write(b.Bytes()); err != nil {
			return fail(err)
		}
	case "delete":
		if err := store.Delete(ctx, pos[0]); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "deleted %s\n", pos[0])
	}
	return exitOK
}

func writeSessionList(w io.Writer, entries []sessionEntry) error {
	if len(entries) == 0 {
		_, err := io.WriteString(w, "no instances\n")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tSTATUS\tVERSION\tGRAPH\tUPDATED\tREASON")
	for _, e := range entries {
		reason := e.Reason
		if e.Sealed {
			reason = "(encrypted)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", e.Instance, e.Status, e.Version, e.Graph,
			e.Updated.UTC().Format(time.RFC3339), strings.ReplaceAll(reason, "\n", " "))
	}
	return tw.Flush()
}
