package export

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// DOT writes g as a Graphviz digraph laid out top to bottom: the start node a circle,
// end nodes double circles, gateways diamonds naming their type, loop nodes hexagons,
// sub-graph calls double-bordered boxes and activities rounded boxes; every node but
// an activity names its type. Links are
// labelled "title [when] priority N". Nodes are aliased n0, n1, ...; labels are quoted
// and escaped (quotes, backslashes, newlines, the "&" of character entities).
func DOT(g *flow.Graph, opts ...WriteOption) ([]byte, error) {
	cfg := newWriteConfig(opts)
	nodes, alias := diagramNodes(g, cfg)
	var b bytes.Buffer
	fmt.Fprintf(&b, "digraph %s {\n", dotString(g.ID))
	fmt.Fprintf(&b, "    graph [label=%s, labelloc=t, rankdir=TB];\n", dotLabel(graphCaption(g)))
	b.WriteString("    node [shape=box, style=rounded];\n")
	for _, d := range nodes {
		n := d.n
		lines := []string{d.name}
		if n.Type != flow.Activity {
			lines = append(lines, typeLabel(n.Type))
		}
		lines = append(lines, d.lines...)
		attrs := ""
		switch {
		case n.Type == flow.Start:
			attrs = ", shape=circle, style=solid"
		case n.Type == flow.End:
			attrs = ", shape=doublecircle, style=solid"
		case n.Type == flow.Exclusive || n.Type == flow.Inclusive || n.Type == flow.Parallel:
			attrs = ", shape=diamond, style=solid"
		case n.Type == flow.Loop:
			attrs = ", shape=hexagon, style=solid"
		case strings.HasPrefix(strings.TrimSpace(taskText(n, cfg)), "#"):
			attrs = ", peripheries=2"
		}
		attrs += cfg.nodeAttrs(n)
		fmt.Fprintf(&b, "    %s [label=%s%s];\n", d.alias, dotLabel(strings.Join(lines, "\n")), attrs)
	}
	for _, d := range nodes {
		for _, l := range d.n.Links() {
			fmt.Fprintf(&b, "    %s -> %s", d.alias, alias[l.Target()])
			attrs := cfg.linkAttrs(d.n, l)
			if label := linkLabel(l); label != "" {
				attrs = ", label=" + dotLabel(label) + attrs
			}
			if attrs != "" {
				fmt.Fprintf(&b, " [%s]", attrs[2:])
			}
			b.WriteString(";\n")
		}
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// dotEntity matches what Graphviz reads as an HTML character entity in a label.
var dotEntity = regexp.MustCompile(`&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);`)

// dotLabel quotes s as a DOT label. Graphviz turns character entities in labels into
// their characters ("&lt;" shows as "<"), so the "&" of anything that reads as one is
// written as "&amp;" and the text is shown as written; any other "&" stays as it is.
func dotLabel(s string) string {
	return dotString(dotEntity.ReplaceAllString(s, "&amp;$1;"))
}

// dotString quotes s as a DOT string. Backslashes are doubled so label escapes (\N, \G,
// \l) in the text stay literal; newlines become \n, which a label shows as a line break.
func dotString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c < ' ' || c == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
