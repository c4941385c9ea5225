package export

import (
	"maps"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// DOTStyle adds Graphviz attributes to the nodes and links DOT draws, over the ones
// it sets itself: a run picture colours what a run did this way. Either function
// may be nil, and may return nil for an element it leaves as it is.
type DOTStyle struct {
	// Node returns the attributes of a node (fillcolor, tooltip, URL, id, class...).
	Node func(n *flow.Node) map[string]string
	// Link returns the attributes of the link from a node.
	Link func(from *flow.Node, l *flow.Link) map[string]string
}

// WithDOTStyle makes DOT add the attributes s gives. Other writers ignore it.
func WithDOTStyle(s DOTStyle) WriteOption {
	return func(c *writeConfig) { c.style = s }
}

// dotAttrs writes attrs as ", k=v" pairs in key order, every value quoted.
func dotAttrs(attrs map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		b.WriteString(", ")
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(dotString(attrs[k]))
	}
	return b.String()
}

func (c *writeConfig) nodeAttrs(n *flow.Node) string {
	if c.style.Node == nil {
		return ""
	}
	return dotAttrs(c.style.Node(n))
}

func (c *writeConfig) linkAttrs(from *flow.Node, l *flow.Link) string {
	if c.style.Link == nil {
		return ""
	}
	return dotAttrs(c.style.Link(from, l))
}
