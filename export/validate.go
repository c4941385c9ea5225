package export

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// ValidateOption configures ValidateSpecs.
type ValidateOption func(*validateConfig)

type validateConfig struct {
	eval       flow.Evaluator
	tasks      map[string]bool // nil: "@name" tasks are not checked
	conds      map[string]bool // nil: "@name" conditions are not checked
	registered []*flow.Graph
}

// WithEvaluator compiles conditions and scripts with ev instead of the default
// flow.NewExprEvaluator(); pass the evaluator the engine will use.
func WithEvaluator(ev flow.Evaluator) ValidateOption {
	return func(c *validateConfig) { c.eval = ev }
}

// WithTaskNames lists the Go tasks the engine registers; "@name" tasks outside the list
// become task.unknown errors. Without this option "@name" tasks are not checked.
func WithTaskNames(names ...string) ValidateOption {
	return func(c *validateConfig) {
		if c.tasks == nil {
			c.tasks = make(map[string]bool)
		}
		for _, n := range names {
			c.tasks[strings.TrimPrefix(n, "@")] = true
		}
	}
}

// WithConditionNames lists the Go conditions the engine registers; "@name" conditions
// outside the list become condition.unknown errors. Without this option they are not
// checked.
func WithConditionNames(names ...string) ValidateOption {
	return func(c *validateConfig) {
		if c.conds == nil {
			c.conds = make(map[string]bool)
		}
		for _, n := range names {
			c.conds[strings.TrimPrefix(n, "@")] = true
		}
	}
}

// WithRegistered adds the graphs an engine already holds (flow.Engine.Graphs()): a
// validated graph may not reuse their ids (unless it is the same file), and "#id"
// references may call them.
func WithRegistered(gs ...*flow.Graph) ValidateOption {
	return func(c *validateConfig) { c.registered = append(c.registered, gs...) }
}

// Validate runs the production checklist on one built graph; see ValidateSpecs.
func Validate(g *flow.Graph, opts ...ValidateOption) []Finding {
	spec := g.Spec()
	return ValidateSpecs([]*flow.GraphSpec{spec}, opts...)
}

// ValidateSpecs runs the production checklist on a set of graph specifications that
// are meant to be registered together, and returns its findings sorted by file and
// line (nil when there is nothing to report). Specs need not build: a spec with a
// dangling link or a duplicate node id is reported and still checked as far as
// possible.
//
// Errors: graph ids missing or not unique in the set (or the registry, see
// WithRegistered); no nodes; node ids missing or duplicated; links to missing nodes
// (naming both nodes); no start node or more than one; end nodes none of which is
// reachable; exclusive gateways with more than one link that always holds (no when,
// or the literal true); branches of one split that reach different joins; "#id"
// sub-graph calls that resolve to no graph, or that call back into their own graph
// unconditionally; conditions and scripts that do not compile (most scripts written
// in Java for Solon do not: flowteam runs expressions); "$key" tasks whose script is
// not in the graph's meta; invalid loop, branch-policy or onError meta; unregistered
// "@name" tasks and conditions when the names are given (WithTaskNames,
// WithConditionNames); and whatever else the engine refuses when it compiles a graph
// that passed every other check (graph.compile).
//
// Warnings: no node of type start (the builder picked one, as Solon does); no end node;
// nodes not reachable from the start (links and onError goto); inclusive gateways
// whose every link has a condition (a literal "true" counts as none, for both
// gateways); exclusive gateways whose every link has a condition (no default: when
// none holds the run fails with exclusive_no_match);
// conditions on the links of a parallel gateway (ignored: it takes every link); split
// branches that end without reaching the join the others reach; splits without a
// join; joins that belong to no split; cycles that pass through no condition and no
// loop node, and cycles nothing leaves (no link out, no node that can end the branch:
// the conditions only choose the way round), each named; Java scripts that happen to
// compile as expressions but fail when run; sub-graph recursion that is conditional
// (bounded only by the conditions and the engine's call depth limit); onError gotos
// into a loop's body from outside that loop or from its closing node (the body runs
// without the loop item, the closing node as an ordinary node).
//
// The codes are the Code constants; a finding's position is the node's, the link's, or
// the document's first line for findings about a whole graph.
func ValidateSpecs(specs []*flow.GraphSpec, opts ...ValidateOption) []Finding {
	cfg := &validateConfig{}
	for _, o := range opts {
		o(cfg)
	}
	if cfg.eval == nil {
		cfg.eval = flow.NewExprEvaluator()
	}
	v := &validator{cfg: cfg}
	graphs := make([]*vgraph, 0, len(specs))
	for _, s := range specs {
		if s != nil {
			graphs = append(graphs, v.model(s))
		}
	}
	v.checkGraphIDs(graphs)
	for _, vg := range graphs {
		v.checkGraph(vg)
	}
	v.checkSubgraphs(graphs)
	for _, vg := range graphs {
		if !vg.failed {
			v.checkCompile(vg)
		}
	}
	sortFindings(v.findings)
	return v.findings
}

