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
  flowteam sessions delete ID --store DSN [--force]

Flags may come before or after the command and the id.

list prints the stored instances (with --status only those with that status:
running, suspended, stopped, failed or completed, in any case), sorted by id, and of a
running instance its owner (PID@HOST) and its lease: "until TIME" while it is fresh,
"expired TIME" once the owner stopped renewing it (the process died); an instance
that cannot be read is named on stderr, and list then exits 2. show prints one
instance's snapshot as JSON: its definition hashes (of the graph and, in "called", of
the graphs it calls) and files, status, version, the owner's "lease", variables
(redacted ones masked), frontier, FlowTrace, errors, and in "meta" the settings a
resume applies again ("durability=...", "steps=N", "solon-types=true", one
"redact=NAME" per name and one "redact-pattern=RE" per pattern); an encrypted
snapshot is opened with $` + keyEnv + `, or shown sealed without it.
delete removes an instance; one that is running with a fresh lease (its process is
alive) only with --force.

` + storeUsage + `
Exit codes: 0 success; 1 the store failed; 2 bad input, unknown or corrupt instance;
3 delete refused: the instance is running and its lease is fresh.
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
	// Lease is the owner's lease of a running instance; Fresh says whether it was
	// fresh when listed.
	Lease *session.Lease `json:"lease,omitempty"`
	Fresh bool           `json:"leaseFresh,omitempty"`
}

// sessionsConfig is the parsed command line of "flowteam sessions".
type sessionsConfig struct {
	sub                 string   // list, show or delete; "" when none valid was given
	ids                 []string // the instance ids after the subcommand
	dsn, status, output string
	force               bool // delete --force
}

// cmdSessions implements "flowteam sessions".
func cmdSessions(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseSessionsArgs(args)
	command := strings.TrimSpace("sessions " + cfg.sub)
	switch {
	case help:
		fmt.Fprint(stdout, sessionsUsage)
		return exitOK
	case err != nil:
		return usageError(stderr, command, err)
	}
	store, closeStore, err := openExistingStore(cfg.dsn)
	if err != nil {
		return usageError(stderr, command, err)
	}
	defer closeStore()
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "flowteam %s: %v\n", command, err)
		return sessionExit(err)
	}
	switch cfg.sub {
	case "list":
		return sessionsList(ctx, store, cfg, stdout, fail)
	case "show":
		return sessionsShow(ctx, store, cfg.ids[0], stdout, stderr, fail)
	}
	return sessionsDelete(ctx, store, cfg, stdout, fail)
}

// sessionsDelete implements "flowteam sessions delete ID": an instance whose process
// is alive (running, with a fresh lease) is deleted only with --force. The check and
// the delete are two steps: a process that claims the instance in between loses it.
func sessionsDelete(ctx context.Context, store session.Store, cfg sessionsConfig, stdout io.Writer,
	fail func(error) int) int {
	id := cfg.ids[0]
	if !cfg.force {
		s, err := store.Load(ctx, id)
		if err != nil && !errors.Is(err, session.ErrCorrupt) && !errors.Is(err, session.ErrFormat) {
			return fail(err) // a corrupt instance can be deleted: nothing runs it
		}
		if err == nil && s.Status == session.StatusRunning && s.Lease.Fresh(time.Now()) {
			return fail(fmt.Errorf("%w\n--force deletes it all the same (its process then stops at its next lease renewal)",
				&session.LeaseHeldError{Instance: id, Lease: *s.Lease}))
		}
	}
	if err := store.Delete(ctx, id); err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "deleted %s\n", id)
	return exitOK
}

