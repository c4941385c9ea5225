package flow

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Graph is a built, validated, immutable flow definition. It is safe to share between
// goroutines and engines; all per-run state lives in the run.
type Graph struct {
	// ID identifies the graph in an engine's registry and in "#id" task references.
	ID string
	// Title is a human-readable name.
	Title string
	// Driver names the driver the definition was written for (kept, not interpreted).
	Driver string
	// Evaluator names the evaluator of the graph's scripts and conditions ("" for the
	// engine's default); an engine compiles the graph with the evaluator registered
	// under that name (WithNamedEvaluator).
	Evaluator string
	// Meta holds free-form attributes; "$key" tasks read scripts from here.
	Meta map[string]any
	// Source is the file the graph was read from, if any.
	Source string

	nodes []*Node
	byID  map[string]*Node
	start *Node
	spec  *GraphSpec

	hashOnce sync.Once
	hash     string // Hash's, computed at its first call: the graph does not change
}

// Nodes returns the nodes in definition order. The slice must not be modified.
func (g *Graph) Nodes() []*Node { return g.nodes }

// Node returns the node with the given id, or nil.
func (g *Graph) Node(id string) *Node { return g.byID[id] }

// Start returns the start node.
func (g *Graph) Start() *Node { return g.start }

// Spec returns a copy of the specification the graph was built from, for editing and
// rebuilding or for writing the definition back out.
func (g *Graph) Spec() *GraphSpec { return g.spec.Clone() }

