package flow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Engine runs graphs. It holds a registry of graphs compiled against its tasks,
// conditions and evaluator, and the interceptors and limits that apply to every run.
// An Engine is safe for concurrent use; register tasks before the graphs that use them.
type Engine struct {
	mu     sync.RWMutex
	graphs map[string]*compiled
	byPtr  map[*Graph]*compiled // graphs evaluated by value, compiled once

	tasks        map[string]Task
	conds        map[string]Condition
	eval         Evaluator
	evals        map[string]Evaluator // WithNamedEvaluator
	exprOnce     sync.Once
	expr         *ExprEvaluator // "evaluator: expr" when eval is another (evaluatorFor)
	interceptors []indexedInterceptor
	sem          chan struct{}
	maxSteps     int
	maxDepth     int
	policy       BranchPolicy
	errPolicy    ErrorPolicy
	recoverable  []func(error) bool
	errKey       string
	clock        Clock
	readOpts     []ReadOption // Load's, for the definition files (WithReadOptions)
	runs         sync.Pool    // recycled run state (recycle.go)
}

// Default limits.
const (
	DefaultMaxSteps       = 100_000
	DefaultMaxConcurrency = 64
	DefaultMaxCallDepth   = 32
)

// Option configures an Engine.
type Option func(*Engine)

// WithTask registers a Go task under name, for "@name" references.
func WithTask(name string, t Task) Option { return func(e *Engine) { e.tasks[name] = t } }

// WithTaskFunc registers a function as the task name.
func WithTaskFunc(name string, f TaskFunc) Option { return WithTask(name, f) }

// WithCondition registers a Go condition under name, for "@name" conditions.
func WithCondition(name string, c Condition) Option { return func(e *Engine) { e.conds[name] = c } }

// WithReadOptions sets how Load, LoadFile, LoadGlob and LoadFiles read definition
// files (ParseDefinition): WithReadOptions(flow.SolonNodeTypes()) loads documents
// written for Solon that name node types it does not know.
func WithReadOptions(opts ...ReadOption) Option {
	return func(e *Engine) { e.readOpts = append(e.readOpts, opts...) }
}

// WithEvaluator replaces the expression engine used for conditions and scripts.
func WithEvaluator(ev Evaluator) Option { return func(e *Engine) { e.eval = ev } }

// WithInterceptor adds an interceptor to every run; lower index runs outermost (first
// on the way in, last on the way out); equal indexes keep registration order.
func WithInterceptor(i Interceptor, index int) Option {
	return func(e *Engine) { e.interceptors = addInterceptor(e.interceptors, i, index) }
}

// WithMaxConcurrency bounds how many goroutines the engine runs parallel branches on,
// across all runs. Branches beyond the bound run on the goroutine that split them.
func WithMaxConcurrency(n int) Option {
	return func(e *Engine) { e.sem = make(chan struct{}, max(n, 1)) }
}

// WithMaxSteps sets the default step limit of a run (node executions, sub-graphs
// included).
func WithMaxSteps(n int) Option { return func(e *Engine) { e.maxSteps = n } }

// WithMaxCallDepth bounds the nesting of sub-graph calls, which stops unbounded recursion.
func WithMaxCallDepth(n int) Option { return func(e *Engine) { e.maxDepth = n } }

// WithBranchPolicy sets the default policy for failing parallel branches.
func WithBranchPolicy(p BranchPolicy) Option { return func(e *Engine) { e.policy = p } }

// NewEngine returns an engine with the given options.
func NewEngine(opts ...Option) *Engine {
	e := &Engine{
		graphs: make(map[string]*compiled), byPtr: make(map[*Graph]*compiled),
		tasks: make(map[string]Task), conds: make(map[string]Condition),
		maxSteps: DefaultMaxSteps, maxDepth: DefaultMaxCallDepth, errKey: DefaultErrorKey, clock: realClock{},
	}
	for _, o := range opts {
		o(e)
	}
	if e.eval == nil {
		e.eval = NewExprEvaluator()
	}
	if e.sem == nil {
		e.sem = make(chan struct{}, DefaultMaxConcurrency)
	}
	return e
}

// RegisterTask registers a Go task under name. Graphs loaded earlier are not affected.
func (e *Engine) RegisterTask(name string, t Task) {
	e.mu.Lock()
	e.tasks[name] = t
	e.mu.Unlock()
}

// RegisterCondition registers a Go condition under name.
func (e *Engine) RegisterCondition(name string, c Condition) {
	e.mu.Lock()
	e.conds[name] = c
	e.mu.Unlock()
}

