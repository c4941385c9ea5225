package export_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
)

// parse reads a YAML definition written inline in a test.
func parse(t *testing.T, file, doc string) *flow.GraphSpec {
	t.Helper()
	spec, err := flow.ParseDefinition(file, []byte(strings.TrimLeft(doc, "\n")))
	require.NoError(t, err)
	return spec
}

// codes lists "code@node" (or "code" for graph findings) of the findings.
func codes(fs []export.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Code
		if f.Node != "" {
			out[i] += "@" + f.Node
		}
	}
	return out
}

func TestValidateChecklist(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // code@node of every finding, in output order
		msg  string   // a fragment of one message
	}{
		{
			name: "clean",
			doc: `
id: clean
layout:
  - {id: s, type: start, link: a}
  - {id: a, task: 'context.put("x", 1)', link: g}
  - {id: g, type: exclusive, link: [{nextId: b, when: "day >= 3"}, e]}
  - {id: b, link: e}
  - {id: e, type: end}
`,
		},
		{
			name: "dangling link names both nodes",
			doc: `
id: dangling
layout:
  - {id: s, type: start, link: a}
  - {id: a, link: [e, xx]}
  - {id: e, type: end}
`,
			want: []string{"link.missing-target@a"},
			msg:  `node "a" links to "xx", which is not a node of graph "dangling"`,
		},
		{
			name: "duplicate node id",
			doc: `
id: dup
layout:
  - {id: s, type: start, link: a}
  - {id: a, link: e}
  - {id: a, link: e}
  - {id: e, type: end}
`,
			want: []string{"node.id-duplicate@a"},
			msg:  `node id "a" is already used by the node at dup.yml:4`,
		},
		{
			name: "two starts",
			doc: `
id: starts
layout:
  - {id: s1, type: start, link: e}
  - {id: s2, type: start, link: e}
  - {id: e, type: end}
`,
			want: []string{"node.unreachable@s2", "start.multiple@s2"},
		},
		{
			name: "no start at all",
			doc: `
id: nostart
layout:
  - {id: a, link: b}
  - {id: b, link: a}
`,
			want: []string{"start.missing", "cycle.unguarded@a"},
		},
		{
			name: "implicit start",
			doc: `
id: implicit
layout:
  - {id: a}
  - {id: e, type: end}
`,
			want: []string{"start.implicit@a"},
		},
		{
			name: "unreachable nodes and end",
			doc: `
id: reach
layout:
  - {id: s, type: start, link: a}
  - {id: a, link: []}
  - {id: lost, link: e}
  - {id: e, type: end}
`,
			want: []string{"end.unreachable", "node.unreachable@lost", "node.unreachable@e"},
		},
		{
			name: "no end node",
			doc: `
id: noend
layout:
  - {id: s, type: start}
  - {id: a}
`,
			want: []string{"end.missing"},
		},
		{
			name: "exclusive with two defaults",
			doc: `
id: excl
layout:
  - {id: s, type: start, link: g}
  - {id: g, type: exclusive, link: [a, {nextId: b, when: "x > 1"}, e]}
  - {id: a, link: e}
  - {id: b, link: e}
  - {id: e, type: end}
`,
			want: []string{"exclusive.multiple-defaults@g"},
			msg:  `exclusive gateway "g" has 2 default links (without when: to "a", "e")`,
		},
		{
			name: "inclusive with every link conditional",
			doc: `
id: incl
layout:
  - {id: s, type: start, link: g}
  - {id: g, type: inclusive, link: [{nextId: a, when: "x > 1"}, {nextId: b, when: "x > 2"}]}
  - {id: a, link: j}
  - {id: b, link: j}
  - {id: j, type: inclusive, link: e}
  - {id: e, type: end}
`,
			want: []string{"inclusive.no-default@g"},
		},
		{
			// As for an exclusive gateway, a literal "true" condition is a default: the
			// branch never ends at the gateway.
			name: "inclusive with a literal true link",
			doc: `
id: incltrue
layout:
  - {id: s, type: start, link: g}
  - {id: g, type: inclusive, link: [{nextId: a, when: "x > 1"}, {nextId: b, when: " true "}]}
  - {id: a, link: j}
  - {id: b, link: j}
  - {id: j, type: inclusive, link: e}
  - {id: e, type: end}
`,
		},
		{
			// A literal "true" condition always holds too: the engine tries it (conditions
			// come before the default link), so the other link that always holds is dead,
			// and so is y's conditional link after it.
			name: "exclusive with a default and a literal true link",
			doc: `
id: extrue
layout:
  - {id: s, type: start, link: [x, y]}
  - {id: x, type: exclusive, link: [a, {nextId: b, when: "n > 1"}, {nextId: c, when: "true"}]}
  - {id: y, type: exclusive, link: [{nextId: a, when: " true "}, {nextId: b, when: "n > 1"}, {nextId: c, when: "true"}]}
  - {id: a, link: e}
  - {id: b, link: e}
  - {id: c, link: e}
  - {id: e, type: end}
`,
			want: []string{"exclusive.multiple-defaults@x", "exclusive.multiple-defaults@y", "exclusive.unreachable-link@y"},
			msg:  `exclusive gateway "x" has 2 links that always hold (to "a", "c"): only the one to "c" is ever taken (conditions, even true, are tried before the default link)`,
		},
		{
			// An exclusive gateway takes the first link, in priority order, whose
			// condition holds: a literal true ends the search, so the conditional links
			// after it are dead. Equal priorities keep definition order.
			name: "exclusive links after a literal true are unreachable",
			doc: `
id: exdead
layout:
  - {id: s, type: start, link: [x, y]}
  - {id: x, type: exclusive, link: [{nextId: a, when: "true"}, {nextId: b, when: "n > 1"}, {nextId: c, when: "@ready"}]}
  - {id: y, type: exclusive, link: [{nextId: a, when: "n > 1", priority: 1}, {nextId: b, when: " true ", priority: 1}, {nextId: c, when: "n > 2", priority: 1}]}
  - {id: a, link: e}
  - {id: b, link: e}
  - {id: c, link: e}
  - {id: e, type: end}
`,
			want: []string{"exclusive.unreachable-link@x", "exclusive.unreachable-link@x", "exclusive.unreachable-link@y"},
			msg:  `exclusive gateway "x" never takes its link to "b" (n > 1): the link to "a" comes first in priority order and its condition is the literal true`,
		},
		{
			// A literal true or false in parentheses, or with a trailing semicolon, is
			// still the literal: x never looks past its true link, the false links are
			// never taken, and a parallel gateway's "(true)" asks for nothing.
			name: "literal true and false written differently",
			doc: `
id: literalform
layout:
  - {id: s, type: start, link: [x, p]}
  - {id: x, type: exclusive, link: [{nextId: c, when: "( false )"}, {nextId: a, when: "(true)"}, {nextId: b, when: "n > 1"}]}
  - {id: p, type: parallel, link: [{nextId: a, when: "(true)"}, {nextId: b, when: "true;"}]}
  - {id: a, link: [{nextId: e, when: "false;"}, c]}
  - {id: b, link: c}
  - {id: c, type: parallel, link: e}
  - {id: e, type: end}
`,
			want: []string{"exclusive.unreachable-link@x", "link.never-taken@x", "link.never-taken@a"},
			msg:  `exclusive gateway "x" never takes its link to "b" (n > 1): the link to "a" comes first in priority order and its condition is the literal true`,
		},
		{
			// A literal false: no exclusive, inclusive or activity takes the link; a
			// parallel gateway ignores the condition (its own warning says so).
			name: "links whose condition is the literal false are never taken",
			doc: `
id: never
layout:
  - {id: s, type: start, link: [{nextId: x, when: " false "}, i]}
  - {id: x, type: exclusive, link: [{nextId: a, when: "false"}, b]}
  - {id: i, type: inclusive, link: [{nextId: ia, when: "false"}, ib]}
  - {id: ia, link: ij}
  - {id: ib, link: ij}
  - {id: ij, type: inclusive, link: p}
  - {id: p, type: parallel, link: [{nextId: pa, when: "false"}, pb]}
  - {id: pa, link: pj}
  - {id: pb, link: pj}
  - {id: pj, type: parallel, link: e}
  - {id: a, link: e}
  - {id: b, link: e}
  - {id: e, type: end}
`,
			want: []string{"link.never-taken@s", "link.never-taken@x", "link.never-taken@i", "parallel.condition-ignored@p"},
			msg:  `the link from "x" to "a" is never taken: its condition is the literal false`,
		},
		{
			// Two links from one node to one target with the same condition: a parallel
			// gateway (which ignores conditions) starts two branches doing the same
			// work, an inclusive gateway or an activity runs the target twice when the
			// condition holds, and an exclusive gateway never takes the second.
			name: "duplicate links",
			doc: `
id: duplinks
layout:
  - {id: s, type: start, link: p}
  - {id: p, type: parallel, link: [a, b, a]}
  - {id: a, link: pj}
  - {id: b, link: pj}
  - {id: pj, type: parallel, link: x}
  - {id: x, type: exclusive, link: [{nextId: c, when: "n > 1"}, d, {nextId: c, when: " n > 1 "}]}
  - {id: c, link: m}
  - {id: d, link: m}
  - {id: m, link: i}
  - {id: i, type: inclusive, link: [{nextId: f, when: "ok"}, g, {nextId: f, when: "ok"}, {nextId: f, when: "ok"}]}
  - {id: f, link: ij}
  - {id: g, link: ij}
  - {id: ij, type: inclusive, link: last}
  - {id: last, link: [e, {nextId: e, when: "true"}]}
  - {id: e, type: end}
`,
			want: []string{"link.duplicate@p", "link.duplicate@x", "link.duplicate@i", "link.duplicate@last"},
			msg:  `parallel gateway "p" has 2 links to "a": it starts a branch for each, so "a" runs 2 times, doing the same work; remove the extra links`,
		},
		{
			// An exclusive gateway tries a condition once: a later link with the same
			// condition as an earlier one is never taken, whatever its target.
			name: "exclusive link after one with the same condition",
			doc: `
id: samecond
layout:
  - {id: s, type: start, link: x}
  - {id: x, type: exclusive, link: [{nextId: a, when: "n > 1"}, c, {nextId: b, when: " n > 1 "}, {nextId: b, when: "n > 2"}]}
  - {id: a, link: e}
  - {id: b, link: e}
  - {id: c, link: e}
  - {id: e, type: end}
`,
			want: []string{"exclusive.unreachable-link@x"},
			msg:  `exclusive gateway "x" never takes its link to "b" (n > 1): the link to "a" comes first in priority order and has the same condition; change the condition, or remove the link`,
		},
		{
			// Conditions are compared as expressions, not as text: spaces, redundant
			// parentheses and the quotes of a string do not make another condition.
			name: "exclusive link after one with the same condition written differently",
			doc: `
id: samecondform
layout:
  - {id: s, type: start, link: [x, y]}
  - {id: x, type: exclusive, link: [{nextId: a, when: "n>1"}, {nextId: b, when: "n > 1"}, {nextId: c, when: "(n>1)"}, a]}
  - {id: y, type: exclusive, link: [{nextId: a, when: 'k == "v" && n >= 2'}, {nextId: b, when: "k=='v'&&(n>=2)"}, {nextId: c, when: "k == 'v' || n >= 2"}, a]}
  - {id: a, link: e}
  - {id: b, link: e}
  - {id: c, link: e}
  - {id: e, type: end}
`,
			want: []string{"exclusive.unreachable-link@x", "exclusive.unreachable-link@x", "exclusive.unreachable-link@y"},
			msg:  `exclusive gateway "y" never takes its link to "b" (k=='v'&&(n>=2)): the link to "a" comes first in priority order and has the same condition`,
		},
		{
			// The same for duplicate links; a condition that does not parse (a Go
			// condition, a syntax error with its own finding) is compared as text.
			name: "duplicate links with the same condition written differently",
			doc: `
id: dupform
layout:
  - {id: s, type: start, link: x}
  - {id: x, type: exclusive, link: [{nextId: c, when: "n>1"}, d, {nextId: c, when: "( n > 1 )"}]}
  - {id: c, link: m}
  - {id: d, link: m}
  - {id: m, link: [{nextId: f, when: 'k=="v"'}, {nextId: f, when: " k == 'v' "}, {nextId: f, when: "@ok"}, {nextId: f, when: " @ok"}, {nextId: f, when: "n >"}, {nextId: f, when: "n>"}]}
  - {id: f, link: e}
  - {id: e, type: end}
`,
			want: []string{"link.duplicate@x", "condition.compile@m", "condition.compile@m", "link.duplicate@m", "link.duplicate@m"},
			msg:  `node "m" has 2 links to "f" with the same condition (k == 'v'): when it holds, it takes each of them, so "f" runs 2 times`,
		},
		{
			// Conditions that print alike but differ are not the same: expr prints the
			// float 1.0 as 1, and "(a ? b : c).d" as "a ? b : c.d".
			name: "conditions that print alike but differ",
			doc: `
id: printalike
layout:
  - {id: s, type: start, link: x}
  - {id: x, type: exclusive, link: [{nextId: a, when: "n == 1.0"}, {nextId: b, when: "n == 1"}, {nextId: a, when: "(p ? q : r).d"}, {nextId: b, when: "p ? q : r.d"}, a]}
  - {id: a, link: e}
  - {id: b, link: e}
  - {id: e, type: end}
`,
		},
		{
			// Not duplicates: other conditions; links reported otherwise (two defaults of
			// an exclusive gateway, links after its literal true or after a link to another
			// node with the same condition, literal false links).
			name: "links to one target that are not duplicates",
			doc: `
id: notdup
layout:
  - {id: s, type: start, link: x}
  - {id: x, type: exclusive, link: [{nextId: a, when: "n > 1"}, {nextId: a, when: "n > 2"}, b]}
  - {id: a, link: [{nextId: y, when: "false"}, {nextId: y, when: "false"}, y]}
  - {id: y, type: exclusive, link: [{nextId: b, when: "true"}, {nextId: e, when: "n > 1"}, {nextId: e, when: "n > 1"}]}
  - {id: b, type: exclusive, link: [z, z]}
  - {id: z, type: exclusive, link: [{nextId: e, when: "n > 1"}, {nextId: s, when: "n>1"}, {nextId: s, when: "(n > 1)"}, e]}
  - {id: e, type: end, link: [s, s]}
`,
			want: []string{"link.never-taken@a", "link.never-taken@a", "exclusive.unreachable-link@y", "exclusive.unreachable-link@y", "exclusive.multiple-defaults@b", "exclusive.unreachable-link@z", "exclusive.unreachable-link@z"},
		},
		{
			// The only way out of the cycle is a link that is never taken: the cycle
			// runs until the step limit, as if it had no exit.
			name: "a cycle whose only exit is a literal false",
			doc: `
id: neverexit
layout:
  - {id: s, type: start, link: g}
  - {id: g, type: exclusive, link: [{nextId: e, when: "false"}, w]}
  - {id: w, link: g}
  - {id: e, type: end}
`,
			want: []string{"cycle.unguarded@g", "link.never-taken@g"},
			msg:  `is never taken`,
		},
		{
			// What does not make a link dead: a default link (no condition), taken only
			// when nothing else holds; a literal true of lower priority than the
			// conditional link, whatever the definition order; an inclusive gateway,
			// which takes every link that holds.
			name: "exclusive links that stay reachable",
			doc: `
id: exlive
layout:
  - {id: s, type: start, link: [x, y, i]}
  - {id: x, type: exclusive, link: [a, {nextId: b, when: "n > 1"}, {nextId: c, when: "n > 2"}]}
  - {id: y, type: exclusive, link: [{nextId: a, when: "true"}, {nextId: b, when: "n > 1", priority: 2}, {nextId: c, when: "n > 2", priority: 1}]}
  - {id: i, type: inclusive, link: [{nextId: ia, when: "true"}, {nextId: ib, when: "n > 1"}]}
  - {id: ia, link: j}
  - {id: ib, link: j}
  - {id: j, type: inclusive, link: e}
  - {id: a, link: e}
  - {id: b, link: e}
  - {id: c, link: e}
  - {id: e, type: end}
`,
		},
		{
			// The checks that follow the run's way count only the links an exclusive
			// gateway can take: g always goes back to a (cycle.unguarded), h chooses only
			// between two ways back (cycle.no-exit), and neither leaves for e.
			name: "cycles through an exclusive link after a literal true",
			doc: `
id: exdeadcycle
layout:
  - {id: s, type: start, link: [a, b]}
  - {id: a, link: g}
  - {id: g, type: exclusive, link: [{nextId: a, when: "true"}, {nextId: e, when: "done"}]}
  - {id: b, link: h}
  - {id: h, type: exclusive, link: [{nextId: b, when: "n > 1"}, {nextId: b, when: "true"}, {nextId: e, when: "done"}]}
  - {id: e, type: end}
`,
			want: []string{"cycle.unguarded@a", "exclusive.unreachable-link@g", "cycle.no-exit@b", "exclusive.unreachable-link@h"},
			msg:  `nodes "b", "h" form a cycle ("b" -> "h" -> "b") that a run cannot leave: its only link out, from "h" to "e" ("h" always takes its link to "b" instead, whose condition is the literal true), is never taken`,
		},
		{
			// Nor does a dead link end a split's branch early.
			name: "split branch through an exclusive link after a literal true",
			doc: `
id: exdeadsplit
layout:
  - {id: s, type: start, link: p}
  - {id: p, type: parallel, link: [x, b]}
  - {id: x, type: exclusive, link: [{nextId: j, when: "true"}, {nextId: e, when: "failed"}]}
  - {id: b, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`,
			want: []string{"exclusive.unreachable-link@x"},
		},
		{
			// A link after one with the same condition is as dead as one after a literal
			// true: g's only way out of the cycle is such a link (cycle.no-exit), h also
			// has a live way out (no cycle finding).
			name: "cycles through an exclusive link after one with the same condition",
			doc: `
id: samecondcycle
layout:
  - {id: s, type: start, link: [a, b]}
  - {id: a, link: g}
  - {id: g, type: exclusive, link: [{nextId: a, when: "n > 1"}, {nextId: e, when: "(n>1)"}, a]}
  - {id: b, link: h}
  - {id: h, type: exclusive, link: [{nextId: b, when: "n > 1"}, {nextId: e, when: "n>1"}, {nextId: e, when: "done"}, b]}
  - {id: e, type: end}
`,
			want: []string{"cycle.no-exit@a", "exclusive.unreachable-link@g", "exclusive.unreachable-link@h"},
			msg:  `nodes "a", "g" form a cycle ("a" -> "g" -> "a") that a run cannot leave: its only link out, from "g" to "e" ("g" takes its link to "a" instead, which comes first with the same condition), is never taken, and each of its nodes goes on round it: "a" always takes its link to "g" (no condition), "g" falls back on its link to "a" (no condition)`,
		},
		{
			// Nor does a link after one with the same condition end a split's branch
			// early; the same link in the other order would (x2 goes to e first).
			name: "split branch through an exclusive link after one with the same condition",
			doc: `
id: samecondsplit
layout:
  - {id: s, type: start, link: p}
  - {id: p, type: parallel, link: [x, x2]}
  - {id: x, type: exclusive, link: [{nextId: j, when: "ok"}, {nextId: e, when: "(ok)"}, j]}
  - {id: x2, type: exclusive, link: [{nextId: e, when: "ok"}, {nextId: j, when: "(ok)"}, j]}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`,
			want: []string{"split.branch-escapes@p", "exclusive.unreachable-link@x", "exclusive.unreachable-link@x2"},
			msg:  `branch "x2" of parallel split "p" can end at "e" without reaching its join "j"`,
		},
		{
			// An inclusive split never starts the branch of a literal false link: that
			// branch neither reaches another join (i's branch to b, which would be an
			// error) nor ends before the join (k's branch to kb), and m, with one
			// branch it can start, needs no join.
			name: "split branches through a literal false link",
			doc: `
id: falsesplit
layout:
  - {id: s, type: start, link: i}
  - {id: i, type: inclusive, link: [{nextId: a, when: "ok"}, {nextId: b, when: "false"}, c]}
  - {id: a, link: j1}
  - {id: c, link: j1}
  - {id: b, link: j2}
  - {id: x, link: j2}
  - {id: j1, type: inclusive, link: k}
  - {id: j2, type: inclusive, link: e}
  - {id: k, type: inclusive, link: [ka, {nextId: kb, when: "false"}, {nextId: kc, when: "ok"}]}
  - {id: ka, link: kj}
  - {id: kb, link: e}
  - {id: kc, link: kj}
  - {id: kj, type: inclusive, link: m}
  - {id: m, type: inclusive, link: [mb, {nextId: ma, when: "false"}]}
  - {id: ma, link: e}
  - {id: mb, link: e}
  - {id: e, type: end}
`,
			want: []string{"link.never-taken@i", "node.unreachable@x", "join.unpaired@j2", "link.never-taken@k", "link.never-taken@m"},
		},
		{
			// A branch whose only link on is never taken ends there, as one without a link
			// does: b's branch always ends at b, without reaching the join.
			name: "split branch ending at a node whose links are never taken",
			doc: `
id: falseescape
layout:
  - {id: s, type: start, link: p}
  - {id: p, type: parallel, link: [a, b]}
  - {id: a, link: j}
  - {id: b, link: {nextId: j, when: "false"}}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`,
			want: []string{"split.branch-escapes@p", "link.never-taken@b"},
			msg:  `branch "b" of parallel split "p" can end at "b" without reaching its join "j"`,
		},
		{
			// An exclusive gateway whose first link is a literal true always takes it:
			// the call always runs, and the recursion has no bound.
			name: "recursion through an exclusive literal true link",
			doc: `
id: exdeadrec
layout:
  - {id: s, type: start, link: g}
  - {id: g, type: exclusive, link: [{nextId: call, when: "true"}, {nextId: e, when: "depth > 3"}]}
  - {id: call, task: "#exdeadrec", link: e}
  - {id: e, type: end}
`,
			want: []string{"exclusive.unreachable-link@g", "subgraph.recursive@call"},
			msg:  `sub-graph calls recurse without a bound`,
		},
		{
			// A literal "true" condition guards nothing: the cycle through it never stops
			// (b takes the link back to a whatever else holds).
			name: "a cycle through a literal true link",
			doc: `
id: truecycle
layout:
  - {id: s, type: start, link: a}
  - {id: a, link: b}
  - {id: b, link: [{nextId: a, when: "true"}, {nextId: e, when: "done == true"}]}
  - {id: e, type: end}
`,
			want: []string{"cycle.unguarded@a"},
		},
		{
			// Nor does it bound sub-graph recursion.
			name: "recursion through a literal true link",
			doc: `
id: truerec
layout:
  - {id: s, type: start, link: {nextId: call, when: " true "}}
  - {id: call, task: "#truerec", link: e}
  - {id: e, type: end}
`,
			want: []string{"subgraph.recursive@call"},
			msg:  `sub-graph calls recurse without a bound`,
		},
		{
			// An activity with a link without when and one with a literal true follows
			// both: a split whose branches meet at j.
			name: "an activity split by a literal true link",
			doc: `
id: truesplit
layout:
  - {id: s, type: start, link: a}
  - {id: a, link: [b, {nextId: c, when: "true"}]}
  - {id: b, link: j}
  - {id: c, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`,
		},
		{
			// A literal true guard on the calling node bounds nothing either.
			name: "recursion through a node guarded by a literal true",
			doc: `
id: trueguard
layout:
  - {id: s, type: start, link: call}
  - {id: call, task: "#trueguard", when: "true", link: e}
  - {id: e, type: end}
`,
			want: []string{"subgraph.recursive@call"},
			msg:  `sub-graph calls recurse without a bound`,
		},
		{
			name: "parallel paired",
			doc: `
id: par
layout:
  - {id: s, type: start, link: p}
  - {id: p, type: parallel, link: [a, b]}
  - {id: a, link: j}
  - {id: b, link: p2}
  - {id: p2, type: parallel, link: [c, d]}
  - {id: c, link: j2}
  - {id: d, link: j2}
  - {id: j2, type: parallel, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`,
		},
		{
			name: "parallel branches reach different joins",
			doc: `
id: mismatch
layout:
  - {id: s, type: start, link: p}
  - {id: p, type: parallel, link: [a, b, c]}
  - {id: a, link: j1}
  - {id: b, link: j1}
  - {id: c, link: j2}
  - {id: x, link: j2}
  - {id: j1, type: parallel, link: e}
  - {id: j2, type: parallel, link: e}
  - {id: e, type: end}
`,
			want: []string{"split.join-mismatch@p", "node.unreachable@x"},
			msg:  `branches of parallel split "p" reach different joins ("j1", "j2")`,
		},
		{
			name: "parallel branch escapes",
			doc: `
id: escape
layout:
  - {id: s, type: start, link: p}
  - {id: p, type: parallel, link: [a, b, e]}
  - {id: a, link: j}
  - {id: b, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`,
			want: []string{"split.branch-escapes@p"},
			msg:  `branch "e" of parallel split "p" can end at "e" without reaching its join "j"`,
		},
		{
			name: "parallel without join and join without split",
			doc: `
id: nojoin
layout:
  - {id: s, type: start, link: g}
  - {id: g, type: exclusive, link: [{nextId: a, when: "x"}, b]}
  - {id: a, link: j}
  - {id: b, link: j}
  - {id: j, type: parallel, link: p}
  - {id: p, type: parallel, link: [e1, e2]}
  - {id: e1, type: end}
  - {id: e2, type: end}
`,
			want: []string{"join.unpaired@j", "split.no-join@p"},
		},
		{
			name: "unguarded cycle is named",
			doc: `
id: cyc
layout:
  - {id: s, type: start, link: a}
  - {id: a, link: b}
  - {id: b, link: [c, e]}
  - {id: c, link: a}
  - {id: e, type: end}
`,
			want: []string{"cycle.unguarded@a"},
			msg:  `cycle "a" -> "b" -> "c" -> "a" passes through no condition and no loop node`,
		},
		{
			// Every node of the cycle is named, not only those of the way round shown.
			name: "unguarded cycle through more nodes than one way round",
			doc: `
id: cycmore
layout:
  - {id: s, type: start, link: a}
  - {id: a, link: b}
  - {id: b, link: [a, c]}
  - {id: c, link: [a, {nextId: e, when: "done"}]}
  - {id: e, type: end}
`,
			want: []string{"cycle.unguarded@a"},
			msg:  `nodes "a", "b", "c" form a cycle (one way round: "a" -> "b" -> "a") that passes through no condition and no loop node: a run goes round it until the step limit`,
		},
		{
			// A parallel gateway takes every link whatever its condition, so a condition
			// there guards nothing.
			name: "a condition on a parallel gateway's link does not guard a cycle",
			doc: `
id: parcyc
layout:
  - {id: s, type: start, link: a}
  - {id: a, link: p}
  - {id: p, type: parallel, link: {nextId: b, when: "n < 3"}}
  - {id: b, link: [a, {nextId: e, when: "done"}]}
  - {id: e, type: end}
`,
			want: []string{"cycle.unguarded@a", "parallel.condition-ignored@p"},
			msg:  `cycle "a" -> "p" -> "b" -> "a" passes through no condition and no loop node`,
		},
		{
			// An exclusive gateway without a condition always takes its default link, and
			// an inclusive one takes every unconditioned link: neither decides anything.
			name: "gateways without a choice do not guard a cycle",
			doc: `
id: nochoice
layout:
  - {id: s, type: start, link: [a, {nextId: b, when: "other"}]}
  - {id: a, link: [x, {nextId: e, when: "done"}]}
  - {id: x, type: exclusive, link: a}
  - {id: b, link: i}
  - {id: i, type: inclusive, link: [{nextId: b, priority: 1}, {nextId: e, when: "done"}]}
  - {id: e, type: end}
`,
			want: []string{"cycle.unguarded@a", "cycle.unguarded@b", "split.no-join@i"},
			msg:  `cycle "b" -> "i" -> "b" passes through no condition and no loop node`,
		},
		{
			name: "guarded cycles",
			doc: `
id: guarded
layout:
  - {id: s, type: start, link: a}
  - {id: a, link: g}
  - {id: g, type: exclusive, link: [{nextId: a, when: "n < 3"}, b]}
  - {id: b, link: [{nextId: b, when: "again"}, e]}
  - {id: e, type: end}
`,
		},
		{
			// The conditions of g2 only choose the way round: both its links return to
			// a, so a run that takes the default at g1 never reaches e.
			name: "guarded cycle without a way out is named",
			doc: `
id: trap
layout:
  - {id: s, type: start, link: g1}
  - {id: g1, type: exclusive, link: [{nextId: e, when: "x > 1"}, a]}
  - {id: a, link: g2}
  - {id: g2, type: exclusive, link: [{nextId: a, when: "y > 1", priority: 1}, a]}
  - {id: e, type: end}
`,
			want: []string{"cycle.no-exit@a"},
			msg:  `nodes "a", "g2" form a cycle ("a" -> "g2" -> "a") that a run cannot leave: no link leads out of it, and each of its nodes goes on round it: "a" always takes its link to "g2" (no condition), "g2" falls back on its link to "a" (no condition)`,
		},
		{
			// Ways out that are not links: a loop node's items run out; a node whose
			// every link has a condition ends the branch (an exclusive gateway fails the
			// run) when none holds; an onError goto leaves the cycle.
			name: "cycles left without a link out",
			doc: `
id: exits
layout:
  - {id: s, type: start, link: [x, l, c, r]}
  - {id: x, type: exclusive, link: {nextId: x, when: "n < 5"}}
  - {id: l, type: loop, meta: {$for: i, $in: "1:3"}, link: l2}
  - {id: l2, type: loop, link: l}
  - {id: c, link: [{nextId: c2, when: "a"}, {nextId: c2, when: "b"}]}
  - {id: c2, link: c}
  - {id: r, meta: {onError: e}, link: r2}
  - {id: r2, type: exclusive, link: [{nextId: r, when: "a"}, r]}
  - {id: e, type: end}
`,
			want: []string{"exclusive.no-default@x"}, // not about the cycle: a run where n >= 5 fails there
		},
		{
			name: "scripts and conditions compile, Java does not",
			doc: `
id: java
layout:
  - {id: s, type: start, link: a}
  - {id: a, task: 'System.out.println("hi");', link: b}
  - {id: b, task: "$scripts.missing", when: "day >=", link: [{nextId: e, when: '"a".equals(b)'}]}
  - {id: e, type: end}
`,
			want: []string{"script.java@a", "condition.compile@b", "condition.compile@b", "task.meta-missing@b"},
			msg:  "this looks like Java for Solon's script engine",
		},
		{
			name: "loop and branch policy meta",
			doc: `
id: meta
meta: {branchPolicy: sometimes}
layout:
  - {id: s, type: start, link: l}
  - {id: l, type: loop, meta: {$for: item}, link: a}
  - {id: a, link: c}
  - {id: c, type: loop, link: p}
  - {id: p, type: parallel, meta: {branchPolicy: 3}, link: e}
  - {id: e, type: end}
`,
			want: []string{"meta.branch-policy", "loop.invalid@l", "meta.branch-policy@p"},
		},
		{
			name: "onError goto reaches its node and must exist",
			doc: `
id: goto
layout:
  - {id: s, type: start, link: a}
  - {id: a, meta: {onError: {goto: fallback}}, link: e}
  - {id: fallback, link: e}
  - {id: b, meta: {onError: nowhere}, link: e}
  - {id: e, type: end}
`,
			want: []string{"meta.on-error-goto@b", "node.unreachable@b"},
		},
		{
			// The engine fails an exclusive gateway that finds no true link and has no
			// default; a literal "true" condition is a default in all but name.
			name: "an exclusive gateway without a default link",
			doc: `
id: nodef
layout:
  - {id: s, type: start, link: [x, y, z]}
  - {id: x, type: exclusive, link: [{nextId: e, when: "a > 1"}, {nextId: e, when: "a < 0"}]}
  - {id: y, type: exclusive, link: [{nextId: e, when: "a > 1"}, {nextId: e, when: " true "}]}
  - {id: z, type: exclusive, link: [{nextId: e, when: "a > 1"}, e]}
  - {id: e, type: end}
`,
			want: []string{"exclusive.no-default@x"},
			msg:  `every link of exclusive gateway "x" has a condition: when none holds, the run fails with exclusive_no_match`,
		},
		{
			name: "a condition on a parallel gateway's link is ignored",
			doc: `
id: parwhen
layout:
  - {id: s, type: start, link: p}
  - {id: p, type: parallel, link: [a, {nextId: b, when: "go == true"}]}
  - {id: a, link: j}
  - {id: b, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`,
			want: []string{"parallel.condition-ignored@p"},
			msg:  `link from parallel gateway "p" to "b" has a condition (go == true) that is ignored`,
		},
		{
			// A literal true asks for what the gateway does anyway: nothing is ignored.
			name: "a literal true on a parallel gateway's link",
			doc: `
id: partrue
layout:
  - {id: s, type: start, link: p}
  - {id: p, type: parallel, link: [a, {nextId: b, when: " true "}]}
  - {id: a, link: j}
  - {id: b, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`,
		},
		{
			name: "loop-free recursion through a sub-graph",
			doc: `
id: self
layout:
  - {id: s, type: start, link: call}
  - {id: call, task: "#self", link: e}
  - {id: e, type: end}
`,
			want: []string{"subgraph.recursive@call"},
			msg:  `sub-graph calls recurse without a bound: "self" (node "call") -> "self"`,
		},
		{
			// Nor does a task condition that is the literal true, however written.
			name: "recursion under a node condition that always holds",
			doc: `
id: whenrec
layout:
  - {id: s, type: start, link: call}
  - {id: call, task: "#whenrec", when: "(true)", link: e}
  - {id: e, type: end}
`,
			want: []string{"subgraph.recursive@call"},
			msg:  `sub-graph calls recurse without a bound: "whenrec" (node "call") -> "whenrec"`,
		},
		{
			name: "a condition on a parallel gateway's link does not bound recursion",
			doc: `
id: parrec
layout:
  - {id: s, type: start, link: p}
  - {id: p, type: parallel, link: {nextId: call, when: "depth < 3"}}
  - {id: call, task: "#parrec", link: e}
  - {id: e, type: end}
`,
			want: []string{"parallel.condition-ignored@p", "subgraph.recursive@call"},
			msg:  `sub-graph calls recurse without a bound: "parrec" (node "call") -> "parrec"`,
		},
		{
			// An onError goto into a loop body from outside the loop runs the body without
			// the loop item, and the closing node as an ordinary node: from before the
			// loop, from the opening loop node itself, from its closing node (which runs
			// after the loop), from another loop's body, and from an outer loop's body
			// into an inner loop's body. A goto within one body, or out of a body (a
			// break), is fine.
			name: "an onError goto into a loop body from outside the loop",
			doc: `
id: gotoloop
layout:
  - {id: s, type: start, link: pre}
  - {id: pre, meta: {onError: {goto: b1}}, link: l1}
  - {id: l1, type: loop, meta: {$for: i, $in: "1:3", onError: b1}, link: b1}
  - {id: b1, meta: {onError: {goto: b2}}, link: b1b}
  - {id: b1b, meta: {onError: c1}, link: c1}
  - {id: c1, type: loop, meta: {onError: b1b}, link: l2}
  - {id: l2, type: loop, meta: {$for: j, $in: "1:3"}, link: b2}
  - {id: b2, meta: {onError: {goto: l3}}, link: l3}
  - {id: l3, type: loop, meta: {$for: k, $in: "1:2"}, link: b3}
  - {id: b3, meta: {onError: {goto: b2}}, link: c3}
  - {id: c3, type: loop, meta: {onError: {goto: after}}, link: c2}
  - {id: c2, type: loop, link: after}
  - {id: after, meta: {onError: b3}, link: e}
  - {id: e, type: end}
`,
			want: []string{"meta.on-error-goto-loop@pre", "meta.on-error-goto-loop@l1", "meta.on-error-goto-loop@b1",
				"meta.on-error-goto-loop@c1", "meta.on-error-goto-loop@after", "meta.on-error-goto-loop@after"},
			msg: `node "pre": meta onError goes to "b1", inside the body of loop "l1" (closed by "c1"), from outside it: the body runs without the loop item i, and the closing node runs as an ordinary node`,
		},
		{
			name: "guarded recursion is a warning, a missing sub-graph an error",
			doc: `
id: rec
layout:
  - {id: s, type: start, link: call}
  - {id: call, task: "#rec", when: "depth < 3", link: other}
  - {id: other, task: "#nowhere", link: e}
  - {id: e, type: end}
`,
			want: []string{"subgraph.recursive@call", "subgraph.missing@other"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each document is named after its graph id: "id: dup" is read as dup.yml.
			firstLine, _, _ := strings.Cut(strings.TrimSpace(tt.doc), "\n")
			spec := parse(t, strings.TrimPrefix(firstLine, "id: ")+".yml", tt.doc)
			fs := export.ValidateSpecs([]*flow.GraphSpec{spec})
			got := codes(fs)
			if tt.want == nil {
				tt.want = []string{}
			}
			assert.Equal(t, tt.want, got, "findings:\n%s", joinFindings(fs))
			if tt.msg != "" {
				assert.True(t, slices.ContainsFunc(fs, func(f export.Finding) bool { return strings.Contains(f.Message, tt.msg) }),
					"no message contains %q:\n%s", tt.msg, joinFindings(fs))
			}
			for _, f := range fs {
				assert.Equal(t, spec.Source, f.File, f.String())
				assert.Positive(t, f.Line, f.String())
				assert.Equal(t, spec.ID, f.Graph)
				assert.Contains(t, []export.Severity{export.SeverityError, export.SeverityWarning}, f.Severity)
			}
		})
	}
}

