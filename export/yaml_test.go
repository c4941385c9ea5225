package export_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
)

// Solon reads definitions with a YAML 1.1 parser (SnakeYAML), which resolves more
// plain scalars than YAML 1.2 does: yes/no/on/off/y/n in any of their spellings are
// booleans, and 1:10:2 (a loop stepper) is the sexagesimal integer 4202. Written
// unquoted, such a string id, title, condition or meta value changed type in Solon,
// though flowteam's own reader read it back. Every one is quoted; a string no YAML
// version resolves stays plain.
func TestYAMLQuotesWhatYAML11Resolves(t *testing.T) {
	special := []string{"yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
		"y", "Y", "n", "N", "1:10:2", "1:20", "-1:30", "190:20:30.15", "="}
	plain := []string{"yess", "onn", "1:60", "0:10", "a:b", "yes please", "1...4"}
	s := flow.NewSpec("y11")
	meta := map[string]any{}
	for i, v := range append(append([]string{}, special...), plain...) {
		meta["k"+strings.Repeat("x", i)] = v
	}
	s.Start("s").LinkTo("e").SetMeta("vals", meta)
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	out, err := export.YAML(g)
	require.NoError(t, err)
	text := string(out)
	for _, v := range special {
		assert.Contains(t, text, `: "`+v+`"`, "%q must be quoted", v)
	}
	for _, v := range plain {
		assert.Contains(t, text, ": "+v+"\n", "%q needs no quotes", v)
	}
	back, err := flow.ParseDefinition("y11.yml", out)
	require.NoError(t, err)
	assert.Equal(t, meta, back.NodeByID("s").Meta["vals"])
}
