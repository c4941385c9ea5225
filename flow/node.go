package flow

import (
	"fmt"
	"strings"
)

// NodeType is the kind of a node. The zero value is Activity, so a node whose type is
// missing or unknown behaves as an activity, as in Solon.
type NodeType uint8

// Node types.
const (
	Activity  NodeType = iota // runs its task, then follows every link whose condition holds
	Start                     // where a run begins; behaves as an activity
	End                       // runs its task and ends its branch
	Exclusive                 // takes the first link (by priority) whose condition holds
	Inclusive                 // takes every true link; as a join, waits for the branches its split took
	Parallel                  // takes every link concurrently; as a join, waits for every branch
	Loop                      // with meta $for/$in iterates its body; without $for it closes a loop
)

var nodeTypeNames = [...]string{"activity", "start", "end", "exclusive", "inclusive", "parallel", "loop"}

// String returns the lower-case name used in definition documents.
func (t NodeType) String() string {
	if int(t) < len(nodeTypeNames) {
		return nodeTypeNames[t]
	}
	return fmt.Sprintf("NodeType(%d)", t)
}

// ParseNodeType maps a document's type name to a NodeType. Matching ignores case.
// An unknown or empty name yields Activity and ok=false, so callers can warn about it.
func ParseNodeType(name string) (t NodeType, ok bool) {
	for i, n := range nodeTypeNames {
		if strings.EqualFold(n, name) {
			return NodeType(i), true
		}
	}
	return Activity, name == ""
}

// SuggestNodeType returns the known node type whose name is nearest to name (by edit
// distance, ignoring case), and whether it is near enough (at most a third of the
// letters differ, and no more than two) to be what a document naming the unknown type
// name meant.
func SuggestNodeType(name string) (NodeType, bool) {
	name = strings.ToLower(name)
	best, dist := Activity, -1
	for i, n := range nodeTypeNames {
		if d := editDistance(name, n); dist < 0 || d < dist {
			best, dist = NodeType(i), d
		}
	}
	return best, dist <= min(2, max(1, len(best.String())/3))
}

// unknownTypeMsg is the message for a node type the engine does not know: the
// nearest known type when one is near, else every known type.
func unknownTypeMsg(name string) string {
	if t, ok := SuggestNodeType(name); ok {
		return fmt.Sprintf("%q (did you mean %s?)", name, t)
	}
	return fmt.Sprintf("%q (the types are %s)", name, strings.Join(nodeTypeNames[:], ", "))
}

// editDistance is the number of single-byte insertions, deletions, substitutions and
// swaps of two neighbours that turn a into b (optimal string alignment distance).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// IsGateway reports whether nodes of this type route rather than do work.
func (t NodeType) IsGateway() bool {
	return t == Exclusive || t == Inclusive || t == Parallel || t == Loop
}

// Pos is where something was defined: a file and a 1-based line. The zero Pos means the
// definition came from Go code.
type Pos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// String formats the position as "file:line", or "" for code-defined items.
func (p Pos) String() string {
	switch {
	case p.File == "" && p.Line == 0:
		return ""
	case p.Line == 0:
		return p.File
	default:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
}

// Link is a directed edge of a built graph. It is read-only.
type Link struct {
	// From and To are the ids of the source and target nodes.
	From, To string
	// Title is a label for diagrams.
	Title string
	// When is the condition (an expression or "@name"); empty means always true.
	When string
	// Priority orders a node's links: higher first; equal priorities keep document order.
	Priority int
	// Meta holds free-form attributes.
	Meta map[string]any
	// Pos is where the link was defined.
	Pos Pos

	index  int // position among the source node's sorted links
	to     *Node
	whenAt ScriptPos
}

// Target returns the node the link points to.
func (l *Link) Target() *Node { return l.to }

// Node is a vertex of a built graph. It is read-only and shared by every run.
type Node struct {
	// ID is unique within the graph.
	ID string
	// Type decides how the node routes.
	Type NodeType
	// Title is a human-readable name.
	Title string
	// When guards the node's task only: when false, the task is skipped and the flow
	// still continues along the node's links.
	When string
	// Task is the task reference: "@name" (a registered Go task), "#graphId" (a
	// sub-graph), "$metaKey" (a script kept in the graph's meta) or a script.
	Task string
	// Component is a Go task set in code; it takes precedence over Task.
	Component Task
	// Meta holds free-form attributes (loop nodes keep $for and $in here).
	Meta map[string]any
	// Pos is where the node was defined.
	Pos Pos

	index    int
	links    []*Link // outgoing, sorted by priority
	incoming []*Link
	graph    *Graph
	taskAt   ScriptPos
	whenAt   ScriptPos
}

// Links returns the node's outgoing links, highest priority first. The slice must not
// be modified.
func (n *Node) Links() []*Link { return n.links }

// Incoming returns the links that point to the node. The slice must not be modified.
func (n *Node) Incoming() []*Link { return n.incoming }

// IsJoin reports whether the node joins branches: an inclusive or parallel node with
// more than one incoming link.
func (n *Node) IsJoin() bool {
	return (n.Type == Inclusive || n.Type == Parallel) && len(n.incoming) > 1
}

// Graph returns the graph the node belongs to.
func (n *Node) Graph() *Graph { return n.graph }

// MetaString returns meta[key] as a string, or "" when absent or not a string.
func (n *Node) MetaString(key string) string {
	s, _ := n.Meta[key].(string)
	return s
}

// String identifies the node in messages.
func (n *Node) String() string { return fmt.Sprintf("%q", n.ID) }
