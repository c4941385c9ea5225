package workflow

import (
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// mode is what a walk over an instance is for.
type mode uint8

const (
	modeFind    mode = iota // the first task that waits for someone, or the terminated one; changes nothing
	modeNext                // every task that waits for someone; changes nothing
	modeClaim               // completes auto nodes, makes the first task the actor may operate waiting
	modeAdvance             // completes auto nodes only
)

func (m mode) persists() bool { return m >= modeClaim }

// maxCallDepth bounds sub-graph calls, as the engine bounds them.
const maxCallDepth = 64

// walker decides where an instance stands from its task states, walking the graph
// from its start over the completed tasks with the engine's gateway rules: the
// conditions are the engine's, compiled once (flow.Engine.TestLink), and tasks run
// through flow.Engine.RunTask. Nothing is replayed: a completed task is passed, not
// run again.
type walker struct {
	op    *op
	mode  mode
	found *Task
	tasks []Task
	// halted ends the whole walk: a task was claimed or terminated.
	halted     bool
	terminated bool
	blocked    bool // some branch waits for someone
	steps      int
}

// frame counts the branches of one split activation, so its join waits for exactly
// the branches the split took (per activation, unlike Solon's counter).
type frame struct {
	pending, arrived int
	join             *flow.Node // where the first branch arrived
	parent           *frame
}

type token struct {
	n      *flow.Node
	f      *frame
	joined bool // the join's counting is done (a withdrawal released it)
}

// walkGraph walks g from its start and reports whether every branch finished: none
// waits for someone and the walk was not halted.
func (w *walker) walkGraph(g *flow.Graph, depth int) (bool, error) {
	if depth > maxCallDepth {
		return false, fmt.Errorf("graph %q: sub-graph calls nested deeper than %d", g.ID, maxCallDepth)
	}
	if g.Start() == nil {
		return true, nil
	}
	stack := []token{{n: g.Start()}}
	finished := true
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if w.steps++; w.steps > w.op.x.maxSteps {
			return false, fmt.Errorf("graph %q: walk passed %d steps (a cycle through completed tasks? send work back with the back action instead)", g.ID, w.op.x.maxSteps)
		}
		if t.n.IsJoin() && t.f != nil && !t.joined {
			f := t.f
			f.arrived++
			f.join = t.n
			if f.arrived < f.pending {
				continue
			}
			t.f = f.parent
		}
		passed, err := w.visit(t.n, depth)
		if err != nil || w.halted {
			return false, err
		}
		if !passed {
			finished = false
			continue
		}
		targets, err := w.route(t.n)
		if err != nil {
			return false, err
		}
		if len(targets) == 0 {
			stack = withdraw(t.f, stack)
			continue
		}
		f := t.f
		if opensFrame(t.n, len(targets)) {
			f = &frame{pending: len(targets), parent: t.f}
		}
		for i := len(targets) - 1; i >= 0; i-- {
			stack = append(stack, token{n: targets[i], f: f})
		}
	}
	return finished, nil
}

// withdraw takes a branch that ended without reaching its join out of its split: the
// join stops waiting for it, and runs if the other branches have all arrived.
func withdraw(f *frame, stack []token) []token {
	for ; f != nil; f = f.parent {
		f.pending--
		if f.pending > 0 {
			if f.arrived == f.pending && f.join != nil {
				stack = append(stack, token{n: f.join, f: f.parent, joined: true})
			}
			return stack
		}
		// No branch of this split reaches its join: the enclosing branch ended too.
	}
	return stack
}

func opensFrame(n *flow.Node, targets int) bool {
	return targets > 1 || ((n.Type == flow.Inclusive || n.Type == flow.Parallel) && len(n.Links()) > 1)
}

