package flow_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// corpusDir holds the 58 definition documents Solon Flow 4.0.3 ships as test resources.
// shared/ sits beside the repository, locally and in CI.
const corpusDir = "../../shared/corpus/solon-flow"

// corpusWithoutStartType lists the files that have no node of type start (test3_sub
// writes "startb" and "endb", which read as activities). Build starts them, as Solon's
// Graph does, at the first node no link enters: in each of these, the first entry.
var corpusWithoutStartType = []string{
	"solon-flow-eval-aviator__flow__case1.yml",
	"solon-flow-eval-beetl__flow__case1.yml",
	"solon-flow-eval-magic__flow__case1.yml",
	"solon-flow-workflow__flow__workflow__sf1.yml",
	"solon-flow-workflow__flow__workflow__sf2.yml",
	"solon-flow-workflow__flow__workflow__test2.graph.yml",
	"solon-flow-workflow__flow__workflow__test3_sub.graph.yml", // types "startb" and "endb"
	"solon-flow__benchmark__case1.yml",
	"solon-flow__benchmark__case2.yml",
	"solon-flow__demo__async__async_case1.chain.yml",
	"solon-flow__flow__event_case1.yml",
	"solon-flow__flow__loop-demo1-fetch.yml",
	"solon-flow__flow__loop-demo1-fetch_full.yml",
	"solon-flow__flow__loop-demo2.yml",
	"solon-flow__flow__loop-demo3.yml",
	"solon-flow__flow__loop-demo4.yml",
	"solon-flow__flow__loop-demo5.yml",
	"solon-flow__flow__rule__bookDiscount.yml",
	"solon-flow__flow__script_case1.graph.json",
	"solon-flow__flow__sf1.yml",
	"solon-flow__flow__sf2.yml",
	"solon-flow__lab__fetch-demo-loop.yml",
	"solon-flow__lab__fetch-demo-loop_full.yml",
	"solon-flow__lab__fetch-demo-script.yml",
}

// located is an expected *DefinitionError: its line, node and a part of its message.
type located struct {
	line int
	node string
	msg  string
}

// corpusParseErrors are the files ParseDefinition rejects.
var corpusParseErrors = map[string]located{
	// A "chains:" document from Solon's lab folder: several graphs and no layout.
	"solon-flow__lab__fetch-demo-chains.yml": {1, "", `no "layout": expected a list of nodes`},
}

// corpusBuildErrors are the files that parse but do not build.
var corpusBuildErrors = map[string][]located{
	// CallUser and LeaveInLocker link to "xx", which the document never defines.
	"solon-flow__flow__rule__BehaviorTree.MainTree.yml": {
		{13, "CallUser", `link from "CallUser" to missing node "xx"`},
		{14, "LeaveInLocker", `link from "LeaveInLocker" to missing node "xx"`},
	},
}

func corpusFiles(t testing.TB) []string {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("definition corpus not found at %s (shared/ must sit beside the repository): %v", corpusDir, err)
	}
	files, err := filepath.Glob(filepath.Join(corpusDir, "*"))
	require.NoError(t, err)
	require.Len(t, files, 58)
	return files
}

// TestCorpus reads the corpus as Solon reads it (flow.SolonNodeTypes: test3_sub's
// "startb" and "endb" are activities); TestCorpusUnknownTypes reads it by default.
func TestCorpus(t *testing.T) {
	loaded := 0
	for _, path := range corpusFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			spec, err := flow.ReadDefinitionFile(path, flow.SolonNodeTypes())
			if want, ok := corpusParseErrors[name]; ok {
				require.Error(t, err)
				assertLocated(t, path, err, []located{want})
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, spec.Nodes)
			for _, n := range spec.Nodes {
				assert.Equal(t, path, n.Pos.File)
				assert.Positive(t, n.Pos.Line, n.ID)
				for _, l := range n.Links {
					assert.Equal(t, path, l.Pos.File)
					assert.Positive(t, l.Pos.Line, "%s -> %s", n.ID, l.NextID)
				}
			}

			g, err := spec.Build()
			if want, ok := corpusBuildErrors[name]; ok {
				require.Error(t, err)
				assertLocated(t, path, err, want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, path, g.Source)
			assert.Len(t, g.Nodes(), len(spec.Nodes))
			if slices.Contains(corpusWithoutStartType, name) {
				assert.Same(t, g.Nodes()[0], g.Start(), "no start type: the first node no link enters")
			} else {
				assert.Equal(t, flow.Start, g.Start().Type)
			}
			loaded++
		})
	}
	assert.Equal(t, 56, loaded, "files that load")
}

