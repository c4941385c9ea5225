package export_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
)

const corpusDir = "../../shared/corpus/solon-flow"

// corpusFiles returns the corpus definition files, or skips the test when the corpus is
// not beside the repository.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*"))
	if len(files) == 0 {
		t.Skipf("the Solon Flow corpus is not at %s (it lives in shared/corpus beside the repository)", corpusDir)
	}
	return files
}

// loadCorpus returns the graphs of the corpus files that load, keyed by file name, and
// the loader error of every other file.
func loadCorpus(t testing.TB) (graphs map[string]*flow.Graph, rejected map[string]error) {
	t.Helper()
	graphs, rejected = map[string]*flow.Graph{}, map[string]error{}
	for _, file := range corpusFiles(t) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		g, err := flow.LoadGraph(filepath.Base(file), data, flow.SolonNodeTypes())
		if err != nil {
			rejected[filepath.Base(file)] = err
			continue
		}
		graphs[filepath.Base(file)] = g
	}
	return graphs, rejected
}

// writer is one document writer under test, with the file name the reader sees.
type writer struct {
	name  string
	file  string
	write func(*flow.Graph, ...export.WriteOption) ([]byte, error)
}

var documentWriters = []writer{
	{"yaml", "roundtrip.yml", export.YAML},
	{"json", "roundtrip.json", export.JSON},
}

// roundTrip writes g, reads the document back and checks that the spec, the built
// topology and a second writing are all the same.
func roundTrip(t *testing.T, g *flow.Graph, w writer) {
	t.Helper()
	data, err := w.write(g)
	require.NoError(t, err)
	spec, err := flow.ParseDefinition(w.file, data)
	require.NoError(t, err, "the %s writer's output does not read back:\n%s", w.name, data)
	if d := diffSpecs(g.Spec(), spec); d != "" {
		t.Fatalf("%s round trip changed the graph:\n%s\ndocument:\n%s", w.name, d, data)
	}
	g2, err := spec.Build()
	require.NoError(t, err, "%s", data)
	if d := diffTopology(g, g2); d != "" {
		t.Fatalf("%s round trip changed the topology:\n%s\ndocument:\n%s", w.name, d, data)
	}
	again, err := w.write(g2)
	require.NoError(t, err)
	require.Equal(t, string(data), string(again), "writing the graph read back gives other bytes")
}

func TestCorpusRoundTrip(t *testing.T) {
	graphs, rejected := loadCorpus(t)
	t.Logf("%d corpus files load, %d are rejected by the reader or builder", len(graphs), len(rejected))
	for name, err := range rejected {
		t.Logf("rejected %s: %v", name, err)
		// A rejection names its file; the reader's also give the line.
		var de *flow.DefinitionError
		require.True(t, errors.As(err, &de), "%s: %v", name, err)
		assert.Equal(t, name, de.Pos.File)
	}
	require.NotEmpty(t, graphs)
	for name, g := range graphs {
		for _, w := range documentWriters {
			t.Run(name+"/"+w.name, func(t *testing.T) { roundTrip(t, g, w) })
		}
	}
}

func TestCorpusDiagramsAreDeterministic(t *testing.T) {
	graphs, _ := loadCorpus(t)
	for name, g := range graphs {
		for _, f := range export.Formats() {
			var a, b strings.Builder
			require.NoError(t, export.Write(&a, g, f), "%s as %s", name, f)
			require.NoError(t, export.Write(&b, g, f))
			require.Equal(t, a.String(), b.String(), "%s as %s", name, f)
			require.NotEmpty(t, a.String())
		}
	}
}