// visit decides whether the walk passes n: a gateway always, a task when it is
// completed or moves on by itself (a sub-graph call when the child finished).
func (w *walker) visit(n *flow.Node, depth int) (bool, error) {
	switch n.Type {
	case flow.Exclusive, flow.Inclusive, flow.Parallel:
		return true, nil
	case flow.Loop:
		return false, fmt.Errorf("node %q: loop nodes are not supported in approval workflows", n.ID)
	}
	op, k := w.op, key(n)
	st := op.inst.States[k]
	switch st {
	case Completed:
		return w.enter(n, depth)
	case Terminated:
		w.terminated, w.halted = true, true
		if w.mode == modeFind {
			w.found = op.task(n, Terminated)
		}
		return false, nil
	case "":
		st = Unknown
	}
	ctrl := op.x.ctrl
	if ctrl.Auto(n) {
		if w.mode.persists() && ownTask(n) {
			if err := op.x.engine.RunTask(op.ctx, n, op.fc); err != nil {
				return false, &TaskError{Node: n.ID, Err: err}
			}
			op.inst.States[k] = Completed
		}
		return w.enter(n, depth)
	}
	switch w.mode {
	case modeClaim:
		if ctrl.Operable(op.actor, n) {
			op.inst.States[k] = Waiting
			w.found, w.halted = op.task(n, Waiting), true
		}
	case modeFind:
		// The first task is where the instance stands; the walk goes on, as a
		// terminated task in a later branch stops the whole instance.
		if w.found == nil {
			w.found = op.task(n, st)
		}
	case modeNext:
		if st == Unknown && ctrl.Operable(op.actor, n) {
			st = Waiting
		}
		w.tasks = append(w.tasks, *op.task(n, st))
	}
	w.blocked = true
	return false, nil
}

// enter walks the sub-graph n calls, if any, and reports whether the walk goes on
// past n.
func (w *walker) enter(n *flow.Node, depth int) (bool, error) {
	g, err := w.op.x.called(n)
	if err != nil || g == nil {
		return err == nil, err
	}
	return w.walkGraph(g, depth+1)
}

// route returns the nodes the walk goes on to from n, by the engine's rules: an end
// node ends its branch, a parallel node takes every link, an exclusive node the first
// true link (the link without a condition is the default), any other node every true
// link.
func (w *walker) route(n *flow.Node) ([]*flow.Node, error) {
	links := n.Links()
	switch n.Type {
	case flow.End:
		return nil, nil
	case flow.Parallel:
		out := make([]*flow.Node, len(links))
		for i, l := range links {
			out[i] = l.Target()
		}
		return out, nil
	case flow.Exclusive:
		return w.exclusive(n, links)
	}
	var out []*flow.Node
	for _, l := range links {
		ok, err := w.test(n, l)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, l.Target())
		}
	}
	return out, nil
}

func (w *walker) exclusive(n *flow.Node, links []*flow.Link) ([]*flow.Node, error) {
	if len(links) == 0 {
		return nil, nil
	}
	var deflt *flow.Link
	for _, l := range links {
		if strings.TrimSpace(l.When) == "" {
			if deflt == nil {
				deflt = l
			}
			continue
		}
		ok, err := w.test(n, l)
		if err != nil {
			return nil, err
		}
		if ok {
			return []*flow.Node{l.Target()}, nil
		}
	}
	if deflt == nil {
		return nil, fmt.Errorf("node %q in graph %q: %w", n.ID, n.Graph().ID, flow.ErrNoRoute)
	}
	return []*flow.Node{deflt.Target()}, nil
}

func (w *walker) test(n *flow.Node, l *flow.Link) (bool, error) {
	if strings.TrimSpace(l.When) == "" {
		return true, nil
	}
	ok, err := w.op.x.engine.TestLink(w.op.ctx, l, w.op.fc)
	if err != nil {
		return false, fmt.Errorf("node %q in graph %q: link to %q: %w", n.ID, n.Graph().ID, l.To, err)
	}
	return ok, nil
}

// ownTask reports whether n has a task of its own to run (not a sub-graph call).
func ownTask(n *flow.Node) bool {
	if n.Component != nil {
		_, call := flow.CalledGraph(n.Component)
		return !call
	}
	t := strings.TrimSpace(n.Task)
	return t != "" && !strings.HasPrefix(t, "#")
}

// called returns the graph n calls, or nil.
func (x *Executor) called(n *flow.Node) (*flow.Graph, error) {
	if n.Component != nil {
		g, _ := flow.CalledGraph(n.Component)
		return g, nil
	}
	id, ok := strings.CutPrefix(strings.TrimSpace(n.Task), "#")
	if !ok {
		return nil, nil
	}
	id = strings.TrimSpace(id) // as the engine reads "# id"
	g, found := x.engine.Graph(id)
	if !found {
		return nil, fmt.Errorf("node %q calls graph %q: %w", n.ID, id, flow.ErrGraphNotFound)
	}
	return g, nil
}
