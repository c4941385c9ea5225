package flow_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// TestMetaScalarsAreYAML12 pins what ParseDefinition documents: YAML 1.2 scalars, where
// SnakeYAML (YAML 1.1) would read booleans and an octal number.
func TestMetaScalarsAreYAML12(t *testing.T) {
	spec, err := flow.ParseDefinition("m.yml", []byte("id: m\nmeta: {a: yes, b: off, c: 017, d: 0o17, e: true}\nlayout:\n  - {type: start}\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"a": "yes", "b": "off", "c": 17, "d": 15, "e": true}, spec.Meta)
}
