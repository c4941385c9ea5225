package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// A --vars file that begins with a UTF-8 byte order mark (Windows editors write one)
// is read as the same file without it; errors still name the right line.
func TestDecodeVarsByteOrderMark(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	m, err := decodeVars("vars.json", []byte(bom+"{\"day\": 5, \"name\": \"ada\"}\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"day": 5, "name": "ada"}, m)

	_, err = decodeVars("vars.json", []byte(bom+"{\n\"day\": 5,\n}\n"))
	assert.ErrorContains(t, err, "vars.json:2: invalid character ','", "the trailing comma")
	_, err = decodeVars("vars.json", []byte(bom))
	assert.ErrorContains(t, err, "vars.json:1: empty file")
	// Only a leading mark is one: elsewhere it is a stray character.
	_, err = decodeVars("vars.json", []byte("\n"+bom+"{}"))
	assert.ErrorContains(t, err, "vars.json:2: invalid character")
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"5", 5},
		{"-7", -7},
		{"5.0", 5.0},
		{"2.5", 2.5},
		{"1e3", 1000.0},
		{"99999999999999999999.0", 1e20}, // a float: an integer beyond int64 is an error (below)
		{"true", true},
		{"null", nil},
		{`"5"`, "5"},
		{"abc", "abc"},
		{"", ""},
		{"5 apples", "5 apples"},
		{"007", "007"}, // not JSON: a leading zero
		{"[1, 2.5, \"x\"]", []any{1, 2.5, "x"}},
		{`{"a": {"b": 3}}`, map[string]any{"a": map[string]any{"b": 3}}},
		{"{broken", "{broken"},
		{`"1e999"`, "1e999"},
	}
	for _, tc := range tests {
		got, err := parseValue(tc.in)
		require.NoError(t, err, "parseValue(%q)", tc.in)
		assert.Equal(t, tc.want, got, "parseValue(%q)", tc.in)
	}
	// A number beyond float64 is JSON, but no value the run could compute with: taking
	// it as the string "1e999" would make every comparison with it go wrong.
	// So is an integer beyond int64: as a float64 it lost its last digits
	// (12345678901234567890 became 12345678901234567000), an id silently changed.
	for _, in := range []string{"1e999", "-1e999", "[1, 1e999]", `{"a": 1e999}`,
		"12345678901234567890", "-9223372036854775809", `{"id": 12345678901234567890}`} {
		_, err := parseValue(in)
		assert.ErrorContains(t, err, "number out of range", "parseValue(%q)", in)
	}
	_, err := decodeVars("v.json", []byte("{\n  \"a\": 1,\n  \"id\": 12345678901234567890\n}"))
	assert.EqualError(t, err, `v.json:3: variable "id": number out of range`)
	got, err := parseValue(`"12345678901234567890"`)
	require.NoError(t, err)
	assert.Equal(t, "12345678901234567890", got, "quoted, it is a string")
	got, err = parseValue("1.2345678901234567890e19")
	require.NoError(t, err)
	assert.Equal(t, 1.2345678901234567e19, got, "a float says it is one")
}

// The variables the engine writes itself cannot be set from the command line, by
// --set or --vars, in run or resume: exit 2 naming the variable.
func TestSetRefusesReservedVariables(t *testing.T) {
	varsFile := filepath.Join(t.TempDir(), "vars.json")
	require.NoError(t, os.WriteFile(varsFile, []byte(`{"a": 1, "flow.branchFailures": []}`), 0o600))
	dsn := "file:" + t.TempDir()
	for _, tc := range []struct {
		args []string
		key  string
	}{
		{[]string{"run", "testdata/misc/echo.yml", "--set", "flow.executionErrors=[]"}, flow.DefaultErrorKey},
		{[]string{"run", "testdata/misc/echo.yml", "--set", " flow.branchFailures =1"}, flow.KeyBranchFailures},
		{[]string{"run", "testdata/misc/echo.yml", "--vars", varsFile}, flow.KeyBranchFailures},
		{[]string{"resume", "some-id", "--store", dsn, "--set", "flow.executionErrors=[]"}, flow.DefaultErrorKey},
	} {
		code, stdout, stderr := call(t, dispatch, tc.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, fmt.Sprintf("variable %q is reserved", tc.key), "%v", tc.args)
	}
	code, _, stderr := call(t, dispatch, "run", "testdata/misc/echo.yml", "--set", "flow.other=1")
	assert.Equal(t, exitOK, code, "only the engine's own variables are reserved: %s", stderr)
}
