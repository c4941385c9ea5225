package flow_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// Bad definitions: every error names the file, the line and the node.

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
		{"tab indentation", "", "id: g\nlayout:\n  - id: a\n\ttask: b\n", 4, "invalid YAML: found a tab character"},
		// yaml.v3 puts these at the start of the scalar being scanned, lines above.
		{"tab below a scalar", "", "id: g\nlayout:\n  - id: a\n    title: x\n\ttask: b\n", 5, "invalid YAML: found a tab character that violates indentation"},
		{"tab in a block scalar", "", "id: g\nlayout:\n  - id: a\n    task: |\n      x\n\t  y\n", 6, "invalid YAML: found a tab character where an indentation space is expected"},
		{"bad escape in a quote", "", "id: g\nlayout:\n  - id: a\n    task: \"x\n      y \\q\"\n", 5, "invalid YAML: found unknown escape character"},
		{"document marker in a quote", "", "id: g\nlayout:\n  - id: a\n    task: \"x\n\n---\n", 6, "invalid YAML: found unexpected document indicator"},
		{"error on the first line", "", "a: b: c\nid: g\n", 1, "invalid YAML: mapping values are not allowed"},
		{"unknown anchor", "", "id: g\nlayout:\n  - id: a\n  - id: b\n    link: *nope\n", 5, "unknown anchor 'nope'"},
		{"unknown anchor after the same text in a script", "", "id: g\nlayout:\n  - {id: a, task: \"n = m *rate\"}\n  - {id: b, title: *rate}\n", 4, "unknown anchor 'rate'"},
		{"unknown anchor after a longer alias", "", "id: g\nmeta: {x: &ab 1, y: *ab}\nlayout:\n  - {id: a, title: *a}\n", 4, "unknown anchor 'a'"},
		{"control character", "", "id: g\nlayout:\n  - id: a\n    title: \"\x01\"\n", 4, "control characters"},
		{"C1 control character", "", "id: g\nlayout:\n  - id: a\n    title: \"x\u0080\"\n", 4, "control characters"},
		{"non-character", "", "id: g\nlayout:\n  - id: a\n    title: \"x\uffff\"\n", 4, "control characters"},
		// yaml.v3 reads a lone CR (classic Mac OS) as a line break; so does every message.
		{"CR line breaks", "", "id: g\rlayout:\r  - {id: a, link: [b}\r", 3, "did not find expected ',' or ']'"},
		{"CR line breaks in a scalar", "", "id: g\rlayout:\r  - id: a\r    task: \"x\r      y \\q\"\r", 5, "found unknown escape character"},
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
		{"priority beyond int64", "", "id: g\nlayout:\n  - {id: a, link: {nextId: b, priority: 18446744073709551615}}\n", 3, `link to "b": priority 18446744073709551615 is out of range`},
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
			doc:  "id: g\nlayout:\n  - {id: a, type: activity, link: b}\n  - {id: b, link: a}\n",
			want: []string{`g.yml:1: graph "g": no start node`},
		},
		{
			name: "an unknown type names the nearest known one",
			doc:  "id: g\nlayout:\n  - {id: s, type: start, link: x}\n  - {id: x,\n     type: exclusiv}\n  - {id: y, type: gateway}\n",
			want: []string{
				`g.yml:5: graph "g": node "x": unknown node type "exclusiv" (did you mean exclusive?)`,
				`g.yml:6: graph "g": node "y": unknown node type "gateway" (the types are activity, start, end, exclusive, inclusive, parallel, loop)`,
			},
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

// A JSON document yaml.v3 refuses for its depth is read by encoding/json, which has no
// depth limit of its own: the reader stops at a bound, so that no document, however
// deep, takes minutes or exhausts the stack.
func TestParseDefinitionDeepJSON(t *testing.T) {
	const depth = 100_000
	doc := "{\"id\": \"g\",\n\"layout\": [{\"id\": \"a\", \"meta\": {\"x\":\n" +
		strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}}]}\n"
	_, err := flow.ParseDefinition("deep.json", []byte(doc))
	var de *flow.DefinitionError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, flow.Pos{File: "deep.json", Line: 3}, de.Pos, err.Error())
	assert.Contains(t, de.Msg, "nested more than")
}

