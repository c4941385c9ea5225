package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
)

// Durability says when a Runner saves the instance.
type Durability int

const (
	// OnExit saves when the run claims the instance and when it suspends, stops, fails
	// or completes.
	OnExit Durability = iota
	// PerNode also saves after every completed node (flow.WithCheckpoint), so a
	// process that dies mid-run is resumed without running completed nodes again.
	// It is what exactly-once effects need: the effects a node queued with
	// flow.Context.Effect are made by the store (an EffectStore) in the save of the
	// node's checkpoint. Under OnExit there is no checkpoint to carry them, and
	// Effect returns flow.ErrNoCheckpoint.
	PerNode
)

// String returns "on-exit" or "per-node".
func (d Durability) String() string {
	if d == PerNode {
		return "per-node"
	}
	return "on-exit"
}

// ParseDurability reads "on-exit" or "per-node", in any case ("" is on-exit).
func ParseDurability(s string) (Durability, error) {
	switch strings.ToLower(s) {
	case "on-exit", "":
		return OnExit, nil
	case "per-node":
		return PerNode, nil
	}
	return 0, fmt.Errorf("durability %q: want on-exit or per-node", s)
}

// Errors of Run and Resume callers can branch on with errors.Is, besides the store's
// ErrNotFound, ErrConflict and ErrInvalidID.
var (
	// ErrRunning: the instance is claimed by a running process. It is also an
	// ErrConflict; Recover takes over an instance whose process died.
	ErrRunning = errors.New("instance is running")
	// ErrCompleted: the instance completed; there is nothing to resume. It is also an
	// ErrConflict (a concurrent resume got there first).
	ErrCompleted = errors.New("instance already completed")
	// ErrDefinitionChanged: the stored definition hash differs from the loaded graph's.
	ErrDefinitionChanged = errors.New("graph definition changed since the snapshot was saved")
	// ErrNoFrontier: the snapshot has no frontier to continue from (nothing was
	// pending when it was saved).
	ErrNoFrontier = errors.New("snapshot has no frontier")
	// ErrSealed: the snapshot is encrypted and the Runner has no Cipher.
	ErrSealed = errors.New("snapshot is encrypted and no key was given")
	// ErrNoEffectStore: a node queued effects (flow.Context.Effect) and the Runner's
	// store is not an EffectStore; the node's checkpoint, and so the run, fails.
	ErrNoEffectStore = errors.New("effects need an EffectStore such as RedisStore")
)

// MigrateFunc adapts a snapshot saved under another definition of its graph to g,
// the definition loaded now (for example by renaming nodes in snap.Frontier or
// setting a variable a new node expects). After it returns nil, the snapshot is
// resumed on g and saved with g's hash. It must not change the instance id or the
// graph id: Resume fails if it does.
type MigrateFunc func(ctx context.Context, snap *Snapshot, g *flow.Graph) error

// Runner runs and resumes flow instances with a Store: the instance id is the
// business key, every outcome is saved, and a resume claims the instance before any
// node runs, so that two resumes of one instance never run at once.
//
// Side effects a task makes itself (a row written, a message sent) happen again when
// a node runs again after a crash. Made exactly once, they are queued with
// flow.Context.Effect instead, under PerNode durability with a store that is an
// EffectStore (RedisStore): the store makes them in the atomic step that saves the
// node's checkpoint, and a node whose checkpoint was not saved runs again on Recover
// and queues them again. With a store that is not an EffectStore, a node that queues
// effects fails its checkpoint with ErrNoEffectStore.
//
// The Runner knows nothing of agents: an agent's run waiting for a human is kept in
// the instance's variables, and a run that never reaches its node again does not
// discard it. Give the engine team.DiscardStaleRuns() as an interceptor for that.
type Runner struct {
	eng        *flow.Engine
	store      Store
	durability Durability
	redactor   *redact.Redactor
	cipher     *Cipher
	ttl        time.Duration
	drop       bool
	sources    []string
	meta       []string
	migrate    MigrateFunc
	// leaseRenew and leaseTTL time the owner's lease; host is this host's name.
	leaseRenew, leaseTTL time.Duration
	host                 string
	// hashes caches the definition hash of the last graph run under each graph id
	// (graph id -> *graphHash); see hashed.
	hashes sync.Map
	hashMu sync.Mutex // serializes cache misses
	hashN  int        // entries in hashes
	kept   int        // entries left by the last sweep
}

