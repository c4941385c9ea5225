package yamldoc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestDecode(t *testing.T) {
	root, err := Decode([]byte("# a comment\nid: g\nlist: [a, b]\n"))
	require.NoError(t, err)
	require.Equal(t, yaml.MappingNode, root.Kind)
	assert.Equal(t, 2, root.Line)
	assert.Equal(t, 3, root.Content[3].Line)

	for _, empty := range []string{"", "# nothing\n"} {
		root, err := Decode([]byte(empty))
		assert.NoError(t, err, "%q", empty)
		assert.Nil(t, root, "%q", empty)
	}
}

func TestDecodeRefusesASecondDocument(t *testing.T) {
	data := []byte("id: g\n---\nid: h\n")
	_, err := Decode(data)
	require.Error(t, err)
	line, msg := ErrorLine(data, err)
	assert.Equal(t, 2, line)
	assert.Equal(t, "more than one YAML document (a definition file holds one graph)", msg)
}

func TestDeref(t *testing.T) {
	root, err := Decode([]byte("a: &x {k: v}\nb: *x\n"))
	require.NoError(t, err)
	alias := root.Content[3]
	require.Equal(t, yaml.AliasNode, alias.Kind)
	assert.Same(t, root.Content[1], Deref(alias))
	assert.Same(t, root, Deref(root))

	null := Deref(nil)
	assert.Equal(t, yaml.ScalarNode, null.Kind)
	assert.Equal(t, "!!null", null.ShortTag())
	cycle := &yaml.Node{Kind: yaml.AliasNode}
	cycle.Alias = cycle
	assert.Equal(t, "!!null", Deref(cycle).ShortTag())
	assert.Equal(t, "!!null", Deref(&yaml.Node{Kind: yaml.AliasNode}).ShortTag())
}

func TestKindOfAndDescribe(t *testing.T) {
	tests := []struct {
		doc, kind, described string
	}{
		{"{a: 1}", "a mapping", "a mapping"},
		{"[1]", "a list", "a list"},
		{"~", "null", "null"},
		{"x", `a string ("x")`, `"x"`},
		{`"2"`, `a string ("2")`, `"2"`},
		{"42", `an integer ("42")`, `"42"`},
		{"1.5", `a number ("1.5")`, `"1.5"`},
		{"true", `a boolean ("true")`, `"true"`},
		{"!!binary aGk=", `a binary value ("aGk=")`, `"aGk="`},
	}
	for _, tt := range tests {
		root, err := Decode([]byte(tt.doc))
		require.NoError(t, err, tt.doc)
		assert.Equal(t, tt.kind, KindOf(root), tt.doc)
		assert.Equal(t, tt.described, Describe(root), tt.doc)
	}
}

func TestLineAt(t *testing.T) {
	// yaml.v3 counts "\r\n", "\n" and a lone "\r" as one break each.
	data := []byte("a\r\nb\nc\rd")
	assert.Equal(t, []int{3, 5, 7}, LineEnds(data))
	for off, line := range []int{1, 1, 1, 2, 2, 3, 3, 4, 4} {
		assert.Equal(t, line, LineAt(data, off), "offset %d", off)
	}
	assert.Equal(t, 1, LineAt(data, -5))
	assert.Equal(t, 4, LineAt(data, 100))
	assert.Equal(t, 1, LineAt(nil, 0))
	assert.Equal(t, []int{2, 4}, LineEnds([]byte("x\ny\n")))
}
