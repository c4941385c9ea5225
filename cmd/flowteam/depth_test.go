package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// --max-depth sets how deep sub-graph calls nest, in run and in resume (deep.yml
// calls itself "levels" deep); the help gives the engine's default, and a limit below
// 1 is bad input.
func TestMaxDepth(t *testing.T) {
	code, out, _ := callJSON(t, cmdRun, "testdata/misc/deep.yml", "--set", "levels=40")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, flow.CodeCallDepth, out["error"].(map[string]any)["code"], "the default, %d, is too shallow", flow.DefaultMaxCallDepth)
	code, out, stderr := callJSON(t, cmdRun, "testdata/misc/deep.yml", "--set", "levels=40", "--max-depth", "40")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", out["status"])
	code, out, _ = callJSON(t, cmdRun, "testdata/misc/deep.yml", "--set", "levels=10", "--max-depth", "9")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, flow.CodeCallDepth, out["error"].(map[string]any)["code"])

	dsn := fileDSN(t)
	code, _, _ = callJSON(t, cmdRun, "testdata/misc/deep.yml", "--set", "levels=40", "--store", dsn, "--instance", "d")
	require.Equal(t, exitFail, code)
	code, _, _ = callJSON(t, cmdResume, "d", "--store", dsn, "--set", "level=0")
	require.Equal(t, exitFail, code, "not kept with the instance")
	code, out, stderr = callJSON(t, cmdResume, "d", "--store", dsn, "--set", "level=0", "--max-depth", "50")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", out["status"])

	for _, cmd := range []string{"run", "resume"} {
		code, stdout, _ := call(t, dispatch, cmd, "-h")
		require.Equal(t, exitOK, code)
		assert.Contains(t, stdout, fmt.Sprintf("--max-depth N     how deep sub-graph calls (\"#id\" tasks) may nest, at least 1\n"+
			"                    (default %d)", flow.DefaultMaxCallDepth), cmd)
		for _, bad := range []string{"0", "-1"} {
			args := []string{cmd, "testdata/misc/deep.yml", "--max-depth", bad}
			if cmd == "resume" {
				args = []string{cmd, "d", "--store", dsn, "--max-depth", bad}
			}
			code, _, stderr := call(t, dispatch, args...)
			assert.Equal(t, exitUsage, code, "%v", args)
			assert.Contains(t, stderr, "--max-depth must be at least 1, got "+bad, "%v", args)
		}
	}
}
