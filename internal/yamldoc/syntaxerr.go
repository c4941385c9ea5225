package yamldoc

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): `)

// ErrorLine locates an error Decode or DecodeJSON returned for data: the line (1-based,
// at most the last line of data) and the message to show with it, which names the
// syntax ("invalid YAML: ...", "invalid JSON: ...").
//
// yaml.v3 gives the line where the collection or scalar being parsed starts, which may
// be far above the problem, or none; ErrorLine finds the line at which the parser gives
// up by parsing cuts of data. A cut costs a parse, so the search is bounded: a few dozen
// lines one by one, then a bisection.
func ErrorLine(data []byte, err error) (line int, msg string) {
	var extra *extraDocError
	var jerr *json.SyntaxError
	var deep *jsonDepthError
	msg = err.Error()
	switch {
	case errors.As(err, &extra):
		line = extra.line
	case errors.As(err, &jerr):
		line, msg = LineAt(data, int(jerr.Offset)-1), "invalid JSON: "+msg
	case errors.As(err, &deep):
		line, msg = LineAt(data, int(deep.offset)-1), "invalid JSON: "+msg
	default:
		line, msg = yamlErrorLine(data, msg)
		msg = "invalid YAML: " + msg
	}
	// A problem found at the end of the input is on its last line, not the one after.
	ends := LineEnds(data)
	lines := len(ends)
	if lines == 0 || ends[lines-1] != len(data) {
		lines++
	}
	return max(min(line, lines), 1), msg
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
		return LineAt(data, badByte(data)), msg
	}
	// yaml.v3 omits the line when the problem is on the first one.
	return 1, msg
}

// problemLine finds the first line from start on at which the document, cut after that
// line, fails with the same problem: where the parser gave up. Lines close to start are
// tried one by one; further down it bisects, on the assumption that a cut above the
// problem parses and a cut below it fails the same way. It falls back to start.
func problemLine(data []byte, start int, problem string) int {
	ends := LineEnds(data) // ends[k-1] is the offset just after line k
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	fails := func(line int) bool {
		_, err := Decode(data[:ends[line-1]])
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