// Register compiles g and adds it to the registry. It fails if a graph with the same id
// is registered (ErrGraphExists), if a task reference is unknown (ErrUnknownTask) or if
// a condition or script does not compile (ErrCompile); such errors name the node and,
// for graphs read from files, the file and line.
func (e *Engine) Register(g *Graph) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if old := e.graphs[g.ID]; old != nil && old.g != g {
		return fmt.Errorf("graph %q from %s: %w (from %s)", g.ID, posOr(Pos{File: g.Source}, "code"), ErrGraphExists, posOr(Pos{File: old.g.Source}, "code"))
	}
	cg, err := e.compile(g)
	if err != nil {
		return err
	}
	e.graphs[g.ID] = cg
	e.byPtr[g] = cg
	return nil
}

// Unregister removes the graph with the given id.
func (e *Engine) Unregister(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if cg := e.graphs[id]; cg != nil {
		delete(e.byPtr, cg.g)
		delete(e.graphs, id)
	}
}

// Forget drops the compiled form EvalGraph keeps for g (a registered graph stays
// registered).
func (e *Engine) Forget(g *Graph) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if cg := e.graphs[g.ID]; cg != nil && cg.g == g {
		return
	}
	delete(e.byPtr, g)
}

// Graph returns the registered graph with the given id.
func (e *Engine) Graph(id string) (*Graph, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	cg := e.graphs[id]
	if cg == nil {
		return nil, false
	}
	return cg.g, true
}

// Graphs returns the registered graphs sorted by id.
func (e *Engine) Graphs() []*Graph {
	e.mu.RLock()
	defer e.mu.RUnlock()
	gs := make([]*Graph, 0, len(e.graphs))
	for _, cg := range e.graphs {
		gs = append(gs, cg.g)
	}
	slices.SortFunc(gs, func(a, b *Graph) int { return strings.Compare(a.ID, b.ID) })
	return gs
}

// LoadFile reads a YAML or JSON definition file and registers its graph.
func (e *Engine) LoadFile(path string) (*Graph, error) {
	gs, err := e.LoadFiles(path)
	if err != nil {
		return nil, err
	}
	return gs[0], nil
}

// LoadGlob loads every file matching the pattern (filepath.Match syntax); a directory
// name loads the *.yml, *.yaml and *.json files in it.
func (e *Engine) LoadGlob(pattern string) ([]*Graph, error) { return e.Load(pattern) }

// Load expands files, directories and glob patterns (see ExpandPaths) and loads the
// files as one batch (see LoadFiles).
func (e *Engine) Load(paths ...string) ([]*Graph, error) {
	files, err := ExpandPaths(paths...)
	if err != nil {
		return nil, err
	}
	return e.LoadFiles(files...)
}

