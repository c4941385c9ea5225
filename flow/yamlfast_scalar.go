package flow

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// The scalars of the fast YAML path (yamlfast.go): plain, quoted and block scalars, and
// the tags yaml.v3 resolves plain scalars to.

// scalar reads a plain or quoted scalar on one line. In block context a plain scalar that
// would continue on the next line is refused; parent is the indentation that decides.
func (p *fastYAML) scalar(flow bool, parent int) *yaml.Node {
	start, line, col := p.pos, p.line, p.column(p.pos)
	switch p.src[start] {
	case '"':
		v := p.doubleQuoted()
		return p.node(yaml.ScalarNode, "!!str", yaml.DoubleQuotedStyle, v, line, col)
	case '\'':
		v := p.singleQuoted()
		return p.node(yaml.ScalarNode, "!!str", yaml.SingleQuotedStyle, v, line, col)
	}
	if !p.plainStart(flow) {
		return p.fail()
	}
	v := p.plain(flow, parent)
	if !p.ok {
		return nil
	}
	tag, ok := resolvePlain(v)
	if !ok {
		return p.fail()
	}
	if v == "<<" {
		tag = "!!merge"
	}
	return p.node(yaml.ScalarNode, tag, 0, v, line, col)
}

// plainStart reports whether a plain scalar may start at pos; it refuses some starts
// yaml.v3 allows ("?x", ":x", "-," in flow) rather than model them.
func (p *fastYAML) plainStart(flow bool) bool {
	switch c := p.src[p.pos]; c {
	case '-':
		n := p.at(p.pos + 1)
		if flow {
			return n >= '0' && n <= '9' || n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z' || n == '.'
		}
		return !p.blankz(p.pos + 1)
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ', '\n':
		return false
	}
	return true
}

// plain reads a plain scalar that ends on its line.
func (p *fastYAML) plain(flow bool, parent int) string {
	start, end := p.pos, p.pos
	for {
		chunk := p.pos
		for p.pos < len(p.src) {
			c := p.src[p.pos]
			if c == ' ' || c == '\n' || c == ':' && p.blankz(p.pos+1) {
				break
			}
			if flow && (c == ',' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}') {
				break
			}
			p.pos++
		}
		if p.pos > chunk {
			end = p.pos
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ' ' && p.src[p.pos] != '\n' {
			break
		}
		p.skipSpaces()
		if p.pos >= len(p.src) || p.src[p.pos] == '#' {
			break
		}
		if p.src[p.pos] == '\n' {
			if p.continues(flow, parent) {
				p.ok = false
			}
			break
		}
	}
	p.pos = end
	return p.src[start:end]
}

// continues reports whether the plain scalar ending at the line break at pos goes on in the
// next non-blank line, where yaml.v3 would fold it in. It does not move pos.
func (p *fastYAML) continues(flow bool, parent int) bool {
	i, lineStart := p.pos, p.pos
	for i < len(p.src) && (p.src[i] == ' ' || p.src[i] == '\n') {
		if p.src[i] == '\n' {
			lineStart = i + 1
		}
		i++
	}
	if i >= len(p.src) {
		return false
	}
	switch c := p.src[i]; {
	case c == '#':
		return false
	case flow:
		return !(c == ',' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}' || c == ':' && p.blankz(i+1))
	default:
		return i-lineStart > parent
	}
}

// singleQuoted reads a single-quoted scalar that ends on its line.
func (p *fastYAML) singleQuoted() string {
	p.pos++
	start := p.pos
	var b []byte
	for {
		i := strings.IndexAny(p.src[p.pos:], "'\n")
		if i < 0 || p.src[p.pos+i] == '\n' {
			p.ok = false
			return ""
		}
		p.pos += i
		if p.at(p.pos+1) != '\'' {
			break
		}
		b = append(b, p.src[start:p.pos+1]...)
		p.pos += 2
		start = p.pos
	}
	v := p.src[start:p.pos]
	p.pos++
	if b != nil {
		return string(append(b, v...))
	}
	return v
}

