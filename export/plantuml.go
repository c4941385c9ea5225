package export

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/flowteam/flowteam/flow"
)

// PlantUML writes g as a PlantUML state diagram. The start node and the end nodes that
// carry nothing but their type are the [*] pseudo-states; gateways without a task or
// title are <<choice>> (exclusive), <<fork>> or <<join>> (parallel, and inclusive with
// a note saying so) pseudo-states; every other node is a state named by its title (or
// id), described by its type for gateways and loops, its task and its guard. Links are
// labelled "title [when] priority N". Node ids never appear as PlantUML names: states
// are aliased n0, n1, ... and all text is escaped, so any id or script is safe.
func PlantUML(g *flow.Graph, opts ...WriteOption) ([]byte, error) {
	cfg := newWriteConfig(opts)
	nodes, alias := diagramNodes(g, cfg)
	var b bytes.Buffer
	b.WriteString("@startuml\n")
	fmt.Fprintf(&b, "title %s\n", pumlText(graphCaption(g)))
	b.WriteString("hide empty description\n")

	start := g.Start()
	pseudoStart := func(n *flow.Node) bool {
		return n == start && bare(n) && len(n.Links()) > 0 && len(n.Incoming()) == 0
	}
	pseudoEnd := func(n *flow.Node) bool {
		return n.Type == flow.End && n != start && bare(n) && len(n.Links()) == 0 && len(n.Incoming()) > 0
	}
	for _, d := range nodes {
		n := d.n
		switch {
		case pseudoStart(n), pseudoEnd(n):
			continue
		case bare(n) && n.Type == flow.Exclusive:
			fmt.Fprintf(&b, "state %s <<choice>>\n", d.alias)
			continue
		case bare(n) && (n.Type == flow.Parallel || n.Type == flow.Inclusive):
			kind := "fork"
			if len(n.Incoming()) > 1 && len(n.Links()) <= 1 {
				kind = "join"
			}
			fmt.Fprintf(&b, "state %s <<%s>>\n", d.alias, kind)
			if n.Type == flow.Inclusive {
				fmt.Fprintf(&b, "note right of %s : inclusive\n", d.alias)
			}
			continue
		}
		fmt.Fprintf(&b, "state \"%s\" as %s\n", pumlText(d.name), d.alias)
		if n.Type != flow.Activity {
			fmt.Fprintf(&b, "%s : %s\n", d.alias, typeLabel(n.Type))
		}
		for _, line := range d.lines {
			fmt.Fprintf(&b, "%s : %s\n", d.alias, pumlText(line))
		}
	}
	for _, d := range nodes {
		n := d.n
		from := d.alias
		switch {
		case pseudoStart(n):
			from = "[*]"
		case n == start:
			fmt.Fprintf(&b, "[*] --> %s\n", d.alias)
		}
		for _, l := range n.Links() {
			to := alias[l.Target()]
			if pseudoEnd(l.Target()) {
				to = "[*]"
			}
			fmt.Fprintf(&b, "%s --> %s", from, to)
			if label := linkLabel(l); label != "" {
				fmt.Fprintf(&b, " : %s", pumlText(label))
			}
			b.WriteByte('\n')
		}
		if n.Type == flow.End && !pseudoEnd(n) && len(n.Links()) == 0 {
			fmt.Fprintf(&b, "%s --> [*]\n", d.alias)
		}
	}
	b.WriteString("@enduml\n")
	return b.Bytes(), nil
}

// graphCaption is "title (id)", or the id alone; an id that shows nothing is quoted
// (PlantUML rejects an empty title).
func graphCaption(g *flow.Graph) string {
	id := g.ID
	if blank(id) {
		id = strconv.Quote(id)
	}
	if blank(g.Title) || g.Title == g.ID {
		return id
	}
	return g.Title + " (" + id + ")"
}

// pumlText escapes text for a PlantUML label: the characters PlantUML, its Creole
// markup or its preprocessor would interpret (the preprocessor calls "%date()" or
// "%getenv(...)" anywhere in a line, quoted or not), and invisible ones (a BOM, a
// zero-width joiner), become numeric character references, which it renders as the
// character itself; control characters and line separators become spaces.
func pumlText(s string) string {
	var b strings.Builder
	rs := []rune(s)
	lineStart := true // only spaces so far on this line of the label
	for i, c := range rs {
		doubled := i+1 < len(rs) && rs[i+1] == c
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
			lineStart = true
			continue
		case c < ' ' || c >= 0x7f && c <= 0x9f || unicode.In(c, unicode.Zl, unicode.Zp):
			// PlantUML reads NEL and the line and paragraph separators as line ends.
			b.WriteByte(' ')
		case strings.ContainsRune(`"<>&~'%`, c), !unicode.IsPrint(c) && c != ' ',
			// Creole markup is a doubled character: **bold**, //italic//, --strike--,
			// __underline__, ==, ^^, [[link]], {{ }}, ||.
			doubled && strings.ContainsRune(`*/-_=^[]{}|#`, c),
			// or a character that starts a line: "* " a bullet, "# " a numbered item,
			// "= " a heading, "|a|b|" a table, "----", "....", "____" separators.
			lineStart && strings.ContainsRune(`*#=|-._`, c):
			fmt.Fprintf(&b, "&#%d;", c)
		default:
			b.WriteRune(c)
		}
		lineStart = lineStart && c == ' '
	}
	return b.String()
}
