package flow

import (
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// parseYAMLFast is a fast path for decodeYAML: it reads the plain subset of YAML that
// definition documents use (block mappings and sequences, flow collections, JSON, plain,
// quoted and block scalars, comments) and builds the tree yaml.v3 would build, with the same
// kinds, tags, values, styles, lines and columns (comments are dropped: the reader ignores
// them). On Solon's benchmark graph yaml.v3 makes over 200 allocations and takes tens of µs,
// half of loading the graph; this parser makes one string, two slabs, a stack and the values
// that need unescaping.
//
// It never reports an error. On anything outside the subset (anchors, aliases, tags,
// directives, document markers, complex keys, tabs, CR line breaks, multi-line plain or
// quoted scalars, timestamps) and on anything malformed it returns ok=false, and the caller
// falls back to yaml.v3, so yaml.v3 alone decides what is an error and how it reads. The
// differential test and FuzzYAMLFast hold it to that.
func parseYAMLFast(data []byte) (root *yaml.Node, ok bool) {
	size, ok := fastYAMLPrecheck(data)
	if !ok {
		return nil, false
	}
	p := &fastYAML{
		src:   string(data),
		ok:    true,
		nodes: make([]yaml.Node, 0, size),
		kids:  make([]*yaml.Node, 0, size),
		stack: make([]*yaml.Node, 0, min(size, 64)),
	}
	p.skipToContent()
	if p.pos >= len(p.src) || !p.ok {
		// An empty document is rare and cheap for yaml.v3.
		return nil, false
	}
	root = p.blockNode(-1, false)
	if !p.ok || root.Kind == yaml.ScalarNode {
		return nil, false
	}
	if p.skipToContent(); p.pos < len(p.src) || !p.ok {
		return nil, false
	}
	return root, true
}

// fastYAMLPrecheck rejects, in one pass, the bytes that would make the fast parser's view of
// lines and columns differ from yaml.v3's (tabs, CR, NEL, LS, PS, a BOM), the characters
// yaml.v3 refuses, and document markers. It returns an estimate of the node count: a key
// and its value per ':', an entry per '-' or ',', a collection and its first entry per '['
// or '{'. The nodes are most of what the fast path allocates, so the estimate is tight.
func fastYAMLPrecheck(data []byte) (nodes int, ok bool) {
	nodes = 4
	for i := 0; i < len(data); i++ {
		switch c := data[i]; yamlByteClass[c] {
		case yamlPlainByte:
		case yamlNodeByte:
			switch {
			case c == ',':
				nodes++
			case c == '[' || c == '{':
				nodes += 2
			case i+1 == len(data) || data[i+1] == ' ' || data[i+1] == '\n':
				nodes++
				if c == ':' {
					nodes++
				}
			}
		case yamlBreakByte:
			if yamlDocMarker(data[i+1:]) {
				return 0, false
			}
		case yamlHighByte:
			r, n := utf8.DecodeRune(data[i:])
			if r < 0xA0 || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF || r == utf8.RuneError && n == 1 {
				return 0, false
			}
			i += n - 1
		default:
			return 0, false
		}
	}
	return nodes, !yamlDocMarker(data)
}

// yamlDocMarker reports whether a line starts with "---" or "...", which yaml.v3 may read
// as a document boundary.
func yamlDocMarker(line []byte) bool {
	return len(line) >= 3 && (line[0] == '-' || line[0] == '.') && line[1] == line[0] && line[2] == line[0]
}

const (
	yamlBadByte   = iota // control characters, tab, CR, DEL
	yamlPlainByte        // other ASCII
	yamlNodeByte         // ':', '-', ',', '[' and '{', which may add nodes
	yamlBreakByte        // '\n'
	yamlHighByte         // starts a multi-byte character
)

var yamlByteClass = func() (t [256]byte) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = yamlPlainByte
	}
	for _, c := range ":-,[{" {
		t[c] = yamlNodeByte
	}
	t['\n'] = yamlBreakByte
	for c := 0x80; c < 0x100; c++ {
		t[c] = yamlHighByte
	}
	return t
}()