// doubleQuoted reads a double-quoted scalar that ends on its line.
func (p *fastYAML) doubleQuoted() string {
	p.pos++
	start := p.pos
	i := strings.IndexAny(p.src[p.pos:], "\"\\\n")
	if i >= 0 && p.src[p.pos+i] == '"' {
		p.pos += i + 1
		return p.src[start : p.pos-1]
	}
	var b []byte
	for p.ok {
		i := strings.IndexAny(p.src[p.pos:], "\"\\\n")
		if i < 0 || p.src[p.pos+i] == '\n' {
			p.ok = false
			break
		}
		b = append(b, p.src[p.pos:p.pos+i]...)
		p.pos += i
		if p.src[p.pos] == '"' {
			p.pos++
			break
		}
		b = p.escape(b)
	}
	return string(b)
}

// escape decodes the escape sequence at pos, the ones yaml.v3 knows.
func (p *fastYAML) escape(b []byte) []byte {
	e := p.at(p.pos + 1)
	p.pos += 2
	digits := 0
	switch e {
	case '0':
		return append(b, 0)
	case 'a':
		return append(b, '\a')
	case 'b':
		return append(b, '\b')
	case 't':
		return append(b, '\t')
	case 'n':
		return append(b, '\n')
	case 'v':
		return append(b, '\v')
	case 'f':
		return append(b, '\f')
	case 'r':
		return append(b, '\r')
	case 'e':
		return append(b, 0x1b)
	case ' ', '"', '\'', '\\':
		return append(b, e)
	case 'N':
		return utf8.AppendRune(b, 0x85)
	case '_':
		return utf8.AppendRune(b, 0xA0)
	case 'L':
		return utf8.AppendRune(b, 0x2028)
	case 'P':
		return utf8.AppendRune(b, 0x2029)
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	default:
		p.ok = false
		return b
	}
	if len(p.src)-p.pos < digits {
		p.ok = false
		return b
	}
	v, err := strconv.ParseUint(p.src[p.pos:p.pos+digits], 16, 32)
	if err != nil || v >= 0xD800 && v <= 0xDFFF || v > 0x10FFFF || strings.ContainsAny(p.src[p.pos:p.pos+digits], "+-_") {
		p.ok = false
		return b
	}
	p.pos += digits
	return utf8.AppendRune(b, rune(v))
}

// blockScalar reads a literal (|) or folded (>) scalar the way yaml.v3's scanner does,
// including its choice of indentation and its chomping. parent is the indentation of the
// enclosing block collection.
func (p *fastYAML) blockScalar(parent int) *yaml.Node {
	line, col := p.line, p.column(p.pos)
	literal := p.src[p.pos] == '|'
	p.pos++
	chomp, incr := 0, 0
	for range 2 {
		switch c := p.at(p.pos); {
		case (c == '+' || c == '-') && chomp == 0:
			chomp = 1
			if c == '-' {
				chomp = -1
			}
			p.pos++
		case c >= '1' && c <= '9' && incr == 0:
			incr = int(c - '0')
			p.pos++
		}
	}
	p.skipSpaces()
	if p.at(p.pos) == '#' {
		if i := strings.IndexByte(p.src[p.pos:], '\n'); i >= 0 {
			p.pos += i
		} else {
			p.pos = len(p.src)
		}
	}
	if p.pos < len(p.src) {
		if p.src[p.pos] != '\n' {
			return p.fail()
		}
		p.newline()
	}
	indent := 0
	if incr > 0 {
		indent = max(parent, 0) + incr
		if parent < 0 {
			indent = incr
		}
	}
	var b []byte
	breaks := p.blockBreaks(&indent, parent)
	leadingBreak, leadingBlank := false, false
	for p.indentation() == indent && p.pos < len(p.src) {
		trailingBlank := p.src[p.pos] == ' '
		if !literal && leadingBreak && !leadingBlank && !trailingBlank {
			if breaks == 0 {
				b = append(b, ' ')
			}
		} else if leadingBreak {
			b = append(b, '\n')
		}
		for ; breaks > 0; breaks-- {
			b = append(b, '\n')
		}
		leadingBlank = trailingBlank
		end := len(p.src)
		if i := strings.IndexByte(p.src[p.pos:], '\n'); i >= 0 {
			end = p.pos + i
		}
		b = append(b, p.src[p.pos:end]...)
		p.pos = end
		leadingBreak = false
		if p.pos >= len(p.src) {
			break
		}
		p.newline()
		leadingBreak = true
		breaks = p.blockBreaks(&indent, parent)
	}
	if chomp != -1 && leadingBreak {
		b = append(b, '\n')
	}
	if chomp == 1 {
		for ; breaks > 0; breaks-- {
			b = append(b, '\n')
		}
	}
	style := yaml.LiteralStyle
	if !literal {
		style = yaml.FoldedStyle
	}
	return p.node(yaml.ScalarNode, "!!str", style, string(b), line, col)
}

