package yamldoc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorLine(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		line int
		msg  string
	}{
		// yaml.v3 names the line of the enclosing collection for parser errors.
		{"unclosed flow list", "a: 1\nb:\n  - {c: d, e: [f}\n", 3, "invalid YAML: did not find expected ',' or ']'"},
		{"bad indentation", "l:\n  - a: 1\n    b: 2\n   c: 3\n", 4, "invalid YAML: did not find expected '-' indicator"},
		// It names the line a scalar starts on for problems found further into it.
		{"tab below a plain scalar", "l:\n  - a: x\n\tb: y\n", 3, "invalid YAML: found a tab character that violates indentation"},
		{"bad escape in a quote", "a: \"x\n  y \\q\"\n", 2, "invalid YAML: found unknown escape character"},
		{"document marker in a quote", "a: \"x\n\n---\n", 3, "invalid YAML: found unexpected document indicator"},
		// It names no line for a problem on the first one.
		{"first line", "a: b: c\nd: e\n", 1, "invalid YAML: mapping values are not allowed in this context"},
		{"unknown anchor", "a: \"*x\"\nb: *x\n", 2, "invalid YAML: unknown anchor 'x' referenced"},
		{"control character", "a: 1\nb: \"\x01\"\n", 2, "invalid YAML: control characters are not allowed"},
		{"invalid UTF-8", "a: 1\nb: 2\nc: \xff\n", 3, "invalid YAML: invalid leading UTF-8 octet"},
		{"lone CR breaks", "a: 1\rb:\r  - {c: [d}\r", 3, "invalid YAML: did not find expected ',' or ']'"},
		// The end of the input is on its last line, not on the one after it.
		{"unterminated quote at the end", "a: 1\nb: \"x\n", 2, "invalid YAML: found unexpected end of stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.doc)
			_, err := Decode(data)
			require.Error(t, err)
			line, msg := ErrorLine(data, err)
			assert.Equal(t, tt.line, line, "error: %v", err)
			assert.Equal(t, tt.msg, msg)
		})
	}
}

func TestErrorLineFarBelowItsCollection(t *testing.T) {
	// Further than the lines tried one by one: the search bisects.
	var doc strings.Builder
	doc.WriteString("list:\n")
	for i := range 300 {
		fmt.Fprintf(&doc, "  - {id: n%d}\n", i)
	}
	doc.WriteString("  - id: bad\n   x: 1\n  - {id: after}\n")
	data := []byte(doc.String())
	_, err := Decode(data)
	require.Error(t, err)
	line, _ := ErrorLine(data, err)
	assert.Equal(t, 303, line)
}

func TestErrorLineOfJSON(t *testing.T) {
	data := []byte("{\n  \"a\": 1,\n  \"b\": [1 2]\n}\n")
	_, err := DecodeJSON(data)
	require.Error(t, err)
	line, msg := ErrorLine(data, err)
	assert.Equal(t, 3, line)
	assert.True(t, strings.HasPrefix(msg, "invalid JSON: "), msg)
}