// ExpandPaths turns files, directories (their *.yml, *.yaml and *.json files, not those
// of their sub-directories) and glob patterns into a sorted list of files without
// duplicates. A directory that a directory or a pattern yields is skipped, whatever its
// name. A name that does not exist and is no pattern is kept, so that reading it reports
// the problem.
func ExpandPaths(paths ...string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			var found []string
			for _, ext := range []string{"*.yml", "*.yaml", "*.json"} {
				m, _ := filepath.Glob(filepath.Join(p, ext))
				found = append(found, m...)
			}
			found = slices.DeleteFunc(found, isDir)
			if len(found) == 0 {
				return nil, fmt.Errorf("%s: no definition files (*.yml, *.yaml, *.json)", p)
			}
			files = append(files, found...)
		case err == nil || !strings.ContainsAny(p, `*?[`):
			files = append(files, p)
		default:
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			m = slices.DeleteFunc(m, isDir)
			if len(m) == 0 {
				return nil, fmt.Errorf("%s: no file matches", p)
			}
			files = append(files, m...)
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// isDir reports whether path names a directory (or a link to one): a directory named
// like a definition file ("old.yml/") is not one, and reading it would fail.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// LoadFiles reads and registers several definition files as one batch: either all are
// registered or none. Sub-graph references ("#id") must resolve within the batch or the
// registry. Every problem is reported, each naming its file and line.
func (e *Engine) LoadFiles(paths ...string) ([]*Graph, error) {
	var (
		errs []error
		gs   []*Graph
	)
	for _, p := range paths {
		spec, err := ReadDefinitionFile(p, e.readOpts...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g, err := spec.Build()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		gs = append(gs, g)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var done []string
	for _, g := range gs {
		if err := e.Register(g); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, g.ID)
	}
	if len(errs) == 0 {
		errs = e.checkSubgraphRefs(gs)
	}
	if len(errs) > 0 {
		for _, id := range done {
			e.Unregister(id)
		}
		return nil, errors.Join(errs...)
	}
	return gs, nil
}

// checkSubgraphRefs reports "#id" task references that name no registered graph.
func (e *Engine) checkSubgraphRefs(gs []*Graph) []error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var errs []error
	for _, g := range gs {
		cg := e.graphs[g.ID]
		for i := range cg.nodes {
			cn := &cg.nodes[i]
			if cn.subID != "" && e.graphs[cn.subID] == nil {
				errs = append(errs, &DefinitionError{Pos: orPos(cn.n.Pos, Pos{File: g.Source}), Graph: g.ID, Node: cn.n.ID,
					Msg: fmt.Sprintf("task calls sub-graph %q: %v", cn.subID, ErrGraphNotFound)})
			}
		}
	}
	return errs
}

func (e *Engine) lookup(id string) (*compiled, error) {
	e.mu.RLock()
	cg := e.graphs[id]
	e.mu.RUnlock()
	if cg == nil {
		return nil, fmt.Errorf("graph %q: %w", id, ErrGraphNotFound)
	}
	return cg, nil
}

// prepare returns g compiled for this engine, compiling it on first use.
func (e *Engine) prepare(g *Graph) (*compiled, error) {
	e.mu.RLock()
	cg := e.byPtr[g]
	e.mu.RUnlock()
	if cg != nil {
		return cg, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if cg := e.byPtr[g]; cg != nil {
		return cg, nil
	}
	cg, err := e.compile(g)
	if err != nil {
		return nil, err
	}
	e.byPtr[g] = cg
	return cg, nil
}

// Eval runs the registered graph with the given id over fc. The error is the run's
// error when it failed (also in Result.Err); a stopped or suspended run is not an
// error. The result is nil only when the run could not start: an unknown graph, a
// graph that does not compile, or a Context another run is using (ErrContextBusy).
// Parallel branches run on goroutines (see WithMaxConcurrency); every one has ended
// when Eval returns.
//
// Cancelling ctx, or its deadline, fails the run (errors.Is tells which; the
// NodeError's code is cancelled). A node whose task, guard or link condition returns
// the context's error is not failed but interrupted, in every branch the cancellation
// cut short: its error policy is not asked (a recovering goto would skip the node on
// resume) and it runs again on resume. A task that called Interrupt first has ended
// its branch, one that called Suspend first has suspended its node. A node's own
// context (a NodeStarter's deadline) and one an interceptor gives a sub-graph call are
// not the run's: a task that fails because such a context ended fails its node, for
// the policies to decide.
//
// A panicking task is its node's error (CodePanic). A panicking interceptor hook
// fails the run and is raised again in the caller's goroutine once the root's branches
// have ended, before it passes back through the interceptors around the run (as a
// *BranchPanic when it happened on a branch's goroutine); the Context is then free for
// another run. Inside a sub-graph call, a hook panicking on the calling goroutine is
// the calling node's error, raised once the call's other branches have ended.
func (e *Engine) Eval(ctx context.Context, graphID string, fc *Context, opts ...EvalOption) (*Result, error) {
	cg, err := e.lookup(graphID)
	if err != nil {
		return nil, err
	}
	return e.start(ctx, cg, fc, opts)
}

// EvalGraph runs g, which need not be registered; it is compiled on first use and
// the compiled form is kept for the engine's lifetime (Forget drops it), so build a
// graph once and evaluate it many times rather than building one per run. Its result
// and error are as Eval's.
func (e *Engine) EvalGraph(ctx context.Context, g *Graph, fc *Context, opts ...EvalOption) (*Result, error) {
	cg, err := e.prepare(g)
	if err != nil {
		return nil, err
	}
	return e.start(ctx, cg, fc, opts)
}

// Resume continues a run that stopped, was suspended or failed from the exact frontier
// it left (res.Frontier): pending nodes, join arrivals, loop positions and the
// activation counts of inclusive splits. Nothing is replayed: nodes that completed do
// not run again, and a suspended node runs again. fc is the instance's context, which
// the caller may have updated (for example with the decision a task waited for).
// Context.Resumed tells a task that its node runs again.
//
// A run that failed inside a sub-graph call is the exception: a fatal failure ends the
// call and becomes the calling node's failure, so the frontier holds the calling node
// and a resume calls the sub-graph again from its start. The child's nodes that
// completed before the failure run again, and so do its branches that were cancelled
// or had suspended. (A step limit, a cancellation, a stop or a suspension inside a call
// keep the exact place.) A child node that must not run twice checks the state it
// left, or the child recovers from the failure itself (onError inside the child).
func (e *Engine) Resume(ctx context.Context, fr *Frontier, fc *Context, opts ...EvalOption) (*Result, error) {
	if fr == nil || len(fr.tokens) == 0 {
		return nil, ErrNotResumable
	}
	return e.resume(ctx, fr, fc, opts)
}
