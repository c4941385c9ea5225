package flow_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// topology renders a spec compactly, one node a line: "id type -> target?when!priority, ...".
func topology(spec *flow.GraphSpec) []string {
	out := make([]string, 0, len(spec.Nodes))
	for _, n := range spec.Nodes {
		s := n.ID + " " + n.Type.String()
		for i, l := range n.Links {
			if i == 0 {
				s += " -> "
			} else {
				s += ", "
			}
			s += l.NextID
			if l.When != "" {
				s += "?" + l.When
			}
			if l.Priority != 0 {
				s += "!" + strconv.Itoa(l.Priority)
			}
		}
		out = append(out, s)
	}
	return out
}

func parse(t *testing.T, doc string) *flow.GraphSpec {
	t.Helper()
	spec, err := flow.ParseDefinition("test.yml", []byte(doc))
	require.NoError(t, err)
	return spec
}

func TestParseDefinitionLinks(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{
			name: "a node id",
			doc: `
id: g
layout:
  - {id: a, type: start, link: b}
  - {id: b, type: end}`,
			want: []string{"a start -> b", "b end"},
		},
		{
			name: "a list of node ids",
			doc: `
id: g
layout:
  - {id: a, type: parallel, link: [b, c]}
  - {id: b, link: d}
  - {id: c, link: d}
  - {id: d, type: parallel}`,
			want: []string{"a parallel -> b, c", "b activity -> d", "c activity -> d", "d parallel"},
		},
		{
			name: "a link object",
			doc: `
id: g
layout:
  - {id: a, link: {nextId: b, when: x > 1, priority: 3}}
  - {id: b}`,
			want: []string{"a activity -> b?x > 1!3", "b activity"},
		},
		{
			name: "a list of link objects, condition as the old name of when",
			doc: `
id: g
layout:
  - id: a
    type: exclusive
    link:
      - nextId: b
        condition: day >= 3
      - nextId: c
        when: day < 3
  - {id: b, link: []}
  - {id: c}`,
			want: []string{"a exclusive -> b?day >= 3, c?day < 3", "b activity", "c activity"},
		},
		{
			name: "ids and objects mixed in one list",
			doc: `
id: g
layout:
  - {id: a, type: inclusive, link: [b, {nextId: c, when: ok}]}
  - {id: b, link: []}
  - {id: c}`,
			want: []string{"a inclusive -> b, c?ok", "b activity", "c activity"},
		},
		{
			name: "no link goes to the next entry",
			doc: `
id: g
layout:
  - {id: a}
  - {id: b}
  - {id: c}`,
			want: []string{"a activity -> b", "b activity -> c", "c activity"},
		},
		{
			name: "a null link goes to the next entry as in Solon",
			doc: `
id: g
layout:
  - {id: a, link: ~}
  - id: b
    link:
  - {id: c}`,
			want: []string{"a activity -> b", "b activity -> c", "c activity"},
		},
		{
			name: "an empty list means no links",
			doc: `
id: g
layout:
  - {id: a, link: []}
  - {id: b}`,
			want: []string{"a activity", "b activity"},
		},
		{
			name: "an end node does not fall through to the next entry",
			doc: `
id: g
layout:
  - {id: a, link: c}
  - {id: b, type: end}
  - {id: c, link: b}`,
			want: []string{"a activity -> c", "b end", "c activity -> b"},
		},
		{
			name: "scalar ids of any type, as written",
			doc: `
id: g
layout:
  - {id: 1, link: 2}
  - {id: 2, link: [3.0, true]}
  - {id: 3.0}
  - {id: true}`,
			want: []string{"1 activity -> 2", "2 activity -> 3.0, true", "3.0 activity -> true", "true activity"},
		},
		{
			name: "JSON",
			doc: `{"id": "g", "layout": [
  {"id": "a", "type": "start", "link": [{"nextId": "b", "condition": "x", "priority": 1}, "c"]},
  {"id": "b", "link": "c"},
  {"id": "c", "type": "end"}]}`,
			want: []string{"a start -> b?x!1, c", "b activity -> c", "c end"},
		},
		{
			name: "nodes is the old name of layout",
			doc: `
id: g
nodes:
  - {id: a}
  - {id: b}`,
			want: []string{"a activity -> b", "b activity"},
		},
		{
			name: "type names ignore case; iterator is loop; unknown names are activities",
			doc: `
id: g
layout:
  - {id: a, type: START}
  - {id: b, type: iterator}
  - {id: c, type: startb}
  - {id: d, type: 7}`,
			want: []string{"a start -> b", "b loop -> c", "c activity -> d", "d activity"},
		},
		{
			name: "Solon's key:[ inside a flow mapping",
			doc: `
id: g
layout:
  - {id: a, type: exclusive, link:[
      {nextId: b},
      {nextId: c, when: "day>=3"}]}
  - {id: b, link:{nextId: c}}
  - {id: c}`,
			want: []string{"a exclusive -> b, c?day>=3", "b activity -> c", "c activity"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, topology(parse(t, tt.doc)))
		})
	}
}

