package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
)

const resumeUsage = `Usage: flowteam resume ID --store DSN [flags]

Continues the stored instance ID from exactly where it stopped (its frontier): nothing
is replayed, and a suspended node runs again, now seeing the --set updates. Before any
node runs the instance is claimed (its stored version is checked and bumped), so of two
concurrent resumes of one instance only one runs; the other exits 3.

The graph definitions are loaded from the files recorded when the instance was started
("flowteam run FILE --store DSN"; "flowteam sessions show ID" lists them). If the
definition of the graph or of any graph it calls ("#id", however deep) has changed
since, the resume fails (exit 2) naming that graph and both definition hashes; --file
loads other files (FILE|DIR|GLOB, repeatable), which must still define the same graph,
and records them for later resumes.

--accept-changed-definition resumes on the changed definitions (and records their
hashes). Kept: the variables, the FlowTrace, and the frontier, by node id: the pending
nodes, join arrivals and loop positions. What can break: a pending node whose id is
gone fails the resume before anything runs (exit 2); a node that was renamed, or a
join, split or loop whose links changed, may wait for branches that never come or
count arrivals of another shape; a sub-graph call in progress continues in the new
sub-graph by node id. Nothing already run is run again on the new definitions.

While it runs the instance, the process holds a lease on it (see --lease-renew): of
an instance whose status is running, --recover takes over only one whose lease has
expired, so that an instance whose process is alive is never run twice (exit 3,
naming the owner's host and pid and when its lease expires).

Flags:
  --store DSN          the session store (required; see Stores below)
  --set KEY=VALUE      update a variable before continuing (repeatable; VALUE as in run)
  --vars FILE          updates from a JSON object; --set wins
  --file FILE          load these definition files instead of the recorded ones
                       (then recorded in their place)
  --steps N            step limit of this resume, counting its own steps only, as
                       the output's steps do (default: the limit the instance was
                       run or last resumed with, else the engine's, 100000); kept
                       for later resumes
  --recover            take over an instance whose status is running because the
                       process running it died (per-node durability resumes from its
                       last completed node); refused while its lease is fresh
  --accept-changed-definition
                       resume even if the definitions changed (see above)
  --expect-version N   resume only if the stored version is N
  --queue NAME         queue the resume (with its --set updates) for the "flowteam
                       worker" processes of queue NAME instead of running it here
                       (Redis store only; "default" is the workers' default queue);
                       with $FLOWTEAM_SESSION_KEY set the updates are queued sealed
                       with it, else in clear
  --audit FILE         append the run's audit records to FILE (JSON Lines), created
                       only when the run starts
  --output FORMAT      text (default) or json, the same output as run
  --solon-types        read a node type flowteam does not know as an activity, as
                       Solon does, instead of refusing it (default: as the instance
                       was run or last resumed); kept for later resumes
` + evaluatorUsage + depthUsage + storeFlagsUsage + `
` + storeUsage + `
Encrypted snapshots: with $` + keyEnv + ` set (an AES key in hex, 32, 48 or 64 digits)
run and resume encrypt the stored variables, frontier and trace (AES-GCM).

Exit codes: 0 completed, suspended or stopped; 1 the run failed (or its outcome could
not be saved); 2 bad input: usage, unknown or corrupt instance, changed or unreadable
definition; 3 conflict: another process resumed the instance first, it is running, or
it completed.

Signals: SIGINT (Ctrl-C) or SIGTERM cancels the run, as in run: the instance is saved
where it stood (failed, resumable), the outcome is printed, and the command exits 1. A
second signal ends the process at once.
`

type resumeConfig struct {
	id       string
	sets     []string
	varsFile string
	files    []string
	steps    int
	recover  bool
	accept   bool // --accept-changed-definition
	expect   int64
	audit    string
	output   string
	store    storeFlags
	eval     string // --evaluator
	maxDepth int    // --max-depth; 0: the engine's
	queue    string // --queue: queue the resume for a worker
	// keepTTL: --ttl was not given, so the instance keeps the time to live it was
	// last saved with; keepDurability, keepSteps, keepSolonTypes: --durability,
	// --steps, --solon-types were not given, so it keeps the recorded ones.
	keepTTL, keepDurability, keepSteps, keepSolonTypes bool
}

