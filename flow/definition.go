package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// This file reads Solon Flow definition documents (YAML or JSON, the "layout" schema):
//
//	id: leave                      # graph id; title, driver and meta (a mapping) are optional
//	layout:                        # "nodes" is the deprecated alias
//	  - {id: s, type: start, link: review}
//	  - {id: review, task: "@review", meta: {role: lead}}      # no link: goes to the next entry
//	  - {id: g, type: exclusive, link: [
//	      {nextId: director, when: "day >= 3", priority: 1},   # "condition" is the old "when"
//	      e]}
//	  - {id: director, task: "@director"}
//	  - {id: e, type: end}
//
// The rules follow Solon 4.0.3's GraphSpec.fromDom (solon-flow/src/main/java/org/noear/solon/
// flow/GraphSpec.java) unless a comment below says where and why we differ.

// ParseDefinition reads a Solon definition document, YAML or JSON, into a GraphSpec. file
// names the document in positions and messages (and becomes spec.Source); it is not opened.
//
// Every node and link of the result carries the file and line it was defined at. A node
// without id gets Solon's automatic id "n-<position>" (1-based); a node without link goes
// to the next layout entry (an explicit empty list means no links); an unknown or missing
// type reads as an activity. Node and link "when" and "task" are trimmed, as Solon trims
// them when it builds the graph. Link "priority" is a flowteam extension (Solon sets it in
// code only): an integer, higher first.
//
// Errors are *DefinitionError values (several are joined with errors.Join; use errors.As)
// that name the file and line: malformed YAML or JSON, a wrong shape (layout not a list, a
// node that is not a mapping, a link object without nextId, a priority that is not an
// integer), duplicate keys, and a document without layout. Whether links point at existing
// nodes, ids are unique and a start node exists is checked by Build.
func ParseDefinition(file string, data []byte) (*GraphSpec, error) {
	r := &defReader{file: file, budget: 10_000 + 4*len(data)}
	root, err := r.document(data)
	if err != nil {
		return nil, err
	}
	spec := r.graphSpec(root)
	switch len(r.errs) {
	case 0:
		spec.Source = file
		return spec, nil
	case 1:
		return nil, r.errs[0]
	default:
		return nil, errors.Join(r.errs...)
	}
}

// ReadDefinitionFile reads the definition document at path (see ParseDefinition) and
// records path as the spec's Source.
func ReadDefinitionFile(path string) (*GraphSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read definition: %w", err)
	}
	spec, err := ParseDefinition(path, data)
	if err != nil {
		return nil, err
	}
	spec.Source = path
	return spec, nil
}

// LoadGraph parses a definition document (see ParseDefinition) and builds the graph.
func LoadGraph(file string, data []byte) (*Graph, error) {
	spec, err := ParseDefinition(file, data)
	if err != nil {
		return nil, err
	}
	return spec.Build()
}

// defReader turns a decoded document into a GraphSpec, collecting every problem it finds.
type defReader struct {
	file   string
	graph  string // graph id, once known, for messages
	errs   []error
	budget int                 // values meta may still expand to; bounds alias bombs
	active map[*yaml.Node]bool // collections being expanded; catches alias cycles
}

func (r *defReader) fail(line int, node, format string, args ...any) {
	if line <= 0 {
		line = 1
	}
	r.errs = append(r.errs, &DefinitionError{
		Pos: Pos{File: r.file, Line: line}, Graph: r.graph, Node: node, Msg: fmt.Sprintf(format, args...),
	})
}

// document decodes data into its root node (nil for an empty document). YAML is tried
// first, so JSON gets line numbers from the same parser; the fallbacks cover real Solon
// documents yaml.v3 rejects.
func (r *defReader) document(data []byte) (*yaml.Node, error) {
	root, yerr := decodeYAML(data)
	if yerr == nil {
		return root, nil
	}
	if looksLikeJSON(data) {
		// Valid JSON that YAML cannot read: "\/" escapes, keys over 1024 bytes.
		root, jerr := decodeJSON(data)
		if jerr == nil {
			return root, nil
		}
		if strings.HasSuffix(strings.ToLower(r.file), ".json") {
			return nil, r.syntaxError(data, jerr)
		}
	}
	// SnakeYAML, which Solon uses, reads "link:[a, b]" inside a flow mapping as a key and
	// a list; yaml.v3 does not. Solon's own test documents rely on it.
	if relaxed, changed := relaxFlowColons(data); changed {
		root, err := decodeYAML(relaxed)
		if err == nil {
			return root, nil
		}
		// The relaxed text has the same lines; its error is the one Solon would meet.
		data, yerr = relaxed, err
	}
	return nil, r.syntaxError(data, yerr)
}

