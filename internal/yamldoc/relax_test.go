package yamldoc

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRelaxFlowColons(t *testing.T) {
	tests := []struct {
		name, in, out string
	}{
		{"key and list in a flow mapping", "- {id: a, link:[b, c]}\n", "- {id: a, link: [b, c]}\n"},
		{"key and mapping, nested", "m: {a: {b:{c: 1}}}\n", "m: {a: {b: {c: 1}}}\n"},
		{"quoted key before its value", `{"a":"b", "l":[1]}` + "\n", `{"a":"b", "l": [1]}` + "\n"},
		{"several lines keep their breaks", "- {id: a,\n   link:[b]}\n- {id: b}\r\n", "- {id: a,\n   link: [b]}\n- {id: b}\r\n"},
		{"after an anchor and a tag", "m: &x !!map {l:[1]}\n", "m: &x !!map {l: [1]}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changed := RelaxFlowColons([]byte(tt.in))
			assert.True(t, changed)
			assert.Equal(t, tt.out, string(out))
		})
	}
}

func TestRelaxFlowColonsLeavesTextAlone(t *testing.T) {
	for name, in := range map[string]string{
		"double-quoted":            "- {title: \"a:[b]\", x: \"q\\\":{\"}\n",
		"single-quoted":            "- {title: 'a:[b] it''s :{'}\n",
		"comment":                  "- {id: a} # link:[b]\n",
		"block scalar":             "task: |\n  m = {k:[1]}\n  n = {j:{2}}\nnext: 1\n",
		"block scalar in a list":   "- |\n  {k:[1]}\n",
		"plain scalar continued":   "task: f(1,\n  {k:[v]})\n",
		"block context":            "a:[b]\n",
		"blank after the colon":    "- {a: [b], c: {d: e}}\n",
		"URL in a plain flow item": "- {u: http://x}\n",
	} {
		out, changed := RelaxFlowColons([]byte(in))
		assert.False(t, changed, name)
		assert.Equal(t, in, string(out), name)
	}
}

func TestRelaxFlowColonsReadsAsSolonDoes(t *testing.T) {
	in := []byte("layout:\n  - {id: s, link:[a]}\n  - id: a\n    task: |\n      x = {k:[1]}\n")
	_, err := Decode(in)
	assert.Error(t, err, "yaml.v3 refuses the unrelaxed text")
	out, _ := RelaxFlowColons(in)
	root, err := Decode(out)
	if assert.NoError(t, err) {
		s := root.Content[1].Content[0]
		assert.Equal(t, "link", s.Content[2].Value)
		assert.Equal(t, "a", s.Content[3].Content[0].Value)
		assert.Equal(t, 2, s.Content[3].Line)
		assert.Equal(t, "x = {k:[1]}\n", root.Content[1].Content[1].Content[3].Value)
	}
}