// cmdResume implements "flowteam resume".
func cmdResume(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseResumeArgs(args)
	switch {
	case help:
		fmt.Fprint(stdout, resumeUsage)
		return exitOK
	case err != nil:
		return usageError(stderr, "resume", err)
	}
	fail := failer(stderr, "resume")
	updates, err := runVars(runConfig{sets: cfg.sets, varsFile: cfg.varsFile})
	if err != nil {
		return fail(exitUsage, err)
	}
	store, closeStore, err := openExistingStore(cfg.store.dsn)
	if err != nil {
		return fail(exitUsage, err)
	}
	defer closeStore()

	ctx, stop := interruptible()
	defer stop()
	// The header (in clear even when the body is encrypted) names the definition
	// files. The Runner loads the snapshot again to claim it, expecting this version,
	// so a change in between is a conflict.
	snap, err := store.Load(ctx, cfg.id)
	if err != nil {
		return fail(sessionExit(err), err)
	}
	// Checked again by the Runner, but here before the definitions load: a script
	// retrying a resume of an instance that completed long ago must get the conflict,
	// not bad input because a deploy has since moved the recorded files.
	if err := checkResumable(snap, cfg); err != nil {
		return fail(exitConflict, explainResumeError(err, cfg))
	}
	if cfg.queue != "" {
		return queueResume(ctx, store, cfg.queue, cfg.id, updates, stdout, stderr)
	}
	cfg.keepRecordedTTL(snap)
	st, err := resumeSettings(cfg, snap)
	if err != nil {
		return fail(exitUsage, err)
	}
	// The flags' rules and those snap records, for the audit and the output alike.
	red, err := st.redactor()
	if err != nil {
		return fail(exitUsage, err)
	}
	eng, sources, closeAudit, err := resumeEngine(cfg, snap, st, red, stderr)
	if err != nil {
		return fail(exitUsage, err)
	}
	defer closeAudit()
	r, err := cfg.store.runner(eng, store, sources, st, acceptChanged(cfg)...)
	if err != nil {
		return fail(exitUsage, err)
	}
	warnChanged(r, snap, cfg, stderr)
	res, err := r.Resume(ctx, cfg.id, updates, resumeOptions(cfg, snap, st)...)
	if res == nil {
		err = explainResumeError(err, cfg)
		return fail(sessionExit(err), err)
	}
	code := exitOK
	if err != nil && err != res.Err { // not only the run's own error
		fmt.Fprintf(stderr, "flowteam resume: %v\n", err) // the outcome could not be saved
		code = exitFail
	}
	out := newRunOutput(res.Result, res.Context.Vars(), red)
	return writeOutcome(stdout, stderr, "resume", out, cfg.output, code)
}

// keepRecordedTTL keeps the time to live snap was last saved with when --ttl was not
// given. A store stamps Expires as Updated plus the save's time to live. Dropped, it
// would have an instance meant to be kept for a while kept forever. (A DSN's ttl= is
// the store's own for every save: it applies instead.)
func (cfg *resumeConfig) keepRecordedTTL(snap *session.Snapshot) {
	if cfg.keepTTL && !snap.Expires.IsZero() && !dsnSetsTTL(cfg.store.dsn) {
		cfg.store.ttl = max(snap.Expires.Sub(snap.Updated), 0)
	}
}

// resumeEngine returns an engine with the definitions of the instance loaded: those of
// --file, else those recorded in snap, and the --audit interceptor, which closeAudit
// closes (its audit keeps up with st's durability and masks with red); the files are
// read as st says.
// sources are the files loaded, absolute, to record with the instance. Its errors
// are bad input.
func resumeEngine(cfg resumeConfig, snap *session.Snapshot, st settings, red *redact.Redactor, stderr io.Writer) (eng *flow.Engine, sources []string,
	closeAudit func(), err error) {
	files := cfg.files
	loadFailed := func(err error) error { return err }
	if len(files) == 0 {
		if len(snap.Sources) == 0 {
			return nil, nil, nil, fmt.Errorf("instance %q records no definition files: give them with --file", cfg.id)
		}
		files = snap.Sources
		// The recorded files may have moved or gone since: say where they came from.
		loadFailed = func(err error) error {
			return fmt.Errorf("the definition files recorded for instance %q (--file loads others): %w", cfg.id, err)
		}
	}
	files, err = definitionFiles(files)
	if err != nil {
		return nil, nil, nil, loadFailed(err)
	}
	evalOpts, err := evaluatorOptions(cfg.eval)
	if err != nil {
		return nil, nil, nil, err
	}
	evalOpts = append(evalOpts, depthOptions(cfg.maxDepth)...)
	evalOpts = append(evalOpts, flow.WithReadOptions(readOptions(st.solonTypes)...))
	eng, closeAudit, err = newEngine(cfg.audit, st.durability, stderr, red, evalOpts...)
	if err != nil {
		return nil, nil, nil, err
	}
	if _, err := eng.LoadFiles(files...); err != nil {
		closeAudit()
		return nil, nil, nil, loadFailed(err)
	}
	if sources, err = absPaths(files); err != nil {
		closeAudit()
		return nil, nil, nil, err
	}
	return eng, sources, closeAudit, nil
}

