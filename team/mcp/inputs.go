package mcp

import (
	"maps"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/flowteam/flowteam/flow"
)

// Inputs returns the variables graph g reads and never writes, sorted: the names
// its scripts and conditions (and those of the graphs it calls, found in graphs)
// read as identifiers or with context.get, getOrDefault or containsKey, and the
// variables its loops iterate, less those a script puts, removes or increments or
// a loop binds. They are the graph's inputs as far as its text tells: only scripts
// of the default (expr) evaluator are read, and Go tasks ("@name") may read any
// variable, which is why the tool schema built on them stays open.
func Inputs(g *flow.Graph, graphs []*flow.Graph) []string {
	byID := make(map[string]*flow.Graph, len(graphs))
	for _, x := range graphs {
		byID[x.ID] = x
	}
	u := usage{reads: map[string]bool{}, writes: map[string]bool{}, seen: map[string]bool{}}
	u.graph(g, byID)
	var in []string
	for _, name := range slices.Sorted(maps.Keys(u.reads)) {
		if !u.writes[name] {
			in = append(in, name)
		}
	}
	return in
}

// usage collects the variables the scripts of graphs read and write.
type usage struct {
	reads, writes map[string]bool
	seen          map[string]bool // graphs walked, so that recursive calls end
}

func (u *usage) graph(g *flow.Graph, byID map[string]*flow.Graph) {
	if u.seen[g.ID] {
		return
	}
	u.seen[g.ID] = true
	if g.Evaluator != "" && g.Evaluator != flow.DefaultEvaluatorName {
		return // another language: its scripts cannot be read here
	}
	for _, n := range g.Nodes() {
		u.script(n.When)
		for _, l := range n.Links() {
			u.script(l.When)
		}
		if v, ok := n.Meta[flow.MetaFor].(string); ok {
			u.writes[v] = true
		}
		if in, ok := n.Meta[flow.MetaIn].(string); ok && !strings.Contains(in, ":") && !strings.Contains(in, "...") {
			u.reads[strings.TrimSpace(in)] = true
		}
		task := strings.TrimSpace(n.Task)
		switch {
		case n.Component != nil || strings.HasPrefix(task, "@"):
		case strings.HasPrefix(task, "#"):
			if sub := byID[strings.TrimSpace(task[1:])]; sub != nil {
				u.graph(sub, byID)
			}
		case strings.HasPrefix(task, "$"):
			if src, ok := g.MetaValue(task[1:]); ok {
				s, _ := src.(string)
				u.script(s)
			}
		default:
			u.script(task)
		}
	}
}

// script adds what one script or condition reads and writes; one that does not parse
// (a "@name" condition, a mistake the engine reports) adds nothing.
func (u *usage) script(src string) {
	src = strings.TrimRight(strings.TrimSpace(src), "; \t\r\n")
	if src == "" || strings.HasPrefix(src, "@") {
		return
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return
	}
	v := &scriptVisitor{u: u, bound: map[string]bool{}, callees: map[ast.Node]bool{}}
	ast.Walk(&tree.Node, binder{v})
	ast.Walk(&tree.Node, v)
}

type scriptVisitor struct {
	u       *usage
	bound   map[string]bool   // names declared with let
	callees map[ast.Node]bool // identifiers in call position: functions, not variables
}

// binder is the first pass: ast.Walk visits a call's callee and a let's body before
// the nodes that bind them.
type binder struct{ v *scriptVisitor }

func (b binder) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.VariableDeclaratorNode:
		b.v.bound[n.Name] = true
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok {
			b.v.callees[id] = true
		}
	}
}

func (v *scriptVisitor) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		if n.Value != "context" && !v.bound[n.Value] && !v.callees[n] {
			v.u.reads[n.Value] = true
		}
	case *ast.CallNode:
		m, ok := n.Callee.(*ast.MemberNode)
		if !ok || len(n.Arguments) == 0 {
			return
		}
		recv, _ := m.Node.(*ast.IdentifierNode)
		method, _ := m.Property.(*ast.StringNode)
		key, _ := n.Arguments[0].(*ast.StringNode)
		if recv == nil || recv.Value != "context" || method == nil || key == nil {
			return
		}
		switch method.Value {
		case "get", "getOrDefault", "containsKey":
			v.u.reads[key.Value] = true
		case "put", "remove", "incr":
			v.u.writes[key.Value] = true
		}
	}
}
