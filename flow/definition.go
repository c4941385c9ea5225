package flow

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/expr-lang/expr/file"
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
// Every node and link of the result carries the file and line it was defined at, and
// every task and condition where its script starts (TaskPos, WhenPos: see ScriptPos),
// so that a script that does not compile is reported at the line of the problem. A node
// without id gets Solon's automatic id "n-<position>" (1-based); a node without link goes
// to the next layout entry (an explicit empty list means no links); a missing type reads
// as an activity, and an unknown one is an error wrapping ErrUnknownNodeType that
// suggests the nearest known type (with SolonNodeTypes, an activity as in Solon). Node and link "when" and "task" are trimmed, as Solon trims
// them when it builds the graph. Link "priority" is a flowteam extension (Solon sets it in
// code only): an integer, higher first.
//
// Errors are *DefinitionError values (several are joined with errors.Join; use errors.As)
// that name the file and line: malformed YAML or JSON, a wrong shape (layout not a list, a
// node that is not a mapping, a link object without nextId, a priority that is not an
// integer), duplicate keys, and a document without layout. Whether links point at existing
// nodes, ids are unique and a start node exists is checked by Build.
//
// A .json document is read as YAML when it is not JSON (unquoted keys, single quotes,
// a trailing comma, comments), as Solon reads .json documents with a lenient JSON
// parser; spec.LenientJSON then names the line of the first token JSON rejects, for a
// validator to warn that other JSON tools will not read the file.
//
// Scalars follow YAML 1.2 (gopkg.in/yaml.v3), not the YAML 1.1 of Solon's SnakeYAML:
// yes, no, on and off are strings, not booleans, and 017 is the integer 17, not octal
// 15 (write 0o17). This matters only for meta values a task reads; write true, false and
// plain decimal numbers where both should agree.
func ParseDefinition(file string, data []byte, opts ...ReadOption) (*GraphSpec, error) {
	r := &defReader{file: file, budget: 10_000 + 4*len(data)}
	for _, o := range opts {
		o(&r.cfg)
	}
	root, err := r.document(data)
	if err != nil {
		return nil, err
	}
	spec := r.graphSpec(root)
	switch len(r.errs) {
	case 0:
		spec.Source, spec.LenientJSON = file, r.lenient
		return spec, nil
	case 1:
		return nil, r.errs[0]
	default:
		return nil, errors.Join(r.errs...)
	}
}

// ReadDefinitionFile reads the definition document at path (see ParseDefinition) and
// records path as the spec's Source.
func ReadDefinitionFile(path string, opts ...ReadOption) (*GraphSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read definition: %w", err)
	}
	spec, err := ParseDefinition(path, data, opts...)
	if err != nil {
		return nil, err
	}
	spec.Source = path
	return spec, nil
}

// LoadGraph parses a definition document (see ParseDefinition) and builds the graph.
func LoadGraph(file string, data []byte, opts ...ReadOption) (*Graph, error) {
	spec, err := ParseDefinition(file, data, opts...)
	if err != nil {
		return nil, err
	}
	return spec.Build()
}

// ReadOption configures how a definition document is read (ParseDefinition).
type ReadOption func(*readConfig)

type readConfig struct {
	solonTypes bool
}

// SolonNodeTypes reads a node type the engine does not know as an activity, as Solon
// does, instead of failing: for documents written for Solon that rely on it (Solon's
// own test resources write "startb" and "endb"). The node keeps the name as written in
// NodeSpec.TypeName, and export's Validate warns about it.
func SolonNodeTypes() ReadOption { return func(c *readConfig) { c.solonTypes = true } }

// defReader turns a decoded document into a GraphSpec, collecting every problem it finds.
type defReader struct {
	cfg     readConfig
	file    string
	graph   string // graph id, once known, for messages
	lenient Pos    // where a .json document YAML read stops being JSON
	data    []byte // the YAML the nodes were read from, for where their indicators are
	ends    []int  // lineEnds(data), once needed
	errs    []error
	budget  int                 // values meta may still expand to; bounds alias bombs
	active  map[*yaml.Node]bool // collections being expanded; catches alias cycles
}

func (r *defReader) fail(line int, node, format string, args ...any) {
	if line <= 0 {
		line = 1
	}
	r.errs = append(r.errs, &DefinitionError{
		Pos: Pos{File: r.file, Line: line}, Graph: r.graph, Node: node, Msg: fmt.Sprintf(format, args...),
	})
}