// TestRandomGraphsRoundTrip is a property test: for graphs generated with every kind
// of attribute and the strings YAML and JSON find hardest (quotes, indicators, line
// breaks, numbers and booleans written as strings, "<<", control characters), both
// documents read back as the same graph.
func TestRandomGraphsRoundTrip(t *testing.T) {
	const seed = 20250601
	n := 600 // kept small for the race-enabled CI run; EXPORT_ROUNDTRIP_N=20000 runs more
	if testing.Short() {
		n = 150
	}
	if v, err := strconv.Atoi(os.Getenv("EXPORT_ROUNDTRIP_N")); err == nil && v > 0 {
		n = v
	}
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range n {
		spec := randomSpec(r)
		g, err := spec.Build()
		require.NoError(t, err, "generated spec #%d does not build", i)
		for _, w := range documentWriters {
			t.Run(fmt.Sprintf("%d/%s", i, w.name), func(t *testing.T) { roundTrip(t, g, w) })
		}
	}
}

// diffSpecs describes how two specs differ in what a definition document holds (not
// positions or the source file); "" means they are the same.
func diffSpecs(want, got *flow.GraphSpec) string {
	var d []string
	add := func(format string, args ...any) { d = append(d, fmt.Sprintf(format, args...)) }
	if want.ID != got.ID || want.Title != got.Title || want.Driver != got.Driver {
		add("graph: id/title/driver %q/%q/%q, want %q/%q/%q", got.ID, got.Title, got.Driver, want.ID, want.Title, want.Driver)
	}
	if !metaEqual(want.Meta, got.Meta) {
		add("graph meta: %#v, want %#v", got.Meta, want.Meta)
	}
	if len(want.Nodes) != len(got.Nodes) {
		add("%d nodes, want %d", len(got.Nodes), len(want.Nodes))
		return strings.Join(d, "\n")
	}
	for i, w := range want.Nodes {
		g := got.Nodes[i]
		if w.ID != g.ID || w.Type != g.Type || w.Title != g.Title || w.When != g.When || w.Task != g.Task {
			add("node #%d: %q %v title %q when %q task %q, want %q %v title %q when %q task %q",
				i, g.ID, g.Type, g.Title, g.When, g.Task, w.ID, w.Type, w.Title, w.When, w.Task)
		}
		if !metaEqual(w.Meta, g.Meta) {
			add("node %q meta: %#v, want %#v", w.ID, g.Meta, w.Meta)
		}
		if len(w.Links) != len(g.Links) {
			add("node %q: %d links, want %d", w.ID, len(g.Links), len(w.Links))
			continue
		}
		for j, wl := range w.Links {
			gl := g.Links[j]
			if wl.NextID != gl.NextID || wl.Title != gl.Title || wl.When != gl.When || wl.Priority != gl.Priority || !metaEqual(wl.Meta, gl.Meta) {
				add("node %q link #%d: %+v, want %+v", w.ID, j, gl, wl)
			}
		}
	}
	return strings.Join(d, "\n")
}

func metaEqual(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return valueEqual(a, b)
}

// valueEqual is reflect.DeepEqual for meta values, except that NaN equals NaN (a
// definition may hold .nan).
func valueEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) || (a == nil) != (b == nil) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !valueEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !valueEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case float64:
		b, ok := b.(float64)
		return ok && (a == b || math.IsNaN(a) && math.IsNaN(b))
	}
	return reflect.DeepEqual(a, b)
}

// diffTopology compares built graphs: start, nodes and their links in priority order.
func diffTopology(want, got *flow.Graph) string {
	var d []string
	if want.Start().ID != got.Start().ID {
		d = append(d, fmt.Sprintf("start %q, want %q", got.Start().ID, want.Start().ID))
	}
	for _, wn := range want.Nodes() {
		gn := got.Node(wn.ID)
		if gn == nil {
			d = append(d, fmt.Sprintf("node %q is missing", wn.ID))
			continue
		}
		if len(gn.Links()) != len(wn.Links()) || len(gn.Incoming()) != len(wn.Incoming()) {
			d = append(d, fmt.Sprintf("node %q: %d links in, %d out, want %d, %d", wn.ID, len(gn.Incoming()), len(gn.Links()), len(wn.Incoming()), len(wn.Links())))
			continue
		}
		for i, wl := range wn.Links() {
			if gl := gn.Links()[i]; gl.To != wl.To || gl.Priority != wl.Priority || gl.When != wl.When {
				d = append(d, fmt.Sprintf("node %q link #%d: to %q priority %d when %q, want %q %d %q", wn.ID, i, gl.To, gl.Priority, gl.When, wl.To, wl.Priority, wl.When))
			}
		}
	}
	return strings.Join(d, "\n")
}