type validator struct {
	cfg      *validateConfig
	findings []Finding
}

// vgraph is a spec prepared for checking: nodes by first id, links to existing nodes.
type vgraph struct {
	spec   *flow.GraphSpec
	nodes  []*vnode
	byID   map[string]*vnode
	start  *vnode
	built  *flow.Graph // nil when the spec does not build
	failed bool        // an error was reported for this graph
}

type vnode struct {
	spec   *flow.NodeSpec
	index  int
	out    []*vlink
	in     []*vlink
	onGoto *vnode // where meta onError sends a recovered error, if anywhere
}

type vlink struct {
	spec     flow.LinkSpec
	from, to *vnode
}

func (n *vnode) id() string { return n.spec.ID }

func (l *vlink) pos() flow.Pos {
	if l.spec.Pos.Line == 0 && l.spec.Pos.File == "" {
		return l.from.spec.Pos
	}
	return l.spec.Pos
}

// report adds a finding located at pos (or, when pos is unknown, at the graph's file).
func (v *validator) report(vg *vgraph, sev Severity, code, node string, pos flow.Pos, format string, args ...any) {
	f := Finding{File: pos.File, Line: pos.Line, Severity: sev, Code: code, Graph: vg.spec.ID, Node: node, Message: fmt.Sprintf(format, args...)}
	if f.File == "" {
		f.File = vg.spec.Source
	}
	if f.File != "" && f.Line == 0 {
		f.Line = 1
	}
	if sev == SeverityError {
		vg.failed = true
	}
	v.findings = append(v.findings, f)
}

// graphPos is where findings about the whole graph point: the document's first line.
func (vg *vgraph) graphPos() flow.Pos { return flow.Pos{File: vg.spec.Source} }

