package export

import "github.com/flowteam/flowteam/flow"

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
