package export

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"github.com/flowteam/flowteam/flow"
)

// JSON writes g as a JSON definition document, the same document YAML writes (see
// YAML), indented by two spaces. NaN and infinite meta numbers have no JSON form and
// are an error naming the node.
func JSON(g *flow.Graph, opts ...WriteOption) ([]byte, error) {
	cfg := newWriteConfig(opts)
	cfg.json = true
	doc, err := document(g, cfg)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := appendJSON(&out, doc, 0); err != nil {
		return nil, fmt.Errorf("graph %q: write json: %w", g.ID, err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// appendJSON writes v at nesting level level, indented by two spaces a level as
// json.Indent would, except that from level flowDepth on everything is written on one
// line (indenting every level would make deeply nested meta grow with the square of
// its depth). Pass flowDepth for compact output.
func appendJSON(b *bytes.Buffer, v any, level int) error {
	newline := func(indent int) {
		if level < flowDepth {
			b.WriteByte('\n')
			for range indent {
				b.WriteString("  ")
			}
		}
	}
	switch v := v.(type) {
	case omap:
		b.WriteByte('{')
		for i, f := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(level + 1)
			appendJSONString(b, f.key)
			b.WriteByte(':')
			if level < flowDepth {
				b.WriteByte(' ')
			}
			if err := appendJSON(b, f.val, level+1); err != nil {
				return prefix(err, f.key)
			}
		}
		if len(v) > 0 {
			newline(level)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, item := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(level + 1)
			if err := appendJSON(b, item, level+1); err != nil {
				return prefix(err, strconv.Itoa(i))
			}
		}
		if len(v) > 0 {
			newline(level)
		}
		b.WriteByte(']')
	case string:
		appendJSONString(b, v)
	case int:
		b.WriteString(strconv.Itoa(v))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &pathError{msg: fmt.Sprintf("%v has no JSON form", v)}
		}
		b.WriteString(formatFloat(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	default:
		b.WriteString("null")
	}
	return nil
}

// appendJSONString quotes s without HTML escaping, so scripts such as "a < b" stay
// readable. Strings are valid UTF-8 (document checks). What YAML, which reads JSON
// documents first, would not take raw is escaped: C0 and C1 controls (NEL is a YAML
// line break), DEL, the line and paragraph separators, BOM and the non-characters.
func appendJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f && c <= 0x9f || c == 0x2028 || c == 0x2029 || c == 0xfeff || c == 0xfffe || c == 0xffff:
			fmt.Fprintf(b, `\u%04x`, c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
}