// model indexes a spec, reporting missing and duplicate node ids and dangling links.
func (v *validator) model(s *flow.GraphSpec) *vgraph {
	vg := &vgraph{spec: s, byID: make(map[string]*vnode, len(s.Nodes))}
	if !slices.Contains(s.Nodes, nil) { // Build and Clone do not expect nil nodes
		if g, err := s.Build(); err == nil {
			vg.built = g
		}
	}
	for i, ns := range s.Nodes {
		if ns == nil {
			v.report(vg, SeverityError, CodeNodeIDMissing, "", vg.graphPos(), "node #%d is nil", i+1)
			continue
		}
		switch first := vg.byID[ns.ID]; {
		case ns.ID == "":
			v.report(vg, SeverityError, CodeNodeIDMissing, "", ns.Pos, "node #%d has no id", i+1)
			continue
		case first != nil:
			v.report(vg, SeverityError, CodeNodeIDDuplicate, ns.ID, ns.Pos, "node id %q is already used by the node at %s", ns.ID, posText(first.spec.Pos, "an earlier node"))
			continue
		}
		n := &vnode{spec: ns, index: len(vg.nodes)}
		vg.byID[ns.ID] = n
		vg.nodes = append(vg.nodes, n)
	}
	for _, n := range vg.nodes {
		for _, ls := range n.spec.Links {
			l := &vlink{spec: ls, from: n, to: vg.byID[ls.NextID]}
			if l.to == nil {
				v.report(vg, SeverityError, CodeLinkMissingTarget, n.id(), l.pos(), "node %q links to %q, which is not a node of graph %q", n.id(), ls.NextID, s.ID)
				continue
			}
			n.out = append(n.out, l)
			l.to.in = append(l.to.in, l)
		}
	}
	for _, n := range vg.nodes {
		if id := gotoTarget(n.spec.Meta[flow.MetaOnError]); id != "" {
			if n.onGoto = vg.byID[id]; n.onGoto == nil {
				v.report(vg, SeverityError, CodeOnErrorGoto, n.id(), n.spec.Pos, "node %q: meta %s sends errors to %q, which is not a node of graph %q", n.id(), flow.MetaOnError, id, s.ID)
			}
		}
		if n.spec.Type == flow.Start && vg.start == nil {
			vg.start = n
		}
	}
	if vg.start == nil && vg.built != nil && vg.built.Start() != nil {
		// The builder chose a start without type: start (as Solon picks the first node
		// without incoming links).
		vg.start = vg.byID[vg.built.Start().ID]
	}
	for _, n := range vg.nodes {
		// Priority order, as the engine tries them; equal priorities keep document order.
		slices.SortStableFunc(n.out, func(a, b *vlink) int { return cmp.Compare(b.spec.Priority, a.spec.Priority) })
	}
	return vg
}

// gotoTarget reads the node a meta onError value sends recovered errors to: the value
// itself when it is a string, or its "goto" key.
func gotoTarget(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		s, _ := v["goto"].(string)
		return s
	}
	return ""
}

func posText(p flow.Pos, fallback string) string {
	if s := p.String(); s != "" {
		return s
	}
	return fallback
}

// checkGraphIDs reports missing ids and ids used twice in the set or the registry.
func (v *validator) checkGraphIDs(graphs []*vgraph) {
	seen := make(map[string]*vgraph, len(graphs))
	for _, vg := range graphs {
		id := vg.spec.ID
		if id == "" {
			v.report(vg, SeverityError, CodeGraphIDMissing, "", vg.graphPos(), "graph has no id")
			continue
		}
		if first := seen[id]; first != nil {
			v.report(vg, SeverityError, CodeGraphIDDuplicate, "", vg.graphPos(), "graph id %q is already used by %s", id, graphPlace(first.spec.Source))
			continue
		}
		seen[id] = vg
		for _, g := range v.cfg.registered {
			if g.ID == id && (g.Source == "" || g.Source != vg.spec.Source) {
				v.report(vg, SeverityError, CodeGraphIDDuplicate, "", vg.graphPos(), "graph id %q is already registered (from %s)", id, graphPlace(g.Source))
				break
			}
		}
	}
}

func graphPlace(source string) string {
	if source == "" {
		return "a graph defined in code"
	}
	return source
}

// checkGraph runs the per-graph checks.
func (v *validator) checkGraph(vg *vgraph) {
	if len(vg.spec.Nodes) == 0 {
		v.report(vg, SeverityError, CodeGraphEmpty, "", vg.graphPos(), "graph %q has no nodes", vg.spec.ID)
		return
	}
	v.checkNodes(vg)
	v.checkStart(vg)
	v.checkGateways(vg)
	v.checkExpressions(vg)
	v.checkMeta(vg)
	if vg.start != nil {
		v.checkReach(vg)
	}
	v.checkSplits(vg)
	v.checkCycles(vg)
	v.checkGotoLoops(vg)
}

