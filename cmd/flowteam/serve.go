package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/flowteam/flowteam/console"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
)

const serveUsage = `Usage: flowteam serve DEFS --store DSN [--audit FILE|DIR] [--addr 127.0.0.1:8080] [--users FILE]

Serves a console in the browser over the same stores the other commands use: the
graphs as pictures, the instances (a run picture coloured by what the run did, its
audit timeline, variables masked by the redaction rules, errors, history), and the
inbox of approval tasks, with a JSON API under /api/. DEFS is a file or directory as
for run.

Flags:
  --store DSN        memory:, file:DIR or redis://HOST:PORT/DB (see flowteam resume -h)
  --audit FILE|DIR   the JSON Lines audit file, or a directory of *.jsonl files, for
                     the timelines and the pictures
  --addr HOST:PORT   where to listen (default 127.0.0.1:8080); an address other than
                     loopback needs --users
  --users FILE       JSON mapping tokens (16 characters at least) to actors:
                     {"TOKEN": {"actor": "lead", "admin": false}}; re-read on SIGHUP.
                     With it, every page and call needs a token (Authorization:
                     Bearer TOKEN, or the sign-in form's cookie); without it, the
                     console is read-only
  --actor-key K      the meta key naming a node's actor (default actor)
  --redact KEYS      comma-separated variables declared secret (repeatable), as for
                     task: their values are masked as *** on every page, in the
                     JSON API and in error messages, also where other text quotes
                     them (another variable, a comment, the history, a suspend
                     reason); and each instance is masked by the rules it records.
                     A claim or submit saves the instance masked, recording the
                     rules, once the instance or the flags have any, as
                     "flowteam task" does
  --redact-pattern RE  also mask every match of the regular expression RE
                     (repeatable; recorded with the instances as --redact is)

SIGINT and SIGTERM shut the server down gracefully. Exit codes: 0 shut down; 1 the
server failed; 2 bad usage, definitions, store or users file.
`

type serveConfig struct {
	dsn, audit, addr, users, actorKey string
	redact, patterns                  setFlag // --redact, --redact-pattern
	files                             []string
}

// cmdServe implements "flowteam serve". It returns the process exit code.
func cmdServe(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseServeArgs(args)
	switch {
	case help:
		fmt.Fprint(stdout, serveUsage)
		return exitOK
	case err != nil:
		return usageError(stderr, "serve", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	srv, users, closeFn, err := newConsole(cfg, logger)
	if err != nil {
		fmt.Fprintf(stderr, "flowteam serve: %v\n", err)
		return exitUsage
	}
	defer closeFn()
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		fmt.Fprintf(stderr, "flowteam serve: %v\n", err)
		return exitFail
	}
	logger.Info("console listening", "url", "http://"+ln.Addr().String()+"/")
	if err := serveUntilSignal(ln, srv, users, logger); err != nil {
		fmt.Fprintf(stderr, "flowteam serve: %v\n", err)
		return exitFail
	}
	return exitOK
}

func parseServeArgs(args []string) (cfg serveConfig, help bool, err error) {
	fs := flag.NewFlagSet("flowteam serve", flag.ContinueOnError)
	fs.StringVar(&cfg.dsn, "store", "", "")
	fs.StringVar(&cfg.audit, "audit", "", "")
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "")
	fs.StringVar(&cfg.users, "users", "", "")
	fs.StringVar(&cfg.actorKey, "actor-key", "actor", "")
	fs.Var(&cfg.redact, "redact", "")
	fs.Var(&cfg.patterns, "redact-pattern", "")
	cfg.files, help, err = parseCommandLine(fs, args)
	if help || err != nil {
		return cfg, help, err
	}
	if err := checkNotEmpty(fs, "store", "audit", "addr", "users", "actor-key", "redact", "redact-pattern"); err != nil {
		return cfg, false, err
	}
	if _, _, err := serveRedactor(cfg); err != nil {
		return cfg, false, err
	}
	switch {
	case len(cfg.files) == 0:
		return cfg, false, errors.New("no definition file given")
	case cfg.dsn == "":
		return cfg, false, errors.New("--store is required")
	case cfg.users == "" && !console.IsLoopback(cfg.addr):
		return cfg, false, fmt.Errorf("--addr %s is not loopback: give --users so that only holders of a token get in", cfg.addr)
	}
	return cfg, false, nil
}