// assertLocated checks that err holds exactly the expected errors, each naming the file,
// the line and the node.
func assertLocated(t *testing.T, path string, err error, want []located) {
	t.Helper()
	got := definitionErrors(t, err)
	require.Len(t, got, len(want), "errors: %v", err)
	for i, w := range want {
		assert.Equal(t, flow.Pos{File: path, Line: w.line}, got[i].Pos)
		assert.Equal(t, w.node, got[i].Node)
		assert.Contains(t, got[i].Msg, w.msg)
		assert.Contains(t, got[i].Error(), path+":"+strconv.Itoa(w.line)+": ")
	}
}

// TestCorpusUnknownTypes reads the corpus without flow.SolonNodeTypes: test3_sub, the
// only file naming types the engine does not know, is refused with a suggestion for
// each; every other file reads as it does with the option.
func TestCorpusUnknownTypes(t *testing.T) {
	const sub = "solon-flow-workflow__flow__workflow__test3_sub.graph.yml"
	for _, path := range corpusFiles(t) {
		name := filepath.Base(path)
		spec, err := flow.ReadDefinitionFile(path)
		solon, solonErr := flow.ReadDefinitionFile(path, flow.SolonNodeTypes())
		if name == sub {
			require.ErrorIs(t, err, flow.ErrUnknownNodeType)
			assertLocated(t, path, err, []located{
				{4, "s", `unknown node type "startb" (did you mean start?)`},
				{11, "e", `unknown node type "endb" (did you mean end?)`},
			})
			require.NoError(t, solonErr)
			continue
		}
		assert.Equal(t, solon, spec, name)
		assert.Equal(t, solonErr, err, name)
	}
}

func TestCorpusStartTypes(t *testing.T) {
	var without []string
	for _, path := range corpusFiles(t) {
		spec, err := flow.ReadDefinitionFile(path, flow.SolonNodeTypes())
		if err != nil {
			continue
		}
		if !slices.ContainsFunc(spec.Nodes, func(n *flow.NodeSpec) bool { return n.Type == flow.Start }) {
			without = append(without, filepath.Base(path))
		}
	}
	assert.ElementsMatch(t, corpusWithoutStartType, without)
}

