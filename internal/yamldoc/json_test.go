package yamldoc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// shape prints a tree with each node's kind, tag, value and line, for comparing trees.
func shape(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%s%s %s @%d\n", strings.Repeat(" ", depth), n.ShortTag(), n.Value, n.Line)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

func TestDecodeJSONMatchesYAML(t *testing.T) {
	data := []byte("\xef\xbb\xbf{\n  \"id\": \"g\",\n  \"n\": [1, 2.5, -3e2,\n    true, null],\n  \"m\": {\"k\": {}}\n}\n")
	fromYAML, err := Decode(data)
	require.NoError(t, err)
	fromJSON, err := DecodeJSON(data)
	require.NoError(t, err)
	assert.Equal(t, shape(fromYAML), shape(fromJSON))
	assert.Equal(t, yaml.DoubleQuotedStyle, fromJSON.Content[1].Style)
}

func TestDecodeJSONReadsWhatYAMLRefuses(t *testing.T) {
	long := strings.Repeat("k", 1100)
	data := []byte(`{"url": "http:\/\/x", "` + long + `": 1}`)
	_, err := Decode(data)
	require.Error(t, err)
	root, err := DecodeJSON(data)
	require.NoError(t, err)
	assert.Equal(t, "http://x", root.Content[1].Value)
	assert.Equal(t, long, root.Content[2].Value)
}

func TestDecodeJSONErrors(t *testing.T) {
	for _, doc := range []string{`{"a": 1} x`, `{"a": }`, `[1, 2`, ``} {
		_, err := DecodeJSON([]byte(doc))
		assert.Error(t, err, doc)
	}
	deep := []byte(strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1))
	_, err := DecodeJSON(deep)
	require.Error(t, err)
	_, msg := ErrorLine(deep, err)
	assert.Equal(t, "invalid JSON: nested more than 10005 levels deep", msg)
	ok := []byte(strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth))
	_, err = DecodeJSON(ok)
	assert.NoError(t, err)
}

func TestLooksLikeJSON(t *testing.T) {
	for doc, want := range map[string]bool{
		"{}": true, " \n[1]": true, "\xef\xbb\xbf {": true,
		"id: g": false, "": false, "# {": false,
	} {
		assert.Equal(t, want, LooksLikeJSON([]byte(doc)), "%q", doc)
	}
}

func TestJSONErrorLine(t *testing.T) {
	assert.Zero(t, JSONErrorLine([]byte("\xef\xbb\xbf{\"a\": [1, 2]}")))
	// YAML reads these; JSON stops at the comment and the trailing comma.
	assert.Equal(t, 2, JSONErrorLine([]byte("{\n  # note\n  \"a\": 1\n}")))
	assert.Equal(t, 3, JSONErrorLine([]byte("{\n  \"a\": [1,\n  ]\n}")))
}
