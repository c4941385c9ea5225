package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pauseYML = `
id: pause
layout:
  - {id: s, type: start}
  - {id: w, task: "@wait", meta: {wait: 300ms}}
  - {id: after, task: 'context.incr("after")'}
  - {id: e, type: end}
`

// run and resume know the workers' task "@wait": a local run suspends until the time,
// a resume before it suspends again, and one after it goes on.
func TestRunAndResumeWait(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pause.yml")
	require.NoError(t, os.WriteFile(file, []byte(pauseYML), 0o600))
	dsn := fileDSN(t)
	start := time.Now()
	code, out, stderr := callJSON(t, cmdRun, file, "--store", dsn, "--instance", "p-1")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "suspended", out["status"])
	assert.True(t, strings.HasPrefix(out["reason"].(string), "until "), out["reason"])

	if time.Since(start) < 200*time.Millisecond {
		code, out, stderr = callJSON(t, cmdResume, "p-1", "--store", dsn)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, "suspended", out["status"], "resumed before its time")
	}
	// The wait runs from the node's first run, which the reason records.
	until, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(out["reason"].(string), "until "))
	require.NoError(t, err, out["reason"])
	time.Sleep(time.Until(until) + 10*time.Millisecond)
	code, out, stderr = callJSON(t, cmdResume, "p-1", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", out["status"])
	assert.EqualValues(t, 1, out["vars"].(map[string]any)["after"])
}