// decodeYAML parses one YAML document and returns its root (nil when empty).
func decodeYAML(data []byte) (root *yaml.Node, err error) {
	defer func() {
		// yaml.v3 reports errors by panicking internally; a bug there must not take the
		// caller down with it.
		if p := recover(); p != nil {
			root, err = nil, fmt.Errorf("yaml: internal parser error: %v", p)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == io.EOF:
	case err != nil:
		return nil, err
	default:
		return nil, &extraDocError{line: next.Line}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// extraDocError reports a second document in the input: Solon's loader rejects it too.
type extraDocError struct{ line int }

func (e *extraDocError) Error() string {
	return "more than one YAML document (a definition file holds one graph)"
}

var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError locates a YAML or JSON syntax error.
func (r *defReader) syntaxError(data []byte, err error) error {
	var extra *extraDocError
	var jerr *json.SyntaxError
	line, msg := 0, err.Error()
	switch {
	case errors.As(err, &extra):
		line = extra.line
	case errors.As(err, &jerr):
		line, msg = lineAt(data, int(jerr.Offset)-1), "invalid JSON: "+msg
	default:
		line, msg = yamlErrorLine(data, msg)
		msg = "invalid YAML: " + msg
	}
	// A problem found at the end of the input is on its last line, not the one after.
	lines := bytes.Count(data, []byte{'\n'})
	if !bytes.HasSuffix(data, []byte{'\n'}) {
		lines++
	}
	return &DefinitionError{Pos: Pos{File: r.file, Line: max(min(line, lines), 1)}, Msg: msg}
}

// yamlErrorLine extracts the line from a yaml.v3 message and returns the message without
// the "yaml: line N: " prefix.
func yamlErrorLine(data []byte, msg string) (int, string) {
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
		// yaml.v3 prints parser errors (not scanner errors) with the 0-based line of the
		// collection being parsed, which may start far above the problem.
		if isYAMLParserError(msg) {
			line = problemLine(data, line+1, msg)
		}
		return line, msg
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	switch {
	case strings.HasPrefix(msg, "unknown anchor '"):
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "unknown anchor '"), "'")
		if i := bytes.Index(data, []byte("*"+name)); i >= 0 {
			return lineAt(data, i), msg
		}
	case strings.Contains(msg, "UTF-8"), strings.Contains(msg, "control characters"):
		return lineAt(data, badByte(data)), msg
	}
	// yaml.v3 omits the line when the problem is on the first one.
	return 1, msg
}

// problemLine finds the first line from start on at which the document, cut after that
// line, fails with the same problem: where the parser gave up. Lines close to start are
// tried one by one; further down it bisects, on the assumption that a cut above the
// problem parses and a cut below it fails the same way. It falls back to start.
func problemLine(data []byte, start int, problem string) int {
	var ends []int // ends[k-1] is the offset just after line k
	for off := 0; off < len(data); {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			ends = append(ends, len(data))
			break
		}
		off += i + 1
		ends = append(ends, off)
	}
	fails := func(line int) bool {
		_, err := decodeYAML(data[:ends[line-1]])
		return err != nil && strings.HasSuffix(err.Error(), ": "+problem)
	}
	line, spent := start, 0
	for ; line <= len(ends) && line < start+64 && spent < 1<<22; line++ {
		if fails(line) {
			return line
		}
		spent += ends[line-1]
	}
	lo, hi := line, len(ends)
	if lo > hi || !fails(hi) {
		return start
	}
	for lo < hi {
		if mid := (lo + hi) / 2; fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// isYAMLParserError reports whether msg is one of yaml.v3's parser (not scanner) problems.
func isYAMLParserError(msg string) bool {
	for _, p := range [...]string{
		"did not find expected ',' or ", "did not find expected '-' indicator",
		"did not find expected <", "did not find expected key", "did not find expected node content",
		"found duplicate %", "found incompatible YAML document", "found undefined tag handle",
	} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// badByte returns the offset of the first invalid UTF-8 sequence or control character.
func badByte(data []byte) int {
	for i := 0; i < len(data); {
		c, size := utf8.DecodeRune(data[i:])
		if c == utf8.RuneError && size <= 1 || c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return i
		}
		i += size
	}
	return 0
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// graphSpec reads the top-level mapping.
func (r *defReader) graphSpec(root *yaml.Node) *GraphSpec {
	spec := &GraphSpec{}
	root = deref(root)
	if root == nil || root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		r.fail(1, "", "empty document: expected a mapping with id and layout")
		return spec
	}
	if root.Kind != yaml.MappingNode {
		r.fail(root.Line, "", "document must be a mapping with id and layout, not %s", kindOf(root))
		return spec
	}
	fields := r.entries(root)
	if e, ok := lookup(fields, "id"); ok {
		spec.ID = r.scalar(e, "")
		r.graph = spec.ID
	}
	if e, ok := lookup(fields, "title"); ok {
		spec.Title = r.scalar(e, "")
	}
	if e, ok := lookup(fields, "driver"); ok {
		spec.Driver = r.scalar(e, "")
	}
	if e, ok := lookup(fields, "meta"); ok {
		spec.Meta = r.meta(e, "")
	}
	layout, hasLayout := lookup(fields, "layout")
	nodes, hasNodes := lookup(fields, "nodes")
	switch {
	case hasLayout && hasNodes:
		// Solon silently drops "nodes" when "layout" is present; that loses a whole graph.
		r.fail(nodes.key.Line, "", `both "layout" and its deprecated alias "nodes" are present`)
	case hasNodes:
		layout = nodes
	case !hasLayout:
		r.fail(root.Line, "", `no "layout": expected a list of nodes`)
		return spec
	}
	spec.Nodes = r.layout(layout)
	return spec
}

// layoutNode is a node being read, with what is needed to finish it once every id is known.
type layoutNode struct {
	spec *NodeSpec
	link *yaml.Node // nil when absent or null: link to the next entry
}

// layout reads the node list: each entry, then automatic ids, then links, since an
// automatic link needs the id of the entry after it.
func (r *defReader) layout(e entry) []*NodeSpec {
	list := deref(e.val)
	if list.ShortTag() == "!!null" {
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		r.fail(list.Line, "", "%s must be a list of nodes, not %s", e.name, kindOf(list))
		return nil
	}
	items := make([]layoutNode, len(list.Content))
	explicit := make(map[string]bool, len(items))
	for i, item := range list.Content {
		items[i] = r.node(i, deref(item))
		if id := items[i].spec.ID; id != "" {
			explicit[id] = true
		}
	}
	// Solon names a node without id "n-<position>". If a document also uses that id
	// explicitly, Solon keeps only one of the two nodes; we keep both and give the
	// unnamed one a fresh id, so references to the explicit id keep their meaning.
	for i, it := range items {
		if it.spec.ID != "" {
			continue
		}
		id := "n-" + strconv.Itoa(i+1)
		for k := 2; explicit[id]; k++ {
			id = "n-" + strconv.Itoa(i+1) + "-" + strconv.Itoa(k)
		}
		explicit[id] = true
		it.spec.ID = id
	}
	out := make([]*NodeSpec, len(items))
	for i, it := range items {
		ns := it.spec
		out[i] = ns
		switch {
		case it.link != nil:
			r.links(ns, it.link)
		case i+1 < len(items) && ns.Type != End:
			// Solon also links an end node to the next entry; the link is never taken, but it
			// would count as an incoming link of that node (a join would wait for it forever).
			ns.Links = append(ns.Links, LinkSpec{NextID: items[i+1].spec.ID, Pos: ns.Pos})
		}
	}
	return out
}

// node reads one layout entry; i is its 0-based position.
func (r *defReader) node(i int, n *yaml.Node) layoutNode {
	ns := &NodeSpec{Pos: Pos{File: r.file, Line: n.Line}}
	if n.Kind != yaml.MappingNode {
		r.fail(n.Line, "", "layout entry #%d must be a mapping (a node), not %s", i+1, kindOf(n))
		return layoutNode{spec: ns, link: &yaml.Node{Kind: yaml.SequenceNode}}
	}
	fields := r.entries(n)
	if e, ok := lookup(fields, "id"); ok {
		ns.ID = r.scalar(e, "")
	}
	if e, ok := lookup(fields, "type"); ok {
		name := r.scalar(e, ns.ID)
		if strings.EqualFold(name, "iterator") {
			ns.Type = Loop // Solon's deprecated name for loop
		} else {
			// An unknown name (e.g. "startb") reads as an activity, as in Solon.
			ns.Type, _ = ParseNodeType(name)
		}
	}
	if e, ok := lookup(fields, "title"); ok {
		ns.Title = r.scalar(e, ns.ID)
	}
	if e, ok := lookup(fields, "when"); ok {
		ns.When = strings.TrimSpace(r.scalar(e, ns.ID))
	}
	if e, ok := lookup(fields, "task"); ok {
		ns.Task = strings.TrimSpace(r.scalar(e, ns.ID))
	}
	if e, ok := lookup(fields, "meta"); ok {
		ns.Meta = r.meta(e, ns.ID)
	}
	var link *yaml.Node
	if e, ok := lookup(fields, "link"); ok {
		if v := deref(e.val); v.ShortTag() != "!!null" {
			link = v
		}
	}
	return layoutNode{spec: ns, link: link}
}

// links reads a node's link: a node id, a link object, or a list of both.
func (r *defReader) links(ns *NodeSpec, v *yaml.Node) {
	switch v.Kind {
	case yaml.ScalarNode:
		r.linkTo(ns, v)
	case yaml.MappingNode:
		r.linkObject(ns, v)
	case yaml.SequenceNode:
		for _, item := range v.Content {
			switch item = deref(item); {
			case item.Kind == yaml.MappingNode:
				r.linkObject(ns, item)
			case item.Kind == yaml.ScalarNode && item.ShortTag() != "!!null":
				r.linkTo(ns, item)
			default:
				r.fail(item.Line, ns.ID, "link entry must be a node id or a mapping with nextId, not %s", kindOf(item))
			}
		}
	}
}

// linkTo adds a link written as the target's id. Any scalar is an id, as for node ids
// (Solon reads "link: 5" as a link to node "5"); Build reports targets that do not exist.
func (r *defReader) linkTo(ns *NodeSpec, v *yaml.Node) {
	if v.Value == "" {
		r.fail(v.Line, ns.ID, "link target is empty")
		return
	}
	ns.Links = append(ns.Links, LinkSpec{NextID: v.Value, Pos: Pos{File: r.file, Line: v.Line}})
}

// linkObject adds a link written as {nextId, title, when (or condition), meta, priority}.
// Other keys, such as the edge "id" and coordinates designers write, are ignored, as in Solon.
func (r *defReader) linkObject(ns *NodeSpec, v *yaml.Node) {
	ls := LinkSpec{Pos: Pos{File: r.file, Line: v.Line}}
	fields := r.entries(v)
	if e, ok := lookup(fields, "nextId"); ok {
		ls.NextID = r.scalar(e, ns.ID)
	}
	if ls.NextID == "" {
		r.fail(v.Line, ns.ID, "link has no nextId")
		return
	}
	if e, ok := lookup(fields, "title"); ok {
		ls.Title = r.scalar(e, ns.ID)
	}
	when, hasWhen := lookup(fields, "when")
	cond, hasCond := lookup(fields, "condition")
	switch {
	case hasWhen && hasCond:
		// Solon takes "when" and ignores "condition": a condition would silently vanish.
		r.fail(cond.key.Line, ns.ID, `link to %q has both "when" and its deprecated alias "condition"`, ls.NextID)
	case hasCond:
		when = cond
		fallthrough
	case hasWhen:
		ls.When = strings.TrimSpace(r.scalar(when, ns.ID))
	}
	if e, ok := lookup(fields, "meta"); ok {
		ls.Meta = r.meta(e, ns.ID)
	}
	if e, ok := lookup(fields, "priority"); ok {
		p := deref(e.val)
		switch {
		case p.ShortTag() == "!!null":
		case p.Kind == yaml.ScalarNode && p.ShortTag() == "!!int" && p.Decode(&ls.Priority) == nil:
		default:
			r.fail(p.Line, ns.ID, "link to %q: priority must be an integer, not %s", ls.NextID, describe(p))
		}
	}
	ns.Links = append(ns.Links, ls)
}

// scalar reads a string field. Any scalar is accepted as written ("task: 42" is "42").
func (r *defReader) scalar(e entry, node string) string {
	v := deref(e.val)
	switch {
	case v.Kind != yaml.ScalarNode:
		r.fail(v.Line, node, "%s must be a string, not %s", e.name, kindOf(v))
		return ""
	case v.ShortTag() == "!!null":
		return ""
	}
	return v.Value
}

// meta reads a meta mapping into plain Go values; an empty mapping reads as nil.
func (r *defReader) meta(e entry, node string) map[string]any {
	v := deref(e.val)
	switch {
	case v.ShortTag() == "!!null":
		return nil
	case v.Kind != yaml.MappingNode:
		r.fail(v.Line, node, "%s must be a mapping, not %s", e.name, kindOf(v))
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
	n = deref(n)
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
		kd := deref(k)
		if kd.Kind != yaml.ScalarNode {
			r.fail(kd.Line, "", "mapping key must be a string, not %s", kindOf(kd))
			continue
		}
		if prev, dup := find(kd.Value); dup {
			r.fail(k.Line, "", "duplicate key %q (first at line %d)", kd.Value, prev.key.Line)
			continue
		}
		add(entry{name: kd.Value, key: k, val: v})
	}
	for _, src := range merges {
		src = deref(src)
		sources := []*yaml.Node{src}
		if src.Kind == yaml.SequenceNode {
			sources = src.Content
		}
		for _, s := range sources {
			if s = deref(s); s.Kind != yaml.MappingNode {
				r.fail(s.Line, "", "a merge (<<) needs a mapping or a list of mappings, not %s", kindOf(s))
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

// deref follows aliases to the anchored node.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	if n == nil || n.Kind == yaml.AliasNode {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	return n
}

// kindOf names a node's shape for messages: "a list", "a string ("x")".
func kindOf(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.ShortTag() == "!!null":
		return "null"
	}
	kind, ok := map[string]string{"!!str": "a string", "!!int": "an integer", "!!float": "a number", "!!bool": "a boolean"}[n.ShortTag()]
	if !ok {
		kind = "a " + strings.TrimPrefix(n.ShortTag(), "!!") + " value"
	}
	return kind + " (" + strconv.Quote(n.Value) + ")"
}

// describe quotes a scalar's text, or names the shape of anything else.
func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
		return strconv.Quote(n.Value)
	}
	return kindOf(n)
}

// looksLikeJSON reports whether data starts like a JSON object or array.
func looksLikeJSON(data []byte) bool {
	data = bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(data) > 0 && (data[0] == '{' || data[0] == '[')
}

// decodeJSON builds the same node tree yaml.v3 would, with lines, using encoding/json.
func decodeJSON(data []byte) (*yaml.Node, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var newlines []int
	for i, c := range data {
		if c == '\n' {
			newlines = append(newlines, i)
		}
	}
	// Tokens end at InputOffset; JSON tokens never span lines.
	line := func() int {
		n, _ := slices.BinarySearch(newlines, int(dec.InputOffset())-1)
		return n + 1
	}
	var build func(tok json.Token) (*yaml.Node, error)
	build = func(tok json.Token) (*yaml.Node, error) {
		n := &yaml.Node{Kind: yaml.ScalarNode, Line: line()}
		switch t := tok.(type) {
		case json.Delim:
			end := json.Delim(']')
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
			if t == '{' {
				end, n.Kind, n.Tag = '}', yaml.MappingNode, "!!map"
			}
			for {
				tok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				if tok == end {
					return n, nil
				}
				child, err := build(tok)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, child)
			}
		case string:
			n.Tag, n.Value, n.Style = "!!str", t, yaml.DoubleQuotedStyle
		case json.Number:
			n.Tag, n.Value = "!!float", t.String()
			if !strings.ContainsAny(n.Value, ".eE") {
				n.Tag = "!!int"
			}
		case bool:
			n.Tag, n.Value = "!!bool", strconv.FormatBool(t)
		default:
			n.Tag, n.Value = "!!null", "null"
		}
		return n, nil
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	root, err := build(tok)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &json.SyntaxError{Offset: dec.InputOffset()}
	}
	return root, nil
}

// relaxFlowColons inserts a space after each ':' that directly precedes '[' or '{' inside
// a flow collection ("{id: g1, link:[a, b]}"), which SnakeYAML reads as a key and its
// value and yaml.v3 rejects. It skips quoted scalars, comments and block scalars, and only
// inserts within lines, so line numbers stay exact. It reports whether it changed anything.
func relaxFlowColons(data []byte) ([]byte, bool) {
	out := make([]byte, 0, len(data)+16)
	var (
		depth       int  // flow collection nesting
		quote       byte // the open quote, or 0
		expectValue bool // the next non-blank byte starts a token
		blockIndent = -1 // inside a block scalar: its lines are indented deeper than this
	)
	for start := 0; start < len(data); {
		end := len(data)
		if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
			end = start + i + 1
		}
		line := data[start:end]
		start = end
		indent := len(line) - len(bytes.TrimLeft(line, " "))
		if blockIndent >= 0 {
			if len(bytes.TrimSpace(line)) == 0 || indent > blockIndent {
				out = append(out, line...)
				continue
			}
			blockIndent = -1
		}
		keyCol, dashCol := indent, -1
		if depth == 0 && quote == 0 {
			expectValue = true
		}
	scan:
		for j := 0; j < len(line); j++ {
			c := line[j]
			next := byte('\n')
			if j+1 < len(line) {
				next = line[j+1]
			}
			switch {
			case quote == '"':
				if c == '\\' && j+1 < len(line) {
					out = append(out, c)
					j++
					c = next
				} else if c == '"' {
					quote = 0
				}
			case quote == '\'':
				if c == '\'' && next == '\'' {
					out = append(out, c)
					j++
				} else if c == '\'' {
					quote = 0
				}
			case blank(c):
			case c == '#' && (j == 0 || blank(line[j-1])):
				out = append(out, line[j:]...)
				break scan
			case (c == '"' || c == '\'') && expectValue:
				quote, expectValue = c, false
			case depth > 0:
				switch c {
				case '[', '{':
					depth++
					expectValue = true
				case ',':
					expectValue = true
				case ']', '}':
					depth--
					expectValue = false
				case ':':
					if next == '[' || next == '{' {
						out = append(out, c, ' ')
						expectValue = true
						continue
					}
					expectValue = blank(next) || next == ',' || next == ']' || next == '}'
				default:
					expectValue = false
				}
			case !expectValue: // inside a plain scalar or key in block context
				expectValue = c == ':' && blank(next)
			default: // a token starts in block context
				switch {
				case c == '[' || c == '{':
					depth++
				case (c == '-' || c == '?') && blank(next):
					dashCol, keyCol = j, j+1
					for keyCol < len(line) && line[keyCol] == ' ' {
						keyCol++
					}
				case c == '&' || c == '!': // anchor or tag: the value is still to come
					for j+1 < len(line) && !blank(line[j+1]) {
						out = append(out, line[j])
						j++
					}
					c = line[j]
				case c == '|' || c == '>':
					hdr, _, _ := bytes.Cut(line[j+1:], []byte("#"))
					if len(bytes.Trim(hdr, "0123456789+- \t\r\n")) == 0 {
						blockIndent = keyCol
						if keyCol == j && dashCol >= 0 { // "- |": deeper than the dash
							blockIndent = dashCol
						}
					}
					expectValue = false
				default:
					expectValue = false
				}
			}
			out = append(out, c)
		}
	}
	return out, len(out) != len(data)
}

func blank(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }
