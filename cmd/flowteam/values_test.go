package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A --vars file that begins with a UTF-8 byte order mark (Windows editors write one)
// is read as the same file without it; errors still name the right line.
func TestDecodeVarsByteOrderMark(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	m, err := decodeVars("vars.json", []byte(bom+"{\"day\": 5, \"name\": \"ada\"}\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"day": 5, "name": "ada"}, m)

	_, err = decodeVars("vars.json", []byte(bom+"{\n\"day\": 5,\n}\n"))
	assert.ErrorContains(t, err, "vars.json:3:")
	_, err = decodeVars("vars.json", []byte(bom))
	assert.ErrorContains(t, err, "vars.json:1: empty file")
	// Only a leading mark is one: elsewhere it is a stray character.
	_, err = decodeVars("vars.json", []byte("\n"+bom+"{}"))
	assert.ErrorContains(t, err, "vars.json:2: invalid character")
}