func TestParseDefinitionAutoIDs(t *testing.T) {
	t.Run("n-position, 1-based, as Solon", func(t *testing.T) {
		spec := parse(t, `
id: g
layout:
  - type: start
  - {id: "", task: x}
  - {id: b, link: n-1}`)
		assert.Equal(t, []string{"n-1 start -> n-2", "n-2 activity -> b", "b activity -> n-1"}, topology(spec))
	})
	t.Run("an explicit id keeps its name and the unnamed node gets another", func(t *testing.T) {
		// Solon names both nodes "n-3" and keeps only one of them.
		spec := parse(t, `
id: g
layout:
  - {type: start, link: n-3}
  - {id: n-3, title: explicit}
  - {title: unnamed}
  - {title: unnamed too}`)
		assert.Equal(t, []string{"n-1 start -> n-3", "n-3 activity -> n-3-2", "n-3-2 activity -> n-4", "n-4 activity"}, topology(spec))
		assert.Equal(t, "explicit", spec.NodeByID("n-3").Title)
		_, err := spec.Build()
		require.NoError(t, err)
	})
}

func TestParseDefinitionFields(t *testing.T) {
	spec := parse(t, `
id: 42
title: 3.5
driver: d1
meta:
  int: 7
  big: 12345678901234567890
  hex: 0x10
  float: 2.5
  bool: true
  null: ~
  str: "7"
  date: 2024-01-01
  list: [1, two, 3.0, [4]]
  map: {a: {b: c}}
layout:
  - id: a
    type: start
    title: First
    when: |
      day >= 3
    task: |
      context.put("a", 1);
    meta: {}
  - id: b
    task: 42
    when: true
  - {id: c, meta: ~}
`)
	assert.Equal(t, "42", spec.ID)
	assert.Equal(t, "3.5", spec.Title)
	assert.Equal(t, "d1", spec.Driver)
	assert.Equal(t, map[string]any{
		"int": 7, "big": 1.2345678901234567e19, "hex": 16, "float": 2.5, "bool": true, "null": nil,
		"str": "7", "date": "2024-01-01",
		"list": []any{1, "two", 3.0, []any{4}},
		"map":  map[string]any{"a": map[string]any{"b": "c"}},
	}, spec.Meta)

	a, b, c := spec.Nodes[0], spec.Nodes[1], spec.Nodes[2]
	assert.Equal(t, "First", a.Title)
	assert.Equal(t, "day >= 3", a.When, "when is trimmed, as Solon's ConditionDesc does")
	assert.Equal(t, `context.put("a", 1);`, a.Task, "task is trimmed, as Solon's TaskDesc does")
	assert.Nil(t, a.Meta, "an empty meta reads as nil")
	assert.Equal(t, "42", b.Task)
	assert.Equal(t, "true", b.When)
	assert.Nil(t, c.Meta)
}

