package workflow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/flowteam/flowteam/flow"
)

// Executor runs approval instances of the graphs registered on a flow.Engine: it
// finds and claims tasks and applies submits, keeping each instance's task states,
// variables and history in a Repository. It is safe for concurrent use; two
// submits of one instance at once are settled by the repository's version check.
type Executor struct {
	engine   *flow.Engine
	ctrl     Controller
	repo     Repository
	now      func() time.Time
	maxSteps int
	observe  func(context.Context, Event)
}

// Option configures an Executor.
type Option func(*Executor)

// WithClock sets the clock that stamps history entries (default time.Now).
func WithClock(now func() time.Time) Option { return func(x *Executor) { x.now = now } }

// WithMaxSteps bounds the nodes one walk over an instance visits (default
// flow.DefaultMaxSteps).
func WithMaxSteps(n int) Option { return func(x *Executor) { x.maxSteps = n } }

// NewExecutor returns an executor over the engine's graphs.
func NewExecutor(engine *flow.Engine, ctrl Controller, repo Repository, opts ...Option) *Executor {
	x := &Executor{engine: engine, ctrl: ctrl, repo: repo, now: time.Now, maxSteps: flow.DefaultMaxSteps}
	for _, o := range opts {
		o(x)
	}
	return x
}

// Submit is what SubmitTask applies.
type Submit struct {
	// Node is the task's node: its id in the root graph, or "graph:node" for a
	// node of a called sub-graph.
	Node   string
	Action Action
	Actor  Actor
	// Vars are set on the instance before the action, so scripts and conditions
	// see them; the history entry records them.
	Vars    map[string]any
	Comment string
}

// Outcome is what a submit did.
type Outcome struct {
	Instance string
	Graph    string
	Node     string
	Action   Action
	Status   Status
	Version  int64
}

// op is one call's work on one loaded instance.
type op struct {
	x     *Executor
	ctx   context.Context
	g     *flow.Graph
	inst  *Instance
	fc    *flow.Context
	actor Actor
}

func (op *op) task(n *flow.Node, st TaskState) *Task {
	return &Task{Node: n, State: st, root: op.g.ID}
}

func (op *op) walk(m mode) (*walker, error) {
	w := &walker{op: op, mode: m}
	_, err := w.walkGraph(op.g, 0)
	return w, err
}

// open loads the instance of graphID; create makes a new one when none is stored.
func (x *Executor) open(ctx context.Context, graphID, id string, actor Actor, create bool) (*op, error) {
	if _, ok := x.engine.Graph(graphID); !ok {
		return nil, fmt.Errorf("graph %q: %w", graphID, flow.ErrGraphNotFound)
	}
	inst, err := x.repo.Load(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound) && create:
		inst = &Instance{ID: id, Graph: graphID, Status: Running, Controller: x.ctrlName(),
			States: map[string]TaskState{}, Vars: map[string]any{}}
	case err != nil:
		return nil, err
	}
	return x.on(ctx, graphID, inst, actor)
}

// on is an operation on inst, loaded already, as an instance of graphID.
func (x *Executor) on(ctx context.Context, graphID string, inst *Instance, actor Actor) (*op, error) {
	g, ok := x.engine.Graph(graphID)
	switch {
	case !ok:
		return nil, fmt.Errorf("graph %q: %w", graphID, flow.ErrGraphNotFound)
	case inst.Graph != graphID:
		return nil, fmt.Errorf("instance %q: %w %q, not %q", inst.ID, ErrWrongGraph, inst.Graph, graphID)
	case inst.Controller != "" && inst.Controller != x.ctrlName():
		return nil, fmt.Errorf("instance %q: %w: %q, not %q", inst.ID, ErrWrongController, inst.Controller, x.ctrlName())
	}
	return &op{x: x, ctx: ctx, g: g, inst: inst, fc: flow.NewContextWith(inst.ID, inst.Vars), actor: actor}, nil
}

func (x *Executor) ctrlName() string {
	if n, ok := x.ctrl.(Named); ok {
		return n.Name()
	}
	return ""
}

// save stores the instance with its status as a find walk sees it.
func (op *op) save() error {
	w, err := op.walk(modeFind)
	if err != nil {
		return err
	}
	switch {
	case w.terminated:
		op.inst.Status = Stopped
	case w.found == nil && !w.blocked:
		op.inst.Status = Done
	default:
		op.inst.Status = Running
	}
	op.inst.Hash = op.g.Hash() // computed once per graph
	return op.x.repo.Save(op.ctx, op.inst)
}

