package export

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"

	"github.com/flowteam/flowteam/internal/loopwalk"
	"github.com/flowteam/flowteam/internal/scc"
)

// isJoin mirrors flow.Node.IsJoin: an inclusive or parallel node with several incoming
// links waits for the branches of the split it closes.
func isJoin(n *vnode) bool {
	return (n.spec.Type == flow.Parallel || n.spec.Type == flow.Inclusive) && len(n.in) > 1
}

// isSplit reports whether a node always opens a split frame the engine's joins count:
// an inclusive or parallel node with several links, or a node that always follows at
// least two links (an activity or start with two links that always hold).
func isSplit(n *vnode) bool {
	switch n.spec.Type {
	case flow.Parallel, flow.Inclusive:
		return len(n.out) > 1
	case flow.Activity, flow.Start:
		always := 0
		for _, l := range n.out {
			if holds(l) {
				always++
			}
		}
		return always > 1
	}
	return false
}

// conditional reports whether the link's condition can keep the engine from taking
// it: a parallel gateway takes every link, whatever its condition, and a literal true
// always holds (see holds).
func (l *vlink) conditional() bool {
	return l.from.spec.Type != flow.Parallel && !holds(l)
}

// branchEnds is what one branch of a split reaches: the joins at its own nesting level,
// and the nodes where it ends without a join.
type branchEnds struct {
	joins, escapes []*vnode
}

// Bounds of the split analysis, which follows (node, nesting level) pairs: nesting
// deeper than maxSplitDepth is not followed, and a graph whose analysis would take more
// than splitBudget steps gets no split findings rather than a slow validation.
const (
	maxSplitDepth = 32
	splitBudget   = 1 << 20
)

// walkBranch follows one branch of split from first. Nested splits raise the level and
// their joins lower it again, so only joins at the split's own level count. It returns
// false when the budget ran out.
func walkBranch(split, first *vnode, budget *int) (branchEnds, bool) {
	type state struct {
		n     *vnode
		depth int
	}
	var out branchEnds
	seen := map[state]bool{}
	stack := []state{{first, 0}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[s] || s.depth > maxSplitDepth {
			continue
		}
		if *budget--; *budget < 0 {
			return out, false
		}
		seen[s] = true
		n, depth := s.n, s.depth
		if n == split && depth == 0 {
			continue // back at the split: a loop around it, not an end of the branch
		}
		if isJoin(n) {
			if depth == 0 {
				if !slices.Contains(out.joins, n) {
					out.joins = append(out.joins, n)
				}
				continue
			}
			depth--
		}
		if isSplit(n) {
			depth++
		}
		if n.spec.Type == flow.End || len(n.live) == 0 { // no link, or none it takes
			if depth == 0 && !slices.Contains(out.escapes, n) {
				out.escapes = append(out.escapes, n)
			}
			continue
		}
		for i := len(n.live) - 1; i >= 0; i-- {
			stack = append(stack, state{n.live[i].to, depth})
		}
	}
	return out, true
}

// checkSplits pairs parallel and inclusive splits with their joins: every branch of a
// split must reach the same join, and no branch should end before it. A split with one
// branch it can start needs no join.
func (v *validator) checkSplits(vg *vgraph) {
	paired := map[*vnode]bool{}
	budget := splitBudget
	for _, s := range vg.nodes {
		if !isSplit(s) {
			continue
		}
		gateway := s.spec.Type == flow.Parallel || s.spec.Type == flow.Inclusive
		kind := s.spec.Type.String() + " split"
		// Only the branches the split can start: an inclusive split never starts one
		// through a literal false link, and such a branch reaching another join or
		// ending early changes nothing.
		var joins []*vnode
		branches := make([]branchEnds, len(s.live))
		for i, l := range s.live {
			var ok bool
			if branches[i], ok = walkBranch(s, l.to, &budget); !ok {
				return
			}
			for _, j := range branches[i].joins {
				if !slices.Contains(joins, j) {
					joins = append(joins, j)
				}
			}
		}
		slices.SortFunc(joins, func(a, b *vnode) int { return a.index - b.index })
		for _, j := range joins {
			paired[j] = true
		}
		switch {
		case len(joins) > 1:
			v.report(vg, SeverityError, CodeSplitJoinMismatch, s.id(), s.spec.Pos,
				"branches of %s %q reach different joins (%s): the run fails when they arrive at more than one", kind, s.id(), quoteIDs(joins))
		case len(joins) == 0 && gateway && len(s.live) > 1:
			var ends []*vnode
			for _, b := range branches {
				for _, e := range b.escapes {
					if !slices.Contains(ends, e) {
						ends = append(ends, e)
					}
				}
			}
			v.report(vg, SeverityWarning, CodeSplitNoJoin, s.id(), s.spec.Pos,
				"%s %q has no join: its %d branches end separately%s", kind, s.id(), len(s.live), atNodes(ends))
		case len(joins) == 1 && gateway:
			for i, b := range branches {
				if len(b.escapes) > 0 {
					v.report(vg, SeverityWarning, CodeSplitBranchEscapes, s.id(), s.live[i].pos(),
						"branch %q of %s %q can end at %s without reaching its join %q", s.live[i].to.id(), kind, s.id(), quoteIDs(b.escapes), joins[0].id())
				}
			}
		}
	}
	for _, j := range vg.nodes {
		if isJoin(j) && !paired[j] {
			v.report(vg, SeverityWarning, CodeJoinUnpaired, j.id(), j.spec.Pos,
				"%s join %q closes no split: it runs once for every branch that arrives", j.spec.Type, j.id())
		}
	}
}

