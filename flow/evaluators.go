package flow

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// DefaultEvaluatorName is the name under which every engine knows the expr evaluator, so
// that a definition may say "evaluator: expr" whatever the engine's default is.
const DefaultEvaluatorName = "expr"

// WithNamedEvaluator registers ev under name, for graphs whose definition names it
// ("evaluator: solon" at the top of the document, Graph.Evaluator). A graph that names
// no evaluator is compiled with the engine's default (WithEvaluator); one that names
// an evaluator the engine does not know fails to register.
func WithNamedEvaluator(name string, ev Evaluator) Option {
	return func(e *Engine) {
		if e.evals == nil {
			e.evals = make(map[string]Evaluator)
		}
		e.evals[name] = ev
	}
}

// evaluatorFor returns the evaluator g's scripts and conditions are compiled with.
func (e *Engine) evaluatorFor(g *Graph) (Evaluator, error) {
	name := strings.TrimSpace(g.Evaluator)
	if name == "" {
		return e.eval, nil
	}
	if ev := e.evals[name]; ev != nil {
		return ev, nil
	}
	if name == DefaultEvaluatorName {
		if _, ok := e.eval.(*ExprEvaluator); ok {
			return e.eval, nil
		}
		// One for all the graphs that name it: building its configuration costs more
		// than compiling their scripts.
		e.exprOnce.Do(func() { e.expr = NewExprEvaluator() })
		return e.expr, nil
	}
	known := []string{DefaultEvaluatorName}
	for n := range e.evals {
		if n != DefaultEvaluatorName {
			known = append(known, n)
		}
	}
	slices.Sort(known[1:])
	return nil, &DefinitionError{Pos: Pos{File: g.Source}, Graph: g.ID,
		Msg: fmt.Sprintf("unknown evaluator %q (this engine knows %s; register it with flow.WithNamedEvaluator)", name, strings.Join(known, ", "))}
}

// ScriptTask is an Expression returned by an Evaluator's CompileScript that runs as a
// Go task does: without the variables locked, with the run's context.Context and the
// node's branch view, so that it can run other tasks (Context.RunTask) and publish
// events (Context.Publish). The engine calls Run, never Eval, for the node; such a
// script is not applied atomically, each of its variable accesses is.
type ScriptTask interface {
	Expression
	Task
}

// EventInterceptor is an Interceptor that also observes the events tasks publish
// (Context.Publish), such as those of a Solon script's context.eventBus().send.
type EventInterceptor interface {
	Interceptor
	OnEvent(ctx context.Context, c *Context, n *Node, topic string, payload any)
}

// Publish sends an event from the view's node to the run's interceptors that implement
// EventInterceptor, in their order, and returns how many observed it. On the root view,
// or outside a run, nothing observes it.
func (c *Context) Publish(ctx context.Context, topic string, payload any) int {
	r := c.ownRun()
	if r == nil {
		return 0
	}
	seen := 0
	for _, i := range r.icpts {
		if ei, ok := i.i.(EventInterceptor); ok {
			ei.OnEvent(ctx, c, c.tok.node.n, topic, payload)
			seen++
		}
	}
	return seen
}

// RunTask runs the Go task the engine registered under name ("@name" or name) for the
// view's node, as Solon's context.runTask does: with the same branch view, so what it
// puts in the context the caller reads next. It fails with ErrUnknownTask when the
// engine has no such task, and on the root view or outside a run.
func (c *Context) RunTask(ctx context.Context, name string) error {
	name = strings.TrimPrefix(strings.TrimSpace(name), "@")
	r := c.ownRun()
	if r == nil {
		return fmt.Errorf("run task %q: not inside a node of a run", name)
	}
	r.e.mu.RLock()
	t := r.e.tasks[name]
	r.e.mu.RUnlock()
	if t == nil {
		return fmt.Errorf("run task: %w %q", ErrUnknownTask, name)
	}
	return t.Run(ctx, c, c.tok.node.n)
}

// ownRun returns the run the view's node execution belongs to (nil for the root view).
func (c *Context) ownRun() *run {
	if c.tok == nil {
		return nil
	}
	root := c.tok.call
	for root.caller != nil {
		root = root.caller
	}
	return root.run
}

// ownExpr reports whether x is nil or was compiled by an ExprEvaluator (which another
// evaluator may delegate to): the engine's own code, which keeps no view of a run.
func ownExpr(x Expression) bool {
	switch x.(type) {
	case nil, fastExpr, *exprProgram:
		return true
	}
	return false
}
