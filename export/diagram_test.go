package export_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
)

const leaveDoc = `
id: leave
title: 请假审批
layout:
  - {id: s, type: start, title: 发起, link: review}
  - {id: review, title: 主管审批, task: "@review", link: g}
  - {id: g, type: exclusive, link: [
      {nextId: director, title: 三天以上, when: "day >= 3", priority: 2},
      {nextId: e, title: 其他}]}
  - {id: director, title: "总监 \"审批\"", task: 'context.put("ok", day < 10)', link: p}
  - {id: p, type: parallel, link: [hr, fin]}
  - {id: hr, title: 人事备案, link: j}
  - {id: fin, title: 财务 <核算> & 记账, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`

func leaveGraph(t *testing.T) *flow.Graph {
	t.Helper()
	g, err := flow.LoadGraph("leave.yml", []byte(strings.TrimLeft(leaveDoc, "\n")))
	require.NoError(t, err)
	return g
}

func TestPlantUML(t *testing.T) {
	out, err := export.PlantUML(leaveGraph(t))
	require.NoError(t, err)
	want := `@startuml
title 请假审批 (leave)
hide empty description
state "发起" as n0
n0 : «start»
state "主管审批" as n1
n1 : task: @review
state n2 <<choice>>
state "总监 &#34;审批&#34;" as n3
n3 : task: context.put(&#34;ok&#34;, day &#60; 10)
state n4 <<fork>>
state "人事备案" as n5
state "财务 &#60;核算&#62; &#38; 记账" as n6
state n7 <<join>>
[*] --> n0
n0 --> n1
n1 --> n2
n2 --> n3 : 三天以上 [day &#62;= 3] priority 2
n2 --> [*] : 其他
n3 --> n4
n4 --> n5
n4 --> n6
n5 --> n7
n6 --> n7
n7 --> [*]
@enduml
`
	assert.Equal(t, want, string(out))
}

func TestMermaid(t *testing.T) {
	out, err := export.Mermaid(leaveGraph(t))
	require.NoError(t, err)
	want := `---
title: "请假审批 (leave)"
---
flowchart TD
    n0(["发起<br/>«start»"])
    n1["主管审批<br/>task: @review"]
    n2{"g<br/>«exclusive»"}
    n3["总监 #quot;审批#quot;<br/>task: context.put(#quot;ok#quot;, day #lt; 10)"]
    n4{{"p<br/>«parallel»"}}
    n5["人事备案"]
    n6["财务 #lt;核算#gt; #amp; 记账"]
    n7{{"j<br/>«parallel»"}}
    n8(["e<br/>«end»"])
    n0 --> n1
    n1 --> n2
    n2 -->|"三天以上 [day #gt;= 3] priority 2"| n3
    n2 -->|"其他"| n8
    n3 --> n4
    n4 --> n5
    n4 --> n6
    n5 --> n7
    n6 --> n7
    n7 --> n8
`
	assert.Equal(t, want, string(out))
}

func TestDOT(t *testing.T) {
	out, err := export.DOT(leaveGraph(t))
	require.NoError(t, err)
	want := `digraph "leave" {
    graph [label="请假审批 (leave)", labelloc=t, rankdir=TB];
    node [shape=box, style=rounded];
    n0 [label="发起\n«start»", shape=circle, style=solid];
    n1 [label="主管审批\ntask: @review"];
    n2 [label="g\n«exclusive»", shape=diamond, style=solid];
    n3 [label="总监 \"审批\"\ntask: context.put(\"ok\", day < 10)"];
    n4 [label="p\n«parallel»", shape=diamond, style=solid];
    n5 [label="人事备案"];
    n6 [label="财务 <核算> & 记账"];
    n7 [label="j\n«parallel»", shape=diamond, style=solid];
    n8 [label="e\n«end»", shape=doublecircle, style=solid];
    n0 -> n1;
    n1 -> n2;
    n2 -> n3 [label="三天以上 [day >= 3] priority 2"];
    n2 -> n8 [label="其他"];
    n3 -> n4;
    n4 -> n5;
    n4 -> n6;
    n5 -> n7;
    n6 -> n7;
    n7 -> n8;
}
`
	assert.Equal(t, want, string(out))
}

