package export

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/flowteam/flowteam/flow"
)

// This file holds what the three diagram writers share: generated aliases (n0, n1, ...
// by definition order), so that any node id, however unfriendly to a diagram syntax,
// is only ever written inside an escaped label; and the text shown for nodes and links.

// Limits on what a diagram shows of a long script: the document keeps it whole.
const (
	maxLabelLines = 4
	maxLabelWidth = 60
)

type diagNode struct {
	alias string
	n     *flow.Node
	name  string   // title, or id when there is no title
	lines []string // task, guard and loop lines, already clipped
}

func diagramNodes(g *flow.Graph, cfg *writeConfig) (nodes []diagNode, alias map[*flow.Node]string) {
	alias = make(map[*flow.Node]string, len(g.Nodes()))
	for i, n := range g.Nodes() {
		d := diagNode{alias: "n" + strconv.Itoa(i), n: n, name: strings.Join(clip(n.Title, 2), " ")}
		if blank(d.name) {
			// A title of spaces or line breaks shows nothing (and PlantUML rejects an
			// empty state name): show the id, quoted if it is as blank.
			if d.name = strings.Join(clip(n.ID, 2), " "); blank(d.name) {
				d.name = strconv.Quote(n.ID)
			}
		}
		if n.Type == flow.Loop {
			if v, ok := n.Meta[flow.MetaFor]; ok {
				d.lines = append(d.lines, clip(fmt.Sprintf("for %v in %s", v, shortValue(n.Meta[flow.MetaIn])), 1)...)
			} else {
				d.lines = append(d.lines, "end of loop")
			}
		}
		if t := taskText(n, cfg); t != "" {
			d.lines = append(d.lines, clip("task: "+t, maxLabelLines)...)
		}
		if n.When != "" {
			d.lines = append(d.lines, clip("when: "+n.When, 2)...)
		}
		alias[n] = d.alias
		nodes = append(nodes, d)
	}
	return nodes, alias
}

// taskText is the task as a diagram shows it; a Go component shows its registered name
// when the namer knows it.
func taskText(n *flow.Node, cfg *writeConfig) string {
	if n.Component != nil {
		if name, ok := cfg.componentName(n); ok {
			return name
		}
		return "(Go code)"
	}
	return n.Task
}

// bare reports whether a node carries nothing but its type, so a pseudo-state (start,
// end, choice, fork, join) can stand for it without losing anything but its id.
func bare(n *flow.Node) bool {
	return n.Title == "" && n.Task == "" && n.When == "" && n.Component == nil
}

// blank reports whether s shows nothing: only spaces and control characters, which
// the diagram writers turn into spaces.
func blank(s string) bool {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) == ""
}

// linkLabel is "title [when] priority N", leaving out what is empty or blank.
func linkLabel(l *flow.Link) string {
	var parts []string
	if title := strings.Join(clip(l.Title, 1), " "); !blank(title) {
		parts = append(parts, title)
	}
	if l.When != "" {
		parts = append(parts, "["+strings.Join(clip(l.When, 1), " ")+"]")
	}
	if l.Priority != 0 {
		parts = append(parts, "priority "+strconv.Itoa(l.Priority))
	}
	return strings.Join(parts, " ")
}

// clip splits s into at most maxLines lines of at most maxLabelWidth runes, marking
// what it cut with "…".
func clip(s string, maxLines int) []string {
	raw := strings.Split(strings.ReplaceAll(strings.TrimSpace(s), "\r\n", "\n"), "\n")
	var out []string
	for i, line := range raw {
		line = strings.TrimRight(strings.ReplaceAll(line, "\t", "  "), " \r")
		if i > 0 && strings.TrimSpace(line) == "" {
			continue
		}
		if r := []rune(line); len(r) > maxLabelWidth {
			line = string(r[:maxLabelWidth-1]) + "…"
		}
		if len(out) == maxLines {
			out[maxLines-1] += " …"
			break
		}
		out = append(out, line)
	}
	return out
}

func shortValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	x, err := normalize(v, 0)
	if err != nil {
		return fmt.Sprint(v)
	}
	var b bytes.Buffer
	if appendJSON(&b, x, flowDepth) != nil {
		return fmt.Sprint(v)
	}
	return b.String()
}

func typeLabel(t flow.NodeType) string { return "«" + t.String() + "»" }