// blockBreaks skips the indentation and empty lines before a block scalar line, settles
// the indentation when it is still open, and returns the number of line breaks skipped.
func (p *fastYAML) blockBreaks(indent *int, parent int) int {
	breaks, maxIndent := 0, 0
	for {
		for (*indent == 0 || p.indentation() < *indent) && p.at(p.pos) == ' ' {
			p.pos++
		}
		maxIndent = max(maxIndent, p.indentation())
		if p.at(p.pos) != '\n' {
			break
		}
		p.newline()
		breaks++
	}
	if *indent == 0 {
		*indent = max(maxIndent, parent+1, 1)
	}
	return breaks
}

// resolvePlain returns the tag yaml.v3 gives a plain scalar, by the same rules and the
// same strconv calls. ok is false for scalars that may be timestamps, which it leaves to
// yaml.v3.
func resolvePlain(v string) (tag string, ok bool) {
	if v == "" {
		return "!!null", true
	}
	switch v[0] {
	case 't', 'T', 'f', 'F':
		switch v {
		case "true", "True", "TRUE", "false", "False", "FALSE":
			return "!!bool", true
		}
	case 'n', 'N', '~':
		switch v {
		case "null", "Null", "NULL", "~":
			return "!!null", true
		}
	case '.':
		switch v {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return "!!float", true
		}
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return "!!float", true
		}
	case '+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return resolveNumber(v)
	}
	return "!!str", true
}

func resolveNumber(v string) (tag string, ok bool) {
	switch v {
	case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return "!!float", true
	}
	if len(v) > 4 && v[4] == '-' && strings.Trim(v[:4], "0123456789") == "" {
		return "", false
	}
	plain := strings.ReplaceAll(v, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return "!!int", true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return "!!int", true
	}
	if yamlFloatSyntax(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return "!!float", true
		}
	}
	var digits string
	var base int
	neg := false
	switch {
	case strings.HasPrefix(plain, "0b"):
		digits, base = plain[2:], 2
	case strings.HasPrefix(plain, "-0b"):
		digits, base, neg = "-"+plain[3:], 2, true
	case strings.HasPrefix(plain, "0o"):
		digits, base = plain[2:], 8
	case strings.HasPrefix(plain, "-0o"):
		digits, base, neg = "-"+plain[3:], 8, true
	default:
		return "!!str", true
	}
	if _, err := strconv.ParseInt(digits, base, 64); err == nil {
		return "!!int", true
	}
	if !neg {
		if _, err := strconv.ParseUint(digits, base, 64); err == nil {
			return "!!int", true
		}
	}
	return "!!str", true
}

// yamlFloatSyntax matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, the float
// syntax yaml.v3 checks before it calls strconv.ParseFloat.
func yamlFloatSyntax(s string) bool {
	i := 0
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