func joinFindings(fs []export.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}

func TestValidateLines(t *testing.T) {
	spec := parse(t, "lines.yml", `
id: lines
layout:
  - {id: s, type: start, link: g}
  - id: g
    type: exclusive
    link:
      - nextId: a
      - nextId: missing
        when: x > 1
      - nextId: e
  - {id: a, link: e}
  - {id: e, type: end}
`)
	fs := export.ValidateSpecs([]*flow.GraphSpec{spec})
	require.Equal(t, []string{"exclusive.multiple-defaults@g", "link.missing-target@g"}, codes(fs), joinFindings(fs))
	assert.Equal(t, `lines.yml:4: error exclusive.multiple-defaults: exclusive gateway "g" has 2 default links (without when: to "a", "e"): only the first by priority is ever taken`, fs[0].String())
	assert.Equal(t, 8, fs[1].Line, "the link's own line")
	assert.Equal(t, export.SeverityError, fs[1].Severity)
}

func TestValidateSet(t *testing.T) {
	a := parse(t, "a.yml", `
id: main
layout:
  - {id: s, type: start, link: c}
  - {id: c, task: "#sub", link: e}
  - {id: e, type: end}
`)
	b := parse(t, "b.yml", `
id: sub
layout:
  - {id: s, type: start, link: c}
  - {id: c, task: "#main", link: e}
  - {id: e, type: end}
`)
	dup := parse(t, "c.yml", `
id: sub
layout:
  - {id: s, type: start}
`)
	fs := export.ValidateSpecs([]*flow.GraphSpec{a, b, dup})
	require.Equal(t, []string{"subgraph.recursive@c", "end.missing", "graph.id-duplicate"}, codes(fs), joinFindings(fs))
	assert.Contains(t, fs[0].String(), `a.yml:4: error subgraph.recursive: sub-graph calls recurse without a bound: "main" (node "c") -> "sub" (node "c") -> "main"`)
	assert.Contains(t, fs[2].Message, `graph id "sub" is already used by b.yml`)

	// Against an engine's registry: the sub-graph is registered, and so is an id clash.
	reg, err := parse(t, "reg.yml", `
id: sub
layout:
  - {id: s, type: start}
`).Build()
	require.NoError(t, err)
	fs = export.ValidateSpecs([]*flow.GraphSpec{a}, export.WithRegistered(reg))
	assert.Empty(t, fs, joinFindings(fs))
	fs = export.ValidateSpecs([]*flow.GraphSpec{b}, export.WithRegistered(reg))
	assert.Contains(t, codes(fs), "graph.id-duplicate")
}

