package flow

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// TestLink evaluates the condition of link l against fc outside a run, with the
// condition compiled for this engine (l's graph is compiled on first use, as
// EvalGraph does). An empty condition holds. It is for code that walks a graph by
// itself, such as approval workflows that decide where an instance stands from
// stored task states instead of running it.
func (e *Engine) TestLink(ctx context.Context, l *Link, fc *Context) (bool, error) {
	if l == nil || l.to == nil {
		return false, errors.New("flow: test of a link that belongs to no built graph")
	}
	g := l.to.graph
	cg, err := e.prepare(g)
	if err != nil {
		return false, err
	}
	from := g.byID[l.From]
	if from == nil || l.index >= len(cg.nodes[from.index].links) {
		return false, fmt.Errorf("flow: link %s -> %s is not in graph %q", l.From, l.To, g.ID)
	}
	when := &cg.nodes[from.index].links[l.index].when
	if when.always() {
		return true, nil
	}
	return when.test(ctx, fc)
}

// RunTask runs the task of node n against fc outside a run: its when guard first
// (false skips the task), then a Go task or a script, compiled for this engine.
// A task that calls a sub-graph is not run (the caller decides how to enter the
// graph; CalledGraph or the "#id" reference names it): RunTask returns an error for
// it. Run controls (Stop, Interrupt, Suspend) do nothing outside a run. A panic in
// the task is returned as an error wrapping ErrTaskPanic.
func (e *Engine) RunTask(ctx context.Context, n *Node, fc *Context) (err error) {
	if n == nil || n.graph == nil {
		return errors.New("flow: run of a node that belongs to no built graph")
	}
	cg, err := e.prepare(n.graph)
	if err != nil {
		return err
	}
	cn := &cg.nodes[n.index]
	if cn.kind == taskNone {
		return nil
	}
	if !cn.guard.always() {
		ok, err := cn.guard.test(ctx, fc)
		if err != nil || !ok {
			return err
		}
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("node %q: %w: %v\n%s", n.ID, ErrTaskPanic, p, debug.Stack())
		}
	}()
	switch cn.kind {
	case taskGo:
		return cn.task.Run(ctx, fc, n)
	case taskScript:
		fc.st.mu.Lock()
		_, err := cn.script.Eval((*lockedView)(fc))
		fc.st.mu.Unlock()
		return err
	}
	return fmt.Errorf("flow: node %q calls a sub-graph: enter it with EvalGraph", n.ID)
}