func TestYAMLDocument(t *testing.T) {
	out, err := export.YAML(leaveGraph(t))
	require.NoError(t, err)
	assert.Equal(t, `id: leave
title: 请假审批
layout:
  - id: s
    type: start
    title: 发起
    link: review
  - id: review
    type: activity
    title: 主管审批
    task: '@review'
    link: g
  - id: g
    type: exclusive
    link:
      - nextId: director
        title: 三天以上
        when: day >= 3
        priority: 2
      - nextId: e
        title: 其他
  - id: director
    type: activity
    title: 总监 "审批"
    task: context.put("ok", day < 10)
    link: p
  - id: p
    type: parallel
    link:
      - nextId: hr
      - nextId: fin
  - id: hr
    type: activity
    title: 人事备案
    link: j
  - id: fin
    type: activity
    title: 财务 <核算> & 记账
    link: j
  - id: j
    type: parallel
    link: e
  - id: e
    type: end
`, string(out))
}

func TestWriteComponentTask(t *testing.T) {
	spec := flow.NewSpec("code")
	spec.Start("s").LinkTo("work")
	spec.Activity("work").DoFunc(nil).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)

	for _, write := range []func(*flow.Graph, ...export.WriteOption) ([]byte, error){export.YAML, export.JSON} {
		_, err = write(g)
		require.ErrorIs(t, err, export.ErrNoTextualForm)
		assert.Contains(t, err.Error(), `graph "code": node "work"`)
	}

	namer := export.WithTaskNamer(func(n *flow.Node) (string, bool) { return "doWork", n.ID == "work" })
	out, err := export.YAML(g, namer)
	require.NoError(t, err)
	assert.Contains(t, string(out), "task: '@doWork'")
	back, err := flow.ParseDefinition("code.yml", out)
	require.NoError(t, err)
	assert.Equal(t, "@doWork", back.NodeByID("work").Task)

	// Diagrams show the name, or that the task is Go code.
	puml, err := export.PlantUML(g, namer)
	require.NoError(t, err)
	assert.Contains(t, string(puml), "task: @doWork")
	mmd, err := export.Mermaid(g)
	require.NoError(t, err)
	assert.Contains(t, string(mmd), "task: (Go code)")
}

// TestWriteCalledGraph checks that a graph used as a task (flow.Call) is written as
// the "#id" reference the engine runs it like, not refused as Go code.
func TestWriteCalledGraph(t *testing.T) {
	sub := flow.NewSpec("sub")
	sub.Start("s").LinkTo("e")
	sub.End("e")
	subG, err := sub.Build()
	require.NoError(t, err)
	spec := flow.NewSpec("main")
	spec.Start("s").LinkTo("call")
	spec.Activity("call").Do(flow.Call(subG)).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)

	for _, w := range documentWriters {
		out, err := w.write(g)
		require.NoError(t, err, w.name)
		back, err := flow.ParseDefinition(w.file, out)
		require.NoError(t, err, "%s", out)
		assert.Equal(t, "#sub", back.NodeByID("call").Task, w.name)
	}
	mmd, err := export.Mermaid(g)
	require.NoError(t, err)
	assert.Contains(t, string(mmd), `n1[["call<br/>task: #35;sub"]]`)
	dot, err := export.DOT(g)
	require.NoError(t, err)
	assert.Contains(t, string(dot), `n1 [label="call\ntask: #sub", peripheries=2];`)
}