// TestValidateTaskWithoutEffect: a script that is a bare name compiles (it reads a
// variable) and does nothing; when the name is a graph's id the author meant "#id" (the
// corpus's workflow test3 has task "test3_sub").
func TestValidateTaskWithoutEffect(t *testing.T) {
	main := parse(t, "main.yml", `
id: main
layout:
  - {id: s, type: start, link: call}
  - {id: call, task: " sub ", link: n}
  - {id: n, task: "total;", link: ok}
  - {id: ok, task: 'context.put("total", 1)', link: e}
  - {id: e, type: end}
`)
	sub := parse(t, "sub.yml", `
id: sub
layout:
  - {id: s, type: start, link: e}
  - {id: e, type: end}
`)
	fs := export.ValidateSpecs([]*flow.GraphSpec{main, sub})
	require.Equal(t, []string{"task.no-effect@call", "task.no-effect@n"}, codes(fs), joinFindings(fs))
	assert.Equal(t, `main.yml:4: warning task.no-effect: node "call": task script "sub" is only a name: the task reads it and does nothing; to call graph "sub" write "#sub"`, fs[0].String())
	assert.Equal(t, `main.yml:5: warning task.no-effect: node "n": task script "total;" is only a name: the task reads it and does nothing`, fs[1].String())
	assert.False(t, export.HasErrors(fs))

	// A registered Go task's name, written without its "@", is a slip too.
	fs = export.ValidateSpecs([]*flow.GraphSpec{main, sub}, export.WithTaskNames("total"))
	require.Equal(t, []string{"task.no-effect@call", "task.no-effect@n"}, codes(fs), joinFindings(fs))
	assert.Equal(t, `main.yml:5: warning task.no-effect: node "n": task script "total;" is only a name: the task reads it and does nothing; to run the Go task "total" write "@total"`, fs[1].String())

	// The engine runs such a task without complaint, and nothing happens.
	g, err := main.Build()
	require.NoError(t, err)
	e := flow.NewEngine()
	require.NoError(t, e.Register(g))
	fc := flow.NewContext("i1")
	_, err = e.Eval(context.Background(), "main", fc)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"total": 1}, fc.Vars())
}

