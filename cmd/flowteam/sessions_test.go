package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The subcommand of "sessions" is its first positional argument: flags may come
// before it, as they may come before the files of run or the id of resume.
func TestSessionsFlagsBeforeSubcommand(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "a-1")
	require.Equal(t, exitOK, code, stderr)

	code, stdout, stderr := call(t, cmdSessions, "--store", dsn, "list")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "a-1")
	code, stdout, stderr = call(t, cmdSessions, "--store="+dsn, "--status", "suspended", "list", "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"instance": "a-1"`)
	code, stdout, stderr = call(t, cmdSessions, "--store", dsn, "show", "a-1")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"instance": "a-1"`)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", dsn}, "no command"},
		{[]string{"--store", dsn, "frob"}, `unknown command "frob"`},
		{[]string{"--store", dsn, "--status", "suspended", "show", "a-1"}, "--status"},
		{[]string{"show", "a-1", "--store", dsn, "--output", "json"}, "--output"},
	} {
		code, _, stderr := call(t, cmdSessions, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
	code, stdout, _ = call(t, cmdSessions, "--store", dsn, "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "flowteam sessions list")
}

// "sessions list --status" reads the status in any case, as "audit --status" does.
func TestSessionsStatusAnyCase(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "a-1")
	require.Equal(t, exitOK, code, stderr)
	for _, status := range []string{"suspended", "Suspended", "SUSPENDED"} {
		code, stdout, stderr := call(t, cmdSessions, "list", "--store", dsn, "--status", status)
		require.Equal(t, exitOK, code, "%s: %s", status, stderr)
		assert.Contains(t, stdout, "a-1", status)
	}
	code, stdout, stderr := call(t, cmdSessions, "list", "--store", dsn, "--status", "Running")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "no instances\n", stdout)
	code, _, stderr = call(t, cmdSessions, "list", "--store", dsn, "--status", "Paused")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--status "Paused"`)
}

// An empty filter (an unset shell variable: "--status $S") is refused, as run refuses
// an empty --store: taken for no filter, it would list every instance or record.
func TestEmptyFilterFlags(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "a-1")
	require.Equal(t, exitOK, code, stderr)
	auditFile, _ := writeAuditFile(t)
	for _, tc := range []struct {
		cmd  func([]string, io.Writer, io.Writer) int
		args []string
		want string
	}{
		{cmdSessions, []string{"list", "--store", dsn, "--status", ""}, "--status must not be empty"},
		{cmdSessions, []string{"list", "--store", dsn, "--status", " "}, "--status must not be empty"},
		{cmdSessions, []string{"list", "--store", dsn, "--output="}, "--output must not be empty"},
		{cmdSessions, []string{"list", "--store="}, "--store must not be empty"},
		{cmdAudit, []string{auditFile, "--status", ""}, "--status must not be empty"},
	} {
		code, stdout, stderr := call(t, tc.cmd, tc.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stdout)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
}
