package export

import (
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// subCall is a node that calls a sub-graph with a "#id" task or a flow.Call component.
type subCall struct {
	node   *vnode
	callee string
	always bool // the node always runs its task when its graph runs: no guard, no choice on the way
}

// callGraph is one graph of the call graph: a validated spec or a registered graph.
type callGraph struct {
	vg    *vgraph
	index int
	calls []subCall
	own   bool // validated (findings are reported for it), not just registered
}

// checkSubgraphs resolves "#id" calls within the validated set and the registered
// graphs, and reports recursion: a cycle of calls that returns to a graph it left.
func (v *validator) checkSubgraphs(graphs []*vgraph) {
	byID := map[string]*callGraph{}
	var all []*callGraph
	add := func(vg *vgraph, own bool) {
		if _, dup := byID[vg.spec.ID]; dup || vg.spec.ID == "" {
			return
		}
		cg := &callGraph{vg: vg, index: len(all), own: own}
		byID[vg.spec.ID] = cg
		all = append(all, cg)
	}
	for _, vg := range graphs {
		add(vg, true)
	}
	for _, g := range v.cfg.registered {
		scratch := &validator{cfg: v.cfg}
		add(scratch.model(g.Spec()), false)
	}
	// A graph used as a task (flow.Call) is a call too; the graphs so called join the
	// call graph as they are found, so the loop runs until all has stopped growing.
	for i := 0; i < len(all); i++ {
		cg := all[i]
		always := alwaysRuns(cg.vg)
		for _, n := range cg.vg.nodes {
			var id string
			if called, ok := flow.CalledGraph(n.spec.Component); ok && called != nil {
				id = called.ID
				if byID[id] == nil {
					scratch := &validator{cfg: v.cfg}
					add(scratch.model(called.Spec()), false)
				}
			} else if ref, ok := strings.CutPrefix(strings.TrimSpace(n.spec.Task), "#"); ok && n.spec.Component == nil {
				id = strings.TrimSpace(ref)
			} else {
				continue
			}
			if byID[id] == nil {
				if cg.own {
					v.report(cg.vg, SeverityError, CodeSubgraphMissing, n.id(), n.spec.Pos,
						"node %q calls sub-graph %q, which is neither in this set of graphs nor registered", n.id(), id)
				}
				continue
			}
			cg.calls = append(cg.calls, subCall{node: n, callee: id, always: always[n] && alwaysHolds(v.normalWhen(cg.vg, n.spec.When))})
		}
	}
	next := func(cg *callGraph) []*callGraph {
		var out []*callGraph
		for _, c := range cg.calls {
			out = append(out, byID[c.callee])
		}
		return out
	}
	for _, scc := range components(all, func(cg *callGraph) int { return cg.index }, next) {
		cycle := cycleIn(scc, next)
		if cycle == nil {
			continue
		}
		var first *callGraph
		for _, cg := range cycle {
			if cg.own {
				first = cg
				break
			}
		}
		if first == nil {
			continue
		}
		v.reportRecursion(cycle, first)
	}
}

// reportRecursion reports a call cycle at its first validated graph's calling node.
func (v *validator) reportRecursion(cycle []*callGraph, at *callGraph) {
	var (
		steps  []string
		always = true
		site   *vnode
	)
	for i, cg := range cycle {
		callee := cycle[(i+1)%len(cycle)].vg.spec.ID
		var call *subCall
		for j := range cg.calls {
			c := &cg.calls[j]
			if c.callee == callee && (call == nil || c.always && !call.always) {
				call = c
			}
		}
		always = always && call.always
		if cg == at {
			site = call.node
		}
		steps = append(steps, fmt.Sprintf("%q (node %q)", cg.vg.spec.ID, call.node.id()))
	}
	steps = append(steps, fmt.Sprintf("%q", cycle[0].vg.spec.ID))
	path := strings.Join(steps, " -> ")
	if always {
		v.report(at.vg, SeverityError, CodeSubgraphRecursive, site.id(), site.spec.Pos,
			"sub-graph calls recurse without a bound: %s; every call runs whenever its graph runs, so a run always fails at the engine's call depth limit", path)
		return
	}
	v.report(at.vg, SeverityWarning, CodeSubgraphRecursive, site.id(), site.spec.Pos,
		"sub-graph calls recurse: %s; only conditions and the engine's call depth limit (flow.WithMaxCallDepth) bound it", path)
}

// alwaysRuns returns the nodes whose task runs whenever the graph runs: those the start
// reaches along links that are always followed (unconditioned links of nodes that take
// every true link; every link of a parallel gateway, which ignores conditions; the single
// link an exclusive gateway can take when that link always holds: its only link, or a
// literal true link before which no condition comes).
// Loop bodies may run zero times, so an opening loop node's links are not followed.
func alwaysRuns(vg *vgraph) map[*vnode]bool {
	out := map[*vnode]bool{}
	if vg.start == nil {
		return out
	}
	queue := []*vnode{vg.start}
	out[vg.start] = true
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		switch n.spec.Type {
		case flow.End:
			continue
		case flow.Exclusive:
			if len(n.live) != 1 {
				continue
			}
		case flow.Loop:
			if _, opens := n.spec.Meta[flow.MetaFor]; opens {
				continue
			}
		}
		for _, l := range n.live {
			if !l.conditional() && !out[l.to] {
				out[l.to] = true
				queue = append(queue, l.to)
			}
		}
	}
	return out
}
