package flow

import (
	"slices"
)

// GraphSpec is the editable description of a graph: what a definition document holds,
// or what Go code builds with the fluent methods below. Build turns it into an
// immutable Graph.
//
//	spec := flow.NewSpec("leave")
//	spec.Start("s").LinkTo("review")
//	spec.Activity("review").Do(reviewTask).LinkTo("g")
//	spec.Exclusive("g").
//		LinkTo("director", flow.LinkWhen("day >= 3")).
//		LinkTo("e")
//	spec.Activity("director").SetTask("@director").LinkTo("e")
//	spec.End("e")
//	g, err := spec.Build()
type GraphSpec struct {
	ID     string
	Title  string
	Driver string
	// Evaluator names the evaluator the graph's scripts and conditions are written
	// for ("" for the engine's default; see WithNamedEvaluator).
	Evaluator string
	Meta      map[string]any
	Nodes     []*NodeSpec
	// Source is the file the spec was read from; it prefixes error positions.
	Source string
	// LenientJSON is, for a .json document that is not JSON but reads as YAML (see
	// ParseDefinition), the line of the first token JSON rejects; zero otherwise.
	LenientJSON Pos
}

// NodeSpec describes one node. Links lists the outgoing links in definition order.
type NodeSpec struct {
	ID        string
	Type      NodeType
	Title     string
	When      string
	Task      string
	Component Task
	Meta      map[string]any
	Links     []LinkSpec
	Pos       Pos
	// TaskPos and WhenPos are where the task script and the condition start in the
	// document, so that a problem inside them is reported at its own line.
	TaskPos, WhenPos ScriptPos
	// TypeName is the type as written when it is not a known type (the node then
	// behaves as an activity); empty otherwise.
	TypeName string
	// Notes are doubts the reader had about the definition that are not errors.
	Notes []Note
}

// Note is a doubt about a definition that is not an error, located in the document.
type Note struct {
	Pos Pos
	Msg string
}

// LinkSpec describes one outgoing link.
type LinkSpec struct {
	NextID   string
	Title    string
	When     string
	Priority int
	Meta     map[string]any
	Pos      Pos
	// WhenPos is where the condition starts in the document.
	WhenPos ScriptPos
}

// NewSpec starts the specification of a graph with the given id.
func NewSpec(id string) *GraphSpec { return &GraphSpec{ID: id} }

// Node adds a node of the given type and returns it for further configuration.
func (s *GraphSpec) Node(id string, t NodeType) *NodeSpec {
	n := &NodeSpec{ID: id, Type: t}
	s.Nodes = append(s.Nodes, n)
	return n
}

// Start adds the start node.
func (s *GraphSpec) Start(id string) *NodeSpec { return s.Node(id, Start) }

// End adds an end node.
func (s *GraphSpec) End(id string) *NodeSpec { return s.Node(id, End) }

// Activity adds an activity node.
func (s *GraphSpec) Activity(id string) *NodeSpec { return s.Node(id, Activity) }

// Exclusive adds an exclusive gateway.
func (s *GraphSpec) Exclusive(id string) *NodeSpec { return s.Node(id, Exclusive) }

// Inclusive adds an inclusive gateway.
func (s *GraphSpec) Inclusive(id string) *NodeSpec { return s.Node(id, Inclusive) }

// Parallel adds a parallel gateway.
func (s *GraphSpec) Parallel(id string) *NodeSpec { return s.Node(id, Parallel) }

// Loop adds a loop gateway. With a non-empty variable it opens a loop over in (a list,
// the name of a context variable, or a stepper such as "1:10:2"); with an empty
// variable it closes the innermost open loop.
func (s *GraphSpec) Loop(id, variable string, in any) *NodeSpec {
	n := s.Node(id, Loop)
	if variable != "" {
		n.SetMeta(MetaFor, variable).SetMeta(MetaIn, in)
	}
	return n
}

