package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const leaveSuspendYML = "../../examples/leave-suspend/leave-suspend.yml"

// The leave-suspend example run with --redact employee leaves the employee's name in
// no artifact: not in the output (text and JSON, whose suspend reason quotes it), the
// store file, the audit file, "sessions list" or "sessions show", nor after a resume
// that supplies the name again without --redact.
func TestRedactLeavesNoTraceOfTheValue(t *testing.T) {
	noLeaks(t)
	const name = "Ada Lovelace"
	dir := t.TempDir()
	store := "file:" + filepath.Join(dir, "sessions")
	audit := filepath.Join(dir, "audit.jsonl")
	artifacts := map[string]string{}
	add := func(what string, code int, stdout, stderr string) {
		t.Helper()
		require.Equal(t, exitOK, code, "%s: %s", what, stderr)
		artifacts[what] = stdout + stderr
	}
	for _, format := range []string{"text", "json"} {
		code, stdout, stderr := call(t, cmdRun, leaveSuspendYML, "--store", store, "--instance", "leave-"+format,
			"--set", `employee="`+name+`"`, "--set", "days=5", "--redact", "employee", "--audit", audit, "--output", format)
		add("run --output "+format, code, stdout, stderr)
		assert.Contains(t, stdout, "waiting for the manager to approve 5 days for ***", format)
	}
	code, stdout, stderr := call(t, cmdSessions, "list", "--store", store)
	add("sessions list", code, stdout, stderr)
	code, stdout, stderr = call(t, cmdSessions, "list", "--store", store, "--output", "json")
	add("sessions list --output json", code, stdout, stderr)
	code, stdout, stderr = call(t, cmdSessions, "show", "leave-text", "--store", store)
	add("sessions show", code, stdout, stderr)
	code, stdout, stderr = call(t, cmdResume, "leave-json", "--store", store, "--set", "approved=true",
		"--set", `employee="`+name+`"`, "--set", `note="approved for `+name+`"`, "--audit", audit, "--output", "json")
	add("resume", code, stdout, stderr)
	code, stdout, stderr = call(t, cmdAudit, audit)
	add("audit", code, stdout, stderr)
	addFiles(t, artifacts, dir)
	for _, f := range []string{audit, filepath.Join(dir, "sessions", "leave-text.json"), filepath.Join(dir, "sessions", "leave-json.json")} {
		require.Contains(t, artifacts, f)
	}
	for what, text := range artifacts {
		assert.NotContains(t, text, name, what)
		assert.NotContains(t, strings.ToLower(text), "lovelace", what)
	}
	assert.Contains(t, artifacts["resume"], `"note": "approved for ***"`, "masked where another variable copies it")
}

// addFiles adds to artifacts the content of every file under dir, by path.
func addFiles(t *testing.T, artifacts map[string]string, dir string) {
	t.Helper()
	require.NoError(t, filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, err := os.ReadFile(path)
			artifacts[path] = string(b)
			return err
		}
		return err
	}))
}

// --redact and --redact-pattern apply without a store, to the output; a pattern is
// checked before anything runs.
func TestRedactFlagsWithoutStore(t *testing.T) {
	code, stdout, stderr := runCmd(t, leaveYML, "--set", "day=1", "--set", `who="Grace Hopper"`,
		"--set", `card="4111-1111"`, "--set", `note="for Grace Hopper, 4111-1111"`, "--set", "api_key=k-123456",
		"--redact", "who", "--redact-pattern", `\d{4}-\d{4}`, "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "Grace")
	assert.NotContains(t, stdout, "4111")
	assert.NotContains(t, stdout, "k-123456", "a variable under a sensitive key is masked by default")
	assert.Contains(t, stdout, `"note": "for ***, ***"`)
	for _, tc := range []struct{ pattern, want string }{
		{"(", "--redact-pattern \"(\""},
		{"a*", "matches the empty text"},
		{"", "--redact-pattern must not be empty"},
	} {
		code, _, stderr = runCmd(t, leaveYML, "--set", "day=1", "--redact-pattern", tc.pattern)
		assert.Equal(t, exitUsage, code, tc.pattern)
		assert.Contains(t, stderr, tc.want, tc.pattern)
	}
}

// The patterns are recorded with the instance, and a resume applies them again.
func TestResumeKeepsRedactPatterns(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "p", "--redact-pattern", `card-\d+`)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, loadSnap(t, dir, "p").Meta, `redact-pattern=card-\d+`)
	code, stdout, stderr := call(t, cmdResume, "p", "--store", dsn, "--set", "approved=true", "--set", `ref="card-42"`)
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "card-42")
	raw, err := os.ReadFile(filepath.Join(dir, "p.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "card-42")
}