// hardStrings are strings that YAML and JSON writers get wrong most easily.
var hardStrings = []string{
	"a", "审批", "请假 审批", "n-1", "5", "-7", "0x10", "1e3", "1.0", ".5", "true", "False", "yes", "no",
	"on", "off", "null", "~", "Null", "-", "- a", "? x", ": x", "a: b", "a:b", "#c", "a #c", "@task",
	"#graph", "$meta", "&anchor", "*alias", "!tag", "%dir", "|", ">", "'q'", `"dq"`, "it's", `a\b`,
	`\n`, "<<", "{", "}", "[a, b]", ",", "`x`", "=", "---", "...", "a\nb", "a\n", "\n", "line1\nline2\n\nline4",
	"  indented\n  block", " lead", "trail ", "\ttab", "a\tb", "a\r\nb", "a\rb", "\x01ctl", "del\x7f",
	"nel\u0085x", "ls\u2028x", "ps\u2029x", "\ufeffbom", "emoji 😀", "a  b", "2001-12-14", "12:30:45",
	"1_000", "+1", ".inf", ".NaN", "0o17", "0b101", "=x", "!!str", "%TAG", "a: {b: c}", "x # not a comment",
	strings.Repeat("长", 300), strings.Repeat("x", 1100), "end", "graph", "subgraph", "-->", "[*]", "@enduml",
}

func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

func randomString(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return pick(r, hardStrings) + pick(r, hardStrings)
	case 1:
		b := make([]rune, 1+r.IntN(12))
		for i := range b {
			b[i] = rune(0x20 + r.IntN(0x60))
			if r.IntN(10) == 0 {
				b[i] = rune(0x4e00 + r.IntN(0x100))
			}
		}
		return string(b)
	}
	return pick(r, hardStrings)
}

// maybe returns a random string half of the time, else "".
func maybe(r *rand.Rand, trim bool) string {
	if r.IntN(2) == 0 {
		return ""
	}
	s := randomString(r)
	if trim {
		// The reader trims task and when, as Solon does.
		s = strings.TrimSpace(s)
	}
	return s
}

func randomMeta(r *rand.Rand, depth int) map[string]any {
	if r.IntN(3) == 0 {
		return nil
	}
	m := map[string]any{}
	for range 1 + r.IntN(4) {
		k := randomString(r)
		if r.IntN(8) == 0 {
			k = pick(r, []string{"", "<<", "$for", "$in", "branchPolicy"})
		}
		m[k] = randomValue(r, depth)
	}
	return m
}