// fastYAML is the parser state. ok turns false on the first construct it does not handle;
// every method then returns quickly and the result is discarded.
type fastYAML struct {
	src       string
	pos       int
	line      int // 0-based line of pos
	lineStart int // offset of the first byte of that line
	asciiFrom int // lineStart+1 when asciiTo is known for this line
	asciiTo   int // end of the line's ASCII prefix
	depth     int
	ok        bool

	nodes []yaml.Node  // slab the nodes are carved from
	kids  []*yaml.Node // slab the Content slices are carved from
	stack []*yaml.Node // children of the collections being read
}

const fastYAMLMaxDepth = 500

func (p *fastYAML) fail() *yaml.Node {
	p.ok = false
	return nil
}

// node allocates from the slab; a full slab is replaced, not grown, so earlier pointers stay
// valid.
func (p *fastYAML) node(kind yaml.Kind, tag string, style yaml.Style, value string, line, col int) *yaml.Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]yaml.Node, 0, max(16, cap(p.nodes)/2))
	}
	// Filling the zeroed slab in place is measurably cheaper than appending a Node value.
	p.nodes = p.nodes[:len(p.nodes)+1]
	n := &p.nodes[len(p.nodes)-1]
	n.Kind, n.Style, n.Tag, n.Value, n.Line, n.Column = kind, style, tag, value, line+1, col+1
	return n
}

// children moves the collection's children from the stack into the Content slab. Empty
// collections keep a nil Content, as yaml.v3 leaves them.
func (p *fastYAML) children(base int) []*yaml.Node {
	kids := p.stack[base:]
	p.stack = p.stack[:base]
	if len(kids) == 0 {
		return nil
	}
	if len(p.kids)+len(kids) > cap(p.kids) {
		p.kids = make([]*yaml.Node, 0, max(64, 2*len(kids)))
	}
	start := len(p.kids)
	p.kids = append(p.kids, kids...)
	return p.kids[start:len(p.kids):len(p.kids)]
}

// column counts characters, not bytes, as yaml.v3 does.
func (p *fastYAML) column(pos int) int {
	if p.asciiFrom != p.lineStart+1 {
		p.asciiFrom, p.asciiTo = p.lineStart+1, p.lineStart
		for p.asciiTo < len(p.src) && p.src[p.asciiTo] < utf8.RuneSelf && p.src[p.asciiTo] != '\n' {
			p.asciiTo++
		}
	}
	if pos <= p.asciiTo {
		return pos - p.lineStart
	}
	return p.asciiTo - p.lineStart + utf8.RuneCountInString(p.src[p.asciiTo:pos])
}

func (p *fastYAML) at(i int) byte {
	if i < len(p.src) {
		return p.src[i]
	}
	return 0
}

// blankz reports whether offset i holds a space, a line break or the end.
func (p *fastYAML) blankz(i int) bool {
	return i >= len(p.src) || p.src[i] == ' ' || p.src[i] == '\n'
}

func (p *fastYAML) newline() {
	p.pos++
	p.line++
	p.lineStart = p.pos
}

func (p *fastYAML) skipSpaces() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

// skipComment skips a comment at pos, if any. A '#' glued to the token before it is left to
// yaml.v3, which reads some of those as comments and some as text.
func (p *fastYAML) skipComment() {
	if p.pos >= len(p.src) || p.src[p.pos] != '#' {
		return
	}
	if p.pos > 0 && p.src[p.pos-1] != ' ' && p.src[p.pos-1] != '\n' {
		p.ok = false
		return
	}
	if i := strings.IndexByte(p.src[p.pos:], '\n'); i >= 0 {
		p.pos += i
	} else {
		p.pos = len(p.src)
	}
}