// Calls returns the ids of the graphs this graph calls as sub-graphs ("#id" tasks and
// graphs used as tasks), sorted and without duplicates.
func (g *Graph) Calls() []string {
	var ids []string
	for _, n := range g.nodes {
		if sg, ok := n.Component.(subGraphTask); ok {
			ids = append(ids, sg.g.ID)
		} else if id, ok := strings.CutPrefix(strings.TrimSpace(n.Task), "#"); ok && n.Component == nil {
			ids = append(ids, strings.TrimSpace(id))
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// MetaValue looks up a dotted path ("a.b.c") in the graph's meta.
func (g *Graph) MetaValue(path string) (any, bool) {
	var cur any = g.Meta
	for part := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// DefinitionError is a problem in a graph definition, located as precisely as known.
type DefinitionError struct {
	Pos   Pos    // file and line, when the definition came from a file
	Graph string // graph id, when known
	Node  string // node id, when the problem belongs to a node
	Msg   string // what is wrong
	Err   error  // the underlying error, if any (ErrUnknownTask, ErrCompile, ...)
}

// Unwrap returns the underlying error.
func (e *DefinitionError) Unwrap() error { return e.Err }

// Error returns the message prefixed with what is known of where the problem is:
// "file:line: graph "g": node "n": message".
func (e *DefinitionError) Error() string {
	var b strings.Builder
	if p := e.Pos.String(); p != "" {
		b.WriteString(p)
		b.WriteString(": ")
	}
	if e.Graph != "" {
		fmt.Fprintf(&b, "graph %q: ", e.Graph)
	}
	if e.Node != "" {
		fmt.Fprintf(&b, "node %q: ", e.Node)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Build validates the specification and returns the immutable graph. It reports every
// problem it finds (joined with errors.Join), each a *DefinitionError: a missing graph id,
// duplicate or empty node ids, links to nodes that do not exist (naming both nodes), and
// a missing start node (without a node of type start, the first node no link enters
// is the start, as in Solon). The spec is copied, so later edits do not affect the graph.
func (s *GraphSpec) Build() (*Graph, error) {
	spec := s.Clone()
	b := &graphBuilder{g: &Graph{
		ID: spec.ID, Title: spec.Title, Driver: spec.Driver, Evaluator: spec.Evaluator, Meta: spec.Meta,
		Source: spec.Source, byID: make(map[string]*Node, len(spec.Nodes)), spec: spec,
	}}
	g := b.g
	b.docPos = Pos{File: spec.Source}
	if spec.Source != "" {
		b.docPos.Line = 1 // graph-level problems point at the top of the document
	}
	if g.ID == "" {
		b.fail(b.docPos, "", "graph has no id")
	}
	built := b.nodes(spec.Nodes)
	b.links(spec.Nodes, built)
	for _, n := range g.nodes {
		// Higher priority first; SortStableFunc keeps document order among equals.
		slices.SortStableFunc(n.links, func(a, b *Link) int { return cmp.Compare(b.Priority, a.Priority) })
		for i, l := range n.links {
			l.index = i
		}
	}
	if g.start == nil {
		// As in Solon: without a start-typed node, the first node that no link enters starts.
		for _, n := range g.nodes {
			if len(n.incoming) == 0 {
				g.start = n
				break
			}
		}
	}
	if g.start == nil && len(g.nodes) > 0 {
		b.fail(b.docPos, "", "no start node: no node has type start and every node has an incoming link")
	}
	if len(spec.Nodes) == 0 {
		b.fail(b.docPos, "", "graph has no nodes")
	}
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	return g, nil
}

// graphBuilder collects the problems Build finds in one graph.
type graphBuilder struct {
	g      *Graph
	docPos Pos // where graph-level problems point
	errs   []error
}

func (b *graphBuilder) fail(pos Pos, node, format string, args ...any) {
	b.errs = append(b.errs, &DefinitionError{Pos: pos, Graph: b.g.ID, Node: node, Msg: fmt.Sprintf(format, args...)})
}

// nodes builds the graph's nodes from their specs and returns them by spec index, nil
// where a spec was rejected. The first node of type start is the start.
func (b *graphBuilder) nodes(specs []*NodeSpec) []*Node {
	g := b.g
	g.nodes = make([]*Node, 0, len(specs))
	built := make([]*Node, len(specs))
	for i, ns := range specs {
		if ns == nil {
			b.fail(b.docPos, "", "node #%d is nil", i+1)
			continue
		}
		n := &Node{
			ID: ns.ID, Type: ns.Type, Title: ns.Title, When: ns.When, Task: ns.Task,
			Component: ns.Component, Meta: ns.Meta, Pos: ns.Pos, index: len(g.nodes), graph: g,
			taskAt: ns.TaskPos, whenAt: ns.WhenPos,
		}
		switch {
		case n.ID == "":
			b.fail(n.Pos, "", "node #%d has no id", len(g.nodes)+1)
			continue
		case g.byID[n.ID] != nil:
			b.fail(n.Pos, n.ID, "duplicate node id (first defined at %s)", posOr(g.byID[n.ID].Pos, "an earlier node"))
			continue
		case n.Type > Loop:
			b.fail(n.Pos, n.ID, "unknown node type %d", n.Type)
			continue
		}
		g.byID[n.ID] = n
		g.nodes = append(g.nodes, n)
		built[i] = n
		if n.Type == Start && g.start == nil {
			g.start = n
		}
	}
	return built
}

// links builds the links of the built nodes, in document order.
func (b *graphBuilder) links(specs []*NodeSpec, built []*Node) {
	for i, ns := range specs {
		from := built[i]
		if from == nil {
			continue
		}
		for _, ls := range ns.Links {
			to := b.g.byID[ls.NextID]
			if to == nil {
				b.fail(orPos(ls.Pos, ns.Pos), from.ID, "link from %q to missing node %q", from.ID, ls.NextID)
				continue
			}
			l := &Link{From: from.ID, To: to.ID, Title: ls.Title, When: ls.When, Priority: ls.Priority, Meta: ls.Meta, Pos: orPos(ls.Pos, ns.Pos), to: to, whenAt: ls.WhenPos}
			from.links = append(from.links, l)
			to.incoming = append(to.incoming, l)
		}
	}
}

func orPos(p, fallback Pos) Pos {
	if p.Line == 0 && p.File == "" {
		return fallback
	}
	return p
}

func posOr(p Pos, s string) string {
	if str := p.String(); str != "" {
		return str
	}
	return s
}
