package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Text output pads a first column to its widest value of at most 40 characters: a
// longer one (a deep call path, a long variable name) is printed as it is and does not
// push the second column of every other line far to the right.
func TestTextColumnsPadToFortyAtMost(t *testing.T) {
	long := strings.Repeat("v", 41)
	code, stdout, stderr := call(t, cmdRun, "testdata/misc/deep.yml", "--set", "levels=5", "--set", long+"=1")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(stdout, "\n")
	assert.Contains(t, lines, "  "+long+"  1")
	assert.Contains(t, lines, "  level   6", "padded to levels, not to the long name")
	assert.Contains(t, lines, "  levels  5")
	path34 := "deep/call/deep/call/deep/call/deep" // the widest path of at most 40
	assert.Contains(t, lines, "  deep"+strings.Repeat(" ", len(path34)-len("deep"))+"  e")
	assert.Contains(t, lines, "  "+path34+"  e")
	assert.Contains(t, lines, "  "+path34+"/call/deep  e", "44 characters: as it is")

	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	code, _, stderr = call(t, cmdRun, "testdata/misc/deep.yml", "--set", "levels=5", "--audit", audit)
	require.Equal(t, exitOK, code, stderr)
	code, out, stderr := auditCmd(t, audit, "--summary")
	require.Equal(t, exitOK, code, stderr)
	lines = strings.Split(out, "\n")
	widest := len(path34 + ":more") // 39
	assert.True(t, strings.HasPrefix(lines[0], "NODE"+strings.Repeat(" ", widest-len("NODE"))+"  EXECS"), lines[0])
	assert.Contains(t, out, "\ndeep:s"+strings.Repeat(" ", widest-len("deep:s"))+"      1          1")
	assert.Contains(t, out, "\n"+path34+"/call/deep:s      1          1", "45 characters: as it is")
	for _, l := range lines {
		assert.Equal(t, strings.TrimRight(l, " "), l, "no line ends in spaces")
	}
	_, err := os.Stat(audit)
	require.NoError(t, err)
}
