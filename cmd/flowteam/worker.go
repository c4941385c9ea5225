package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/worker"
)

const workerUsage = `Usage: flowteam worker FILE|DIR|GLOB... --store redis://... [flags]

Runs the instances queued by "flowteam submit" and "flowteam resume --queue", with
other worker processes on any machine sharing the Redis store. Each instance runs
with per-node durability under a lease the worker renews; the entry is acknowledged
when the run completes, suspends, stops or fails. When a worker dies, another takes
its instances over once their lease has expired and continues each from its last
completed node. Instances suspended by "@wait" are queued again at their time.

SIGINT or SIGTERM stops taking work; the runs in progress have --grace to end, then
they are cancelled, saved where they stand and queued again. A second signal ends the
process at once.

Flags:
  --store DSN        the Redis store (required): redis://HOST:PORT/DB[?prefix=P]
  --queue NAME       the queue (default "default")
  --concurrency N    the most runs at once (default 4)
  --name W           the worker's name, unique among live workers (default HOST-PID)
  --grace D          time the runs in progress get to end at shutdown (default 10s)
  --lease-renew D    renew the leases of the runs and the heartbeat every D (default 5s)
  --lease-ttl D      a lease lasts D (default 30s): a dead worker's runs are taken
                     over D after its last renewal
  --max-deliveries N an entry delivered N times (default 5) to workers that each
                     stopped before its run ended is not run again: it goes to the
                     queue's dead letters (flowteam workers) and its instance is
                     recorded as failed, for resume --queue once the cause is fixed
  --redact KEYS, --redact-pattern RE
                     mask these variables (comma-separated) and the matches of RE
                     in the saves of every run and in the logs, as run does (both
                     repeatable). Each run also applies the rules its instance
                     records (submit --redact, task, serve), whatever the worker's
                     flags; the worker's own are not recorded, but the instance
                     names the variables they masked. A masked variable is not
                     given back to a later run: resume --queue --set supplies it

With $FLOWTEAM_SESSION_KEY set (as for submit and resume), the worker opens and seals
the runs' snapshots and the queued updates with it, and moves an entry whose updates
it cannot open to the dead letters instead of running it.

Logs go to stderr; errors reading the queue later are logged and retried. Exit codes:
0 after a shutdown, 1 Redis could not be reached at start, 2 bad input.
`

func cmdWorker(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flowteam worker", flag.ContinueOnError)
	var qf queueFlags
	var name string
	var redactNames, patterns setFlag
	var conc, maxDel int
	var grace, renew, ttl time.Duration
	qf.register(fs)
	fs.Var(&redactNames, "redact", "")
	fs.Var(&patterns, "redact-pattern", "")
	fs.StringVar(&name, "name", "", "")
	fs.IntVar(&conc, "concurrency", 4, "")
	fs.IntVar(&maxDel, "max-deliveries", worker.DefaultMaxDeliveries, "")
	fs.DurationVar(&grace, "grace", 10*time.Second, "")
	fs.DurationVar(&renew, "lease-renew", session.DefaultLeaseRenew, "")
	fs.DurationVar(&ttl, "lease-ttl", session.DefaultLeaseTTL, "")
	pos, help, err := parseCommandLine(fs, args)
	switch {
	case help:
		fmt.Fprint(stdout, workerUsage)
		return exitOK
	case err == nil && len(pos) == 0:
		err = errors.New("no definition file given")
	case err == nil && conc < 1:
		err = fmt.Errorf("--concurrency must be at least 1, got %d", conc)
	case err == nil && maxDel < 1:
		err = fmt.Errorf("--max-deliveries must be at least 1, got %d", maxDel)
	case err == nil && (renew <= 0 || ttl <= renew):
		err = fmt.Errorf("--lease-ttl (%v) must be longer than --lease-renew (%v), both positive", ttl, renew)
	case err == nil && grace < 0:
		err = fmt.Errorf("--grace must not be negative, got %v", grace)
	}
	if err == nil {
		err = checkNotEmpty(fs, "name", "store", "queue", "redact", "redact-pattern")
	}
	if err != nil {
		return usageError(stderr, "worker", err)
	}
	fail := failer(stderr, "worker")
	eng, _, files, err := loadForWorker(pos)
	if err != nil {
		return fail(exitUsage, err)
	}
	q, closeStore, err := qf.open()
	if err != nil {
		return fail(exitUsage, err)
	}
	defer closeStore()
	opts, err := workerOptions(files, redactNames, patterns)
	if err != nil {
		return fail(exitUsage, err)
	}
	opts = append(opts, worker.WithConcurrency(conc), worker.WithGrace(grace), worker.WithLease(renew, ttl),
		worker.WithMaxDeliveries(maxDel), worker.WithLogger(slog.New(slog.NewTextHandler(stderr, nil))))
	if name != "" {
		opts = append(opts, worker.WithWorkerName(name))
	}
	w, err := worker.New(q, eng, opts...)
	if err != nil {
		return fail(exitUsage, err)
	}
	ctx, stop := interruptible()
	defer stop()
	fmt.Fprintf(stderr, "flowteam worker %s: consuming queue %s (concurrency %d)\n", w.Name(), qf.queue, conc)
	if err := w.Run(ctx); err != nil {
		return fail(exitFail, err)
	}
	return exitOK
}