func TestParseDefinitionMetaJSON(t *testing.T) {
	spec, err := flow.ParseDefinition("m.json", []byte(`{"id": "g", "meta": {"i": 1, "f": 1.5, "e": 1e3, "b": false, "n": null, "l": [1, "x"], "s": "\/"},
"layout": [{"id": "a"}]}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"i": 1, "f": 1.5, "e": 1000.0, "b": false, "n": nil, "l": []any{1, "x"}, "s": "/"}, spec.Meta)
	assert.Equal(t, 2, spec.Nodes[0].Pos.Line)
}

func TestParseDefinitionAnchorsAndMerges(t *testing.T) {
	spec := parse(t, `
x-defaults: &defaults {role: lead, level: 1}
x-check: &check day >= 3
id: g
layout:
  - id: a
    meta: {<<: *defaults, level: 2}
    when: *check
    link: [{nextId: b, when: *check}]
  - id: b
    meta: *defaults
`)
	assert.Equal(t, map[string]any{"role": "lead", "level": 2}, spec.Nodes[0].Meta)
	assert.Equal(t, map[string]any{"role": "lead", "level": 1}, spec.Nodes[1].Meta)
	assert.Equal(t, "day >= 3", spec.Nodes[0].When)
	assert.Equal(t, []string{"a activity -> b?day >= 3", "b activity"}, topology(spec))
}

func TestParseDefinitionPositions(t *testing.T) {
	spec := parse(t, `id: g
layout:
  - id: a
    type: start
    link:
      - b
      - nextId: c
        when: x
  - {id: b, link: c}
  - id: c
`)
	at := func(line int) flow.Pos { return flow.Pos{File: "test.yml", Line: line} }
	a, b, c := spec.Nodes[0], spec.Nodes[1], spec.Nodes[2]
	assert.Equal(t, at(3), a.Pos)
	assert.Equal(t, at(6), a.Links[0].Pos)
	assert.Equal(t, at(7), a.Links[1].Pos)
	assert.Equal(t, at(9), b.Pos)
	assert.Equal(t, at(9), b.Links[0].Pos)
	assert.Equal(t, at(10), c.Pos)
	assert.Equal(t, "test.yml", spec.Source)
}

func TestParseDefinitionRelaxedFlowColons(t *testing.T) {
	// Only ':' directly before '[' or '{' inside flow collections changes; quoted text and
	// block scalars keep theirs, and lines stay where they were.
	spec := parse(t, `id: g
layout:
  - {id: s, type: start, title: "a:[b]",
     link:[a, b]}
  - id: a
    task: |
      m = {k:[1]}
    link: b
  - {id: b, type: end, meta: {note: 'x:{y}', "q":{r: 1}}}
`)
	assert.Equal(t, []string{"s start -> a, b", "a activity -> b", "b end"}, topology(spec))
	assert.Equal(t, "a:[b]", spec.Nodes[0].Title)
	assert.Equal(t, 4, spec.Nodes[0].Links[0].Pos.Line)
	assert.Equal(t, "m = {k:[1]}", spec.Nodes[1].Task)
	assert.Equal(t, map[string]any{"note": "x:{y}", "q": map[string]any{"r": 1}}, spec.Nodes[2].Meta)
}

func TestParseDefinitionPriorityOrder(t *testing.T) {
	g, err := flow.LoadGraph("p.yml", []byte(`
id: g
layout:
  - id: s
    type: exclusive
    link:
      - a
      - {nextId: b, priority: 5}
      - {nextId: c, priority: 0x1}
      - {nextId: d, priority: 5}
      - {nextId: e, priority: -1}
  - {id: start, type: start, link: s}
  - {id: a, type: end}
  - {id: b, type: end}
  - {id: c, type: end}
  - {id: d, type: end}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	var order []string
	for _, l := range g.Node("s").Links() {
		order = append(order, fmt.Sprintf("%s:%d", l.To, l.Priority))
	}
	assert.Equal(t, []string{"b:5", "d:5", "c:1", "a:0", "e:-1"}, order, "higher first, document order among equals")
}

func TestParseDefinitionErrors(t *testing.T) {
	tests := []struct {
		name string
		file string // default test.yml
		doc  string
		line int
		msg  string
	}{
		{"unclosed flow list", "", "id: g\nlayout:\n  - {id: a, link: [b}\n", 3, "invalid YAML: did not find expected ',' or ']'"},
		{"bad indentation", "", "id: g\nlayout:\n  - id: a\n    link: b\n   bad: c\n", 5, "invalid YAML: did not find expected '-' indicator"},
		{"list under a key", "", "id: g\nlayout:\n  - id: a\n    - b\n", 4, "invalid YAML: did not find expected key"},
		{"unterminated quote", "", "id: g\nlayout:\n  - id: a\n    task: \"x\n", 4, "invalid YAML: found unexpected end of stream"},
		{"tab indentation", "", "id: g\nlayout:\n  - id: a\n\ttask: b\n", 3, "invalid YAML: found a tab character"},
		{"error on the first line", "", "a: b: c\nid: g\n", 1, "invalid YAML: mapping values are not allowed"},
		{"unknown anchor", "", "id: g\nlayout:\n  - id: a\n  - id: b\n    link: *nope\n", 5, "unknown anchor 'nope'"},
		{"control character", "", "id: g\nlayout:\n  - id: a\n    title: \"\x01\"\n", 4, "control characters"},
		{"two documents", "", "id: g\nlayout: [{id: a}]\n---\nid: h\n", 3, "more than one YAML document"},
		{"real error after Solon's key:[", "", "id: g\nlayout:\n  - {id: a, link:[b]}\n  - {id: b, link: [c}\n", 4, "did not find expected ',' or ']'"},
		{"JSON syntax", "test.json", "{\n  \"id\": \"g\",\n  \"layout\": [\n    {\"id\": \"a\"} {}\n  ]\n}\n", 4, "invalid JSON"},
		{"empty document", "", "# nothing\n", 1, "empty document"},
		{"document is a list", "", "- id: a\n", 1, "document must be a mapping with id and layout, not a list"},
		{"no layout", "", "id: g\nchains: {}\n", 1, `no "layout"`},
		{"layout and nodes", "", "id: g\nlayout: []\nnodes: []\n", 3, `both "layout" and its deprecated alias "nodes"`},
		{"layout is a mapping", "", "id: g\nlayout:\n  a: {id: a}\n", 3, "layout must be a list of nodes, not a mapping"},
		{"nodes is a string", "", "id: g\nnodes: a\n", 2, "nodes must be a list of nodes, not a string (\"a\")"},
		{"node is a string", "", "id: g\nlayout:\n  - {id: a}\n  - b\n", 4, "layout entry #2 must be a mapping (a node), not a string (\"b\")"},
		{"node is a list", "", "id: g\nlayout:\n  - [a]\n", 3, "layout entry #1 must be a mapping (a node), not a list"},
		{"node is null", "", "id: g\nlayout:\n  -\n  - {id: a}\n", 3, "layout entry #1 must be a mapping (a node), not null"},
		{"id is a list", "", "id: g\nlayout:\n  - id: [a]\n", 3, "id must be a string, not a list"},
		{"graph id is a mapping", "", "id: {a: 1}\nlayout: []\n", 1, "id must be a string, not a mapping"},
		{"task is a mapping", "", "id: g\nlayout:\n  - id: a\n    task:\n      x: 1\n", 5, `node "a": task must be a string, not a mapping`},
		{"type is a list", "", "id: g\nlayout:\n  - {id: a, type: [start]}\n", 3, "type must be a string, not a list"},
		{"meta is a list", "", "id: g\nlayout:\n  - {id: a, meta: [1]}\n", 3, `node "a": meta must be a mapping, not a list`},
		{"graph meta is a string", "", "id: g\nmeta: x\nlayout: []\n", 2, "meta must be a mapping, not a string"},
		{"link entry is a list", "", "id: g\nlayout:\n  - id: a\n    link: [b, [c]]\n", 4, "link entry must be a node id or a mapping with nextId, not a list"},
		{"link entry is null", "", "id: g\nlayout:\n  - id: a\n    link:\n      - b\n      -\n", 6, "link entry must be a node id or a mapping with nextId, not null"},
		{"link target is empty", "", "id: g\nlayout:\n  - {id: a, link: \"\"}\n", 3, `node "a": link target is empty`},
		{"link without nextId", "", "id: g\nlayout:\n  - id: a\n    link:\n      - {id: e1, title: x}\n", 5, `node "a": link has no nextId`},
		{"nextId is a list", "", "id: g\nlayout:\n  - {id: a, link: {nextId: [b]}}\n", 3, "nextId must be a string, not a list"},
		{"priority is a word", "", "id: g\nlayout:\n  - {id: a, link: {nextId: b, priority: high}}\n", 3, `link to "b": priority must be an integer, not "high"`},
		{"priority is a fraction", "", "id: g\nlayout:\n  - id: a\n    link:\n      - nextId: b\n        priority: 1.5\n", 6, `priority must be an integer, not "1.5"`},
		{"priority is a quoted number", "", "id: g\nlayout:\n  - {id: a, link: {nextId: b, priority: \"2\"}}\n", 3, `priority must be an integer, not "2"`},
		{"priority is a list", "", "id: g\nlayout:\n  - {id: a, link: {nextId: b, priority: [1]}}\n", 3, "priority must be an integer, not a list"},
		{"priority overflows", "", "id: g\nlayout:\n  - {id: a, link: {nextId: b, priority: 99999999999999999999}}\n", 3, "priority must be an integer"},
		{"when and condition", "", "id: g\nlayout:\n  - id: a\n    link:\n      - nextId: b\n        when: x\n        condition: y\n", 7, `both "when" and its deprecated alias "condition"`},
		{"duplicate key", "", "id: g\nlayout:\n  - id: a\n    task: x\n    task: y\n", 5, `duplicate key "task" (first at line 4)`},
		{"duplicate JSON key", "test.json", "{\"id\": \"g\",\n \"id\": \"h\", \"layout\": []}", 2, `duplicate key "id" (first at line 1)`},
		{"mapping as a key", "", "id: g\nlayout:\n  - {id: a, meta: {? [k] : v}}\n", 3, "mapping key must be a string, not a list"},
		{"alias cycle", "", "id: g\nlayout:\n  - {id: a, meta: &m {x: [*m]}}\n", 3, "an alias refers to a value that contains it"},
		{"merge cycle", "", "id: g\nlayout:\n  - {id: a, meta: &m {<<: *m}}\n", 3, "an alias refers to a value that contains it"},
		{"merge of a list of strings", "", "id: g\nlayout:\n  - {id: a, meta: {<<: [x]}}\n", 3, "a merge (<<) needs a mapping or a list of mappings, not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = "test.yml"
			}
			spec, err := flow.ParseDefinition(file, []byte(tt.doc))
			require.Error(t, err)
			assert.Nil(t, spec)
			var de *flow.DefinitionError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, flow.Pos{File: file, Line: tt.line}, de.Pos, "error: %v", err)
			assert.Contains(t, de.Error(), tt.msg)
			assert.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: ", file, tt.line)), err.Error())
		})
	}
}