// checkNodes reports what the reader noted about single nodes: an unknown type (the
// node runs as an activity, which may not be what the author meant) and suspicious keys.
func (v *validator) checkNodes(vg *vgraph) {
	for _, n := range vg.nodes {
		switch {
		case n.spec.TypeName != "":
			v.report(vg, SeverityWarning, CodeNodeUnknownType, n.id(), n.spec.Pos, "node %q has unknown type %q: it runs as an activity", n.id(), n.spec.TypeName)
		case n.spec.Type > flow.Loop: // set in code
			v.report(vg, SeverityWarning, CodeNodeUnknownType, n.id(), n.spec.Pos, "node %q has type %v, which the engine does not know: the graph does not build, and no definition document can name it", n.id(), n.spec.Type)
		}
		for _, note := range n.spec.Notes {
			v.report(vg, SeverityWarning, CodeNodeNote, n.id(), note.Pos, "node %q: %s", n.id(), note.Msg)
		}
	}
}

func (v *validator) checkStart(vg *vgraph) {
	var starts []*vnode
	for _, n := range vg.nodes {
		if n.spec.Type == flow.Start {
			starts = append(starts, n)
		}
	}
	switch {
	case len(starts) > 0:
		for _, n := range starts[1:] {
			v.report(vg, SeverityError, CodeStartMultiple, n.id(), n.spec.Pos, "second start node %q (the first is %q at %s): runs begin at the first only", n.id(), starts[0].id(), posText(starts[0].spec.Pos, "an earlier node"))
		}
	case vg.start != nil:
		v.report(vg, SeverityWarning, CodeStartImplicit, vg.start.id(), vg.start.spec.Pos, "graph %q has no node with type: start; runs begin at %q", vg.spec.ID, vg.start.id())
	default:
		v.report(vg, SeverityError, CodeStartMissing, "", vg.graphPos(), "graph %q has no start node (a node with type: start)", vg.spec.ID)
	}
}

func (v *validator) checkGateways(vg *vgraph) {
	for _, n := range vg.nodes {
		switch n.spec.Type {
		case flow.Exclusive:
			var defaults, always []string // without when; always holding (literal true included)
			var taken *vlink              // the one of them the engine takes
			for _, l := range n.out {
				if !holds(l) {
					continue
				}
				always = append(always, fmt.Sprintf("%q", l.to.id()))
				if strings.TrimSpace(l.spec.When) == "" {
					defaults = append(defaults, fmt.Sprintf("%q", l.to.id()))
					continue
				}
				if taken == nil {
					taken = l
				}
			}
			switch {
			case len(defaults) > 1 && taken == nil:
				v.report(vg, SeverityError, CodeExclusiveDefaults, n.id(), n.spec.Pos,
					"exclusive gateway %q has %d default links (without when: to %s): only the first by priority is ever taken", n.id(), len(defaults), strings.Join(defaults, ", "))
			case len(always) > 1:
				v.report(vg, SeverityError, CodeExclusiveDefaults, n.id(), n.spec.Pos,
					"exclusive gateway %q has %d links that always hold (to %s): only the one to %q is ever taken (conditions, even true, are tried before the default link)", n.id(), len(always), strings.Join(always, ", "), taken.to.id())
			case len(defaults) == 0 && !hasDefault(n):
				v.report(vg, SeverityWarning, CodeExclusiveNoDefault, n.id(), n.spec.Pos,
					"every link of exclusive gateway %q has a condition: when none holds, the run fails with %s (Solon would end the branch silently); add a link without when", n.id(), flow.CodeNoRoute)
			}
		case flow.Parallel:
			for _, l := range n.out {
				if when := strings.TrimSpace(l.spec.When); when != "" {
					v.report(vg, SeverityWarning, CodeParallelCondition, n.id(), l.pos(),
						"link from parallel gateway %q to %q has a condition (%s) that is ignored: a parallel gateway takes every link; use an inclusive gateway to choose", n.id(), l.to.id(), oneLine(when))
				}
			}
		case flow.Inclusive:
			if !hasDefault(n) {
				v.report(vg, SeverityWarning, CodeInclusiveNoDefault, n.id(), n.spec.Pos,
					"every link of inclusive gateway %q has a condition: when none holds, the branch ends here", n.id())
			}
		}
	}
}