func TestWriteMetaFromCode(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	spec := flow.NewSpec("meta")
	spec.Start("s").
		SetMeta("list", []string{"a", "b"}).
		SetMeta("n", int64(7)).
		SetMeta("f", float32(0.5)).
		SetMeta("one", 1.0).
		SetMeta("m", map[string]int{"k": 1}).
		SetMeta("p", point{X: 2})
	g, err := spec.Build()
	require.NoError(t, err)
	for _, w := range documentWriters {
		out, err := w.write(g)
		require.NoError(t, err)
		back, err := flow.ParseDefinition(w.file, out)
		require.NoError(t, err)
		assert.Equal(t, map[string]any{
			"list": []any{"a", "b"}, "n": 7, "f": 0.5, "one": 1.0, "m": map[string]any{"k": 1}, "p": map[string]any{"x": 2},
		}, back.Nodes[0].Meta, w.name)
	}

	bad := flow.NewSpec("bad")
	bad.Start("s").SetMeta("ch", make(chan int))
	g, err = bad.Build()
	require.NoError(t, err)
	_, err = export.YAML(g)
	assert.ErrorContains(t, err, `graph "bad": node "s": meta "ch": chan int has no textual form`)

	nan := flow.NewSpec("nan")
	nan.Start("s").SetMeta("x", map[string]any{"y": []any{nanValue()}})
	g, err = nan.Build()
	require.NoError(t, err)
	_, err = export.JSON(g)
	assert.ErrorContains(t, err, `graph "nan": node "s": meta "x.y.0": NaN has no JSON form`)
	_, err = export.YAML(g)
	assert.NoError(t, err, "YAML has .nan")
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

func TestParseFormatAndWrite(t *testing.T) {
	for _, name := range []string{"yaml", "YML", "json", "plantuml", "puml", "mermaid", "mmd", "dot", "graphviz"} {
		f, err := export.ParseFormat(name)
		require.NoError(t, err, name)
		var b bytes.Buffer
		require.NoError(t, export.Write(&b, leaveGraph(t), f))
		assert.NotEmpty(t, b.String())
	}
	// A Format written as a name ParseFormat accepts writes that format, never nothing.
	for _, name := range []string{"YAML", "yml", "puml", "Mermaid", "gv"} {
		f, err := export.ParseFormat(name)
		require.NoError(t, err)
		var want, got bytes.Buffer
		require.NoError(t, export.Write(&want, leaveGraph(t), f))
		require.NoError(t, export.Write(&got, leaveGraph(t), export.Format(name)), name)
		assert.Equal(t, want.String(), got.String(), name)
	}
	_, err := export.ParseFormat("svg")
	assert.ErrorContains(t, err, `unknown export format "svg"`)
	assert.Error(t, export.Write(&bytes.Buffer{}, leaveGraph(t), export.Format("svg")))
}

// TestDiagramEscaping draws graphs whose ids, titles and scripts hold what diagram
// syntaxes interpret, and checks that no such text reaches the diagram unescaped.
func TestDiagramEscaping(t *testing.T) {
	spec := flow.NewSpec(`g "1" \N`)
	spec.Start(`[*] --> "end"`).SetTitle("**bold** //it// <b>x</b> ~tilde").LinkTo("end", flow.LinkWhen(`a | b # "c" %% d`))
	spec.End("end").SetTitle("line1\nline2\\n")
	g, err := spec.Build()
	require.NoError(t, err)

	puml, err := export.PlantUML(g)
	require.NoError(t, err)
	assert.NotContains(t, string(puml), "**")
	assert.NotContains(t, string(puml), "//")
	assert.NotContains(t, string(puml), "<b>")
	assert.Contains(t, string(puml), `state "line1 line2\\n" as n1`)

	mmd, err := export.Mermaid(g)
	require.NoError(t, err)
	body := string(mmd)[strings.Index(string(mmd), "flowchart"):]
	assert.NotContains(t, body, `%%`)
	assert.Contains(t, body, `n0 -->|"[a #124; b #35; #quot;c#quot; #37;#37; d]"| n1`)

	dot, err := export.DOT(g)
	require.NoError(t, err)
	assert.Contains(t, string(dot), `digraph "g \"1\" \\N" {`)
	assert.Contains(t, string(dot), `n1 [label="line1 line2\\n\n«end»"`)
}

// TestPlantUMLPreprocessorText checks that text that reads as a call of a PlantUML
// preprocessor function is shown as written, not run: "%getenv(...)" in a title would
// put an environment variable of the machine that renders the diagram into it.
func TestPlantUMLPreprocessorText(t *testing.T) {
	spec := flow.NewSpec("pre")
	spec.Start("s").SetTitle("%date()").SetTask("%getenv(HOME)").LinkTo("e", flow.LinkTitle("%version()"))
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	puml, err := export.PlantUML(g)
	require.NoError(t, err)
	assert.Contains(t, string(puml), `state "&#37;date()" as n0`)
	assert.Contains(t, string(puml), `n0 : task: &#37;getenv(HOME)`)
	assert.Contains(t, string(puml), `n0 --> [*] : &#37;version()`)
	assert.NotRegexp(t, `%[a-z]`, string(puml))

	svg := renderPlantUML(t, puml)
	assert.Contains(t, svg, ">%date()<")
	assert.Contains(t, svg, ">task: %getenv(HOME)<")
}

// renderPlantUML renders a diagram as SVG, or skips the test when plantuml is not
// installed.
func renderPlantUML(t *testing.T, puml []byte) string {
	t.Helper()
	if _, err := exec.LookPath("plantuml"); err != nil {
		t.Skip("plantuml is not installed (Debian: apt-get install plantuml): rendering is not checked")
	}
	cmd := exec.Command("plantuml", "-tsvg", "-pipe", "-charset", "UTF-8")
	cmd.Stdin = bytes.NewReader(puml)
	svg, err := cmd.Output()
	require.NoError(t, err)
	return string(svg)
}

// TestPlantUMLCreoleLineStart checks that text starting with a character that Creole
// reads at the start of a line (a bullet, a numbered item, a heading, a table, a
// separator) is shown as written.
func TestPlantUMLCreoleLineStart(t *testing.T) {
	spec := flow.NewSpec("creole")
	spec.Title = "* urgent\n  # second line"
	spec.Start("s").SetTitle("= head").SetTask("|a|b|").LinkTo("e", flow.LinkTitle("----"))
	spec.End("e").SetTitle(" . x")
	g, err := spec.Build()
	require.NoError(t, err)
	puml, err := export.PlantUML(g)
	require.NoError(t, err)
	assert.Contains(t, string(puml), "title &#42; urgent\\n  &#35; second line (creole)\n")
	assert.Contains(t, string(puml), `state "&#61; head" as n0`)
	assert.Contains(t, string(puml), "n0 : task: |a|b|\n")
	assert.Contains(t, string(puml), "n0 --> n1 : &#45;&#45;&#45;-\n")
	assert.Contains(t, string(puml), `state "&#46; x" as n1`)

	svg := renderPlantUML(t, puml)
	for _, text := range []string{">* urgent<", "># second line (creole)<", ">= head<", ">----<", ">. x<"} {
		assert.Contains(t, svg, text)
	}
}

// TestDOTCharacterEntities checks that text which reads as an HTML character entity
// is shown as written: Graphviz turns "&lt;" in a label into "<".
func TestDOTCharacterEntities(t *testing.T) {
	spec := flow.NewSpec("ent")
	spec.Start("s").SetTitle("R&amp;D &lt;team&gt;").LinkTo("e", flow.LinkWhen("a && b &#37;"))
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	dot, err := export.DOT(g)
	require.NoError(t, err)
	assert.Contains(t, string(dot), `n0 [label="R&amp;amp;D &amp;lt;team&amp;gt;\n«start»"`)
	assert.Contains(t, string(dot), `n0 -> n1 [label="[a && b &amp;#37;]"];`)

	if _, err := exec.LookPath("dot"); err != nil {
		t.Skip("dot is not installed (Debian: apt-get install graphviz): rendering is not checked")
	}
	cmd := exec.Command("dot", "-Tplain")
	cmd.Stdin = bytes.NewReader(dot)
	plain, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(plain), `"R&amp;D &lt;team&gt;\n«start»"`)
	assert.Contains(t, string(plain), `"[a && b &#37;]"`)
}