// yaml.v3 reports parser errors at the start of the enclosing collection; the reader
// finds the line the parser gave up on, however far down it is.
func TestParseDefinitionErrorLineFarFromItsCollection(t *testing.T) {
	var doc strings.Builder
	doc.WriteString("id: g\nlayout:\n")
	for i := range 500 {
		fmt.Fprintf(&doc, "  - {id: n%d}\n", i)
	}
	doc.WriteString("  - id: bad\n   x: 1\n  - {id: after}\n")
	_, err := flow.ParseDefinition("far.yml", []byte(doc.String()))
	var de *flow.DefinitionError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, flow.Pos{File: "far.yml", Line: 504}, de.Pos, err.Error())
}

func TestParseDefinitionAliasBomb(t *testing.T) {
	for _, form := range []string{"[*a%d, *a%d]", "{<<: [*a%d, *a%d]}"} {
		var doc strings.Builder
		doc.WriteString("a0: &a0 {k: v}\n")
		for i := 1; i <= 30; i++ {
			fmt.Fprintf(&doc, "a%d: &a%d "+form+"\n", i, i, i-1, i-1)
		}
		doc.WriteString("id: g\nlayout:\n  - {id: a, meta: {x: *a30}}\n")
		_, err := flow.ParseDefinition("bomb.yml", []byte(doc.String()))
		var de *flow.DefinitionError
		require.ErrorAs(t, err, &de, form)
		assert.Contains(t, de.Msg, "expands to too many values")
		assert.Positive(t, de.Pos.Line)
	}
}