// acceptChanged returns the Runner options of --accept-changed-definition: a
// migration that keeps the snapshot as it is.
func acceptChanged(cfg resumeConfig) []session.Option {
	if !cfg.accept {
		return nil
	}
	keep := func(context.Context, *session.Snapshot, *flow.Graph) error { return nil }
	return []session.Option{session.WithMigration(keep)}
}

// warnChanged says on stderr which definition changed, when --accept-changed-definition
// resumes snap on changed definitions.
func warnChanged(r *session.Runner, snap *session.Snapshot, cfg resumeConfig, stderr io.Writer) {
	var changed *session.DefinitionChangedError
	if cfg.accept && errors.As(r.CheckDefinition(snap), &changed) {
		fmt.Fprintf(stderr, "flowteam resume: %v: resuming on the loaded definitions (--accept-changed-definition)\n",
			changed)
	}
}

// resumeSettings returns the settings the resume runs the instance with: those its
// flags give, and for those not given the ones recorded in snap.
func resumeSettings(cfg resumeConfig, snap *session.Snapshot) (settings, error) {
	st, err := cfg.store.settings(cfg.steps)
	if err != nil {
		return st, err
	}
	if opened := openedSnapshot(snap); opened != nil {
		// (One that cannot be opened is reported by the Runner before anything runs.)
		rec, err := recordedSettings(opened)
		if err != nil {
			return st, err
		}
		if cfg.keepDurability {
			st.durability = rec.durability
		}
		if cfg.keepSteps {
			st.steps = rec.steps
		}
		if cfg.keepSolonTypes {
			st.solonTypes = rec.solonTypes
		}
		// --redact adds names: a secret supplied again with --set must not be
		// saved in clear because the flag was not repeated.
		st.addRedact(rec.redact...)
		st.addPatterns(rec.patterns...)
		st.other = rec.other
	}
	return st, nil
}

// resumeOptions returns the Runner's options for resuming snap with st.
func resumeOptions(cfg resumeConfig, snap *session.Snapshot, st settings) []session.ResumeOption {
	var opts []session.ResumeOption
	if cfg.recover {
		opts = append(opts, session.Recover())
	}
	// The settings were read from snap: the claim must be of snap, or another
	// resume's --redact could be dropped and a secret saved in clear. (With
	// --expect-version, checkResumable made sure it is that version.)
	opts = append(opts, session.ExpectVersion(snap.Version))
	if st.steps > 0 {
		opts = append(opts, session.WithEvalOptions(flow.WithSteps(st.steps)))
	}
	return opts
}

// checkResumable returns the conflict a Runner's Resume would report for snap before
// it looks at the definitions: the stored version is not --expect-version, or the
// instance completed, or it is running and its owner's lease is fresh, or it is
// running and --recover was not given.
func checkResumable(snap *session.Snapshot, cfg resumeConfig) error {
	switch {
	case cfg.expect > 0 && snap.Version != cfg.expect:
		return fmt.Errorf("resume %q: %w: expected version %d, stored version is %d", cfg.id, session.ErrConflict,
			cfg.expect, snap.Version)
	case snap.Status == session.StatusCompleted:
		return fmt.Errorf("resume %q: %w: %w (version %d)", cfg.id, session.ErrConflict, session.ErrCompleted, snap.Version)
	case snap.Status == session.StatusRunning && snap.Lease.Fresh(time.Now()):
		return fmt.Errorf("resume %q: %w", cfg.id, &session.LeaseHeldError{Instance: cfg.id, Lease: *snap.Lease})
	case snap.Status == session.StatusRunning && !cfg.recover:
		return fmt.Errorf("resume %q: %w: %w (claimed at version %d)", cfg.id, session.ErrConflict, session.ErrRunning,
			snap.Version)
	}
	return nil
}