// TestCorpusTopology checks details worked out by reading the documents.
func TestCorpusTopology(t *testing.T) {
	corpusFiles(t)
	read := func(t *testing.T, name string) *flow.GraphSpec {
		t.Helper()
		spec, err := flow.ReadDefinitionFile(filepath.Join(corpusDir, name), flow.SolonNodeTypes())
		require.NoError(t, err)
		return spec
	}
	build := func(t *testing.T, name string) *flow.Graph {
		t.Helper()
		g, err := read(t, name).Build()
		require.NoError(t, err)
		return g
	}
	targets := func(n *flow.Node) (out []string) {
		for _, l := range n.Links() {
			out = append(out, l.To)
		}
		return out
	}

	t.Run("benchmark case1: an unnamed exclusive first node", func(t *testing.T) {
		spec := read(t, "solon-flow__benchmark__case1.yml")
		assert.Equal(t, "case1", spec.ID)
		assert.Equal(t, []string{
			"n-1 exclusive -> sum?a > b, sub",
			"sum activity -> end",
			"sub activity -> end",
			"end end",
		}, topology(spec))
		assert.Equal(t, `context.put("result", a + b);`, spec.NodeByID("sum").Task)
		assert.Equal(t, 6, spec.Nodes[0].Links[0].Pos.Line)
	})

	t.Run("demo1_case1: Solon's link:[ in a flow mapping, default link first", func(t *testing.T) {
		g := build(t, "solon-flow__demo__approve__demo1_case1.chain.yml")
		assert.Len(t, g.Nodes(), 5)
		g1 := g.Node("g1")
		assert.Equal(t, flow.Exclusive, g1.Type)
		assert.Equal(t, []string{"e", "n2"}, targets(g1), "equal priorities keep document order")
		assert.Equal(t, "day>=3", g1.Links()[1].When)
		assert.Equal(t, "3天以上", g1.Links()[1].Title)
		assert.Equal(t, 8, g1.Links()[1].Pos.Line)
		assert.Equal(t, map[string]any{"role": "employee"}, g.Node("s").Meta)
	})

	t.Run("flow_case8: type:end without a space is a key of its own, as in SnakeYAML", func(t *testing.T) {
		g := build(t, "solon-flow__flow__flow_case8.graph.yml")
		assert.Len(t, g.Nodes(), 13)
		assert.Equal(t, "n-1", g.Start().ID)
		assert.Equal(t, []string{"s1"}, targets(g.Start()))
		assert.Equal(t, []string{"s3_2_1", "s3_2_2"}, targets(g.Node("s3_2")))
		assert.Equal(t, flow.Activity, g.Node("end").Type)
		assert.Empty(t, g.Node("end").Links())
		assert.Equal(t, `"type1".equals(dataType)`, g.Node("s3").Links()[1].When)
	})

	t.Run("script_case7: condition links, auto ids and fall-through", func(t *testing.T) {
		g := build(t, "solon-flow__flow__script_case7.graph.yml")
		assert.Len(t, g.Nodes(), 17)
		assert.Equal(t, "n-1", g.Start().ID)
		assert.Equal(t, []string{"n-2"}, targets(g.Start()))
		assert.Equal(t, []string{"g1"}, targets(g.Node("n-2")))
		assert.Equal(t, []string{"n1", "n2", "g2"}, targets(g.Node("g1")))
		assert.Equal(t, "day>=7", g.Node("g1").Links()[2].When)
		assert.Equal(t, []string{"n-16"}, targets(g.Node("g6")), "no link: the next entry")
		assert.Equal(t, []string{"n-17"}, targets(g.Node("n-16")))
		assert.Equal(t, flow.End, g.Node("n-17").Type)
		assert.Len(t, g.Node("g6").Incoming(), 3)
		assert.Equal(t, "$scrip1", g.Node("n7").Task)
		assert.Equal(t, `context.put("result", result + 1);`+"\n", g.Meta["scrip1"], "meta keeps text as written")
	})

	t.Run("demo9: designer output with edge ids and coordinates", func(t *testing.T) {
		g := build(t, "solon-flow__demo__approve__demo9.yml")
		assert.Len(t, g.Nodes(), 25)
		assert.Equal(t, "node_jv3mlpklr7", g.Start().ID)
		n := g.Node("node_gafawjnscd")
		assert.Equal(t, []string{"node_xii9vk366", "node_wc3rqnwu3q", "node_i58vufmyx"}, targets(n))
		assert.Equal(t, "重庆分公司", n.Links()[2].Title)
		assert.Len(t, g.Node("node_hjni8g5kc").Incoming(), 8)
	})

	t.Run("data_case1: empty task and when, end with link: []", func(t *testing.T) {
		g := build(t, "solon-flow__demo__data__data_case1.chain.yml")
		assert.Len(t, g.Nodes(), 16)
		n := g.Node("node_q3ckud12a")
		assert.Equal(t, []string{"node_jwqd16npks", "node_og47oihg8k", "node_hyuonxowpc"}, targets(n))
		assert.Empty(t, n.Task)
		assert.Nil(t, n.Meta)
		assert.Empty(t, g.Node("node_k3sehpb9vi").Links())
	})

	t.Run("com: the same graph in JSON and YAML, integer meta", func(t *testing.T) {
		js := build(t, "solon-flow__flow__com.graph.json")
		yml := build(t, "solon-flow__flow__com.graph.yml")
		want := map[string]any{"a": 1, "b": []any{}}
		assert.Equal(t, want, js.Node("n2").Meta)
		assert.Equal(t, want, yml.Node("n-2").Meta)
		assert.Equal(t, 5, js.Node("n2").Pos.Line)
		assert.Equal(t, []string{"n-3"}, targets(yml.Node("n-2")))
	})

	t.Run("loop-demo3: $in is a list of ints", func(t *testing.T) {
		spec := read(t, "solon-flow__flow__loop-demo3.yml")
		assert.Equal(t, []string{"n-1 loop -> n-2", "n-2 activity"}, topology(spec))
		assert.Equal(t, map[string]any{flow.MetaFor: "itemId", flow.MetaIn: []any{1, 2, 3}}, spec.Nodes[0].Meta)
	})

	t.Run("script_case8: nested graph meta", func(t *testing.T) {
		g := build(t, "solon-flow__flow__script_case8.graph.yml")
		v, ok := g.MetaValue("script.script1")
		assert.True(t, ok)
		assert.Equal(t, `context.put("result", result + 1);`+"\n", v)
	})

	t.Run("DeliverFood: unnamed gateway, links in document order", func(t *testing.T) {
		g := build(t, "solon-flow__flow__rule__BehaviorTree.DeliverFood.yml")
		assert.Equal(t, []string{"PressIntercom", "CallUser", "LeaveInLocker"}, targets(g.Node("n-2")))
		assert.Equal(t, []string{"n-7"}, targets(g.Node("CompleteDelivery")))
		assert.Equal(t, "IsAtDestination", g.Node("CompleteDelivery").When)
	})

	t.Run("test3_sub: startb and endb are unknown types, so activities", func(t *testing.T) {
		g := build(t, "solon-flow-workflow__flow__workflow__test3_sub.graph.yml")
		assert.Len(t, g.Nodes(), 8)
		assert.Equal(t, flow.Activity, g.Node("s").Type)
		assert.Equal(t, flow.Activity, g.Node("e").Type)
		assert.Equal(t, "s", g.Start().ID)
		assert.Equal(t, []string{"n0"}, targets(g.Start()))
	})
}