func TestParseDefinitionReportsEveryProblem(t *testing.T) {
	_, err := flow.ParseDefinition("many.yml", []byte(`id: g
layout:
  - {id: a, link: {title: no target}}
  - {id: b, meta: [1]}
  - 7
`))
	require.Error(t, err)
	var lines []int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var de *flow.DefinitionError
		require.ErrorAs(t, e, &de)
		lines = append(lines, de.Pos.Line)
	}
	assert.ElementsMatch(t, []int{3, 4, 5}, lines)
}

// Problems that need the whole graph are Build's; LoadGraph reports them with the
// positions the reader recorded.
func TestLoadGraphErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{
			name: "a link to a node that does not exist names both nodes",
			doc:  "id: g\nlayout:\n  - {id: s, type: start, link: [a, ghost]}\n  - {id: a, type: end}\n",
			want: []string{`g.yml:3: graph "g": node "s": link from "s" to missing node "ghost"`},
		},
		{
			name: "a number as link target is a node id",
			doc:  "id: g\nlayout:\n  - {id: s, type: start}\n  - {id: a, link: 5}\n",
			want: []string{`g.yml:4: graph "g": node "a": link from "a" to missing node "5"`},
		},
		{
			name: "an automatic link to a missing next entry cannot happen; a link object's line is its own",
			doc:  "id: g\nlayout:\n  - id: s\n    type: start\n    link:\n      - nextId: x\n",
			want: []string{`g.yml:6: graph "g": node "s": link from "s" to missing node "x"`},
		},
		{
			name: "duplicate ids name both lines",
			doc:  "id: g\nlayout:\n  - {id: s, type: start}\n  - {id: a}\n  - {id: a}\n",
			want: []string{`g.yml:5: graph "g": node "a": duplicate node id (first defined at g.yml:4)`},
		},
		{
			name: "no start node names the file",
			doc:  "id: g\nlayout:\n  - {id: a, type: startb, link: b}\n  - {id: b, link: a}\n",
			want: []string{`g.yml:1: graph "g": no start node`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := flow.LoadGraph("g.yml", []byte(tt.doc))
			require.Error(t, err)
			assert.Nil(t, g)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			var de *flow.DefinitionError
			assert.ErrorAs(t, err, &de)
		})
	}
}

