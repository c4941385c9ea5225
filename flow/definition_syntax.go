package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// This file holds the syntax layer of the definition reader: decoding YAML and JSON into
// yaml.Node trees with lines, locating syntax errors, and the relaxations Solon's parser
// allows. definition.go reads the schema from those trees.

// document decodes data into its root node (nil for an empty document). YAML is tried
// first, so JSON gets line numbers from the same parser; the fallbacks cover real Solon
// documents yaml.v3 rejects.
func (r *defReader) document(data []byte) (*yaml.Node, error) {
	root, yerr := decodeYAML(data)
	if yerr == nil {
		r.checkJSON(data)
		r.data = data
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
			r.checkJSON(data)
			r.data = relaxed
			return root, nil
		}
		// The relaxed text has the same lines; its error is the one Solon would meet.
		data, yerr = relaxed, err
	}
	return nil, r.syntaxError(data, yerr)
}

// checkJSON records, for a .json document YAML has read, where it stops being JSON.
// Accepting such a document is deliberate (see ParseDefinition); recording it lets a
// validator say that other JSON tools will reject the file.
func (r *defReader) checkJSON(data []byte) {
	if !strings.HasSuffix(strings.ToLower(r.file), ".json") {
		return
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if json.Valid(data) {
		return
	}
	var raw json.RawMessage
	var serr *json.SyntaxError
	if err := json.Unmarshal(data, &raw); errors.As(err, &serr) {
		// Offset counts the byte JSON rejected.
		r.lenient = Pos{File: r.file, Line: lineAt(data, int(serr.Offset)-1)}
	}
}

// decodeYAML parses one YAML document with yaml.v3 and returns its root (nil when empty).
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
	var deep *jsonDepthError
	line, msg := 0, err.Error()
	switch {
	case errors.As(err, &extra):
		line = extra.line
	case errors.As(err, &jerr):
		line, msg = lineAt(data, int(jerr.Offset)-1), "invalid JSON: "+msg
	case errors.As(err, &deep):
		line, msg = lineAt(data, int(deep.offset)-1), "invalid JSON: "+msg
	default:
		line, msg = yamlErrorLine(data, msg)
		msg = "invalid YAML: " + msg
	}
	// A problem found at the end of the input is on its last line, not the one after.
	ends := lineEnds(data)
	lines := len(ends)
	if lines == 0 || ends[lines-1] != len(data) {
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
		switch {
		case isYAMLParserError(msg):
			// yaml.v3 prints parser errors (not scanner errors) with the 0-based line of
			// the collection being parsed, which may start far above the problem.
			line = problemLine(data, line+1, msg)
		case isYAMLScalarError(msg):
			// These scanner errors carry the line the scalar being scanned starts on;
			// a quoted or block scalar, or the indentation after a plain one, may
			// reach lines further down.
			line = problemLine(data, line, msg)
		}
		return line, msg
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	switch {
	case strings.HasPrefix(msg, "unknown anchor '"):
		// The text "*name" may also stand in a string, a comment or a longer alias
		// above the alias itself: find the first line the parser stops at.
		return problemLine(data, 1, msg), msg
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
	ends := lineEnds(data) // ends[k-1] is the offset just after line k
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
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

// isYAMLScalarError reports whether msg is one of yaml.v3's scanner problems found
// inside a scalar (or the indentation after it) that may lie below the scalar's first line.
func isYAMLScalarError(msg string) bool {
	for _, p := range [...]string{
		"found unknown escape character", "did not find expected hexdecimal number",
		"found invalid Unicode character escape code", "found unexpected document indicator",
		"found a tab character",
	} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// badByte returns the offset of the first invalid UTF-8 sequence or character yaml.v3
// refuses: the C0 and C1 controls but tab, line feed, carriage return and NEL, DEL, and
// U+FFFE and U+FFFF.
func badByte(data []byte) int {
	for i := 0; i < len(data); {
		c, size := utf8.DecodeRune(data[i:])
		switch {
		case c == utf8.RuneError && size <= 1:
			return i
		case c == '\t', c == '\n', c == '\r', c == 0x85:
		case c < 0x20, c >= 0x7f && c < 0xa0, c == 0xfffe, c == 0xffff:
			return i
		}
		i += size
	}
	return 0
}

// lineEnds returns the offset just after each line break of data, reading "\r\n", "\n"
// and a lone "\r" as one break each, as yaml.v3 counts lines.
func lineEnds(data []byte) []int {
	var ends []int
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '\n':
			ends = append(ends, i+1)
		case data[i] == '\r' && (i+1 == len(data) || data[i+1] != '\n'):
			ends = append(ends, i+1)
		}
	}
	return ends
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	n, _ := slices.BinarySearch(lineEnds(data), off+1) // the breaks before off
	return n + 1
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
	var build func(tok json.Token, depth int) (*yaml.Node, error)
	build = func(tok json.Token, depth int) (*yaml.Node, error) {
		n := &yaml.Node{Kind: yaml.ScalarNode, Line: line()}
		switch t := tok.(type) {
		case json.Delim:
			if depth > maxJSONDepth {
				return nil, &jsonDepthError{offset: dec.InputOffset()}
			}
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
				child, err := build(tok, depth+1)
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
	root, err := build(tok, 1)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &json.SyntaxError{Offset: dec.InputOffset()}
	}
	return root, nil
}

// maxJSONDepth bounds the nesting decodeJSON follows, as yaml.v3 bounds its own at 10000
// flow levels, so that no document exhausts the stack. It allows five levels more: the
// ones a JSON document needs above a link's meta (document, layout, node, link list,
// link) that YAML may write in block style, so the JSON form of any graph the YAML
// reader loads reads back.
const maxJSONDepth = 10000 + 5

// jsonDepthError reports a JSON document nested deeper than maxJSONDepth.
type jsonDepthError struct{ offset int64 }

func (e *jsonDepthError) Error() string {
	return fmt.Sprintf("nested more than %d levels deep", maxJSONDepth)
}

// relaxFlowColons inserts a space after each ':' that directly precedes '[' or '{' inside
// a flow collection ("{id: g1, link:[a, b]}"), which SnakeYAML reads as a key and its
// value and yaml.v3 rejects. It skips quoted scalars, comments and block scalars, and only
// inserts within lines, so line numbers stay exact. It reports whether it changed anything.
func relaxFlowColons(data []byte) ([]byte, bool) {
	x := colonRelaxer{out: make([]byte, 0, len(data)+16), blockIndent: -1, plainIndent: -1}
	for start := 0; start < len(data); {
		end := len(data)
		if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
			end = start + i + 1
		}
		x.line(data[start:end])
		start = end
	}
	return x.out, len(x.out) != len(data)
}

// colonRelaxer is relaxFlowColons's scanner state, carried from line to line.
type colonRelaxer struct {
	out         []byte
	depth       int  // flow collection nesting
	quote       byte // the open quote, or 0
	expectValue bool // the next non-blank byte starts a token
	closed      bool // the last non-blank byte closed a quoted scalar
	blockIndent int  // inside a block scalar: its lines are indented deeper than this (else -1)
	plainIndent int  // a plain scalar in block context goes on in lines deeper than this (else -1)
	keyCol      int  // in the current line: where a block key starts
	dashCol     int  // in the current line: the column of a "- " or "? " indicator, or -1
}

// line copies one line (with its line break) to out, relaxed.
func (x *colonRelaxer) line(line []byte) {
	indent := len(line) - len(bytes.TrimLeft(line, " "))
	empty := len(bytes.TrimSpace(line)) == 0
	if x.blockIndent >= 0 {
		if empty || indent > x.blockIndent {
			x.out = append(x.out, line...)
			return
		}
		x.blockIndent = -1
	}
	x.keyCol, x.dashCol = indent, -1
	// A deeper line after a plain scalar is more of its text, whatever it starts with.
	continued := x.plainIndent >= 0 && indent > x.plainIndent && !empty
	if x.depth == 0 && x.quote == 0 {
		x.expectValue = !continued
	}
	for j := 0; j < len(line); j++ {
		var comment bool
		if j, comment = x.scan(line, j); comment {
			break
		}
	}
	switch {
	case empty, continued:
	case x.depth == 0 && x.quote == 0 && !x.expectValue && x.blockIndent < 0:
		x.plainIndent = x.keyCol
	default:
		x.plainIndent = -1
	}
}

// scan copies line[j] (and what belongs with it: an escaped byte, a doubled quote, an
// anchor or tag) to out and returns the index of the last byte it took; comment reports
// that the rest of the line was a comment, copied whole.
func (x *colonRelaxer) scan(line []byte, j int) (last int, comment bool) {
	c := line[j]
	next := byte('\n')
	if j+1 < len(line) {
		next = line[j+1]
	}
	afterQuote := x.closed
	if !blank(c) {
		x.closed = false
	}
	switch {
	case x.quote == '"':
		if c == '\\' && j+1 < len(line) {
			x.out = append(x.out, c)
			j++
			c = next
		} else if c == '"' {
			x.quote, x.closed = 0, true
		}
	case x.quote == '\'':
		if c == '\'' && next == '\'' {
			x.out = append(x.out, c)
			j++
		} else if c == '\'' {
			x.quote, x.closed = 0, true
		}
	case blank(c):
	case c == '#' && (j == 0 || blank(line[j-1])):
		x.out = append(x.out, line[j:]...)
		return j, true
	case (c == '"' || c == '\'') && x.expectValue:
		x.quote, x.expectValue = c, false
	case x.depth > 0:
		if x.flowByte(c, next, afterQuote) {
			return j, false
		}
	case !x.expectValue: // inside a plain scalar or key in block context
		x.expectValue = c == ':' && blank(next)
	default: // a token starts in block context
		j = x.blockToken(line, j, next)
		c = line[j]
	}
	x.out = append(x.out, c)
	return j, false
}

// flowByte follows the token structure inside a flow collection. For a ':' directly
// before '[' or '{' it writes the ':' and the space it inserts, and reports done.
func (x *colonRelaxer) flowByte(c, next byte, afterQuote bool) (done bool) {
	switch c {
	case '[', '{':
		x.depth++
		x.expectValue = true
	case ',':
		x.expectValue = true
	case ']', '}':
		x.depth--
		x.expectValue = false
	case ':':
		if next == '[' || next == '{' {
			x.out = append(x.out, c, ' ')
			x.expectValue = true
			return true
		}
		// After a quoted key ("a":"b") the value may follow the ':' at once.
		x.expectValue = afterQuote || blank(next) || next == ',' || next == ']' || next == '}'
	default:
		x.expectValue = false
	}
	return false
}

// blockToken follows a token that starts at line[j] in block context and returns the
// index of its last byte to copy with it: an anchor or tag is copied but for that byte,
// as the value is still to come.
func (x *colonRelaxer) blockToken(line []byte, j int, next byte) int {
	switch c := line[j]; {
	case c == '[' || c == '{':
		x.depth++
	case (c == '-' || c == '?') && blank(next):
		x.dashCol, x.keyCol = j, j+1
		for x.keyCol < len(line) && line[x.keyCol] == ' ' {
			x.keyCol++
		}
	case c == '&' || c == '!':
		for j+1 < len(line) && !blank(line[j+1]) {
			x.out = append(x.out, line[j])
			j++
		}
	case c == '|' || c == '>':
		hdr, _, _ := bytes.Cut(line[j+1:], []byte("#"))
		if len(bytes.Trim(hdr, "0123456789+- \t\r\n")) == 0 {
			x.blockIndent = x.keyCol
			if x.keyCol == j && x.dashCol >= 0 { // "- |": deeper than the dash
				x.blockIndent = x.dashCol
			}
		}
		x.expectValue = false
	default:
		x.expectValue = false
	}
	return j
}

func blank(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }
