package console

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/export/svg"
	"github.com/flowteam/flowteam/flow"
)

// Colours of a run picture.
const (
	colourVisited = "#c8e6c9" // green fill: the node ran
	colourFailed  = "#ef9a9a" // red fill: its last execution failed
	colourWaiting = "#ffcc80" // amber fill: suspended, or waiting for a person
	colourTaken   = "#2e7d32" // the path the run followed
	colourIdle    = "#9e9e9e" // what the run did not reach, links it skipped
)

// Style returns the DOT style of the call at path: nodes coloured by what the run
// did, their counts and errors as tooltips, the frontier outlined, the links taken
// drawn bold and the ones skipped grey. link, if not nil, gives the address of a
// sub-graph call's own picture, set on its calling node.
func (r *Run) Style(path string, link func(callPath string) string) export.DOTStyle {
	c := r.calls[path]
	if c == nil {
		c = NewRun(r.Instance, r.Graph).Call(path)
	}
	return export.DOTStyle{
		Node: func(n *flow.Node) map[string]string { return c.nodeStyle(n, link) },
		Link: func(from *flow.Node, l *flow.Link) map[string]string {
			switch {
			case c.Taken(from.ID, l.Target().ID):
				return map[string]string{"color": colourTaken, "penwidth": "2.5", "class": "taken"}
			case c.Visits[from.ID] > 0:
				return map[string]string{"color": colourIdle, "fontcolor": colourIdle, "style": "dashed", "class": "skipped"}
			}
			return map[string]string{"color": colourIdle, "fontcolor": colourIdle}
		},
	}
}

func (c *Call) nodeStyle(n *flow.Node, link func(string) string) map[string]string {
	a := map[string]string{"id": "node_" + n.ID}
	class, fill := "", ""
	var tips []string
	if v := c.Visits[n.ID]; v > 0 {
		class, fill = "visited", colourVisited
		a["xlabel"] = "×" + strconv.Itoa(v)
		tips = append(tips, fmt.Sprintf("ran %d time(s)", v))
	}
	if why, ok := c.Waiting[n.ID]; ok {
		class, fill = "waiting", colourWaiting
		tips = append(tips, strings.TrimSpace("waiting "+why))
	}
	if e, ok := c.Failed[n.ID]; ok {
		class, fill = "failed", colourFailed
		a["color"] = "#c62828"
		tips = append(tips, strings.TrimSpace(e.Code+": "+e.Message))
	}
	if fill != "" {
		a["fillcolor"] = fill
		a["style"] = "filled"
		if n.Type == flow.Activity {
			a["style"] = "rounded,filled"
		}
	} else {
		a["color"], a["fontcolor"] = colourIdle, colourIdle
	}
	if c.Frontier[n.ID] {
		a["penwidth"] = "3"
		class += " frontier"
	}
	if child, ok := c.Calls[n.ID]; ok && link != nil {
		a["URL"] = link(child)
		class += " call"
		tips = append(tips, "open the sub-graph call")
	}
	if len(tips) > 0 {
		a["tooltip"] = strings.Join(tips, "; ")
	}
	if class = strings.TrimSpace(class); class != "" {
		a["class"] = class
	}
	return a
}

// Picture draws the graph g of the call at path, coloured by what r did there.
func Picture(ctx context.Context, rd *svg.Renderer, g *flow.Graph, r *Run, path string, link func(string) string) ([]byte, error) {
	return rd.Graph(ctx, g, export.WithDOTStyle(r.Style(path, link)))
}