func TestReadDefinitionFile(t *testing.T) {
	yml, err := flow.ReadDefinitionFile(filepath.Join("testdata", "defs", "leave.yml"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("testdata", "defs", "leave.yml"), yml.Source)
	assert.Equal(t, []string{
		"s start -> submit",
		"submit activity -> n-3",
		"n-3 exclusive -> director?day >= 7!2, lead?day >= 3!1, hr",
		"director activity -> notify",
		"lead activity -> notify",
		"hr activity -> notify",
		"notify activity -> e",
		"e end",
	}, topology(yml))
	assert.Equal(t, flow.Pos{File: yml.Source, Line: 20}, yml.Nodes[2].Links[0].Pos)
	assert.Equal(t, map[string]any{"cc": "ceo"}, yml.NodeByID("director").Links[0].Meta)

	// The JSON twin uses "\/", which yaml.v3 rejects, so it goes through encoding/json.
	js, err := flow.ReadDefinitionFile(filepath.Join("testdata", "defs", "leave.json"))
	require.NoError(t, err)
	assert.Equal(t, topology(yml), topology(js))
	assert.Equal(t, yml.Meta, js.Meta)
	assert.Equal(t, yml.Title, js.Title)
	assert.Equal(t, flow.Pos{File: js.Source, Line: 14}, js.Nodes[2].Links[0].Pos)
	for i := range yml.Nodes {
		y, j := yml.Nodes[i], js.Nodes[i]
		assert.Equal(t, []any{y.Title, y.Task, y.When, y.Meta}, []any{j.Title, j.Task, j.When, j.Meta}, y.ID)
	}

	g, err := yml.Build()
	require.NoError(t, err)
	assert.Equal(t, "s", g.Start().ID)

	_, err = flow.ReadDefinitionFile(filepath.Join("testdata", "defs", "dangling.yml"))
	require.NoError(t, err, "reading does not resolve links")
	spec, _ := flow.ReadDefinitionFile(filepath.Join("testdata", "defs", "dangling.yml"))
	_, err = spec.Build()
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join("testdata", "defs", "dangling.yml")+`:4: graph "broken": node "a": link from "a" to missing node "missing"`)

	_, err = flow.ReadDefinitionFile(filepath.Join("testdata", "defs", "absent.yml"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func ExampleLoadGraph() {
	doc := `
id: leave
layout:
  - {id: s, type: start}
  - id: g
    type: exclusive
    link:
      - e
      - {nextId: director, when: "day >= 3", priority: 1}
  - {id: director, task: "@director"}
  - {id: e, type: end}
`
	g, err := flow.LoadGraph("leave.yml", []byte(doc))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range g.Nodes() {
		for _, l := range n.Links() {
			fmt.Printf("%s -> %s %q (%s)\n", l.From, l.To, l.When, l.Pos)
		}
	}
	// Output:
	// s -> g "" (leave.yml:4)
	// g -> director "day >= 3" (leave.yml:9)
	// g -> e "" (leave.yml:8)
	// director -> e "" (leave.yml:10)
}

// FuzzParseDefinition checks that no input panics, that every error is a located
// *DefinitionError, and that what parses is well formed and builds without panicking.
func FuzzParseDefinition(f *testing.F) {
	for _, dir := range []string{corpusDir, filepath.Join("testdata", "defs")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			require.NoError(f, err)
			f.Add(data)
		}
	}
	f.Add([]byte("id: g\nlayout:\n  - {id: a, link:[b, {nextId: c, priority: 2}]}\n  - {id: b}\n  - {id: c}\n"))
	f.Add([]byte("x: &a [*a]\nid: g\nlayout: [{meta: {<<: {k: v}}}]\n"))
	f.Add([]byte(`{"id": "g", "layout": [{"id": "a\/b", "link": ["c"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, file := range []string{"fuzz.yml", "fuzz.json"} {
			spec, err := flow.ParseDefinition(file, data)
			if err != nil {
				for _, de := range definitionErrors(t, err) {
					if de.Pos.File != file || de.Pos.Line < 1 {
						t.Fatalf("error without a position: %#v", de)
					}
				}
				continue
			}
			for _, n := range spec.Nodes {
				if n.ID == "" || n.Pos.File != file || n.Pos.Line < 1 {
					t.Fatalf("node without id or position: %#v", n)
				}
				for _, l := range n.Links {
					if l.NextID == "" || l.Pos.File != file || l.Pos.Line < 1 {
						t.Fatalf("link without target or position: %#v", l)
					}
				}
			}
			if _, err := spec.Build(); err != nil {
				for _, de := range definitionErrors(t, err) {
					if de.Pos.File != file {
						t.Fatalf("build error without the file: %#v", de)
					}
				}
			}
		}
	})
}

// definitionErrors flattens joined errors and checks each is a *DefinitionError.
func definitionErrors(t *testing.T, err error) []*flow.DefinitionError {
	t.Helper()
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var all []*flow.DefinitionError
		for _, e := range joined.Unwrap() {
			all = append(all, definitionErrors(t, e)...)
		}
		return all
	}
	var de *flow.DefinitionError
	if !errors.As(err, &de) {
		t.Fatalf("not a *DefinitionError: %T %v", err, err)
	}
	return []*flow.DefinitionError{de}
}

func BenchmarkParseCase1(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(corpusDir, "solon-flow__benchmark__case1.yml"))
	if err != nil {
		b.Skipf("corpus not available: %v", err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		spec, err := flow.ParseDefinition("case1.yml", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := spec.Build(); err != nil {
			b.Fatal(err)
		}
	}
}