// blankDoc has text that shows nothing: a graph id of one space, a node title of
// spaces and line breaks, a node whose id is a space, and a link title that is a
// control character (which the writers turn into a space).
const blankDoc = `
id: " "
layout:
  - {id: s, type: start, title: "  \n ", link: {nextId: " ", title: "\u0001"}}
  - {id: " ", link: e}
  - {id: e, type: end, title: "\t"}
`

// TestDiagramBlankText checks that blank titles fall back to the id (quoted when the id
// is blank too) and blank link titles are left out: PlantUML rejects an empty state
// name ("state \"\" as n0"), an empty title line and a label of spaces.
func TestDiagramBlankText(t *testing.T) {
	g, err := flow.LoadGraph("blank.yml", []byte(strings.TrimLeft(blankDoc, "\n")))
	require.NoError(t, err)

	puml, err := export.PlantUML(g)
	require.NoError(t, err)
	assert.Contains(t, string(puml), "title &#34; &#34;\n")
	assert.Contains(t, string(puml), `state "s" as n0`)
	assert.Contains(t, string(puml), `state "&#34; &#34;" as n1`)
	assert.Contains(t, string(puml), `state "e" as n2`)
	assert.Contains(t, string(puml), "n0 --> n1\n")
	assert.NotContains(t, string(puml), `state ""`)

	mmd, err := export.Mermaid(g)
	require.NoError(t, err)
	assert.Contains(t, string(mmd), `n0(["s<br/>«start»"])`)
	assert.Contains(t, string(mmd), "n0 --> n1\n")

	dot, err := export.DOT(g)
	require.NoError(t, err)
	assert.Contains(t, string(dot), `n1 [label="\" \""];`)
	assert.Contains(t, string(dot), "n0 -> n1;\n")
}