// A script that does not compile is reported at the line of the problem in the script,
// not at the node's first line, with the node still named: a literal block's line k is
// the k-th line of the block; a value the reader folds (">", a flow scalar over several
// lines) or a JSON string is reported where it starts.
func TestScriptCompileErrorNamesScriptLine(t *testing.T) {
	const head = "id: g\nlayout:\n  - id: s\n    type: start\n" // lines 1-4
	tests := []struct {
		name, file, doc, node string
		line                  int
	}{
		{"a literal block starts on the line after its indicator", "g.yml", head +
			"  - id: a\n    type: activity\n    title: hello\n    task: |\n      context.put(\"x\", 1 +);\n  - id: e\n    type: end\n", "a", 9},
		{"line k of a literal block, after blank lines the reader trims", "g.yml", head +
			"  - id: a\n    task: |\n\n      context.put(\"x\", 1);\n      context.put(\"y\", 2 +);\n  - {id: e, type: end}\n", "a", 9},
		{"a plain value on the task line", "g.yml", head +
			"  - id: a\n    task: context.put(\"x\", 1 +)\n  - {id: e, type: end}\n", "a", 6},
		{"a quoted value on the line after the key", "g.yml", head +
			"  - id: a\n    task:\n      'context.put(\"x\", 1 +)'\n  - {id: e, type: end}\n", "a", 7},
		{"a folded block is reported at its indicator, the key's line", "g.yml", head +
			"  - id: a\n    task: >\n      context.put(\"x\",\n      1 +)\n  - {id: e, type: end}\n", "a", 6},
		{"a node condition in a literal block", "g.yml", head +
			"  - id: a\n    when: |\n      day >=\n    task: context.put(\"x\", 1)\n  - {id: e, type: end}\n", "a", 7},
		{"a link condition in a literal block", "g.yml", head +
			"  - id: a\n    link:\n      - nextId: e\n        when: |\n          day > 1 &&\n          day <\n  - {id: e, type: end}\n", "a", 10},
		{"a link condition under its old name", "g.yml", head +
			"  - id: a\n    link:\n      - nextId: e\n        condition: |\n          day > 1 &&\n          day <\n  - {id: e, type: end}\n", "a", 10},
		{"a JSON string is on one line", "g.json",
			"{\"id\": \"g\", \"layout\": [\n  {\"id\": \"s\", \"type\": \"start\"},\n  {\"id\": \"a\",\n   \"task\": \"context.put(\\\"x\\\", 1);\\ncontext.put(\\\"y\\\", 2 +)\"},\n  {\"id\": \"e\", \"type\": \"end\"}\n]}\n", "a", 4},
		{"a JSON document only encoding/json reads", "g.json",
			"{\"id\": \"g\", \"layout\": [\n  {\"id\": \"s\", \"type\": \"start\"},\n  {\"id\": \"a\", \"title\": \"a\\/b\",\n   \"task\": \"context.put(\\\"x\\\", 1 +)\"},\n  {\"id\": \"e\", \"type\": \"end\"}\n]}\n", "a", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := flow.LoadGraph(tt.file, []byte(tt.doc))
			require.NoError(t, err)
			err = flow.NewEngine().Register(g)
			require.ErrorIs(t, err, flow.ErrCompile)
			des := definitionErrors(t, err)
			require.Len(t, des, 1, err.Error())
			assert.Equal(t, flow.Pos{File: tt.file, Line: tt.line}, des[0].Pos, err.Error())
			assert.Equal(t, tt.node, des[0].Node)
		})
	}
}

// The context method and function checks happen after parsing, so their errors must
// carry the script position as expr's own errors do, or a problem on a later line of a
// literal block is reported at the block's first line.
func TestScriptCallErrorNamesScriptLine(t *testing.T) {
	const head = "id: g\nlayout:\n  - id: s\n    type: start\n  - id: a\n    task: |\n      context.put(\"a\", 1);\n" // lines 1-7
	for name, call := range map[string]string{
		"arity":          `context.put("x")`,
		"unknown method": `context.nope(1)`,
		"unknown func":   `nosuchfn(1)`,
	} {
		t.Run(name, func(t *testing.T) {
			g, err := flow.LoadGraph("g.yml", []byte(head+"      "+call+"\n  - {id: e, type: end}\n"))
			require.NoError(t, err)
			err = flow.NewEngine().Register(g)
			require.ErrorIs(t, err, flow.ErrCompile)
			des := definitionErrors(t, err)
			require.Len(t, des, 1, err.Error())
			assert.Equal(t, flow.Pos{File: "g.yml", Line: 8}, des[0].Pos, err.Error())
		})
	}
}

// yaml.v3 places a node at its anchor or tag, which may stand on the line before the
// literal block's indicator: the script's lines are counted from the indicator.
func TestScriptCompileErrorAnchorBeforeIndicator(t *testing.T) {
	const head = "id: g\nlayout:\n  - id: s\n    type: start\n  - id: a\n" // lines 1-5
	for name, task := range map[string]string{
		"anchor":              "    task: &x\n      |\n        a;\n        1 +\n",
		"tag":                 "    task: !!str\n      |\n        a;\n        1 +\n",
		"anchor, comment":     "    task: &x # note\n      # more\n      |\n        a;\n        1 +\n",
		"anchor and tag":      "    task: &x !!str\n      |\n        a;\n        1 +\n",
		"anchor on its line":  "    task: &x |\n\n\n        a;\n        1 +\n",
		"tag and indentation": "    task: !!str |2\n        a;\n        1 +\n",
		"anchor, CRLF":        "    task: &x\r\n      |\r\n        a;\r\n        1 +\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			g, err := flow.LoadGraph("g.yml", []byte(head+task+"  - {id: e, type: end}\n"))
			require.NoError(t, err)
			err = flow.NewEngine().Register(g)
			require.ErrorIs(t, err, flow.ErrCompile)
			des := definitionErrors(t, err)
			require.Len(t, des, 1, err.Error())
			want := 5 + strings.Count(task, "\n")
			assert.Equal(t, flow.Pos{File: "g.yml", Line: want}, des[0].Pos, err.Error())
		})
	}
}

func TestLoadErrors(t *testing.T) {
	s := flow.NewSpec("bad")
	s.Start("s").LinkTo("a")
	s.Activity("a").SetTask("@nosuch").LinkTo("b")
	s.Activity("b").SetTask(`context.put("x", `).LinkTo("e")
	s.End("e").SetWhen("@nocond")
	err := flow.NewEngine().Register(build(t, s))
	require.Error(t, err)
	assert.ErrorIs(t, err, flow.ErrUnknownTask)
	assert.ErrorIs(t, err, flow.ErrCompile)
	assert.ErrorIs(t, err, flow.ErrUnknownCond)
	assert.Contains(t, err.Error(), `"nosuch"`)

	sp := flow.NewSpec("dangling")
	sp.Start("s").LinkTo("nowhere")
	_, err = sp.Build()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `link from "s" to missing node "nowhere"`)

	dup := flow.NewSpec("dup")
	dup.Start("s")
	dup.End("s")
	_, err = dup.Build()
	assert.ErrorContains(t, err, "duplicate node id")
}
