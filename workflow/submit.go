package workflow

import (
	"context"
	"fmt"
	"maps"

	"github.com/flowteam/flowteam/flow"
)

// SubmitTask applies s to the instance and saves it, appending s to the history.
// Forward and back need an actor who may operate the node; forward_jump, back_jump,
// restart and terminate need an administrator (else an error wrapping
// ErrNotPermitted names the actor and the node). A person may forward or send back
// only a task the instance waits on (else ErrNotActive); an administrator may
// forward any, as in Solon. A terminated instance takes only a
// restart (else ErrTerminated). The change is all or nothing: a script that fails
// (a *TaskError), or a jump that does not reach its target (ErrNotReached), saves
// nothing. Of two submits that loaded the same version, the second to save gets an
// error wrapping ErrConflict. The first submit of an unknown instance creates it.
func (x *Executor) SubmitTask(ctx context.Context, graphID, instanceID string, s Submit) (*Outcome, error) {
	return x.submit(ctx, graphID, instanceID, s, false)
}

// SubmitTaskIfWaiting is SubmitTask for a task that must be waiting when the submit
// loads the instance: otherwise it returns an error wrapping ErrNotWaiting (which
// wraps ErrConflict). With the version check, of many submits of one waiting task
// exactly one succeeds.
func (x *Executor) SubmitTaskIfWaiting(ctx context.Context, graphID, instanceID string, s Submit) (*Outcome, error) {
	return x.submit(ctx, graphID, instanceID, s, true)
}

func (x *Executor) submit(ctx context.Context, graphID, instanceID string, s Submit, ifWaiting bool) (*Outcome, error) {
	action, err := ParseAction(string(s.Action))
	if err != nil {
		return nil, err
	}
	op, err := x.open(ctx, graphID, instanceID, s.Actor, true)
	if err != nil {
		return nil, err
	}
	n, err := op.node(s.Node)
	if err != nil {
		return nil, err
	}
	if err := x.permit(s.Actor, action, n); err != nil {
		return nil, err
	}
	if ifWaiting && op.inst.States[key(n)] != Waiting {
		return nil, fmt.Errorf("instance %q, node %q: %w", instanceID, s.Node, ErrNotWaiting)
	}
	if op.inst.Status == Stopped && action != Restart {
		return nil, fmt.Errorf("instance %q: %w", instanceID, ErrTerminated)
	}
	if err := op.active(action, n); err != nil {
		return nil, err
	}
	setVars(op, s.Vars)
	if err := op.apply(action, n); err != nil {
		return nil, err
	}
	op.inst.Vars = op.fc.Vars()
	op.inst.History = append(op.inst.History, Entry{Node: s.Node, Action: action, Actor: maps.Clone(s.Actor),
		Time: x.now().UTC(), Vars: cloneVars(s.Vars), Comment: s.Comment})
	if err := op.save(); err != nil {
		return nil, err
	}
	x.emit(ctx, Event{Kind: "submit", Instance: instanceID, Graph: graphID, Node: s.Node, Action: action, Actor: s.Actor,
		Comment: s.Comment, Status: op.inst.Status, Version: op.inst.Version})
	return &Outcome{Instance: instanceID, Graph: graphID, Node: s.Node, Action: action,
		Status: op.inst.Status, Version: op.inst.Version}, nil
}

// cloneVars copies a submit's variables for its history entry, numbers as the
// stores read them back.
func cloneVars(vars map[string]any) map[string]any {
	if len(vars) == 0 {
		return nil
	}
	c, _ := cloneValue(map[string]any(vars)).(map[string]any)
	return c
}

// active checks that a person's forward or back is for a task the instance waits on:
// Solon lets anyone forward a task not reached yet, completing it in advance, or one
// done already, running its script again. An administrator still may, as in Solon.
func (op *op) active(action Action, n *flow.Node) error {
	if action.needsAdmin() || op.x.ctrl.Admin(op.actor) {
		return nil
	}
	w, err := op.walk(modeNext)
	if err != nil {
		return err
	}
	for _, t := range w.tasks {
		if t.Node == n {
			return nil
		}
	}
	return fmt.Errorf("instance %q, node %q: %w (the instance does not wait on it)", op.inst.ID, n.ID, ErrNotActive)
}

// permit checks the controller for the action.
func (x *Executor) permit(a Actor, action Action, n *flow.Node) error {
	if action.needsAdmin() {
		if !x.ctrl.Admin(a) {
			return fmt.Errorf("%w: actor %s may not %s node %q: only an administrator may", ErrNotPermitted, a, action, n.ID)
		}
		return nil
	}
	if !x.ctrl.Operable(a, n) {
		return fmt.Errorf("%w: actor %s may not %s node %q", ErrNotPermitted, a, action, n.ID)
	}
	return nil
}

// apply changes the task states for the action, then moves the instance on over
// the tasks that complete by themselves.
func (op *op) apply(action Action, n *flow.Node) error {
	var err error
	switch action {
	case Forward:
		return op.forward(n) // which moves the instance on
	case Back:
		op.back(n)
	case ForwardJump:
		err = op.jump(n, op.forward)
	case BackJump:
		err = op.jump(n, func(t *flow.Node) error { op.back(t); return nil })
	case Restart:
		clear(op.inst.States)
	case Terminate:
		op.inst.States[key(n)] = Terminated
		return nil
	}
	if err != nil {
		return err
	}
	_, err = op.walk(modeAdvance)
	return err
}

// forward runs n's task and completes it (Solon allows forwarding a task again: its
// task runs again).
func (op *op) forward(n *flow.Node) error {
	if ownTask(n) {
		if err := op.x.engine.RunTask(op.ctx, n, op.fc); err != nil {
			return &TaskError{Node: n.ID, Err: err}
		}
	}
	op.inst.States[key(n)] = Completed
	_, err := op.walk(modeAdvance)
	return err
}

// jump moves the instance with step (forward or back) from where it stands until it
// stands at target, which becomes waiting.
func (op *op) jump(target *flow.Node, step func(*flow.Node) error) error {
	var last *flow.Node
	for {
		w, err := op.walk(modeFind)
		if err != nil {
			return err
		}
		if w.found == nil || w.found.State == Terminated {
			return fmt.Errorf("node %q: %w: the instance ends first", target.ID, ErrNotReached)
		}
		at := w.found.Node
		if at == target {
			op.inst.States[key(target)] = Waiting
			return nil
		}
		if at == last {
			return fmt.Errorf("node %q: %w: the instance stays at %q", target.ID, ErrNotReached, at.ID)
		}
		last = at
		if err := step(at); err != nil {
			return err
		}
	}
}

// back removes n's record and those of the steps before it, back to the previous
// task someone operates: gateways on the way are passed (a split's branches are all
// removed, so the split runs again) and so are tasks that move on by themselves
// (Solon stops at the first node before, so a script node before n would complete
// by itself again and leave the instance where it was).
func (op *op) back(n *flow.Node) {
	states := op.inst.States
	delete(states, key(n))
	seen := map[*flow.Node]bool{}
	var walk func(*flow.Node)
	walk = func(n *flow.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, l := range n.Incoming() {
			p := n.Graph().Node(l.From)
			switch {
			case p.Type.IsGateway():
				for _, pl := range p.Links() {
					delete(states, key(pl.Target()))
				}
				walk(p)
			case p.Type == flow.Start:
			case op.x.ctrl.Auto(p):
				delete(states, key(p))
				walk(p)
			default:
				delete(states, key(p))
			}
		}
	}
	walk(n)
}