func quoteIDs(ns []*vnode) string {
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = fmt.Sprintf("%q", n.id())
	}
	return strings.Join(ids, ", ")
}

func atNodes(ns []*vnode) string {
	if len(ns) == 0 {
		return ""
	}
	return " (at " + quoteIDs(ns) + ")"
}

// checkCycles reports every cycle that passes through no condition and no loop node:
// nothing in it decides to leave, so a run goes round until the step limit. A cycle is
// guarded by a loop node, an exclusive gateway with a condition on any link it can take
// (its default is taken only when none holds; see liveLinks), or a link with a condition (but not one of a
// parallel gateway, which ignores it). An inclusive gateway takes every link whose
// condition holds, as an activity does, and an exclusive one without conditions always
// takes its default: neither guards anything by itself. An end node ends its branch, so
// no cycle passes through one.
func (v *validator) checkCycles(vg *vgraph) {
	reported := v.checkUnguardedCycles(vg)
	v.checkCyclesWithoutExit(vg, reported)
}

// unguardedNext is the graph checkCycles looks for unguarded cycles in: the links
// without a condition out of nodes that guard nothing.
func unguardedNext(n *vnode) []*vnode {
	open := func(n *vnode) bool {
		switch n.spec.Type {
		case flow.Exclusive:
			return !slices.ContainsFunc(n.live, (*vlink).conditional)
		case flow.Loop, flow.End:
			return false
		}
		return true
	}
	var out []*vnode
	if !open(n) {
		return nil
	}
	for _, l := range n.live {
		if !l.conditional() && open(l.to) {
			out = append(out, l.to)
		}
	}
	return out
}

func vnodeIndex(n *vnode) int { return n.index }

// checkUnguardedCycles reports the cycles that pass through no condition and no loop
// node, and returns their nodes.
func (v *validator) checkUnguardedCycles(vg *vgraph) map[*vnode]bool {
	reported := map[*vnode]bool{}
	for _, scc := range components(vg.nodes, vnodeIndex, unguardedNext) {
		cycle := cycleIn(scc, unguardedNext)
		if cycle == nil {
			continue
		}
		for _, n := range scc {
			reported[n] = true
		}
		what := "cycle " + cycleText(cycle)
		if len(scc) > len(cycle) {
			what = cycleNodes(scc, cycle) + " that"
		}
		v.report(vg, SeverityWarning, CodeCycleUnguarded, cycle[0].id(), cycle[0].spec.Pos,
			"%s passes through no condition and no loop node: a run goes round it until the step limit", what)
	}
	return reported
}

// endsBranch reports whether a node may end the branch itself: a loop node when its
// items run out, and any node but a parallel gateway when every link has a condition
// and none holds (an exclusive gateway then fails the run, which ends it too).
func endsBranch(n *vnode) bool {
	switch n.spec.Type {
	case flow.Loop:
		return true
	case flow.Parallel:
		return false
	}
	return !slices.ContainsFunc(n.out, holds)
}

