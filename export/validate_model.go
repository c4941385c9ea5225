package export

import (
	"cmp"
	"slices"

	"github.com/flowteam/flowteam/flow"
)

// vgraph is a spec prepared for checking: nodes by first id, links to existing nodes.
type vgraph struct {
	spec   *flow.GraphSpec
	nodes  []*vnode
	byID   map[string]*vnode
	start  *vnode
	built  *flow.Graph // nil when the spec does not build
	failed bool        // an error was reported for this graph
	// eval is the evaluator the definition names (evaluatorOf): what its conditions
	// and scripts are read and compiled with.
	eval flow.Evaluator
}

type vnode struct {
	spec   *flow.NodeSpec
	index  int
	out    []*vlink
	live   []*vlink // the links of out the engine can take (liveLinks)
	in     []*vlink
	onGoto *vnode // where meta onError sends a recovered error, if anywhere
}

type vlink struct {
	spec     flow.LinkSpec
	from, to *vnode
	cond     string // the condition's normal form (normalWhen), computed once
}

func (n *vnode) id() string { return n.spec.ID }

func (l *vlink) pos() flow.Pos {
	if l.spec.Pos.Line == 0 && l.spec.Pos.File == "" {
		return l.from.spec.Pos
	}
	return l.spec.Pos
}

// graphPos is where findings about the whole graph point: the document's first line.
func (vg *vgraph) graphPos() flow.Pos { return flow.Pos{File: vg.spec.Source} }

// model indexes a spec, reporting missing and duplicate node ids and dangling links.
func (v *validator) model(s *flow.GraphSpec) *vgraph {
	vg := &vgraph{spec: s, byID: make(map[string]*vnode, len(s.Nodes))}
	vg.eval = v.evaluatorOf(vg)
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
			l := &vlink{spec: ls, from: n, to: vg.byID[ls.NextID], cond: v.normalWhen(vg, ls.When)}
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
		n.live = liveLinks(n)
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
