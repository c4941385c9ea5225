package flow

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/internal/loopwalk"
)

// compiled is a graph prepared for one engine: task references resolved and every
// condition and script compiled, once.
type compiled struct {
	g     *Graph
	nodes []cnode // indexed like g.nodes
	start *cnode
	// sealed says that no code outside the engine sees a run of this graph: no Go
	// tasks or conditions, no sub-graph calls, no retries, no error policy, and only
	// expressions the expr evaluator compiled.
	// Nothing can then keep a pointer into the run after it ends, so its state is
	// recycled (see recycle.go).
	sealed bool
}

type taskKind uint8

const (
	taskNone taskKind = iota
	taskGo
	taskScript
	taskSubgraph
)

type cnode struct {
	n        *Node
	kind     taskKind
	task     Task
	script   Expression
	subID    string // graph id for "#id" calls, resolved at run time
	subGraph *Graph // graph used as a task value
	guard    cond
	links    []clink
	targets  []*cnode // every link's target, in priority order (parallel splits)
	join     bool
	split    bool   // an inclusive or parallel node with more than one outgoing link
	loopVar  string // $for of an opening loop node
	loopIn   any    // $in of an opening loop node
	closing  *cnode // the closing loop node matched statically, if any
	// reach marks, for a node that may split (fans), the links into joins whose
	// source its branches can reach (joinReach); inFirst numbers a join's first
	// incoming link in that set.
	reach      []uint64
	inFirst    int
	isClose    bool            // a loop node without $for
	body       map[*cnode]bool // an opening loop node's body (matchClosingLoop)
	closers    map[*cnode]bool // an opening loop node's closing nodes (matchClosingLoop)
	policy     BranchPolicy
	policySet  bool
	onError    *onError
	retry      *RetryPolicy
	idempotent bool
}

type clink struct {
	l    *Link
	to   *cnode
	when cond
}

// cond is a compiled condition; the zero value is always true.
type cond struct {
	expr  Expression
	named Condition
}

func (c *cond) always() bool { return c.expr == nil && c.named == nil }

// compile resolves and compiles g against the engine's tasks, conditions and evaluator.
// It reports every problem found, each naming the node and the definition position.
func (e *Engine) compile(g *Graph) (*compiled, error) {
	ev, err := e.evaluatorFor(g)
	if err != nil {
		return nil, err
	}
	cg := &compiled{g: g, nodes: make([]cnode, len(g.nodes))}
	c := &graphCompiler{e: e, g: g, ev: ev}
	for i, n := range g.nodes {
		cn := &cg.nodes[i]
		cn.n = n
		cn.join = n.IsJoin()
		cn.split = (n.Type == Inclusive || n.Type == Parallel) && len(n.links) > 1
		cn.guard = c.cond(n, n.Pos, n.whenAt, "node condition", n.When)
		e.compileTask(ev, g, n, cn, func(pos Pos, format string, args ...any) { c.fail(n, pos, format, args...) })
		if n.Type == Loop {
			c.loop(n, cn)
		}
		c.policies(n, cn)
		cn.links = make([]clink, len(n.links))
		cn.targets = make([]*cnode, len(n.links))
		for j, l := range n.links {
			cn.links[j] = clink{l: l, to: &cg.nodes[l.to.index], when: c.cond(n, l.Pos, l.whenAt, fmt.Sprintf("link to %q: condition", l.To), l.When)}
			cn.targets[j] = cn.links[j].to
		}
	}
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	cg.start = &cg.nodes[g.start.index]
	for i := range cg.nodes {
		if cn := &cg.nodes[i]; cn.loopVar != "" {
			cn.closing, cn.body, cn.closers = matchClosingLoop(cn)
		}
	}
	cg.reachJoins()
	cg.sealed = e.sealed(cg)
	return cg, nil
}

// graphCompiler collects the problems compile finds in one graph.
type graphCompiler struct {
	e    *Engine
	g    *Graph
	ev   Evaluator // the evaluator g names, else the engine's
	errs []error
}

// fail records a problem at node n.
func (c *graphCompiler) fail(n *Node, pos Pos, format string, args ...any) {
	err := fmt.Errorf(format, args...)
	c.errs = append(c.errs, &DefinitionError{Pos: orPos(pos, Pos{File: c.g.Source}), Graph: c.g.ID, Node: n.ID, Msg: err.Error(), Err: errors.Unwrap(err)})
}

// cond compiles a node's or a link's condition: "@name" for a registered condition,
// else an expression; the empty condition always holds.
func (c *graphCompiler) cond(n *Node, pos Pos, at ScriptPos, what, src string) cond {
	src = strings.TrimSpace(src)
	if src == "" {
		return cond{}
	}
	if name, ok := strings.CutPrefix(src, "@"); ok {
		named := c.e.conds[name]
		if named == nil {
			c.fail(n, pos, "%s: %w %q", what, ErrUnknownCond, name)
		}
		return cond{named: named}
	}
	x, err := c.ev.CompileCondition(src)
	if err != nil {
		c.fail(n, at.Locate(err, pos), "%s %q %w: %v", what, src, ErrCompile, err)
	}
	return cond{expr: x}
}

// loop reads a loop node's meta: an opening loop has MetaFor and MetaIn, a closing one
// neither.
func (c *graphCompiler) loop(n *Node, cn *cnode) {
	v, ok := n.Meta[MetaFor]
	if !ok {
		cn.isClose = true
		return
	}
	s, isStr := v.(string)
	if !isStr || s == "" {
		c.fail(n, n.Pos, "loop %s must be a non-empty variable name", MetaFor)
	}
	cn.loopVar, cn.loopIn = s, n.Meta[MetaIn]
	if cn.loopIn == nil {
		c.fail(n, n.Pos, "loop has %s but no %s", MetaFor, MetaIn)
	} else if err := checkLoopIn(cn.loopIn); err != nil {
		c.fail(n, n.Pos, "loop %s: %v", MetaIn, err)
	}
}