// newConsole loads the definitions, the store and the users file and returns the
// console; closeFn releases them.
func newConsole(cfg serveConfig, logger *slog.Logger) (srv *console.Server, users *console.Users, closeFn func(), err error) {
	files, err := definitionFiles(cfg.files)
	if err != nil {
		return nil, nil, nil, err
	}
	eng := flow.NewEngine()
	graphs, err := eng.LoadFiles(files...)
	if err != nil {
		return nil, nil, nil, err
	}
	sources := map[string]string{}
	for i, g := range graphs {
		if data, err := os.ReadFile(files[i]); err == nil {
			sources[g.ID] = string(data)
		}
	}
	if cfg.users != "" {
		if users, err = console.LoadUsers(cfg.users); err != nil {
			return nil, nil, nil, err
		}
	}
	flags, red, err := serveRedactor(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	store, closeStore, err := openStore(cfg.dsn)
	if err != nil {
		return nil, nil, nil, err
	}
	srv, err = console.New(console.Config{Engine: eng, Sources: sources, Store: store, Audit: cfg.audit,
		Users: users, ActorKey: cfg.actorKey, Redactor: red, Redaction: serveRedaction(flags, red), Logger: logger, Loopback: console.IsLoopback(cfg.addr)})
	if err != nil {
		closeStore()
		return nil, nil, nil, err
	}
	return srv, users, func() { srv.Close(); closeStore() }, nil
}

// serveRedactor returns the settings of the --redact and --redact-pattern flags and
// their Redactor.
func serveRedactor(cfg serveConfig) (settings, *redact.Redactor, error) {
	st, err := redactSettings(cfg.redact, cfg.patterns)
	if err != nil {
		return st, nil, err
	}
	red, err := st.redactor()
	return st, red, err
}

// serveRedaction returns the console's redaction of an instance, as "flowteam task"
// redacts it: the names and patterns of flags (whose Redactor is red) and those the
// instance records; with any, a save masks the instance and records them all.
func serveRedaction(flags settings, red *redact.Redactor) func(*session.Snapshot) (console.Redaction, error) {
	base := console.Redaction{Redactor: red, Store: flags.redacts(), Meta: flags.redactMeta()}
	return func(snap *session.Snapshot) (console.Redaction, error) {
		if snap == nil {
			return base, nil
		}
		// Slices of its own: settings' slices grow in place, and requests run
		// concurrently.
		st := flags
		st.redact, st.patterns = slices.Clone(flags.redact), slices.Clone(flags.patterns)
		st.addRecorded(snap)
		if slices.Equal(st.redact, flags.redact) && slices.Equal(st.patterns, flags.patterns) {
			return base, nil // nothing beyond the flags: their Redactor, its patterns compiled once
		}
		red, err := st.redactor()
		if err != nil {
			return console.Redaction{}, err // a pattern the instance records that no longer compiles
		}
		return console.Redaction{Redactor: red, Store: st.redacts(), Meta: st.redactMeta()}, nil
	}
}

// serveUntilSignal serves on ln until SIGINT or SIGTERM, then shuts down: requests
// in flight get 10 seconds, event streams end at once. SIGHUP re-reads the users.
func serveUntilSignal(ln net.Listener, h http.Handler, users *console.Users, logger *slog.Logger) error {
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base }}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, append(stopSignals, syscall.SIGHUP)...)
	defer signal.Stop(sig)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	for {
		select {
		case err := <-served:
			return err
		case s := <-sig:
			if s == syscall.SIGHUP {
				if users == nil {
					continue
				}
				if err := users.Reload(); err != nil {
					logger.Error("users file not reloaded", "error", err)
				} else {
					logger.Info("users file reloaded")
				}
				continue
			}
			logger.Info("shutting down", "signal", s.String())
			cancel() // ends the event streams, which never go idle
			ctx, done := context.WithTimeout(context.Background(), 10*time.Second)
			defer done()
			return hs.Shutdown(ctx)
		}
	}
}