// TestValidateCalledGraphs checks recursion through graphs used as tasks (flow.Call),
// which the engine runs like "#id" calls: a graph that calls itself through a called
// graph recurses without a bound even though the called graph is in no set.
func TestValidateCalledGraphs(t *testing.T) {
	inner := flow.NewSpec("inner")
	inner.Start("s").LinkTo("back")
	inner.Activity("back").SetTask("#outer").LinkTo("e")
	inner.End("e")
	innerG, err := inner.Build()
	require.NoError(t, err)

	outer := flow.NewSpec("outer")
	outer.Start("s").LinkTo("call")
	outer.Activity("call").Do(flow.Call(innerG)).LinkTo("e")
	outer.End("e")
	fs := export.ValidateSpecs([]*flow.GraphSpec{outer})
	require.Equal(t, []string{"subgraph.recursive@call"}, codes(fs), joinFindings(fs))
	assert.Contains(t, fs[0].Message, `sub-graph calls recurse without a bound: "outer" (node "call") -> "inner" (node "back") -> "outer"`)

	// A called graph that does not call back is fine.
	leaf := flow.NewSpec("leaf")
	leaf.Start("s").LinkTo("e")
	leaf.End("e")
	leafG, err := leaf.Build()
	require.NoError(t, err)
	outer.NodeByID("call").Do(flow.Call(leafG))
	fs = export.ValidateSpecs([]*flow.GraphSpec{outer})
	assert.Empty(t, fs, joinFindings(fs))
}