// skipToContent skips spaces, comments and line breaks.
func (p *fastYAML) skipToContent() {
	for p.ok {
		p.skipSpaces()
		p.skipComment()
		if p.pos >= len(p.src) || p.src[p.pos] != '\n' {
			return
		}
		p.newline()
	}
}

// endLine requires the rest of the line to be blank or a comment.
func (p *fastYAML) endLine() {
	p.skipSpaces()
	p.skipComment()
	if p.pos < len(p.src) && p.src[p.pos] != '\n' {
		p.ok = false
	}
}

// indentation is the column of pos when only spaces precede it on its line (the parser
// only asks there, so bytes are characters).
func (p *fastYAML) indentation() int { return p.pos - p.lineStart }

// blockNode reads the node at pos in block context. parent is the indentation of the
// enclosing block collection (-1 at the top); inline says the node follows "key: " on its
// line, where neither a mapping nor a sequence may start.
func (p *fastYAML) blockNode(parent int, inline bool) *yaml.Node {
	if p.depth++; p.depth > fastYAMLMaxDepth {
		return p.fail()
	}
	n := p.blockNodeAt(parent, inline)
	p.depth--
	return n
}

func (p *fastYAML) blockNodeAt(parent int, inline bool) *yaml.Node {
	c := p.src[p.pos]
	switch {
	case c == '-' && p.blankz(p.pos+1):
		if inline {
			return p.fail()
		}
		return p.blockSequence(p.indentation())
	case c == '[' || c == '{':
		n := p.flowNode()
		if p.ok {
			p.endLine()
		}
		return n
	case c == '|' || c == '>':
		return p.blockScalar(parent)
	}
	col := p.column(p.pos)
	key := p.scalar(false, parent)
	if !p.ok {
		return nil
	}
	p.skipSpaces()
	if p.at(p.pos) == ':' && p.blankz(p.pos+1) {
		if inline {
			return p.fail()
		}
		return p.blockMapping(col, key)
	}
	p.endLine()
	return key
}

// blockMapping reads a block mapping whose first key, at column indent, has been read; pos
// is at the ':' after it.
func (p *fastYAML) blockMapping(indent int, key *yaml.Node) *yaml.Node {
	n := p.node(yaml.MappingNode, "!!map", 0, "", key.Line-1, key.Column-1)
	base := len(p.stack)
	for p.ok {
		if p.pos-(p.lineStart+indent) > 1000 {
			// yaml.v3 forgets a simple key that far from its ':'.
			return p.fail()
		}
		val := p.mappingValue(indent)
		p.stack = append(p.stack, key, val)
		if p.skipToContent(); p.pos >= len(p.src) || !p.ok {
			break
		}
		if col := p.indentation(); col < indent {
			break
		} else if col > indent {
			return p.fail()
		}
		key = p.scalar(false, indent)
		if p.skipSpaces(); !p.ok || p.at(p.pos) != ':' || !p.blankz(p.pos+1) {
			return p.fail()
		}
	}
	n.Content = p.children(base)
	return n
}

// mappingValue reads the value after a block mapping key's ':', which is at pos.
func (p *fastYAML) mappingValue(indent int) *yaml.Node {
	line, col := p.line, p.column(p.pos)+1
	p.pos++
	p.skipSpaces()
	if p.pos < len(p.src) && p.src[p.pos] != '#' && p.src[p.pos] != '\n' {
		return p.blockNode(indent, true)
	}
	if p.skipToContent(); p.ok && p.pos < len(p.src) {
		switch next := p.indentation(); {
		case next > indent:
			return p.blockNode(indent, false)
		case next == indent && p.src[p.pos] == '-' && p.blankz(p.pos+1):
			return p.blockSequence(indent)
		}
	}
	// yaml.v3 places an empty value just after its ':'.
	return p.node(yaml.ScalarNode, "!!null", 0, "", line, col)
}