// graphHash is a graph, its Hash and the graphs it calls (graphs are immutable).
type graphHash struct {
	g     *flow.Graph
	hash  string
	calls []callee
}

// minHashSweep is the number of cached hashes below which hashed never sweeps.
const minHashSweep = 32

// hashed returns g's cache entry: g.Hash() and the graphs g calls, computed once per
// graph. The cache is keyed by graph id, so a new version of a graph replaces the old
// one's entry instead of keeping it (and the whole old graph) for the life of the
// Runner; and once it has grown to twice what the last sweep left, the entries of
// graphs the engine no longer has are dropped, so that it stays within a small
// factor of the registered graphs at a cost amortized over the misses.
func (r *Runner) hashed(g *flow.Graph) *graphHash {
	if e, ok := r.hashes.Load(g.ID); ok && e.(*graphHash).g == g {
		return e.(*graphHash)
	}
	r.hashMu.Lock()
	defer r.hashMu.Unlock()
	if e, ok := r.hashes.Load(g.ID); ok && e.(*graphHash).g == g {
		return e.(*graphHash)
	}
	e := &graphHash{g: g, hash: g.Hash(), calls: calleesOf(g)}
	if _, loaded := r.hashes.Swap(g.ID, e); !loaded {
		r.hashN++
	}
	if r.hashN >= 2*max(r.kept, minHashSweep) {
		r.hashes.Range(func(id, e any) bool {
			if cur, ok := r.eng.Graph(id.(string)); !ok || cur != e.(*graphHash).g {
				r.hashes.Delete(id)
				r.hashN--
			}
			return true
		})
		r.kept = r.hashN
	}
	return e
}

// Option configures a Runner.
type Option func(*Runner)

// WithDurability sets when the instance is saved (default OnExit).
func WithDurability(d Durability) Option { return func(r *Runner) { r.durability = d } }

// WithRedaction declares the named variables secret and redacts every saved snapshot
// with redact.New (see WithRedactor): their values are masked, and so are those of
// variables under sensitive keys, wherever they appear in it.
func WithRedaction(names ...string) Option {
	return func(r *Runner) { r.redactor = r.redactor.With(redact.Secrets(names...)) }
}

// WithRedactor redacts every saved snapshot with red: the variables under its
// sensitive keys or declared secret are masked whole (redact.Mask) and named in
// Snapshot.Redacted, and their values, as the other secret values and pattern
// matches, are masked wherever they appear in the other variables, the suspend
// reason and the error messages. Masked variables are not restored: a resumed
// instance does not have them unless the resume's updates supply them again.
func WithRedactor(red *redact.Redactor) Option { return func(r *Runner) { r.redactor = red } }

// WithCipher encrypts the body of every saved snapshot (see Cipher) and opens sealed
// snapshots on resume.
func WithCipher(c *Cipher) Option { return func(r *Runner) { r.cipher = c } }

// WithExpiry saves every snapshot with a time to live: the store forgets an instance
// not saved again within ttl. The store must implement TTLStore.
func WithExpiry(ttl time.Duration) Option { return func(r *Runner) { r.ttl = ttl } }

// WithDropUnserializable leaves out the variables that cannot be serialized instead of
// failing the save; their names are in Snapshot.Dropped and Result.Dropped, and a
// resumed instance does not have them.
func WithDropUnserializable() Option { return func(r *Runner) { r.drop = true } }

// WithSources records where the graph definitions came from (Snapshot.Sources). A
// resume by a Runner with sources records them in place of the instance's (the
// definitions it ran came from there); one without keeps the instance's.
func WithSources(files ...string) Option {
	return func(r *Runner) { r.sources = append(r.sources, files...) }
}

