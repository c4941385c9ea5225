package flow

import (
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/flowteam/flowteam/internal/yamldoc"
)

// Values in definition documents: scalars, meta maps and lists (with their size and
// alias limits), and the entries of a mapping with YAML merge keys expanded.

// scalar reads a string field. Any scalar is accepted as written ("task: 42" is "42").
func (r *defReader) scalar(e entry, node string) string {
	v := yamldoc.Deref(e.val)
	switch {
	case v.Kind != yaml.ScalarNode:
		r.fail(v.Line, node, "%s must be a string, not %s", e.name, yamldoc.KindOf(v))
		return ""
	case v.ShortTag() == "!!null":
		return ""
	}
	return v.Value
}

// meta reads a meta mapping into plain Go values; an empty mapping reads as nil.
func (r *defReader) meta(e entry, node string) map[string]any {
	v := yamldoc.Deref(e.val)
	switch {
	case v.ShortTag() == "!!null":
		return nil
	case v.Kind != yaml.MappingNode:
		r.fail(v.Line, node, "%s must be a mapping, not %s", e.name, yamldoc.KindOf(v))
		return nil
	}
	m, _ := r.value(v, node).(map[string]any)
	if len(m) == 0 {
		return nil
	}
	return m
}

// value converts a YAML node to map[string]any, []any, string, int, float64, bool or nil.
func (r *defReader) value(n *yaml.Node, node string) any {
	if !r.spend(1, n.Line, node) {
		return nil
	}
	n = yamldoc.Deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		if !r.enter(n, node) {
			return nil
		}
		defer delete(r.active, n)
		fields := r.entries(n)
		m := make(map[string]any, len(fields))
		for _, e := range fields {
			m[e.name] = r.value(e.val, node)
		}
		return m
	case yaml.SequenceNode:
		if !r.enter(n, node) {
			return nil
		}
		defer delete(r.active, n)
		list := make([]any, len(n.Content))
		for i, item := range n.Content {
			list[i] = r.value(item, node)
		}
		return list
	}
	return scalarValue(n)
}

// spend takes n from the budget of values the document may expand to, so that aliases
// and merges nested into each other cannot blow up; it fails once when the budget runs out.
func (r *defReader) spend(n, line int, node string) bool {
	if r.budget < 0 {
		return false
	}
	if r.budget -= n; r.budget < 0 {
		r.fail(line, node, "the document expands to too many values (aliases nested too deeply)")
		return false
	}
	return true
}

// enter marks a collection as being expanded; it fails if it already is (an alias that
// contains itself).
func (r *defReader) enter(n *yaml.Node, node string) bool {
	if r.active[n] {
		r.fail(n.Line, node, "an alias refers to a value that contains it")
		return false
	}
	if r.active == nil {
		r.active = make(map[*yaml.Node]bool)
	}
	r.active[n] = true
	return true
}

// scalarValue converts a scalar by its resolved tag; integers become int, not float64.
func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!str":
		return n.Value
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 10, 0); err == nil {
			return int(i)
		}
		var v any
		if n.Decode(&v) == nil {
			switch v := v.(type) {
			case int:
				return v
			case int64:
				return int(v)
			case uint64: // beyond int64: keep the magnitude, as JSON would
				return float64(v)
			}
		}
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
	case "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	case "!!binary":
		var s string
		if n.Decode(&s) == nil {
			return s
		}
	}
	// Timestamps, custom tags and numbers out of range keep their text.
	return n.Value
}

// entry is one key of a mapping.
type entry struct {
	name string
	key  *yaml.Node
	val  *yaml.Node
}

// lookup finds a key among a mapping's entries.
func lookup(fields []entry, name string) (entry, bool) {
	for _, e := range fields {
		if e.name == name {
			return e, true
		}
	}
	return entry{}, false
}

// entries lists a mapping's keys in document order, with "<<" merge keys applied (keys
// written in the mapping win). A key written twice is an error: YAML forbids it, and
// SnakeYAML's "last one wins" would drop the first silently.
func (r *defReader) entries(m *yaml.Node) []entry {
	out := make([]entry, 0, len(m.Content)/2)
	var index map[string]int // positions in out, once out is too long to scan
	find := func(name string) (entry, bool) {
		if index == nil {
			return lookup(out, name)
		}
		i, ok := index[name]
		if !ok {
			return entry{}, false
		}
		return out[i], true
	}
	add := func(e entry) {
		out = append(out, e)
		if index == nil && len(out) > 16 {
			index = make(map[string]int, cap(out))
			for i, e := range out {
				index[e.name] = i
			}
		} else if index != nil {
			index[e.name] = len(out) - 1
		}
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		kd := yamldoc.Deref(k)
		if kd.Kind != yaml.ScalarNode {
			r.fail(kd.Line, "", "mapping key must be a string, not %s", yamldoc.KindOf(kd))
			continue
		}
		if prev, dup := find(kd.Value); dup {
			r.fail(k.Line, "", "duplicate key %q (first at line %d)", kd.Value, prev.key.Line)
			continue
		}
		add(entry{name: kd.Value, key: k, val: v})
	}
	for _, src := range merges {
		src = yamldoc.Deref(src)
		sources := []*yaml.Node{src}
		if src.Kind == yaml.SequenceNode {
			sources = src.Content
		}
		for _, s := range sources {
			if s = yamldoc.Deref(s); s.Kind != yaml.MappingNode {
				r.fail(s.Line, "", "a merge (<<) needs a mapping or a list of mappings, not %s", yamldoc.KindOf(s))
				continue
			}
			if !r.spend(len(s.Content)/2+1, s.Line, "") || !r.enter(s, "") {
				continue
			}
			for _, e := range r.entries(s) {
				if _, ok := find(e.name); !ok {
					add(e)
				}
			}
			delete(r.active, s)
		}
	}
	return out
}