// hasDefault reports whether a gateway without links, or one of its links, always
// holds: a link without when, or whose when is the literal true (a default in all but
// name). Without one, an exclusive gateway can fail the run and an inclusive one can
// end the branch.
func hasDefault(n *vnode) bool { return len(n.out) == 0 || slices.ContainsFunc(n.out, holds) }

// holds reports whether a link's condition always holds (alwaysHolds).
func holds(l *vlink) bool { return alwaysHolds(l.spec.When) }

// alwaysHolds reports whether a condition (a link's or a node's when) always holds: it
// is empty, or the literal true.
func alwaysHolds(when string) bool {
	when = strings.TrimSpace(when)
	return when == "" || when == "true"
}

// checkReach reports nodes the start cannot reach, and graphs whose end nodes it cannot.
func (v *validator) checkReach(vg *vgraph) {
	seen := make([]bool, len(vg.nodes))
	queue := []*vnode{vg.start}
	seen[vg.start.index] = true
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.spec.Type == flow.End {
			continue // an end node ends its branch: its links are never followed
		}
		next := make([]*vnode, 0, len(n.out)+1)
		for _, l := range n.out {
			next = append(next, l.to)
		}
		if n.onGoto != nil {
			next = append(next, n.onGoto) // a recovered error continues there
		}
		for _, to := range next {
			if !seen[to.index] {
				seen[to.index] = true
				queue = append(queue, to)
			}
		}
	}
	var ends, reachedEnds int
	for _, n := range vg.nodes {
		if n.spec.Type == flow.End {
			ends++
			if seen[n.index] {
				reachedEnds++
			}
		}
		if !seen[n.index] {
			v.report(vg, SeverityWarning, CodeNodeUnreachable, n.id(), n.spec.Pos, "node %q cannot be reached from start node %q", n.id(), vg.start.id())
		}
	}
	switch {
	case ends == 0:
		v.report(vg, SeverityWarning, CodeEndMissing, "", vg.graphPos(), "graph %q has no end node: a run finishes when its branches run out of links", vg.spec.ID)
	case reachedEnds == 0:
		v.report(vg, SeverityError, CodeEndUnreachable, "", vg.graphPos(), "no end node of graph %q can be reached from start node %q", vg.spec.ID, vg.start.id())
	}
}

// checkCompile asks a scratch engine to compile a graph that passed every other check,
// so that whatever the engine refuses is reported even when no check above names it.
func (v *validator) checkCompile(vg *vgraph) {
	if vg.built == nil {
		return
	}
	opts := []flow.Option{flow.WithEvaluator(v.cfg.eval)}
	noop := flow.TaskFunc(nil)
	never := flow.ConditionFunc(nil)
	for _, n := range vg.nodes {
		if name, ok := strings.CutPrefix(strings.TrimSpace(n.spec.Task), "@"); ok {
			opts = append(opts, flow.WithTask(name, noop))
		}
		for _, when := range append([]string{n.spec.When}, linkWhens(n)...) {
			if name, ok := strings.CutPrefix(strings.TrimSpace(when), "@"); ok {
				opts = append(opts, flow.WithCondition(name, never))
			}
		}
	}
	err := flow.NewEngine(opts...).Register(vg.built)
	if err == nil {
		return
	}
	for _, e := range flatten(err) {
		var de *flow.DefinitionError
		if errors.As(e, &de) {
			v.report(vg, SeverityError, CodeGraphCompile, de.Node, de.Pos, "%s", de.Msg)
		} else {
			v.report(vg, SeverityError, CodeGraphCompile, "", vg.graphPos(), "%v", e)
		}
	}
}

func linkWhens(n *vnode) []string {
	out := make([]string, len(n.out))
	for i, l := range n.out {
		out[i] = l.spec.When
	}
	return out
}

// flatten splits errors.Join trees into their leaves.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