// blockSequence reads a block sequence whose first '-' is at pos, column indent.
func (p *fastYAML) blockSequence(indent int) *yaml.Node {
	n := p.node(yaml.SequenceNode, "!!seq", 0, "", p.line, indent)
	base := len(p.stack)
	for p.ok {
		line := p.line
		p.pos++ // '-'
		p.skipSpaces()
		var item *yaml.Node
		if p.pos < len(p.src) && p.src[p.pos] != '#' && p.src[p.pos] != '\n' {
			item = p.blockNode(indent, false)
		} else if p.skipToContent(); p.ok && p.pos < len(p.src) && p.indentation() > indent {
			item = p.blockNode(indent, false)
		} else {
			// yaml.v3 places an empty entry just after its '-'.
			item = p.node(yaml.ScalarNode, "!!null", 0, "", line, indent+1)
		}
		p.stack = append(p.stack, item)
		if p.skipToContent(); p.pos >= len(p.src) || !p.ok {
			break
		}
		col := p.indentation()
		if col == indent && p.src[p.pos] == '-' && p.blankz(p.pos+1) {
			continue
		}
		if col > indent {
			return p.fail()
		}
		break
	}
	n.Content = p.children(base)
	return n
}

// flowNode reads a flow collection or scalar at pos.
func (p *fastYAML) flowNode() *yaml.Node {
	if p.depth++; p.depth > fastYAMLMaxDepth {
		return p.fail()
	}
	n := p.flowNodeAt()
	p.depth--
	return n
}

func (p *fastYAML) flowNodeAt() *yaml.Node {
	c := p.src[p.pos]
	if c != '[' && c != '{' {
		return p.scalar(true, 0)
	}
	kind, tag, end := yaml.SequenceNode, "!!seq", byte(']')
	if c == '{' {
		kind, tag, end = yaml.MappingNode, "!!map", '}'
	}
	n := p.node(kind, tag, yaml.FlowStyle, "", p.line, p.column(p.pos))
	base := len(p.stack)
	p.pos++
	p.skipToContent()
	if p.at(p.pos) == end {
		p.pos++
		return n
	}
	for p.ok {
		if p.pos >= len(p.src) {
			return p.fail()
		}
		if kind == yaml.MappingNode {
			p.flowPair()
		} else {
			item := p.flowNode()
			p.stack = append(p.stack, item)
		}
		if p.skipToContent(); !p.ok {
			return nil
		}
		if p.at(p.pos) == end {
			p.pos++
			break
		}
		if p.at(p.pos) != ',' {
			return p.fail()
		}
		p.pos++
		p.skipToContent()
		if p.at(p.pos) == end {
			// A trailing comma: valid YAML, but not worth modelling.
			return p.fail()
		}
	}
	n.Content = p.children(base)
	return n
}

// flowPair reads "key: value" or a lone key in a flow mapping; the key is a scalar, and its
// ':' is on its line.
func (p *fastYAML) flowPair() {
	c := p.src[p.pos]
	if c == '[' || c == '{' {
		p.ok = false
		return
	}
	start := p.pos
	key := p.scalar(true, 0)
	p.skipSpaces()
	if !p.ok || p.pos-start > 1000 {
		p.ok = false
		return
	}
	colon := p.at(p.pos) == ':'
	if colon {
		p.pos++
	}
	p.skipToContent()
	var val *yaml.Node
	switch {
	case !p.ok || p.pos >= len(p.src):
		p.ok = false
		return
	case p.src[p.pos] == ',' || p.src[p.pos] == '}':
		// yaml.v3 places an empty value at the token that follows it. A lone key, as
		// in SnakeYAML's "{type:end}", reads the same way.
		val = p.node(yaml.ScalarNode, "!!null", 0, "", p.line, p.column(p.pos))
	case !colon:
		p.ok = false
		return
	default:
		val = p.flowNode()
	}
	p.stack = append(p.stack, key, val)
}