// policies reads a node's branch, error and retry policies from its meta.
func (c *graphCompiler) policies(n *Node, cn *cnode) {
	if p, ok := n.Meta[MetaBranchPolicy].(string); ok {
		bp, err := ParseBranchPolicy(p)
		if err != nil {
			c.fail(n, n.Pos, "%v", err)
		}
		cn.policy, cn.policySet = bp, true
	}
	if oe, err := parseOnError(n.Meta[MetaOnError]); err != nil {
		c.fail(n, n.Pos, "meta %s: %v", MetaOnError, err)
	} else if oe != nil {
		if oe.gotoID != "" && c.g.byID[oe.gotoID] == nil {
			c.fail(n, n.Pos, "meta %s: goto %q: no such node", MetaOnError, oe.gotoID)
		}
		cn.onError = oe
	}
	if rp, err := parseRetry(n.Meta[MetaRetry]); err != nil {
		c.fail(n, n.Pos, "meta %s: %v", MetaRetry, err)
	} else {
		cn.retry = rp
	}
	cn.idempotent = isTrue(n.Meta[MetaIdempotent])
}

// sealed reports whether only the engine's own code runs for cg's nodes (compiled.sealed).
func (e *Engine) sealed(cg *compiled) bool {
	if e.errPolicy != nil {
		return false // so is an error policy, and the run's context.Context
	}
	for i := range cg.nodes {
		cn := &cg.nodes[i]
		if cn.kind == taskGo || cn.kind == taskSubgraph || cn.guard.named != nil || cn.retry != nil ||
			!ownExpr(cn.script) || !ownExpr(cn.guard.expr) {
			return false // a custom evaluator's expressions are given the run's views too
		}
		for _, l := range cn.links {
			if l.when.named != nil || !ownExpr(l.when.expr) {
				return false
			}
		}
	}
	return true
}

func (e *Engine) compileTask(ev Evaluator, g *Graph, n *Node, cn *cnode, fail func(Pos, string, ...any)) {
	if n.Component != nil {
		if sg, ok := n.Component.(subGraphTask); ok {
			cn.kind, cn.subGraph = taskSubgraph, sg.g
			return
		}
		cn.kind, cn.task = taskGo, n.Component
		return
	}
	src, at := strings.TrimSpace(n.Task), n.taskAt
	switch {
	case src == "":
		return
	case strings.HasPrefix(src, "@"):
		name := src[1:]
		t := e.tasks[name]
		if t == nil {
			fail(n.Pos, "%w %q (register it on the engine before loading the graph)", ErrUnknownTask, name)
			return
		}
		cn.kind, cn.task = taskGo, t
		return
	case strings.HasPrefix(src, "#"):
		cn.kind, cn.subID = taskSubgraph, strings.TrimSpace(src[1:])
		if cn.subID == "" {
			fail(n.Pos, "sub-graph reference %q names no graph", src)
		}
		return
	case strings.HasPrefix(src, "$"):
		at = ScriptPos{} // the script is in the graph's meta: report the node
		key := src[1:]
		v, ok := g.MetaValue(key)
		s, isStr := v.(string)
		if !ok || !isStr {
			fail(n.Pos, "task %q: graph meta has no script at %q", src, key)
			return
		}
		src = s
	}
	x, err := ev.CompileScript(src)
	if err != nil {
		fail(at.Locate(err, n.Pos), "task script %q %w: %v", oneLine(src), ErrCompile, err)
		return
	}
	if t, ok := x.(ScriptTask); ok {
		cn.kind, cn.task = taskGo, t
		return
	}
	cn.kind, cn.script = taskScript, x
}

// matchClosingLoop finds the loop node without $for that closes the loop opened at
// open: the first one reachable along links with as many loops opened as closed in
// between. It is used when a loop has no items, so the flow can still pass the closing
// node once; a body that reaches a closing node at run time records it as well. It
// also returns the loop's body and all its closing nodes (loopwalk.Body, the walk
// export's Validate shares). A link never leaves the body, so only an error policy's
// goto can (failedWith).
func matchClosingLoop(open *cnode) (closing *cnode, body, closers map[*cnode]bool) {
	found, body := loopwalk.Body(open, func(n *cnode) []*cnode {
		next := make([]*cnode, len(n.links))
		for i, l := range n.links {
			next[i] = l.to
		}
		return next
	}, func(n *cnode) loopwalk.Kind {
		switch {
		case n.n.Type != Loop:
			return loopwalk.Other
		case n.n.Meta[MetaFor] == nil:
			return loopwalk.Close
		}
		return loopwalk.Open
	})
	closers = make(map[*cnode]bool, len(found))
	for _, c := range found {
		closers[c] = true
	}
	if len(found) > 0 {
		closing = found[0]
	}
	return closing, body, closers
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// subGraphTask is a graph used directly as a task.
type subGraphTask struct{ g *Graph }

// Run is never called by an engine, which runs the graph itself; called directly it
// reports that.
func (s subGraphTask) Run(context.Context, *Context, *Node) error {
	return fmt.Errorf("sub-graph %q can only run inside an engine", s.g.ID)
}

// CalledGraph returns the graph a task made with Call runs.
func CalledGraph(t Task) (*Graph, bool) {
	if sg, ok := t.(subGraphTask); ok {
		return sg.g, true
	}
	return nil, false
}

// Call returns a task that runs g as a sub-graph of the node's graph, sharing the
// FlowContext, exactly like the task reference "#" + g.ID but without registering g.
func Call(g *Graph) Task { return subGraphTask{g} }