// takenNext is every node the engine can go to from n: the links it can take (not
// those after an exclusive gateway's literal true link, nor one after a link to
// another node with the same condition: liveLinks), and the onError goto.
func takenNext(n *vnode) []*vnode {
	if n.spec.Type == flow.End {
		return nil
	}
	out := make([]*vnode, 0, len(n.live)+1)
	for _, l := range n.live {
		out = append(out, l.to)
	}
	if n.onGoto != nil {
		out = append(out, n.onGoto)
	}
	return out
}

// checkCyclesWithoutExit reports the guarded cycles (those not in reported) that no
// link leaves and no node ends: their conditions only choose the way round.
func (v *validator) checkCyclesWithoutExit(vg *vgraph, reported map[*vnode]bool) {
	member := make([]bool, len(vg.nodes))
	for _, scc := range components(vg.nodes, vnodeIndex, takenNext) {
		cycle := cycleIn(scc, takenNext)
		if cycle == nil || slices.ContainsFunc(scc, func(n *vnode) bool { return reported[n] }) {
			continue
		}
		for _, n := range scc {
			member[n.index] = true
		}
		exits := slices.ContainsFunc(scc, func(n *vnode) bool {
			return endsBranch(n) || slices.ContainsFunc(takenNext(n), func(to *vnode) bool { return !member[to.index] })
		})
		if !exits {
			v.report(vg, SeverityWarning, CodeCycleNoExit, cycle[0].id(), cycle[0].spec.Pos, "%s", noExitText(scc, cycle, member))
		}
		for _, n := range scc {
			member[n.index] = false
		}
	}
}

// noExitText explains a cycle.no-exit finding: which nodes form the cycle (scc, and
// one way round it), that no link the engine takes leads out of it (naming the links
// out that it never takes, which a reader of the document sees), and why none of its
// nodes ends the branch: each always takes one of its links. member marks the nodes
// of scc.
func noExitText(scc, cycle []*vnode, member []bool) string {
	var b strings.Builder
	b.WriteString(cycleNodes(scc, cycle) + " that a run cannot leave: ")
	var dead []string
	for _, n := range scc {
		for k, l := range n.out {
			if member[l.to.index] || slices.Contains(n.live, l) {
				continue
			}
			// Why liveLinks left it out.
			var why string
			switch i := firstTrue(n); {
			case never(l):
				why = "its condition is the literal false"
			case i >= 0 && (k > i || holds(l)):
				why = fmt.Sprintf("%q always takes its link to %q instead, whose condition is the literal true", n.id(), n.out[i].to.id())
			default:
				why = fmt.Sprintf("%q takes its link to %q instead, which comes first with the same condition", n.id(), shadowedBy(n.out, k).to.id())
			}
			dead = append(dead, fmt.Sprintf("from %q to %q (%s)", n.id(), l.to.id(), why))
		}
	}
	switch len(dead) {
	case 0:
		b.WriteString("no link leads out of it")
	case 1:
		b.WriteString("its only link out, " + dead[0] + ", is never taken")
	default:
		b.WriteString("its links out are never taken: " + strings.Join(dead, ", "))
	}
	if len(scc) == 1 {
		b.WriteString(", and ")
	} else {
		b.WriteString(", and each of its nodes goes on round it: ")
	}
	for i, n := range scc {
		if i > 0 {
			b.WriteString(", ")
		}
		if n.spec.Type == flow.Parallel {
			fmt.Fprintf(&b, "%q is a parallel gateway (it takes every link)", n.id())
			continue
		}
		// Not a loop node, and not able to end the branch (see ends): it has a link
		// that always holds, and the first such is the one it takes.
		verb, l := "always takes", n.out[0]
		if i := firstTrue(n); i >= 0 {
			l = n.out[i]
		} else if i := slices.IndexFunc(n.live, holds); i >= 0 {
			l = n.live[i]
			if n.spec.Type == flow.Exclusive {
				verb = "falls back on" // after its conditions
			}
		}
		cond := "no condition"
		if strings.TrimSpace(l.spec.When) != "" {
			cond = "its condition is true"
		}
		fmt.Fprintf(&b, "%q %s its link to %q (%s)", n.id(), verb, l.to.id(), cond)
	}
	b.WriteString("; the conditions only choose the way round, so a run that enters goes round until the step limit, unless a task stops or interrupts it")
	return b.String()
}

