package export

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// Mermaid writes g as a Mermaid "flowchart TD", with the graph's caption as front-matter
// title. Start and end nodes are stadiums, exclusive gateways rhombi, parallel and
// inclusive gateways hexagons, loop nodes trapezoids, sub-graph calls subroutines and
// activities rectangles; every node but an activity names its type. Links are labelled
// "title [when] priority N". Nodes are aliased n0, n1, ... and every label is quoted
// with Mermaid's entity codes for the characters it would otherwise interpret.
func Mermaid(g *flow.Graph, opts ...WriteOption) ([]byte, error) {
	cfg := newWriteConfig(opts)
	nodes, alias := diagramNodes(g, cfg)
	var b bytes.Buffer
	b.WriteString("---\ntitle: ")
	appendJSONString(&b, strings.Join(clip(graphCaption(g), 1), " "))
	b.WriteString("\n---\nflowchart TD\n")
	for _, d := range nodes {
		n := d.n
		lines := []string{d.name}
		if n.Type != flow.Activity {
			lines = append(lines, typeLabel(n.Type))
		}
		lines = append(lines, d.lines...)
		for i, l := range lines {
			lines[i] = mmdText(l)
		}
		label := `"` + strings.Join(lines, "<br/>") + `"`
		open, closing := "[", "]"
		switch {
		case n.Type == flow.Start || n.Type == flow.End:
			open, closing = "([", "])"
		case n.Type == flow.Exclusive:
			open, closing = "{", "}"
		case n.Type == flow.Parallel || n.Type == flow.Inclusive:
			open, closing = "{{", "}}"
		case n.Type == flow.Loop:
			open, closing = "[/", `\]`
		case strings.HasPrefix(strings.TrimSpace(taskText(n, cfg)), "#"):
			open, closing = "[[", "]]"
		}
		fmt.Fprintf(&b, "    %s%s%s%s\n", d.alias, open, label, closing)
	}
	for _, d := range nodes {
		for _, l := range d.n.Links() {
			if label := linkLabel(l); label != "" {
				fmt.Fprintf(&b, "    %s -->|\"%s\"| %s\n", d.alias, mmdText(label), alias[l.Target()])
			} else {
				fmt.Fprintf(&b, "    %s --> %s\n", d.alias, alias[l.Target()])
			}
		}
	}
	return b.Bytes(), nil
}

// mmdEscaper replaces what a quoted Mermaid label would interpret (quotes, entity
// starts, HTML, markdown backticks, comment and edge-label delimiters) with Mermaid's
// entity codes. It is a single pass, so the codes it writes are not escaped again.
var mmdEscaper = strings.NewReplacer(
	"#", "#35;", `"`, "#quot;", "&", "#amp;", "<", "#lt;", ">", "#gt;",
	"`", "#96;", "|", "#124;", "%", "#37;", "\\", "#92;", "\n", " ", "\r", " ", "\t", " ",
)

func mmdText(s string) string {
	s = mmdEscaper.Replace(s)
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