// explainResumeError adds to a resume's error what the user can do about it, in terms
// of the command's flags and environment.
func explainResumeError(err error, cfg resumeConfig) error {
	switch {
	case errors.Is(err, session.ErrSealed):
		return fmt.Errorf("%w: set $%s to the key the instance was saved with", err, keyEnv)
	case errors.As(err, new(*session.LeaseHeldError)):
		return fmt.Errorf("%w\nits process is alive (it renews the lease while it runs): --recover takes the instance over only once the lease has expired", err)
	case errors.Is(err, session.ErrDefinitionChanged) && !cfg.accept:
		return fmt.Errorf("%w\n--accept-changed-definition resumes on the loaded definitions (see flowteam resume -h)", err)
	case errors.Is(err, session.ErrRunning) && !cfg.recover:
		return fmt.Errorf("%w\nif the process running it died, --recover takes it over", err)
	case errors.Is(err, session.ErrConflict) && cfg.expect == 0 && !errors.Is(err, session.ErrCompleted) &&
		!errors.Is(err, session.ErrRunning):
		return fmt.Errorf("%w\nanother process saved the instance while this resume started: nothing ran", err)
	}
	return err
}

// openedSnapshot returns snap with its body, where the instance's settings and the
// variables its last save masked are recorded. A sealed body is opened with
// $FLOWTEAM_SESSION_KEY; if it cannot be, nil is returned, and the Runner reports why
// when it loads the instance to claim it, before anything runs or is saved.
func openedSnapshot(snap *session.Snapshot) *session.Snapshot {
	if snap.Sealed == nil {
		return snap
	}
	c, err := cipherFromEnv()
	if err != nil || c == nil {
		return nil
	}
	if snap, err = c.Open(snap); err != nil {
		return nil
	}
	return snap
}

// checkSet checks the form of a --set argument.
func checkSet(s string) error {
	if k, _, ok := strings.Cut(s, "="); !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("--set %q: want KEY=VALUE", s)
	}
	return nil
}

func parseResumeArgs(args []string) (cfg resumeConfig, help bool, err error) {
	fs := flag.NewFlagSet("flowteam resume", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var sets, files setFlag
	fs.Var(&sets, "set", "")
	fs.StringVar(&cfg.varsFile, "vars", "", "")
	fs.Var(&files, "file", "")
	fs.IntVar(&cfg.steps, "steps", 0, "")
	fs.BoolVar(&cfg.recover, "recover", false, "")
	fs.BoolVar(&cfg.accept, "accept-changed-definition", false, "")
	fs.Int64Var(&cfg.expect, "expect-version", 0, "")
	fs.StringVar(&cfg.audit, "audit", "", "")
	fs.StringVar(&cfg.queue, "queue", "", "")
	outputFlag(fs, &cfg.output)
	evaluatorFlag(fs, &cfg.eval)
	solonTypesFlag(fs, &cfg.store.solonTypes)
	depthFlag(fs, &cfg.maxDepth)
	cfg.store.register(fs)
	pos, help, err := parseCommandLine(fs, args)
	if help || err != nil {
		return cfg, help, err
	}
	cfg.sets, cfg.files = sets, files
	cfg.keepTTL = !flagGiven(fs, "ttl")
	cfg.keepDurability = !flagGiven(fs, "durability")
	cfg.keepSteps = !flagGiven(fs, "steps")
	cfg.keepSolonTypes = !flagGiven(fs, "solon-types")
	if err := checkNotEmpty(fs, "vars", "file", "audit", "store", "durability", "redact", "redact-pattern"); err != nil {
		return cfg, false, err
	}
	if _, err := cfg.store.redactor(); err != nil {
		return cfg, false, err
	}
	switch {
	case len(pos) != 1:
		return cfg, false, fmt.Errorf("want exactly one instance id, got %d arguments", len(pos))
	case cfg.store.dsn == "":
		return cfg, false, errors.New("--store is required")
	case cfg.expect < 0:
		return cfg, false, fmt.Errorf("--expect-version must not be negative, got %d", cfg.expect)
	case cfg.expect == 0 && flagGiven(fs, "expect-version"):
		// Stored versions start at 1: left to mean "no check", 0 would resume whatever
		// the version, the opposite of what was asked.
		return cfg, false, errors.New("--expect-version must be at least 1 (stored versions start at 1)")
	}
	if err := cmp.Or(checkOutput(cfg.output), checkSteps(fs, cfg.steps), checkDepth(fs, cfg.maxDepth)); err != nil {
		return cfg, false, err
	}
	cfg.id = pos[0]
	for _, s := range cfg.sets {
		if err := checkSet(s); err != nil {
			return cfg, false, err
		}
	}
	return cfg, false, nil
}
