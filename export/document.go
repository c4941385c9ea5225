package export

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flowteam/flowteam/flow"
)

// This file turns a graph into the ordered document both YAML and JSON are written from.
// The document is written so that flow.ParseDefinition reads back exactly the same spec:
// every node has an explicit id and type, and every link is explicit (a node without
// links that the reader would link to the next entry gets "link: []"), so none of the
// reader's conveniences (automatic ids, "absent link = next node") is relied on.

// omap is an ordered mapping; document values are omap, []any, string, int, float64,
// bool and nil.
type omap []field

type field struct {
	key string
	val any
}

func (m *omap) add(key string, val any) { *m = append(*m, field{key, val}) }

// addString adds a string field unless it is empty (the reader's default).
func (m *omap) addString(key, val string) {
	if val != "" {
		m.add(key, val)
	}
}

// document builds the ordered document of g.
func document(g *flow.Graph, cfg *writeConfig) (omap, error) {
	spec := g.Spec()
	var doc omap
	doc.add("id", spec.ID)
	doc.addString("title", spec.Title)
	doc.addString("driver", spec.Driver)
	doc.addString("evaluator", spec.Evaluator)
	if err := checkText(fmt.Sprintf("graph %q", spec.ID), spec.ID, spec.Title, spec.Driver, spec.Evaluator); err != nil {
		return nil, err
	}
	if err := addMeta(&doc, spec.Meta, fmt.Sprintf("graph %q", spec.ID), cfg); err != nil {
		return nil, err
	}
	layout := make([]any, 0, len(spec.Nodes))
	for i, ns := range spec.Nodes {
		where := fmt.Sprintf("graph %q: node %q", spec.ID, ns.ID)
		if ns.Type > flow.Loop {
			return nil, fmt.Errorf("%s: node type %v has no name in the definition schema", where, ns.Type)
		}
		if err := checkText(where, ns.ID, ns.Title, ns.When, ns.Task); err != nil {
			return nil, err
		}
		var node omap
		node.add("id", ns.ID)
		node.add("type", ns.Type.String())
		node.addString("title", ns.Title)
		node.addString("when", ns.When)
		task := ns.Task
		if ns.Component != nil {
			name, ok := cfg.componentName(g.Node(ns.ID))
			if !ok {
				return nil, fmt.Errorf("%s: %w (pass export.WithTaskNamer to write it as its registered \"@name\")", where, ErrNoTextualForm)
			}
			task = name
		}
		node.addString("task", task)
		if err := addMeta(&node, ns.Meta, where, cfg); err != nil {
			return nil, err
		}
		link, err := links(ns, where, cfg)
		if err != nil {
			return nil, err
		}
		switch {
		case link != nil:
			node.add("link", link)
		case i+1 < len(spec.Nodes) && ns.Type != flow.End:
			// Without "link" the reader would link the node to the next entry.
			node.add("link", []any{})
		}
		layout = append(layout, node)
	}
	doc.add("layout", layout)
	return doc, nil
}

// links returns a node's link value: nil for none, the target id for one plain link, or
// a list of link objects in definition order (priority orders them when the graph runs).
func links(ns *flow.NodeSpec, where string, cfg *writeConfig) (any, error) {
	if len(ns.Links) == 0 {
		return nil, nil
	}
	if l := ns.Links[0]; len(ns.Links) == 1 && l.Title == "" && l.When == "" && l.Priority == 0 && len(l.Meta) == 0 {
		return l.NextID, nil
	}
	out := make([]any, len(ns.Links))
	for i, l := range ns.Links {
		if err := checkText(fmt.Sprintf("%s: link to %q", where, l.NextID), l.NextID, l.Title, l.When); err != nil {
			return nil, err
		}
		var lm omap
		lm.add("nextId", l.NextID)
		lm.addString("title", l.Title)
		lm.addString("when", l.When)
		if l.Priority != 0 {
			lm.add("priority", l.Priority)
		}
		if err := addMeta(&lm, l.Meta, fmt.Sprintf("%s: link to %q", where, l.NextID), cfg); err != nil {
			return nil, err
		}
		out[i] = lm
	}
	return out, nil
}

func addMeta(m *omap, meta map[string]any, where string, cfg *writeConfig) error {
	if len(meta) == 0 {
		return nil
	}
	v, err := normalize(meta, 0)
	if err == nil {
		err = checkValue(v, cfg.json)
	}
	if err != nil {
		return fmt.Errorf("%s: meta %w", where, err)
	}
	m.add("meta", v)
	return nil
}

// checkText rejects strings no definition document can hold.
func checkText(where string, texts ...string) error {
	for _, s := range texts {
		if !utf8.ValidString(s) {
			return fmt.Errorf("%s: %q is not valid UTF-8", where, s)
		}
	}
	return nil
}

// checkValue rejects meta values the output format cannot hold: invalid UTF-8 anywhere,
// and NaN or infinite numbers in JSON.
func checkValue(v any, json bool) error {
	switch v := v.(type) {
	case omap:
		for _, f := range v {
			if !utf8.ValidString(f.key) {
				return &pathError{msg: fmt.Sprintf("key %q is not valid UTF-8", f.key)}
			}
			if err := checkValue(f.val, json); err != nil {
				return prefix(err, f.key)
			}
		}
	case []any:
		for i, item := range v {
			if err := checkValue(item, json); err != nil {
				return prefix(err, strconv.Itoa(i))
			}
		}
	case string:
		if !utf8.ValidString(v) {
			return &pathError{msg: fmt.Sprintf("%q is not valid UTF-8", v)}
		}
	case float64:
		if json && (math.IsNaN(v) || math.IsInf(v, 0)) {
			return &pathError{msg: fmt.Sprintf("%v has no JSON form", v)}
		}
	}
	return nil
}

// pathError locates a problem inside a meta value.
type pathError struct {
	rev []string // the keys from the problem up to the top: prefix appends as the error goes up
	msg string
}

// Paths longer than this show their first and last keys only: a value nested
// thousands of levels deep would otherwise make a message of kilobytes.
const (
	pathHead = 8
	pathTail = 4
)

func (e *pathError) Error() string {
	if len(e.rev) == 0 {
		return e.msg
	}
	path := make([]string, len(e.rev))
	for i, k := range e.rev {
		path[len(path)-1-i] = k
	}
	if n := len(path); n > pathHead+pathTail {
		path = slices.Concat(path[:pathHead], []string{fmt.Sprintf("…(%d more)…", n-pathHead-pathTail)}, path[n-pathTail:])
	}
	return fmt.Sprintf("%q: %s", strings.Join(path, "."), e.msg)
}