// TestDiagramToolsAcceptOutput renders every corpus graph and a set of generated graphs
// full of hostile text with the real tools: PlantUML (one JVM for all files) and
// Graphviz dot. It skips when the tools are not installed.
func TestDiagramToolsAcceptOutput(t *testing.T) {
	graphs, _ := loadCorpus(t)
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 25 {
		g, err := randomSpec(r).Build()
		require.NoError(t, err)
		graphs[fmt.Sprintf("random-%02d", i)] = g
	}
	blank, err := flow.LoadGraph("blank.yml", []byte(strings.TrimLeft(blankDoc, "\n")))
	require.NoError(t, err)
	graphs["blank"] = blank
	names := make([]string, 0, len(graphs))
	for name := range graphs {
		names = append(names, name)
	}
	sort.Strings(names)
	dir := t.TempDir()
	write := func(ext string, f export.Format) []string {
		var files []string
		for i, name := range names {
			var b bytes.Buffer
			require.NoError(t, export.Write(&b, graphs[name], f), name)
			file := filepath.Join(dir, fmt.Sprintf("%03d.%s", i, ext))
			require.NoError(t, os.WriteFile(file, b.Bytes(), 0o644))
			files = append(files, file)
		}
		return files
	}
	source := func(file string) string {
		i := 0
		fmt.Sscanf(filepath.Base(file), "%03d", &i)
		return names[i]
	}

	t.Run("plantuml", func(t *testing.T) {
		if _, err := exec.LookPath("plantuml"); err != nil {
			t.Skip("plantuml is not installed (Debian: apt-get install plantuml): PlantUML output is not checked")
		}
		files := write("puml", export.FormatPlantUML)
		out, err := exec.Command("plantuml", append([]string{"-checkonly", "-charset", "UTF-8"}, files...)...).CombinedOutput()
		if err == nil {
			return
		}
		// -checkonly does not say which file failed; rendering does.
		render, _ := exec.Command("plantuml", append([]string{"-tsvg", "-charset", "UTF-8", "-o", filepath.Join(dir, "svg")}, files...)...).CombinedOutput()
		msg := string(out) + string(render)
		for _, m := range regexp.MustCompile(`in file: (\S+)`).FindAllStringSubmatch(msg, -1) {
			data, _ := os.ReadFile(m[1])
			msg += fmt.Sprintf("\n%s is %s:\n%s", m[1], source(m[1]), data)
		}
		t.Fatalf("plantuml rejects the output: %v\n%s", err, msg)
	})
	t.Run("dot", func(t *testing.T) {
		if _, err := exec.LookPath("dot"); err != nil {
			t.Skip("dot is not installed (Debian: apt-get install graphviz): DOT output is not checked")
		}
		files := write("dot", export.FormatDOT)
		cmd := exec.Command("dot", append([]string{"-Tsvg"}, files...)...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = nil, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			msg := stderr.String()
			for _, m := range regexp.MustCompile(`Error: (\S+): `).FindAllStringSubmatch(msg, -1) {
				data, _ := os.ReadFile(m[1])
				msg += fmt.Sprintf("\n%s is %s:\n%s", m[1], source(m[1]), data)
			}
			t.Fatalf("dot rejects the output: %v\n%s", err, msg)
		}
	})
}