// cycleNodes names the nodes of a cycle (scc) and one way round it (cycle).
func cycleNodes(scc, cycle []*vnode) string {
	switch {
	case len(scc) == 1:
		return fmt.Sprintf("node %s forms a cycle (%s)", quoteIDs(scc), cycleText(cycle))
	case len(scc) == len(cycle):
		return fmt.Sprintf("nodes %s form a cycle (%s)", quoteIDs(scc), cycleText(cycle))
	}
	return fmt.Sprintf("nodes %s form a cycle (one way round: %s)", quoteIDs(scc), cycleText(cycle))
}

// cycleText is a cycle as "a" -> "b" -> "a".
func cycleText(cycle []*vnode) string {
	ids := make([]string, len(cycle)+1)
	for i, n := range cycle {
		ids[i] = fmt.Sprintf("%q", n.id())
	}
	ids[len(cycle)] = ids[0]
	return strings.Join(ids, " -> ")
}

// components returns the strongly connected components of the graph over nodes given
// by next (scc.Components); index numbers the nodes 0..len(nodes)-1. Components and
// their nodes are sorted by index, so findings come in document order.
func components[N comparable](nodes []N, index func(N) int, next func(N) []N) [][]N {
	out := scc.Components(nodes, index, next)
	for _, comp := range out {
		slices.SortFunc(comp, func(a, b N) int { return index(a) - index(b) })
	}
	slices.SortFunc(out, func(a, b []N) int { return index(a[0]) - index(b[0]) })
	return out
}

// cycleIn returns one cycle through the first node of a strongly connected component
// (the shortest, found breadth first), or nil when the component is a single node
// without a link to itself.
func cycleIn[N comparable](scc []N, next func(N) []N) []N {
	in := make(map[N]bool, len(scc))
	for _, n := range scc {
		in[n] = true
	}
	first := scc[0]
	prev := map[N]N{}
	queue := []N{first}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, w := range next(n) {
			if !in[w] {
				continue
			}
			if w == first {
				var path []N
				for x := n; x != first; x = prev[x] {
					path = append(path, x)
				}
				path = append(path, first)
				slices.Reverse(path)
				return path
			}
			if _, seen := prev[w]; !seen {
				prev[w] = n
				queue = append(queue, w)
			}
		}
	}
	return nil
}

// checkGotoLoops reports onError gotos into a loop's body from outside that loop,
// its closing nodes included (they run after the loop). The engine keeps a goto inside
// the loops whose body holds the target and leaves the others (a break), but entering
// a body opens no iteration: the body runs without the loop item, and its closing
// node, reached outside the loop, runs as an ordinary node.
func (v *validator) checkGotoLoops(vg *vgraph) {
	for _, open := range vg.nodes {
		if open.spec.Type != flow.Loop || open.spec.Meta[flow.MetaFor] == nil {
			continue
		}
		closers, body := loopBody(open)
		isCloser := func(n *vnode) bool { return slices.Contains(closers, n) }
		for _, n := range vg.nodes {
			to := n.onGoto
			inIteration := body[n] && !isCloser(n) // a closing node runs after the loop
			if to == nil || !body[to] || inIteration || isCloser(n) && isCloser(to) {
				continue
			}
			closed := "no closing loop node"
			if len(closers) > 0 {
				closed = fmt.Sprintf("closed by %q", closers[0].id())
			}
			v.report(vg, SeverityWarning, CodeOnErrorGotoLoop, n.id(), n.spec.Pos,
				"node %q: meta %s goes to %q, inside the body of loop %q (%s), from outside it: the body runs without the loop item %v, and the closing node runs as an ordinary node",
				n.id(), flow.MetaOnError, to.id(), open.id(), closed, open.spec.Meta[flow.MetaFor])
		}
	}
}

// loopBody returns the closing loop nodes of the loop opened at open, the engine's
// choice first, and the loop's body, by the walk the engine uses (loopwalk.Body).
func loopBody(open *vnode) (closers []*vnode, body map[*vnode]bool) {
	return loopwalk.Body(open, func(n *vnode) []*vnode {
		next := make([]*vnode, len(n.out))
		for i, l := range n.out {
			next[i] = l.to
		}
		return next
	}, func(n *vnode) loopwalk.Kind {
		switch {
		case n.spec.Type != flow.Loop:
			return loopwalk.Other
		case n.spec.Meta[flow.MetaFor] == nil:
			return loopwalk.Close
		}
		return loopwalk.Open
	})
}
