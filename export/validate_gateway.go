package export

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

func (v *validator) checkGateways(vg *vgraph) {
	for _, n := range vg.nodes {
		if n.spec.Type != flow.Parallel {
			for _, l := range n.out {
				if never(l) {
					v.report(vg, SeverityWarning, CodeLinkNeverTaken, n.id(), l.pos(),
						"the link from %q to %q is never taken: its condition is the literal false; remove it, or give it a condition that can hold", n.id(), l.to.id())
				}
			}
		}
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
			i := firstTrue(n)
			if i >= 0 {
				for _, l := range n.out[i+1:] {
					// Links that always hold after it are named by the error above.
					if !holds(l) {
						v.report(vg, SeverityWarning, CodeExclusiveUnreachable, n.id(), l.pos(),
							"exclusive gateway %q never takes its link to %q (%s): the link to %q comes first in priority order and its condition is the literal true; raise the link's priority or remove it", n.id(), l.to.id(), oneLine(l.spec.When), n.out[i].to.id())
					}
				}
			}
			// A condition is tried once: a link after one to another node with the same
			// condition is never taken (shadowedBy).
			for k, l := range n.out {
				if holds(l) || never(l) || i >= 0 && k > i {
					continue
				}
				if e := shadowedBy(n.out, k); e != nil {
					v.report(vg, SeverityWarning, CodeExclusiveUnreachable, n.id(), l.pos(),
						"exclusive gateway %q never takes its link to %q (%s): the link to %q comes first in priority order and has the same condition; change the condition, or remove the link", n.id(), l.to.id(), oneLine(l.spec.When), e.to.id())
				}
			}
		case flow.Parallel:
			for _, l := range n.out {
				// A literal true asks for what the gateway does anyway.
				if when := strings.TrimSpace(l.spec.When); !holds(l) {
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

// firstTrue returns the index in n.out of the first link whose condition is the
// literal true, or -1. An exclusive gateway tries conditions in priority order and
// takes the first that holds, so it never looks past that link: the conditional links
// after it are dead. A link without when is different: the default, tried only after
// every condition, so it makes no later link dead.
func firstTrue(n *vnode) int {
	return slices.IndexFunc(n.out, func(l *vlink) bool { return holds(l) && strings.TrimSpace(l.spec.When) != "" })
}

// shadowedBy returns the first link of an exclusive gateway's links (in priority
// order) before links[k] with the same condition, when it goes to another node, or nil.
// The gateway tries a condition once, so links[k] is never taken; to the same node it
// is a link.duplicate instead, which that check reports.
func shadowedBy(links []*vlink, k int) *vlink {
	l := links[k]
	j := slices.IndexFunc(links[:k], func(e *vlink) bool { return sameWhen(e, l) })
	if j < 0 || links[j].to == l.to {
		return nil
	}
	return links[j]
}

// liveLinks returns the links of n the engine can take, in priority order. An exclusive
// gateway with a literal true link takes only the conditional links up to it: it never
// looks further (firstTrue), and its defaults are tried only when no condition holds,
// which the true link rules out. Nor does it take a conditional link after one to
// another node with the same condition (shadowedBy). Every other node may take every
// link. The checks that follow a run's way (cycles, split branches, calls that always
// run) use these; reachability and joins stay structural, so the target of a dead link
// is named by exclusive.unreachable-link, not as an unreachable node.
//
// A link whose condition is the literal false is never taken, except by a parallel
// gateway, which ignores conditions.
func liveLinks(n *vnode) []*vlink {
	out := n.out
	if n.spec.Type != flow.Parallel && slices.ContainsFunc(out, never) {
		out = slices.DeleteFunc(slices.Clone(out), never)
	}
	if n.spec.Type != flow.Exclusive {
		return out
	}
	if i := slices.IndexFunc(out, func(l *vlink) bool { return holds(l) && strings.TrimSpace(l.spec.When) != "" }); i >= 0 {
		out = slices.DeleteFunc(slices.Clone(out[:i+1]), func(l *vlink) bool { return strings.TrimSpace(l.spec.When) == "" })
	}
	live := out[:0:0]
	for k, l := range out {
		if holds(l) || shadowedBy(out, k) == nil {
			live = append(live, l)
		}
	}
	return live
}

// never reports whether a link's condition is the literal false (in its normal form,
// so "(false)" is too: it is compared with the others in that form, see sameWhen).
func never(l *vlink) bool { return l.cond == "false" }

// holds reports whether a link's condition always holds (alwaysHolds of its normal
// form).
func holds(l *vlink) bool { return alwaysHolds(l.cond) }

// alwaysHolds reports whether a condition (a link's or a node's when, in its normal
// form: normalWhen) always holds: it is empty, or the literal true.
func alwaysHolds(when string) bool {
	when = strings.TrimSpace(when)
	return when == "" || when == "true"
}

// checkDuplicateLinks reports links that repeat an earlier link of their node: the
// same target and the same condition (sameWhen; a parallel gateway ignores
// conditions, so there the target alone). The engine takes each link:
// a parallel gateway starts one branch per link, an inclusive gateway or an activity
// runs the target once per link that holds, and an exclusive gateway never takes the
// later link, since the earlier holds whenever it does. Either way the definition is
// almost certainly not what its author meant, but it runs: a warning, at the second
// link. Links reported otherwise are left out: never taken (link.never-taken,
// exclusive.unreachable-link) or always holding at an exclusive gateway
// (exclusive.multiple-defaults). An end node follows no link.
func (v *validator) checkDuplicateLinks(vg *vgraph) {
	for _, n := range vg.nodes {
		if n.spec.Type == flow.End {
			continue
		}
		same := func(a, b *vlink) bool {
			return a.to == b.to && (n.spec.Type == flow.Parallel || sameWhen(a, b))
		}
		for i, l := range n.live {
			if n.spec.Type == flow.Exclusive && holds(l) {
				continue
			}
			earlier := 0
			for _, e := range n.live[:i] {
				if same(e, l) {
					earlier++
				}
			}
			if earlier != 1 {
				continue // the first of them, or one more after the second, which names them all
			}
			count := 0
			for _, e := range n.live {
				if same(e, l) {
					count++
				}
			}
			when, holding := "that always hold", "" // without condition, or true
			if !holds(l) {
				when, holding = "with the same condition ("+oneLine(l.spec.When)+")", "when it holds, "
			}
			var msg string
			switch n.spec.Type {
			case flow.Parallel:
				msg = fmt.Sprintf("parallel gateway %q has %d links to %q: it starts a branch for each, so %q runs %d times, doing the same work; remove the extra links",
					n.id(), count, l.to.id(), l.to.id(), count)
			case flow.Exclusive:
				msg = fmt.Sprintf("exclusive gateway %q has %d links to %q %s: only the first is ever taken, since the others are tried after it and hold only when it does; remove the extra links",
					n.id(), count, l.to.id(), when)
			default:
				name := fmt.Sprintf("node %q", n.id())
				if n.spec.Type == flow.Inclusive {
					name = "inclusive gateway " + name[len("node "):]
				}
				msg = fmt.Sprintf("%s has %d links to %q %s: %sit takes each of them, so %q runs %d times; remove the extra links",
					name, count, l.to.id(), when, holding, l.to.id(), count)
			}
			v.report(vg, SeverityWarning, CodeLinkDuplicate, n.id(), l.pos(), "%s", msg)
		}
	}
}

// sameWhen reports whether two links have the same condition: the same normal form
// (normalWhen: "a>1" and "(a > 1)" are the same), or both always hold (no condition, or
// the literal true).
func sameWhen(a, b *vlink) bool {
	return a.cond == b.cond || holds(a) && holds(b)
}