// workerOptions returns the worker's options for the definition files: its runs'
// sources, the cipher of $FLOWTEAM_SESSION_KEY (for the snapshots and the queued
// updates), and the redaction of each run
// (workerRedaction) with the --redact names and --redact-pattern expressions.
func workerOptions(files, names, patterns []string) ([]worker.Option, error) {
	if _, err := workerRedaction(names, patterns)(&session.Snapshot{}); err != nil {
		return nil, err // a bad flag, reported before the worker starts
	}
	c, err := cipherFromEnv()
	if err != nil {
		return nil, err
	}
	opts := []worker.Option{worker.WithRunnerOptions(session.WithSources(files...)),
		worker.WithRedaction(workerRedaction(names, patterns))}
	if c != nil {
		opts = append(opts, worker.WithCipher(c))
	}
	return opts, nil
}

// workerRedaction returns the redaction of a worker's run of an instance: the
// worker's --redact names and --redact-pattern expressions plus those the instance
// records (submit --redact, and the variables its last save masked), as resume adds
// them. With none, the run's saves are not masked, as run's are not without
// --redact. An instance that records a bad rule is an error: the worker does not run
// it, rather than save its secrets in clear.
func workerRedaction(names, patterns []string) func(*session.Snapshot) (*redact.Redactor, error) {
	return func(snap *session.Snapshot) (*redact.Redactor, error) {
		// Built anew for each run: settings' slices grow in place, and runs go on
		// concurrently.
		st, err := redactSettings(names, patterns)
		if err != nil {
			return nil, err
		}
		rec, err := recordedSettings(snap)
		if err != nil {
			return nil, err
		}
		st.addRedact(rec.redact...)
		st.addPatterns(rec.patterns...)
		if !st.redacts() {
			return nil, nil
		}
		return st.redactor()
	}
}

// queueResume queues a resume of instance id with updates on the named queue of
// store, for "flowteam resume --queue": sealed with $FLOWTEAM_SESSION_KEY when set.
func queueResume(ctx context.Context, store session.Store, queue, id string, updates map[string]any,
	stdout, stderr io.Writer) int {
	rs, ok := store.(*session.RedisStore)
	if !ok {
		fmt.Fprintln(stderr, "flowteam resume: --queue needs a Redis store (redis://HOST:PORT/DB)")
		return exitUsage
	}
	var opts []worker.EnqueueOption
	c, err := cipherFromEnv()
	if err != nil {
		fmt.Fprintf(stderr, "flowteam resume: %v\n", err)
		return exitUsage
	}
	if c != nil {
		opts = append(opts, worker.WithSealedUpdates(c))
	}
	if err := worker.NewQueue(rs, worker.WithName(queue)).Enqueue(ctx, id, updates, opts...); err != nil {
		fmt.Fprintf(stderr, "flowteam resume: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "queued %s on queue %s\n", id, queue)
	return exitOK
}