// failErr records a problem that wraps err; the message starts with err's.
func (r *defReader) failErr(line int, node string, err error, format string, args ...any) {
	r.fail(line, node, "%v "+format, append([]any{err}, args...)...)
	r.errs[len(r.errs)-1].(*DefinitionError).Err = err
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
	if e, ok := lookup(fields, "evaluator"); ok {
		spec.Evaluator = r.scalar(e, "")
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
			// An unknown name (e.g. "exclusiv") is an error; read as Solon reads it
			// (an activity), the name is kept so a validator can warn about it.
			var known bool
			if ns.Type, known = ParseNodeType(name); !known {
				ns.TypeName = name
				if !r.cfg.solonTypes {
					r.failErr(e.val.Line, ns.ID, ErrUnknownNodeType, "%s", unknownTypeMsg(name))
				}
			}
		}
	}
	for _, f := range fields {
		// "type:end" (no space after the colon) is a key, not a type: Solon reads it
		// the same way, silently. Keep a note so a validator can point at it.
		if strings.Contains(f.name, ":") {
			ns.Notes = append(ns.Notes, Note{Pos: Pos{File: r.file, Line: f.key.Line},
				Msg: fmt.Sprintf("key %q is not a known attribute: a missing space after the colon?", f.name)})
		}
	}
	if e, ok := lookup(fields, "title"); ok {
		ns.Title = r.scalar(e, ns.ID)
	}
	if e, ok := lookup(fields, "when"); ok {
		ns.When, ns.WhenPos = strings.TrimSpace(r.scalar(e, ns.ID)), r.scriptPos(e)
	}
	if e, ok := lookup(fields, "task"); ok {
		ns.Task, ns.TaskPos = strings.TrimSpace(r.scalar(e, ns.ID)), r.scriptPos(e)
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

// ScriptPos is where a script (a task or a condition) read from a definition document
// starts, so that a problem the evaluator finds inside it is reported at its own line.
// Pos is the line of the script's first line (its text as trimmed). When Lines is set,
// the script's lines are the document's lines, and the script's line k is the
// document's line Pos.Line+k-1: the script is a literal block scalar ("task: |"), whose
// first line is the one after the "|" (after any blank lines). Otherwise every line of
// the script is reported at Pos: a one-line value on its own line (on the key's line
// or the next); a folded block (">") at its indicator, which is the key's line, since
// folding joins lines and a position in the joined text no longer says which line it
// came from; a flow scalar over several lines where it starts; and a JSON string,
// whose "\n" escapes make lines that are not the document's, on the line of its value.
// The zero ScriptPos is a script not read from a document.
type ScriptPos struct {
	Pos
	Lines bool
}

// Locate returns where in the document lies the problem err reports in the script: the
// script's line that an expr error (*file.Error, printed as "(line:column)") names
// when the script's lines are the document's, else the script's first line. For a
// script not read from a document it returns fallback.
func (p ScriptPos) Locate(err error, fallback Pos) Pos {
	if p.Pos == (Pos{}) {
		return fallback
	}
	var fe *file.Error
	if p.Lines && errors.As(err, &fe) && fe.Line > 1 {
		return Pos{File: p.File, Line: p.Line + fe.Line - 1}
	}
	return p.Pos
}

// scriptPos locates the script held by the value of e (see ScriptPos).
func (r *defReader) scriptPos(e entry) ScriptPos {
	v := deref(e.val)
	p := ScriptPos{Pos: Pos{File: r.file, Line: v.Line}}
	if v.Kind == yaml.ScalarNode && v.Style&yaml.LiteralStyle != 0 {
		if v.Anchor != "" || v.Style&yaml.TaggedStyle != 0 {
			// Line is the anchor's or the tag's, which may stand on a line before
			// the indicator's ("task: &x", then "|").
			p.Line = r.indicatorLine(v.Line, v.Column)
		}
		// Line is the indicator's; the script, trimmed, starts below it and below the
		// blank lines the trimming dropped.
		lead := v.Value[:len(v.Value)-len(strings.TrimLeftFunc(v.Value, unicode.IsSpace))]
		p.Line += 1 + strings.Count(lead, "\n")
		p.Lines = true
	}
	return p
}

// indicatorLine returns the line of the block scalar indicator that follows the
// anchor or tag at line and column (1-based, the column in characters) in r.data, past
// other anchors and tags, blanks, comments and line breaks; line if there is none.
func (r *defReader) indicatorLine(line, column int) int {
	if r.ends == nil {
		r.ends = lineEnds(r.data) // once: a document may have many such blocks
	}
	i := 0
	if line >= 2 && line-2 < len(r.ends) {
		i = r.ends[line-2]
	}
	data := r.data
	for c := 1; c < column && i < len(data) && data[i] != '\n' && data[i] != '\r'; c++ {
		_, n := utf8.DecodeRune(data[i:])
		i += n
	}
	for l := line; i < len(data); {
		switch c := data[i]; c {
		case '|', '>':
			return l
		case '\n':
			l++
			i++
		case '\r':
			if i+1 == len(data) || data[i+1] != '\n' {
				l++ // a lone CR breaks a line, as yaml.v3 counts lines
			}
			i++
		case ' ', '\t':
			i++
		case '#', '&', '!':
			// A comment to the line's end; an anchor or a tag to a blank.
			for i < len(data) && data[i] != '\n' && data[i] != '\r' && (c == '#' || data[i] != ' ' && data[i] != '\t') {
				i++
			}
		default:
			return line
		}
	}
	return line
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
		ls.When, ls.WhenPos = strings.TrimSpace(r.scalar(when, ns.ID)), r.scriptPos(when)
	}
	if e, ok := lookup(fields, "meta"); ok {
		ls.Meta = r.meta(e, ns.ID)
	}
	if e, ok := lookup(fields, "priority"); ok {
		p := deref(e.val)
		switch {
		case p.ShortTag() == "!!null":
		case p.Kind == yaml.ScalarNode && p.ShortTag() == "!!int" && p.Decode(&ls.Priority) == nil:
		case p.Kind == yaml.ScalarNode && p.ShortTag() == "!!int":
			r.fail(p.Line, ns.ID, "link to %q: priority %s is out of range", ls.NextID, p.Value)
		default:
			r.fail(p.Line, ns.ID, "link to %q: priority must be an integer, not %s", ls.NextID, describe(p))
		}
	}
	ns.Links = append(ns.Links, ls)
}