func randomValue(r *rand.Rand, depth int) any {
	n := 7
	if depth >= 3 {
		n = 5
	}
	switch r.IntN(n) {
	case 0:
		return randomString(r)
	case 1:
		return pick(r, []int{0, 1, -1, 42, math.MaxInt64, math.MinInt64, 1 << 53, 3000000000})
	case 2:
		return pick(r, []float64{0.5, 1.0, -2.0, 1e21, 1e-7, math.SmallestNonzeroFloat64, math.MaxFloat64, 3.14159, -0.0})
	case 3:
		return r.IntN(2) == 0
	case 4:
		return nil
	case 5:
		list := make([]any, r.IntN(4))
		for i := range list {
			list[i] = randomValue(r, depth+1)
		}
		return list
	}
	m := randomMeta(r, depth+1)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// randomSpec generates a graph that builds: unique non-empty ids, a start node, links
// to existing nodes, every attribute set at random.
func randomSpec(r *rand.Rand) *flow.GraphSpec {
	spec := flow.NewSpec(randomString(r))
	spec.Title, spec.Driver, spec.Meta = maybe(r, false), maybe(r, false), randomMeta(r, 0)
	n := 1 + r.IntN(10)
	ids := map[string]bool{}
	startAt := r.IntN(n)
	for i := range n {
		id := randomString(r)
		for ids[id] || id == "" {
			id = randomString(r) + fmt.Sprint(i)
		}
		ids[id] = true
		t := flow.NodeType(r.IntN(int(flow.Loop) + 1))
		if i == startAt {
			t = flow.Start
		}
		ns := spec.Node(id, t)
		ns.Title, ns.When, ns.Task, ns.Meta = maybe(r, false), maybe(r, true), maybe(r, true), randomMeta(r, 0)
	}
	for _, ns := range spec.Nodes {
		for range r.IntN(4) {
			target := spec.Nodes[r.IntN(n)].ID
			var opts []flow.LinkOption
			if s := maybe(r, false); s != "" {
				opts = append(opts, flow.LinkTitle(s))
			}
			if s := maybe(r, true); s != "" {
				opts = append(opts, flow.LinkWhen(s))
			}
			if r.IntN(2) == 0 {
				opts = append(opts, flow.LinkPriority(pick(r, []int{-1, 1, 2, 100, math.MaxInt64, math.MinInt64})))
			}
			if m := randomMeta(r, 1); m != nil {
				for k, v := range m {
					opts = append(opts, flow.LinkMeta(k, v))
				}
			}
			ns.LinkTo(target, opts...)
		}
	}
	return spec
}

// hardDoc holds, in one document, what the round trip must keep: meta of every JSON
// kind (nested maps and lists, integers, floats, booleans, null, empty containers),
// strings that read as something else when unquoted, text with quotes, line breaks,
// "#", ":", unicode and surrounding spaces, and links with title, when, priority and
// meta.
const hardDoc = `
id: hard
title: "  spaced title  "
meta:
  strs: ["yes", "no", "on", "off", "0x10", "1e3", "~", "", "null", "true", "1.0", "-", "#x", "a: b", "<<"]
  nums: [0, -1, 9223372036854775807, 0.5, 1.0, 1e300, -2.5e-7]
  bools: [true, false]
  nothing: null
  empty: {list: [], map: {}}
  nested: {a: {b: [1, {c: "d"}, [true, null]]}}
layout:
  - {id: "yes", type: start, title: " lead", link: [
      {nextId: "0x10", title: "trail ", when: 'name == "a#b: c"', priority: 2, meta: {w: 1.5, on: "on"}},
      {nextId: "~", when: "n > 1", priority: -3},
      {nextId: "1e3"}]}
  - id: "0x10"
    title: "多行\n标题"
    task: |
      context.put("k", "it's \"quoted\" # not a comment");
      context.put("v", 'x: y');
    link: "1e3"
  - {id: "~", task: "@some.task", meta: {"": "empty key", " ": " space "}, link: "1e3"}
  - {id: "1e3", type: end, title: ""}
`

// TestRoundTripHardValues writes hardDoc in both formats and checks that it reads back
// the same, with every value of the type it had.
func TestRoundTripHardValues(t *testing.T) {
	spec, err := flow.ParseDefinition("hard.yml", []byte(strings.TrimLeft(hardDoc, "\n")))
	require.NoError(t, err)
	// What the reader made of the document, worked out from the document itself.
	require.Equal(t, "  spaced title  ", spec.Title)
	require.Equal(t, []any{"yes", "no", "on", "off", "0x10", "1e3", "~", "", "null", "true", "1.0", "-", "#x", "a: b", "<<"}, spec.Meta["strs"])
	require.Equal(t, []any{0, -1, math.MaxInt64, 0.5, 1.0, 1e300, -2.5e-7}, spec.Meta["nums"])
	require.Equal(t, map[string]any{"list": []any{}, "map": map[string]any{}}, spec.Meta["empty"])
	require.Contains(t, spec.Meta, "nothing")
	require.Nil(t, spec.Meta["nothing"])
	require.Equal(t, "context.put(\"k\", \"it's \\\"quoted\\\" # not a comment\");\ncontext.put(\"v\", 'x: y');", spec.NodeByID("0x10").Task)
	l := spec.NodeByID("yes").Links[0]
	require.Equal(t, flow.LinkSpec{NextID: "0x10", Title: "trail ", When: `name == "a#b: c"`, Priority: 2,
		Meta: map[string]any{"w": 1.5, "on": "on"}, Pos: l.Pos, WhenPos: l.WhenPos}, l)
	g, err := spec.Build()
	require.NoError(t, err)
	for _, w := range documentWriters {
		t.Run(w.name, func(t *testing.T) { roundTrip(t, g, w) })
	}
}

// TestRoundTripDeepMeta checks that meta nested as deeply as the reader accepts (the
// YAML parser stops at 10000 levels) is written and reads back, and that the
// documents grow with the depth, not with its square (block style and JSON
// indentation add a level of indentation per level).
func TestRoundTripDeepMeta(t *testing.T) {
	deepest := func(open, leaf, closing string) *flow.Graph {
		for d := 10000; d > 9900; d-- {
			doc := "id: deep\nlayout:\n  - {id: s, type: start, meta: {a: " + strings.Repeat(open, d) + leaf + strings.Repeat(closing, d) + "}}\n"
			if g, err := flow.LoadGraph("deep.yml", []byte(doc)); err == nil {
				return g
			}
		}
		t.Fatal("the reader loads no meta nested 9900 levels deep")
		return nil
	}
	for name, g := range map[string]*flow.Graph{"lists": deepest("[", "", "]"), "maps": deepest("{b: ", "1", "}")} {
		for _, w := range documentWriters {
			t.Run(name+"/"+w.name, func(t *testing.T) {
				out, err := w.write(g)
				require.NoError(t, err)
				assert.Less(t, len(out), 100_000)
				roundTrip(t, g, w)
			})
		}
	}
}

// TestRoundTripDeepJSONMeta checks that meta nested as deeply as the reader accepts in a
// JSON document (which it reads with a few more levels than YAML allows) is written too.
func TestRoundTripDeepJSONMeta(t *testing.T) {
	var g *flow.Graph
	for d := 10010; d > 9990 && g == nil; d-- {
		doc := `{"id": "deep", "meta": {"a": ` + strings.Repeat("[", d) + strings.Repeat("]", d) +
			`}, "layout": [{"id": "s", "type": "start"}]}`
		g, _ = flow.LoadGraph("deep.json", []byte(doc))
	}
	require.NotNil(t, g, "the reader loads no JSON meta nested 9990 levels deep")
	for _, w := range documentWriters {
		t.Run(w.name, func(t *testing.T) { roundTrip(t, g, w) })
	}
}

// TestWriteTooDeepMetaNamesAShortPath checks that meta nested beyond what a document
// can hold is refused with an error whose path is shortened: the full path of 20000
// levels took tens of kilobytes, and building it level by level memory quadratic in
// the depth.
func TestWriteTooDeepMetaNamesAShortPath(t *testing.T) {
	var v any = "leaf"
	for range 20000 {
		v = map[string]any{"k": v}
	}
	spec := flow.NewSpec("deep")
	spec.Meta = map[string]any{"a": v}
	spec.Start("s")
	g, err := spec.Build()
	require.NoError(t, err)
	for _, w := range documentWriters {
		_, err := w.write(g)
		require.Error(t, err, w.name)
		msg := err.Error()
		assert.Contains(t, msg, "nested too deeply", w.name)
		assert.Contains(t, msg, `"a.k.k`, w.name)
		assert.Less(t, len(msg), 400, "%s: %.300s", w.name, msg)
	}
}