// parseSessionsArgs parses the command line of "flowteam sessions". One flag set serves
// every subcommand, so that flags may come before the subcommand as well as after it:
// the subcommand is the first positional argument. help is true when -h, --help or the
// subcommand help was given.
func parseSessionsArgs(args []string) (cfg sessionsConfig, help bool, err error) {
	fs := flag.NewFlagSet("flowteam sessions", flag.ContinueOnError)
	fs.StringVar(&cfg.dsn, "store", "", "")
	fs.StringVar(&cfg.status, "status", "", "")
	fs.BoolVar(&cfg.force, "force", false, "")
	outputFlag(fs, &cfg.output)
	pos, help, err := parseCommandLine(fs, args)
	if err == nil && len(pos) > 1 && pos[0] == "help" {
		return cfg, false, fmt.Errorf("help takes no arguments, got %q", pos[1:])
	}
	if help || (err == nil && len(pos) > 0 && pos[0] == "help") {
		return cfg, true, nil
	}
	switch {
	case err != nil: // no positional arguments then, so no subcommand to name
		return cfg, false, err
	case len(pos) == 0:
		return cfg, false, errors.New("no command given: want list, show or delete")
	case pos[0] != "list" && pos[0] != "show" && pos[0] != "delete":
		return cfg, false, fmt.Errorf("unknown command %q", pos[0])
	}
	cfg.sub, cfg.ids = pos[0], pos[1:]
	return cfg, false, cfg.check(fs)
}

// check checks the flags and ids given to cfg.sub.
func (cfg sessionsConfig) check(fs *flag.FlagSet) error {
	want := 1
	if cfg.sub == "list" {
		want = 0
	}
	var misplaced string // a flag of list or delete given to another subcommand
	fs.Visit(func(f *flag.Flag) {
		if misplaced == "" && (cfg.sub != "list" && (f.Name == "status" || f.Name == "output") ||
			cfg.sub != "delete" && f.Name == "force") {
			misplaced = f.Name
		}
	})
	// An empty flag (an unset shell variable: "--status $S") taken for one not given
	// would list every instance.
	emptyErr := checkNotEmpty(fs, "store", "status", "output")
	switch {
	case misplaced == "force":
		return errors.New("--force applies to delete only")
	case misplaced != "":
		return fmt.Errorf("--%s applies to list only", misplaced)
	case emptyErr != nil:
		return emptyErr
	case cfg.dsn == "":
		return errors.New("--store is required")
	case len(cfg.ids) != want:
		return fmt.Errorf("want %d instance id argument(s), got %d", want, len(cfg.ids))
	case cfg.status != "" && !session.Status(strings.ToLower(cfg.status)).Valid():
		return fmt.Errorf("--status %q: want running, suspended, stopped, failed or completed", cfg.status)
	}
	return checkOutput(cfg.output)
}

// sessionsList implements "flowteam sessions list". fail reports an error and returns
// its exit code.
func sessionsList(ctx context.Context, store session.Store, cfg sessionsConfig, stdout io.Writer,
	fail func(error) int) int {
	ids, err := store.List(ctx, session.Status(strings.ToLower(cfg.status)))
	if err != nil {
		return fail(err)
	}
	entries := []sessionEntry{}
	code := exitOK
	now := time.Now()
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
			Graph: s.Graph, Updated: s.Updated, Reason: s.Reason, Sealed: s.Sealed != nil, Lease: s.Lease,
			Fresh: s.Lease.Fresh(now)})
	}
	if cfg.output == "json" {
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
}

// sessionsShow implements "flowteam sessions show ID": the snapshot as indented JSON,
// opened with $FLOWTEAM_SESSION_KEY when it is set.
func sessionsShow(ctx context.Context, store session.Store, id string, stdout, stderr io.Writer,
	fail func(error) int) int {
	s, err := store.Load(ctx, id)
	if err != nil {
		return fail(err)
	}
	c, err := cipherFromEnv()
	if err != nil {
		return usageError(stderr, "sessions show", err)
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
	return exitOK
}

func writeSessionList(w io.Writer, entries []sessionEntry) error {
	if len(entries) == 0 {
		_, err := io.WriteString(w, "no instances\n")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tSTATUS\tVERSION\tGRAPH\tUPDATED\tOWNER\tLEASE\tREASON")
	for _, e := range entries {
		reason := e.Reason
		if e.Sealed {
			reason = "(encrypted)"
		}
		owner, lease := "-", "-"
		if e.Lease != nil {
			owner = fmt.Sprintf("%d@%s", e.Lease.PID, e.Lease.Host)
			lease = "expired " + e.Lease.Expiry.UTC().Format(time.RFC3339)
			if e.Fresh {
				lease = "until " + e.Lease.Expiry.UTC().Format(time.RFC3339)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", e.Instance, e.Status, e.Version, e.Graph,
			e.Updated.UTC().Format(time.RFC3339), owner, lease, strings.ReplaceAll(reason, "\n", " "))
	}
	return tw.Flush()
}