// NodeByID returns the node spec with the given id, or nil.
func (s *GraphSpec) NodeByID(id string) *NodeSpec {
	for _, n := range s.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Clone returns a deep copy of the spec: meta maps are copied with the maps and lists
// nested in them (other meta values and Go task components are shared).
func (s *GraphSpec) Clone() *GraphSpec {
	c := *s
	c.Meta = cloneMeta(s.Meta)
	c.Nodes = make([]*NodeSpec, len(s.Nodes))
	for i, n := range s.Nodes {
		if n == nil {
			continue // Build reports it
		}
		nc := *n
		nc.Meta = cloneMeta(n.Meta)
		nc.Notes = slices.Clone(n.Notes)
		nc.Links = make([]LinkSpec, len(n.Links))
		for j, l := range n.Links {
			l.Meta = cloneMeta(l.Meta)
			nc.Links[j] = l
		}
		c.Nodes[i] = &nc
	}
	return &c
}

// cloneMeta copies a meta map and the maps and lists in it, so that editing a spec's
// nested meta (an onError policy, say) after Build cannot change the built graph.
func cloneMeta(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = cloneMetaValue(v)
	}
	return c
}

func cloneMetaValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneMeta(v)
	case []any:
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = cloneMetaValue(x)
		}
		return c
	}
	return v
}

// SetTitle sets the node's title.
func (n *NodeSpec) SetTitle(title string) *NodeSpec { n.Title = title; return n }

// SetWhen sets the guard of the node's task.
func (n *NodeSpec) SetWhen(cond string) *NodeSpec { n.When = cond; return n }

// SetTask sets the task reference: "@name", "#graphId", "$metaKey" or a script.
func (n *NodeSpec) SetTask(task string) *NodeSpec { n.Task = task; return n }

// Do sets a Go task component.
func (n *NodeSpec) Do(t Task) *NodeSpec { n.Component = t; return n }

// DoFunc sets a Go function as the node's task.
func (n *NodeSpec) DoFunc(f TaskFunc) *NodeSpec { n.Component = f; return n }

// SetMeta sets one meta attribute.
func (n *NodeSpec) SetMeta(key string, value any) *NodeSpec {
	if n.Meta == nil {
		n.Meta = make(map[string]any)
	}
	n.Meta[key] = value
	return n
}

// SetRetry gives the node a retry policy and marks it idempotent: only idempotent
// nodes are retried (meta retry and idempotent in YAML).
func (n *NodeSpec) SetRetry(p RetryPolicy) *NodeSpec {
	return n.SetMeta(MetaRetry, p).SetMeta(MetaIdempotent, true)
}

// OnError declares the node's error handling (meta onError in YAML): where a
// recoverable error continues (goto, may be empty) and the business state applied
// when an error is fatal (fallback, may be nil).
func (n *NodeSpec) OnError(gotoID string, fallback map[string]any) *NodeSpec {
	m := map[string]any{}
	if gotoID != "" {
		m["goto"] = gotoID
	}
	if fallback != nil {
		m["fallback"] = fallback
	}
	return n.SetMeta(MetaOnError, m)
}

// LinkTo adds an outgoing link to the node with id next.
func (n *NodeSpec) LinkTo(next string, opts ...LinkOption) *NodeSpec {
	l := LinkSpec{NextID: next}
	for _, o := range opts {
		o(&l)
	}
	n.Links = append(n.Links, l)
	return n
}

// LinkOption configures a link added with LinkTo.
type LinkOption func(*LinkSpec)

// LinkWhen sets the link's condition.
func LinkWhen(cond string) LinkOption { return func(l *LinkSpec) { l.When = cond } }

// LinkTitle sets the link's title.
func LinkTitle(title string) LinkOption { return func(l *LinkSpec) { l.Title = title } }

// LinkPriority sets the link's priority (higher is tried first).
func LinkPriority(p int) LinkOption { return func(l *LinkSpec) { l.Priority = p } }

// LinkMeta sets one meta attribute of the link.
func LinkMeta(key string, value any) LinkOption {
	return func(l *LinkSpec) {
		if l.Meta == nil {
			l.Meta = make(map[string]any)
		}
		l.Meta[key] = value
	}
}