func TestValidateNamesAndEvaluator(t *testing.T) {
	spec := parse(t, "names.yml", `
id: names
layout:
  - {id: s, type: start, link: a}
  - {id: a, task: "@known", link: b}
  - {id: b, task: "@unknown", link: [{nextId: e, when: "@cond"}]}
  - {id: e, type: end}
`)
	assert.Empty(t, export.ValidateSpecs([]*flow.GraphSpec{spec}), "names are not checked unless listed")
	fs := export.ValidateSpecs([]*flow.GraphSpec{spec}, export.WithTaskNames("known"), export.WithConditionNames("other"))
	assert.Equal(t, []string{"condition.unknown@b", "task.unknown@b"}, codes(fs), joinFindings(fs))
}

// textEvaluator compiles with the default evaluator, but is another one: the validator
// cannot assume its language is expr's.
type textEvaluator struct{ *flow.ExprEvaluator }

// TestValidateOtherEvaluatorComparesText: with another evaluator than the default one,
// conditions are compared as text, since "a>1" and "a > 1" need not be the same in its
// language; the default evaluator parses them.
func TestValidateOtherEvaluatorComparesText(t *testing.T) {
	spec := parse(t, "othereval.yml", `
id: othereval
layout:
  - {id: s, type: start, link: x}
  - {id: x, type: exclusive, link: [{nextId: a, when: "n>1"}, {nextId: b, when: "n > 1"}, {nextId: c, when: " n > 1 "}, a]}
  - {id: a, link: e}
  - {id: b, link: e}
  - {id: c, link: e}
  - {id: e, type: end}
`)
	fs := export.ValidateSpecs([]*flow.GraphSpec{spec}, export.WithEvaluator(textEvaluator{flow.NewExprEvaluator()}))
	assert.Equal(t, []string{"exclusive.unreachable-link@x"}, codes(fs), joinFindings(fs))
	fs = export.ValidateSpecs([]*flow.GraphSpec{spec})
	assert.Equal(t, []string{"exclusive.unreachable-link@x", "exclusive.unreachable-link@x"}, codes(fs), joinFindings(fs))
}