// WithMeta records entries in Snapshot.Meta of every snapshot the Runner saves. A
// resume by a Runner with entries replaces the instance's; one without keeps them.
func WithMeta(entries ...string) Option {
	return func(r *Runner) { r.meta = append(r.meta, entries...) }
}

// WithMigration lets Resume continue a snapshot saved under other definitions (of its
// root graph or of a graph it calls, see CheckDefinition), after fn has adapted it;
// the claim then records the hashes of the definitions loaded now. Without it such a
// resume fails with a *DefinitionChangedError. A fn that returns nil and changes
// nothing accepts the new definitions as they are.
func WithMigration(fn MigrateFunc) Option { return func(r *Runner) { r.migrate = fn } }

// NewRunner returns a Runner that runs the graphs registered in eng and saves them in
// store.
func NewRunner(eng *flow.Engine, store Store, opts ...Option) *Runner {
	r := &Runner{eng: eng, store: store, leaseRenew: DefaultLeaseRenew, leaseTTL: DefaultLeaseTTL, host: hostname()}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Store returns the Runner's store.
func (r *Runner) Store() Store { return r.store }

// Result is the outcome of Run or Resume.
type Result struct {
	// Result is the engine's result of the run.
	*flow.Result
	// Context is the instance's context after the run: its variables as the run left
	// them (unredacted).
	Context *flow.Context
	// Version is the stored version after the last save.
	Version int64
	// Dropped names the variables that were left out of the saved snapshot because
	// they could not be serialized (with WithDropUnserializable).
	Dropped []string
}

// ResumeOption configures one Resume.
type ResumeOption func(*resumeConfig)

type resumeConfig struct {
	recover  bool
	expect   bool // ExpectVersion was given: 0 is a version no snapshot has, not "no check"
	expected int64
	evalOpts []flow.EvalOption
	redactor func(*Snapshot) (*redact.Redactor, error)
}

// Recover lets Resume take over an instance whose status is running: the process that
// claimed it died (with PerNode durability, the resume continues from its last
// checkpoint). It is refused (a *LeaseHeldError) while the owner's lease is fresh, so
// a process that is alive keeps its run; an instance saved without a lease is taken
// over on trust. A run whose outcome could not be saved (the store failed) leaves its
// last lease, which expires as a dead process's does. The version check lets only
// one of several recovering processes proceed. A process that died after its last
// node's checkpoint (PerNode: no frontier left) but before saving the outcome left a
// run that is over: Recover records it as completed, runs nothing, and returns a
// Result with status completed.
func Recover() ResumeOption { return func(c *resumeConfig) { c.recover = true } }

// ExpectVersion makes Resume fail with ErrConflict unless the stored snapshot is at
// version v, for callers that resume what they have seen and nothing newer. A stored
// snapshot is at version 1 or more, so v 0 (or below) always fails: it is not "any
// version". To create an instance only if it does not exist, use Run (or
// Store.Save expecting version 0).
func ExpectVersion(v int64) ResumeOption {
	return func(c *resumeConfig) { c.expect, c.expected = true, v }
}

// WithEvalOptions passes options to the engine's Resume (step limit, interceptors).
func WithEvalOptions(opts ...flow.EvalOption) ResumeOption {
	return func(c *resumeConfig) { c.evalOpts = append(c.evalOpts, opts...) }
}

// RedactorFor sets the Redactor of one Resume's saves (the claim, the checkpoints
// and the outcome) from the instance's stored snapshot: fn is called with it, opened,
// before anything is saved, and must not change it. The Redactor fn returns replaces
// the Runner's (WithRedactor) for this run; nil keeps the Runner's. It is for a
// Runner that runs many instances, each with redaction rules of its own that it
// records (in Snapshot.Meta, say), as the workers of package worker do. An error from
// fn fails the Resume, which then has saved and run nothing.
func RedactorFor(fn func(snap *Snapshot) (*redact.Redactor, error)) ResumeOption {
	return func(c *resumeConfig) { c.redactor = fn }
}

// redactorOf returns the Redactor RedactorFor gives snap (nil without RedactorFor).
func (c *resumeConfig) redactorOf(snap *Snapshot) (*redact.Redactor, error) {
	if c.redactor == nil {
		return nil, nil
	}
	red, err := c.redactor(snap)
	if err != nil {
		return nil, fmt.Errorf("redactor: %w", err)
	}
	return red, nil
}

// Run starts graph graphID (registered in the engine) for the instance fc names
// (fc.InstanceID(), a valid id) and saves it. The instance is claimed first: a
// snapshot with status running and version 1 is saved before any node runs, so
// starting an instance id that exists fails with ErrConflict and runs nothing. The
// outcome (suspended, stopped, failed or completed) is saved when the run ends.
//
// The error is the run's error when it failed (as with flow.Engine.Eval), a save
// error, or both joined; the Result is nil only when nothing ran.
func (r *Runner) Run(ctx context.Context, graphID string, fc *flow.Context, opts ...flow.EvalOption) (*Result, error) {
	if fc == nil {
		return nil, errors.New("session: run: nil context")
	}
	id := fc.InstanceID()
	if err := ValidateID(id); err != nil {
		return nil, fmt.Errorf("session: run: %w", err)
	}
	g, ok := r.eng.Graph(graphID)
	if !ok {
		return nil, fmt.Errorf("session: run %q: graph %q: %w", id, graphID, flow.ErrGraphNotFound)
	}
	start, err := r.eng.StartFrontier(g)
	if err != nil {
		return nil, fmt.Errorf("session: run %q: %w", id, err)
	}
	// The claim carries the start frontier, so a process that dies before the first
	// node completes leaves an instance that Resume (with Recover) starts from the top.
	startState := start.State()
	in := &instance{r: r}
	hash, called := r.definition(g)
	in.snap = Snapshot{Instance: id, Graph: g.ID, Hash: hash, Called: called, Status: StatusRunning,
		Sources: r.sources, Lease: r.newLease(), Meta: r.meta, RunID: flow.NewRunID(), Vars: fc.Vars(),
		Frontier: &startState}
	if err := in.save(ctx, &in.snap, 0); err != nil {
		err = in.claimNotDurable(ctx, err)
		if errors.Is(err, ErrConflict) {
			return nil, fmt.Errorf("session: run: instance %q already exists: %w", id, err)
		}
		return nil, fmt.Errorf("session: run %q: claim: %w", id, err)
	}
	// The claim's variables and frontier were made for it: the first checkpoint may
	// recycle them.
	in.recyclable = true
	opts = append([]flow.EvalOption{flow.WithRunID(in.snap.RunID)}, opts...)
	if r.durability == PerNode {
		opts = append(opts, flow.WithCheckpoint(in.checkpoint(fc)))
	}
	runCtx, stop := in.holdLease(ctx)
	res, err := r.eng.Eval(runCtx, g.ID, fc, opts...)
	stop()
	return in.finish(ctx, fc, res, err)
}

// Resume loads the instance, applies updates to its variables (for example the
// decision a suspended task waits for), and continues the run from the stored
// frontier: nothing is replayed, and a suspended node runs again.
//
// Before any node runs, the instance is claimed: a Save that expects the loaded
// version and stores status running. Of two concurrent resumes, one claims it and the
// other fails with ErrConflict having run nothing. An instance that is running
// (ErrRunning, unless Recover) or completed (ErrCompleted) is also an ErrConflict.
// The stored definition hash must equal the registered graph's (else
// a *DefinitionChangedError naming both, unless WithMigration), and so must those of
// the graphs it calls (Snapshot.Called). An instance whose owner's lease is fresh is
// a *LeaseHeldError, Recover or not. The claim records a new lease, renewed while
// the run goes on (WithLease). The outcome is saved as Run saves it.
func (r *Runner) Resume(ctx context.Context, id string, updates map[string]any, opts ...ResumeOption) (*Result, error) {
	var cfg resumeConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := ValidateID(id); err != nil {
		return nil, fmt.Errorf("session: resume: %w", err)
	}
	snap, err := r.store.Load(ctx, id)
	if err == nil {
		err = belongsTo(snap, id) // whatever the Store
	}
	if err != nil {
		return nil, fmt.Errorf("session: resume: %w", err)
	}
	if snap, err = r.open(snap); err != nil {
		return nil, fmt.Errorf("session: resume: %w", err)
	}
	switch {
	case cfg.expect && snap.Version != cfg.expected:
		return nil, fmt.Errorf("session: resume: %w", conflict(id, cfg.expected, snap.Version))
	case snap.Status == StatusCompleted:
		return nil, fmt.Errorf("session: resume %q: %w: %w (version %d)", id, ErrConflict, ErrCompleted, snap.Version)
	case snap.Status == StatusRunning && snap.Lease.Fresh(time.Now()):
		// Its process is alive: Recover must not run it a second time.
		return nil, fmt.Errorf("session: resume: %w", &LeaseHeldError{Instance: id, Lease: *snap.Lease})
	case snap.Status == StatusRunning && !cfg.recover:
		return nil, fmt.Errorf("session: resume %q: %w: %w (claimed at version %d, run %s; use Recover if its process died)",
			id, ErrConflict, ErrRunning, snap.Version, snap.RunID)
	}
	red, err := cfg.redactorOf(snap)
	if err != nil {
		return nil, fmt.Errorf("session: resume %q: %w", id, err)
	}
	if snap.Status == StatusRunning && snap.Frontier == nil {
		// Recover of a dead process's run that ended every branch: its last checkpoint
		// has no frontier left, and the process died before it saved the outcome.
		return r.completeEnded(ctx, snap, red)
	}
	g, ok := r.eng.Graph(snap.Graph)
	if !ok {
		return nil, fmt.Errorf("session: resume %q: graph %q: %w", id, snap.Graph, flow.ErrGraphNotFound)
	}
	if err := r.checkDefinition(ctx, snap, g); err != nil {
		return nil, fmt.Errorf("session: resume %q: %w", id, err)
	}
	if snap.Frontier == nil {
		return nil, fmt.Errorf("session: resume %q: %w (status %s)", id, ErrNoFrontier, snap.Status)
	}
	fr, err := r.eng.RestoreFrontier(g, *snap.Frontier)
	if err != nil {
		return nil, fmt.Errorf("session: resume %q: %w", id, err)
	}
	fc := restoreContext(snap, updates)

	// Claim before running anything.
	in := &instance{r: r, red: red, snap: *snap, version: snap.Version}
	in.snap.Status, in.snap.Reason, in.snap.RunID, in.snap.Vars = StatusRunning, "", flow.NewRunID(), fc.Vars()
	in.snap.Redacted, in.snap.Dropped, in.snap.Lease = nil, nil, r.newLease()
	if len(r.meta) > 0 {
		in.snap.Meta = r.meta
	}
	if len(r.sources) > 0 {
		in.snap.Sources = r.sources
	}
	if err := in.save(ctx, &in.snap, snap.Version); err != nil {
		err = in.claimNotDurable(ctx, err)
		return nil, fmt.Errorf("session: resume %q: claim: %w", id, err)
	}
	evalOpts := append([]flow.EvalOption{flow.WithRunID(in.snap.RunID)}, cfg.evalOpts...)
	if r.durability == PerNode {
		evalOpts = append(evalOpts, flow.WithCheckpoint(in.checkpoint(fc)))
	}
	runCtx, stop := in.holdLease(ctx)
	res, err := r.eng.Resume(runCtx, fr, fc, evalOpts...)
	stop()
	return in.finish(ctx, fc, res, err)
}

// restoreContext returns the context of the stored instance with updates applied
// over its variables; the masks of redacted variables are not their values, so they
// are left out.
func restoreContext(snap *Snapshot, updates map[string]any) *flow.Context {
	vars := unmasked(snap)
	maps.Copy(vars, updates)
	return flow.RestoreContext(snap.Instance, vars, snap.Trace)
}

// unmasked returns a copy of snap's variables without those snap.Redacted names:
// their values are masks, not what the run had.
func unmasked(snap *Snapshot) map[string]any {
	vars := make(map[string]any, len(snap.Vars))
	for k, v := range snap.Vars {
		if !slices.Contains(snap.Redacted, k) {
			vars[k] = v
		}
	}
	return vars
}

// completeEnded records as completed a running instance, taken over with Recover,
// whose process checkpointed the end of every branch (no frontier) and died before
// it saved the outcome. Nothing runs, and updates are not applied: the run is over.
// The Result has status completed and no steps. red is the Redactor of the save (nil:
// the Runner's).
func (r *Runner) completeEnded(ctx context.Context, snap *Snapshot, red *redact.Redactor) (*Result, error) {
	in := &instance{r: r, red: red, snap: *snap, version: snap.Version}
	in.snap.Vars = unmasked(snap) // as Resume would save them
	in.snap.Status, in.snap.Lease, in.snap.Redacted, in.snap.Dropped = StatusCompleted, nil, nil, nil
	if err := in.save(ctx, &in.snap, snap.Version); err != nil {
		return nil, fmt.Errorf("session: resume %q: record the run that ended as completed: %w", snap.Instance, err)
	}
	res := &flow.Result{Instance: snap.Instance, Graph: snap.Graph, Status: flow.StatusCompleted}
	return &Result{Result: res, Context: flow.RestoreContext(snap.Instance, in.snap.Vars, snap.Trace),
		Version: in.version, Dropped: in.dropped}, nil
}

// checkDefinition checks that snap was saved under the definition hashes of g and
// the graphs it calls (see CheckDefinition), or migrates it to g with the Runner's
// MigrateFunc. snap then records the hashes of the definitions loaded now.
func (r *Runner) checkDefinition(ctx context.Context, snap *Snapshot, g *flow.Graph) error {
	h, called := r.definition(g)
	err := compareDefinition(snap, h, called)
	if err == nil {
		snap.Called = called // recorded from now on if it was not
		return nil
	}
	if r.migrate == nil {
		return err
	}
	id := snap.Instance
	if err := r.migrate(ctx, snap, g); err != nil {
		return fmt.Errorf("migrate from definition hash %s to %s: %w", snap.Hash, h, err)
	}
	if snap.Instance != id || snap.Graph != g.ID {
		// The claim would save another instance, or a graph not restored.
		return fmt.Errorf("the migration changed the instance to %q and the graph from %q to %q: only the body may change",
			snap.Instance, g.ID, snap.Graph)
	}
	snap.Hash, snap.Called = h, called
	return nil
}

// Resume is NewRunner(eng, store, opts...).Resume(ctx, id, updates).
func Resume(ctx context.Context, eng *flow.Engine, store Store, id string, updates map[string]any, opts ...Option) (*Result, error) {
	return NewRunner(eng, store, opts...).Resume(ctx, id, updates)
}

// Load returns the stored snapshot of an instance, opened if it is sealed. A snapshot
// the store returns for id that is of another instance is an error wrapping
// ErrCorrupt, whatever the Store, as in Resume.
func (r *Runner) Load(ctx context.Context, id string) (*Snapshot, error) {
	snap, err := r.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := belongsTo(snap, id); err != nil {
		return nil, fmt.Errorf("session: load: %w", err)
	}
	return r.open(snap)
}

func (r *Runner) open(snap *Snapshot) (*Snapshot, error) {
	if snap.Sealed == nil {
		return snap, nil
	}
	if r.cipher == nil {
		return nil, fmt.Errorf("instance %q: %w", snap.Instance, ErrSealed)
	}
	return r.cipher.Open(snap)
}
