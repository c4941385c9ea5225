package yamldoc

import (
	"bytes"
)

// RelaxFlowColons inserts a space after each ':' that directly precedes '[' or '{' inside
// a flow collection ("{id: g1, link:[a, b]}"), which SnakeYAML reads as a key and its
// value and yaml.v3 rejects. It skips quoted scalars, comments and block scalars, and only
// inserts within lines, so line numbers stay exact. It reports whether it changed anything.
func RelaxFlowColons(data []byte) ([]byte, bool) {
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

// colonRelaxer is RelaxFlowColons's scanner state, carried from line to line.
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