func TestValidateCodeSpec(t *testing.T) {
	spec := flow.NewSpec("code")
	spec.Start("s").LinkTo("a")
	spec.Activity("a").DoFunc(nil).LinkTo("ghost")
	spec.Node("", flow.Activity)
	spec.Nodes = append(spec.Nodes, nil)
	fs := export.ValidateSpecs([]*flow.GraphSpec{spec, nil})
	assert.Equal(t, []string{"end.missing", "link.missing-target@a", "node.id-missing", "node.id-missing"}, codes(fs), joinFindings(fs))
	for _, f := range fs {
		assert.Empty(t, f.File)
		assert.True(t, strings.HasPrefix(f.String(), `graph "code": `), f.String())
	}

	// A graph built in code validates through Validate.
	ok := flow.NewSpec("ok")
	ok.Start("s").LinkTo("e")
	ok.End("e")
	g, err := ok.Build()
	require.NoError(t, err)
	assert.Empty(t, export.Validate(g))

	// A type no document can name does not build; ValidateSpecs names it.
	odd := flow.NewSpec("odd")
	odd.Start("s").LinkTo("x")
	odd.Node("x", flow.Loop+1).LinkTo("e")
	odd.End("e")
	_, err = odd.Build()
	require.ErrorContains(t, err, `node "x": unknown node type 7`)
	fs = export.ValidateSpecs([]*flow.GraphSpec{odd})
	require.Equal(t, []string{"node.unknown-type@x"}, codes(fs), joinFindings(fs))
	assert.Equal(t, `graph "odd": warning node.unknown-type: node "x" has type NodeType(7), which the engine does not know: the graph does not build, and no definition document can name it`, fs[0].String())
}

func TestFindingJSON(t *testing.T) {
	f := export.Finding{File: "a.yml", Line: 3, Severity: export.SeverityWarning, Code: export.CodeCycleUnguarded, Graph: "g", Node: "n", Message: "m"}
	data, err := json.Marshal(f)
	require.NoError(t, err)
	assert.JSONEq(t, `{"file":"a.yml","line":3,"severity":"warning","code":"cycle.unguarded","graph":"g","node":"n","message":"m"}`, string(data))
	assert.Equal(t, "a.yml:3: warning cycle.unguarded: m", f.String())
}

// TestValidateCorpus checks the findings on the whole corpus, read as one set (as
// "flowteam validate" on the folder does), against what reading the files shows.
func TestValidateCorpus(t *testing.T) {
	files := corpusFiles(t)
	fs, err := export.ValidateFiles(files)
	require.NoError(t, err)
	byFile := map[string][]string{}
	for _, f := range fs {
		require.NotEmpty(t, f.File, f.String())
		require.Positive(t, f.Line, f.String())
		base := filepath.Base(f.File)
		byFile[base] = append(byFile[base], f.Code+"@"+f.Node)
	}
	// The dangling link is an error naming both nodes.
	main := "solon-flow__flow__rule__BehaviorTree.MainTree.yml"
	assert.Contains(t, byFile[main], "link.missing-target@CallUser")
	assert.Contains(t, byFile[main], "link.missing-target@LeaveInLocker")
	assert.Contains(t, byFile[main], "node.unreachable@CompleteDelivery")
	// The multi-graph "chains" document is not in the layout schema.
	assert.Equal(t, []string{"definition.invalid@"}, byFile["solon-flow__lab__fetch-demo-chains.yml"])
	// Java scripts do not compile, and say why.
	assert.Contains(t, byFile["solon-flow__flow__for_case1.graph.yml"], "task.compile@n-2")
	assert.Contains(t, byFile["solon-flow__flow__flow_case8.graph.yml"], "condition.compile@s3")
	// Graph ids are unique in the set: the corpus reuses d1, c1, f1, sf1, ...
	assert.Contains(t, byFile["solon-flow__demo__approve__demo1_case2.chain.yml"], "graph.id-duplicate@")
	// The inclusive default branch of script_case4 ends before the join.
	assert.Contains(t, byFile["solon-flow__flow__script_case4.graph.json"], "split.branch-escapes@n-3")
	// The workflow test3 "calls" test3_sub with a bare name, which does nothing.
	assert.Contains(t, byFile["solon-flow-workflow__flow__workflow__test3.graph.yml"], "task.no-effect@n5")
	// A clean graph has no finding.
	assert.Empty(t, byFile["solon-flow__flow__script_case2.graph.json"])
	// test3_sub names the types "startb" and "endb": errors, unless read as Solon reads
	// them (activities).
	sub := "solon-flow-workflow__flow__workflow__test3_sub.graph.yml"
	assert.Equal(t, []string{"node.unknown-type@s", "node.unknown-type@e"}, byFile[sub])
	solon, err := export.ValidateFiles(files, export.WithReadOptions(flow.SolonNodeTypes()))
	require.NoError(t, err)
	var solonSub []string
	for _, f := range solon {
		if filepath.Base(f.File) == sub {
			solonSub = append(solonSub, string(f.Severity)+" "+f.Code+"@"+f.Node)
		}
	}
	assert.Equal(t, []string{"warning end.missing@", "warning node.unknown-type@s", "warning start.implicit@s", "warning node.unknown-type@e"}, solonSub)

	for _, f := range fs {
		t.Log(f.String())
	}

	// Each file on its own: a file the loader rejects always has an error finding.
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		fs, err := export.ValidateFiles([]string{file})
		require.NoError(t, err)
		if _, err := flow.LoadGraph(file, data); err != nil {
			require.True(t, export.HasErrors(fs), "%s does not load (%v) but validates", file, err)
		}
	}
}