// node resolves a node id of the root graph, or "graph:node" of a called graph.
func (op *op) node(id string) (*flow.Node, error) {
	g := op.g
	if gid, nid, ok := strings.Cut(id, ":"); ok && op.g.Node(id) == nil {
		sub, found := op.x.engine.Graph(gid)
		if !found {
			return nil, fmt.Errorf("node %q: graph %q: %w", id, gid, flow.ErrGraphNotFound)
		}
		g, id = sub, nid
	}
	n := g.Node(id)
	if n == nil {
		return nil, fmt.Errorf("graph %q: %w %q", g.ID, ErrUnknownNode, id)
	}
	return n, nil
}

// ClaimTask walks the instance from its start over the completed tasks and returns
// the first task the actor may operate, now waiting; nil when there is none for
// this actor (the instance may be completed, terminated, or waiting for others).
// Tasks that move on by themselves run on the way. vars are set on the instance
// first. The first claim of an unknown instance creates it. A claim that lost a
// race with a submit loads the instance again and retries.
func (x *Executor) ClaimTask(ctx context.Context, graphID, instanceID string, actor Actor, vars map[string]any) (*Task, error) {
	for attempt := 0; ; attempt++ {
		op, err := x.open(ctx, graphID, instanceID, actor, true)
		if err != nil {
			return nil, err
		}
		if op.inst.Status == Stopped {
			return nil, nil // nothing moves until a restart
		}
		before := maps.Clone(op.inst.States)
		setVars(op, vars)
		w, err := op.walk(modeClaim)
		if err != nil {
			return nil, err
		}
		if op.inst.Version > 0 && len(vars) == 0 && maps.Equal(before, op.inst.States) {
			x.claimed(ctx, op, w.found)
			return w.found, nil
		}
		op.inst.Vars = op.fc.Vars()
		err = op.save()
		if errors.Is(err, ErrConflict) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, err
		}
		x.claimed(ctx, op, w.found)
		return w.found, nil
	}
}

// claimed tells the observer about a claim that found a task.
func (x *Executor) claimed(ctx context.Context, op *op, t *Task) {
	if t != nil {
		x.emit(ctx, Event{Kind: "claim", Instance: op.inst.ID, Graph: op.g.ID, Node: t.ID(), Actor: op.actor,
			Status: op.inst.Status, Version: op.inst.Version})
	}
}

func setVars(op *op, vars map[string]any) {
	for k, v := range vars {
		op.fc.Set(k, v)
	}
}

// FindTask returns where the instance stands: the first task waiting for someone
// (Waiting or Unknown), the terminated task of a terminated instance, or nil when the
// instance is completed. It checks no permission and changes nothing.
func (x *Executor) FindTask(ctx context.Context, graphID, instanceID string) (*Task, error) {
	op, err := x.open(ctx, graphID, instanceID, nil, false)
	if err != nil {
		return nil, err
	}
	w, err := op.walk(modeFind)
	if err != nil {
		return nil, err
	}
	return w.found, nil
}

// FindNextTasks returns every task the instance waits for, in every branch (a
// parallel split waits for all of its branches at once), for drawing where it
// stands. A task the actor may operate is Waiting; the others keep their state.
// It changes nothing.
func (x *Executor) FindNextTasks(ctx context.Context, graphID, instanceID string, actor Actor) ([]Task, error) {
	op, err := x.open(ctx, graphID, instanceID, actor, false)
	if err != nil {
		return nil, err
	}
	return op.next()
}

// NextTasksOf is FindNextTasks on an instance the caller has loaded already (with
// FromSnapshot, say), of the graph inst.Graph. It changes nothing, inst included.
func (x *Executor) NextTasksOf(ctx context.Context, inst *Instance, actor Actor) ([]Task, error) {
	op, err := x.on(ctx, inst.Graph, inst, actor)
	if err != nil {
		return nil, err
	}
	return op.next()
}

func (op *op) next() ([]Task, error) {
	w, err := op.walk(modeNext)
	if err != nil {
		return nil, err
	}
	return w.tasks, nil
}

// State returns the state of the node's task (Unknown when it has no record).
func (x *Executor) State(ctx context.Context, graphID, instanceID, node string) (TaskState, error) {
	op, err := x.open(ctx, graphID, instanceID, nil, false)
	if err != nil {
		return "", err
	}
	n, err := op.node(node)
	if err != nil {
		return "", err
	}
	if st, ok := op.inst.States[key(n)]; ok {
		return st, nil
	}
	return Unknown, nil
}

// Instance returns the stored instance: status, task states, variables, history.
func (x *Executor) Instance(ctx context.Context, instanceID string) (*Instance, error) {
	return x.repo.Load(ctx, instanceID)
}
