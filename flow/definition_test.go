package flow_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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
			name: "type names ignore case; iterator is loop",
			doc: `
id: g
layout:
  - {id: a, type: START}
  - {id: b, type: iterator}
  - {id: c, type: Exclusive}`,
			want: []string{"a start -> b", "b loop -> c", "c exclusive"},
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

func TestParseDefinitionRelaxedFlowColonsKeepQuotedValuesAfterQuotedKeys(t *testing.T) {
	// A quoted (JSON-like) key may be followed by its value right after the ':'; that
	// value is quoted text the relaxation must not touch.
	spec := parse(t, `id: g
layout:
  - {"id":"s","type":"start","task":"print('k:[v]')", link:[e]}
  - {'id':'e','type':'end','title':'m:{v}',"meta":{"n":"x:[y]"}}
`)
	assert.Equal(t, []string{"s start -> e", "e end"}, topology(spec))
	assert.Equal(t, "print('k:[v]')", spec.Nodes[0].Task)
	assert.Equal(t, "m:{v}", spec.Nodes[1].Title)
	assert.Equal(t, map[string]any{"n": "x:[y]"}, spec.Nodes[1].Meta)
}

func TestParseDefinitionRelaxedFlowColonsKeepPlainContinuations(t *testing.T) {
	// A plain scalar that goes on in a deeper line is text, even where that line starts
	// like a flow collection.
	spec := parse(t, `id: g
layout:
  - {id: s, type: start, link:[a]}
  - id: a
    task: f(1,
      {k:[v]})
    link: e
  - {id: e, type: end, title: "e:[f]"}
`)
	assert.Equal(t, "f(1, {k:[v]})", spec.Nodes[1].Task)
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

// A directory named like a definition file is skipped by a directory argument and a
// glob alike; a directory's own sub-directories are never read.
func TestExpandPathsSkipsDirectories(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yml"), []byte("id: a\nlayout: [{id: s, type: start}]\n"), 0o644))
	for _, sub := range []string{"sub.yml", "sub.yaml", "sub.json"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, sub), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, sub, "b.yml"), []byte("id: b\nlayout: [{id: s, type: start}]\n"), 0o644))
	}
	want := []string{filepath.Join(dir, "a.yml")}
	for _, arg := range []string{dir, filepath.Join(dir, "*"), filepath.Join(dir, "*.y*ml")} {
		files, err := flow.ExpandPaths(arg)
		require.NoError(t, err, arg)
		assert.Equal(t, want, files, arg)
	}
	gs, err := flow.NewEngine().Load(dir)
	require.NoError(t, err)
	require.Len(t, gs, 1)
	assert.Equal(t, "a", gs[0].ID)

	only := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(only, "sub.yml"), 0o755))
	_, err = flow.ExpandPaths(only)
	assert.ErrorContains(t, err, "no definition files", "a directory with only a directory in it")
}

// A .json document that is not JSON but is YAML (unquoted keys, a trailing comma, a
// comment) loads, as Solon's lenient JSON reader loads it; the spec says where the first
// token strict JSON rejects is, for a validator to warn that other JSON tools will not
// read the file.
func TestParseDefinitionLenientJSON(t *testing.T) {
	tests := []struct {
		name, file, doc string
		want            int // line of LenientJSON, 0 for none
	}{
		{"unquoted keys", "j.json", `{"id":"j", layout: [{id: s, type: start}]}`, 1},
		{"an unquoted key further down", "j.json", "{\"id\": \"j\",\n \"layout\": [\n  {\"id\": \"s\", type: \"start\"}\n]}\n", 3},
		{"a trailing comma", "j.json", "{\"id\": \"j\",\n \"layout\": [\n  {\"id\": \"s\", \"type\": \"start\"},\n]}\n", 4},
		{"YAML in a .json file", "j.JSON", "id: j\nlayout:\n  - {id: s, type: start}\n", 1},
		{"strict JSON", "j.json", "{\"id\": \"j\",\n \"layout\": [{\"id\": \"s\", \"type\": \"start\"}]}\n", 0},
		{"strict JSON that only encoding/json reads", "j.json", "{\"id\": \"j\", \"title\": \"a\\/b\",\n \"layout\": [{\"id\": \"s\", \"type\": \"start\"}]}\n", 0},
		{"strict JSON after a byte order mark", "j.json", "\ufeff{\"id\": \"j\", \"layout\": [{\"id\": \"s\", \"type\": \"start\"}]}", 0},
		{"not a .json file", "j.yml", `{"id":"j", layout: [{id: s, type: start}]}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := flow.ParseDefinition(tt.file, []byte(tt.doc))
			require.NoError(t, err)
			assert.Equal(t, "j", spec.ID)
			want := flow.Pos{}
			if tt.want > 0 {
				want = flow.Pos{File: tt.file, Line: tt.want}
			}
			assert.Equal(t, want, spec.LenientJSON)
		})
	}
}

// TestMetaScalarsAreYAML12 pins what ParseDefinition documents: YAML 1.2 scalars, where
// SnakeYAML (YAML 1.1) would read booleans and an octal number.
func TestMetaScalarsAreYAML12(t *testing.T) {
	spec, err := flow.ParseDefinition("m.yml", []byte("id: m\nmeta: {a: yes, b: off, c: 017, d: 0o17, e: true}\nlayout:\n  - {type: start}\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"a": "yes", "b": "off", "c": 17, "d": 15, "e": true}, spec.Meta)
}

// An unknown type is an error (ParseDefinition, LoadGraph, Engine.Load); read with
// flow.SolonNodeTypes it is an activity, as in Solon, and keeps its name.
func TestUnknownNodeTypes(t *testing.T) {
	doc := "id: g\nlayout:\n  - {id: a, type: startb}\n  - {id: b, type: 7}\n"
	_, err := flow.ParseDefinition("g.yml", []byte(doc))
	require.ErrorIs(t, err, flow.ErrUnknownNodeType)
	assert.Contains(t, err.Error(), `g.yml:3: graph "g": node "a": unknown node type "startb" (did you mean start?)`)
	assert.Contains(t, err.Error(), `g.yml:4: graph "g": node "b": unknown node type "7" (the types are`)
	_, err = flow.LoadGraph("g.yml", []byte(doc))
	require.ErrorIs(t, err, flow.ErrUnknownNodeType)

	spec, err := flow.ParseDefinition("g.yml", []byte(doc), flow.SolonNodeTypes())
	require.NoError(t, err)
	assert.Equal(t, []string{"a activity -> b", "b activity"}, topology(spec))
	assert.Equal(t, "startb", spec.Nodes[0].TypeName)

	path := filepath.Join(t.TempDir(), "g.yml")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o600))
	_, err = flow.NewEngine().Load(path)
	require.ErrorIs(t, err, flow.ErrUnknownNodeType)
	gs, err := flow.NewEngine(flow.WithReadOptions(flow.SolonNodeTypes())).Load(path)
	require.NoError(t, err)
	assert.Equal(t, flow.Activity, gs[0].Node("a").Type)
}

func TestSuggestNodeType(t *testing.T) {
	for name, want := range map[string]flow.NodeType{
		"exclusiv": flow.Exclusive, "Exclusivee": flow.Exclusive, "paralel": flow.Parallel,
		"inclusve": flow.Inclusive, "strat": flow.Start, "ned": flow.End, "lop": flow.Loop, "activty": flow.Activity,
	} {
		got, ok := flow.SuggestNodeType(name)
		assert.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}
	for _, name := range []string{"gateway", "7", "task", "subprocess"} {
		_, ok := flow.SuggestNodeType(name)
		assert.False(t, ok, name)
	}
}