// TestValidateReaderNotes: an unknown type read as Solon reads it (flow.SolonNodeTypes)
// and a key such as "type:end" read silently as in Solon, but the validator points at
// them.
func TestValidateReaderNotes(t *testing.T) {
	doc := `
id: notes
layout:
  - { id: s, type: startb, link: a }
  - { id: a, type:end }
`
	spec, err := flow.ParseDefinition("notes.yml", []byte(doc), flow.SolonNodeTypes())
	require.NoError(t, err)
	var got []string
	for _, f := range export.ValidateSpecs([]*flow.GraphSpec{spec}) {
		if f.Code == export.CodeNodeUnknownType || f.Code == export.CodeNodeNote {
			got = append(got, f.String())
		}
	}
	assert.Equal(t, []string{
		`notes.yml:4: warning node.unknown-type: node "s" has unknown type "startb": it runs as an activity`,
		`notes.yml:5: warning node.suspicious: node "a": key "type:end" is not a known attribute: a missing space after the colon?`,
	}, got)
}

// TestValidateUnreachableLinkIsDead: the link exclusive.unreachable-link names is one
// the engine never takes, even when its condition holds and the true link's target is
// the worse choice.
func TestValidateUnreachableLinkIsDead(t *testing.T) {
	spec := parse(t, "dead.yml", `
id: dead
layout:
  - {id: s, type: start, link: x}
  - {id: x, type: exclusive, link: [{nextId: a, when: "true"}, {nextId: b, when: "n > 1", priority: 0}]}
  - {id: a, task: 'context.put("went", "a")', link: e}
  - {id: b, task: 'context.put("went", "b")', link: e}
  - {id: e, type: end}
`)
	assert.Equal(t, []string{"exclusive.unreachable-link@x"}, codes(export.ValidateSpecs([]*flow.GraphSpec{spec})))

	g, err := spec.Build()
	require.NoError(t, err)
	e := flow.NewEngine()
	require.NoError(t, e.Register(g))
	fc := flow.NewContextWith("i1", map[string]any{"n": 5})
	_, err = e.Eval(context.Background(), "dead", fc)
	require.NoError(t, err)
	assert.Equal(t, "a", fc.Value("went"))
}

// TestValidateSameConditionLinkIsDead: an exclusive gateway never takes a link whose
// condition an earlier link has, as exclusive.unreachable-link says, even when the
// condition holds.
func TestValidateSameConditionLinkIsDead(t *testing.T) {
	spec := parse(t, "samedead.yml", `
id: samedead
layout:
  - {id: s, type: start, link: x}
  - {id: x, type: exclusive, link: [{nextId: a, when: "n > 1"}, {nextId: b, when: "n > 1"}, e]}
  - {id: a, task: 'context.put("went", "a")', link: e}
  - {id: b, task: 'context.put("went", "b")', link: e}
  - {id: e, type: end}
`)
	assert.Equal(t, []string{"exclusive.unreachable-link@x"}, codes(export.ValidateSpecs([]*flow.GraphSpec{spec})))

	g, err := spec.Build()
	require.NoError(t, err)
	e := flow.NewEngine()
	require.NoError(t, e.Register(g))
	fc := flow.NewContextWith("i1", map[string]any{"n": 5})
	_, err = e.Eval(context.Background(), "samedead", fc)
	require.NoError(t, err)
	assert.Equal(t, "a", fc.Value("went"))
}

// TestValidateCycleNoExitMessages: a cycle.no-exit finding names every node of the
// cycle and one way round it, the links out of it that are never taken (a reader sees
// them in the document), and the link each node always takes, which is why the
// conditions only choose the way round.
func TestValidateCycleNoExitMessages(t *testing.T) {
	spec := parse(t, "noexit.yml", `
id: noexit
layout:
  - {id: s, type: start, link: [a, x, p]}
  - {id: a, link: b}
  - {id: b, type: exclusive, link: [{nextId: c, when: "x > 1"}, a, {nextId: e, when: "false"}]}
  - {id: c, link: [{nextId: a, when: "y"}, b]}
  - {id: x, type: exclusive, link: [{nextId: x, when: "n > 1"}, x]}
  - {id: p, type: parallel, link: [{nextId: q, when: "ok"}]}
  - {id: q, type: exclusive, link: [{nextId: p, when: "z"}, {nextId: p, when: "true"}]}
  - {id: e, type: end}
`)
	var got []string
	for _, f := range export.ValidateSpecs([]*flow.GraphSpec{spec}) {
		if f.Code == export.CodeCycleNoExit {
			got = append(got, f.Node+": "+f.Message)
		}
	}
	const goesRound = "; the conditions only choose the way round, so a run that enters goes round until the step limit, unless a task stops or interrupts it"
	assert.Equal(t, []string{
		`a: nodes "a", "b", "c" form a cycle (one way round: "a" -> "b" -> "a") that a run cannot leave: its only link out, from "b" to "e" (its condition is the literal false), is never taken, ` +
			`and each of its nodes goes on round it: "a" always takes its link to "b" (no condition), "b" falls back on its link to "a" (no condition), "c" always takes its link to "b" (no condition)` + goesRound,
		`x: node "x" forms a cycle ("x" -> "x") that a run cannot leave: no link leads out of it, and "x" falls back on its link to "x" (no condition)` + goesRound,
		`p: nodes "p", "q" form a cycle ("p" -> "q" -> "p") that a run cannot leave: no link leads out of it, ` +
			`and each of its nodes goes on round it: "p" is a parallel gateway (it takes every link), "q" always takes its link to "p" (its condition is true)` + goesRound,
	}, got)
}
