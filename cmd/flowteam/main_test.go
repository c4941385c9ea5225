package main

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/testkit"
)

// buildFlowteam returns the command's binary, built once per test process
// (testkit.BuildCommand). It skips the test in -short mode.
func buildFlowteam(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	return testkit.BuildCommand(t, "github.com/flowteam/flowteam/cmd/flowteam")
}

// help takes at most one command: anything more is a usage error, not a request for
// the general help that exits 0 as if the words after it meant nothing.
func TestHelpExtraArguments(t *testing.T) {
	for _, args := range [][]string{{"help", "run", "extra"}, {"help", "run", "--graph"}, {"--help", "run", "validate"}} {
		code, stdout, stderr := call(t, dispatch, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Empty(t, stdout, "%v", args)
		assert.Contains(t, stderr, "help takes one command", "%v", args)
		assert.Contains(t, stderr, `Run "flowteam -h" for usage.`, "%v: a pointer at the general help follows", args)
		assert.NotContains(t, stderr, "Commands:", "%v: the help itself does not", args)
	}
	// The other spellings of help name a command as help does.
	for _, h := range []string{"help", "-h", "-help", "--help"} {
		code, stdout, _ := call(t, dispatch, h, "validate")
		assert.Equal(t, exitOK, code, h)
		assert.Contains(t, stdout, "flowteam validate", h)
		assert.NotContains(t, stdout, "Commands:", h)
	}
}

// --output takes its value in any case, as --format and --status do.
func TestOutputFlagAnyCase(t *testing.T) {
	noLeaks(t)
	code, stdout, stderr := call(t, cmdRun, leaveYML, "--set", "day=1", "--output", "JSON")
	require.Equal(t, exitOK, code, stderr)
	assert.True(t, json.Valid([]byte(stdout)), stdout)
	code, stdout, stderr = call(t, cmdValidate, leaveYML, "--output=Json")
	require.Equal(t, exitOK, code, stderr)
	assert.True(t, json.Valid([]byte(stdout)), stdout)

	dsn := fileDSN(t)
	code, _, stderr = call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "a-1")
	require.Equal(t, exitOK, code, stderr)
	code, stdout, stderr = call(t, cmdSessions, "list", "--store", dsn, "--output", "JSON")
	require.Equal(t, exitOK, code, stderr)
	assert.True(t, json.Valid([]byte(stdout)), stdout)
	code, stdout, stderr = call(t, cmdResume, "a-1", "--store", dsn, "--set", "approved=true", "--output", "Json")
	require.Equal(t, exitOK, code, stderr)
	assert.True(t, json.Valid([]byte(stdout)), stdout)

	code, _, stderr = call(t, cmdRun, leaveYML, "--output", "XML")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--output must be text or json")
}

// A subcommand's -h takes nothing after it: "run -h extra" printing the help and
// exiting 0 would let a script's mistake pass, as "help run extra" does not. Arguments
// before -h still ask for help ("run leave.yml -h", a command line with -h appended).
func TestSubcommandHelpExtraArguments(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-h", "extra"},
		{"run", "--help", "--graph", "x"},
		{"validate", "-h", "x"},
		{"export", "-h", "x"},
		{"audit", "-h", "x"},
		{"sessions", "-h", "x"},
		{"sessions", "help", "x"},
		{"resume", "-h", "x"},
		{"resume", "-help", "-h"},
	} {
		code, stdout, stderr := call(t, dispatch, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Empty(t, stdout, "%v", args)
		assert.Contains(t, stderr, "takes no arguments", "%v", args)
		assert.Contains(t, stderr, `Run "flowteam `+args[0]+` -h" for usage.`, "%v: a pointer at the command's help follows", args)
		assert.NotContains(t, stderr, "Usage:", "%v: the help itself does not", args)
	}
	for _, args := range [][]string{
		{"run", leaveYML, "-h"},
		{"run", "--graph", "-h", "-h"}, // the first -h is --graph's value
		{"sessions", "help"},
		{"sessions", "list", "-h"},
		{"resume", "a-1", "--help"},
	} {
		code, stdout, stderr := call(t, dispatch, args...)
		assert.Equal(t, exitOK, code, "%v", args)
		assert.Contains(t, stdout, "Usage:", "%v", args)
		assert.Empty(t, stderr, "%v", args)
	}
}

// A flag that takes one value, given twice, is a usage error: the first value would be
// silently dropped ("--vars defaults.json --vars mine.json" would load only mine.json,
// "--audit a --audit b" audit to b only, "--node x --node y" show y only). The
// repeatable flags (--set, --file, --redact) and switches may repeat.
func TestSingleValueFlagGivenTwice(t *testing.T) {
	dsn := fileDSN(t)
	leaveYML, err := filepath.Abs(leaveYML)
	require.NoError(t, err)
	vars, err := filepath.Abs("testdata/misc/vars.json")
	require.NoError(t, err)
	t.Chdir(t.TempDir()) // nothing a command might write lands in the package
	for _, args := range [][]string{
		{"run", leaveYML, "--vars", "a.json", "--vars", "b.json"},
		{"run", leaveYML, "--audit", "a.jsonl", "--audit=b.jsonl"},
		{"run", leaveYML, "--instance", "a", "-instance", "b"},
		{"resume", "x", "--store", dsn, "--store", dsn},
		{"validate", leaveYML, "--output", "json", "--output", "text"},
		{"export", leaveYML, "--format", "yaml", "--format", "json"},
		{"export", leaveYML, "--format", "yaml", "-o", "a", "-o", "b"},
		{"audit", "a.jsonl", "--node", "a", "--node", "b"},
		{"sessions", "list", "--store", dsn, "--status", "failed", "--status", "suspended"},
	} {
		code, stdout, stderr := call(t, dispatch, args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
		assert.Empty(t, stdout, "%v", args)
		assert.Regexp(t, `--?[a-z]+ given twice`, stderr, "%v", args)
	}
	code, _, stderr := call(t, cmdRun, leaveYML, "--set", "day=1", "--set", "day=5", "--output", "json")
	assert.Equal(t, exitOK, code, stderr)
	code, _, stderr = call(t, cmdAudit, vars, "--summary", "--summary")
	assert.NotContains(t, stderr, "given twice")
	assert.Equal(t, exitOK, code, stderr)
}

// A usage error prints the error and one line pointing at the command's -h, not the
// whole help, which would push the error out of sight: for every command.
func TestUsageErrorPointsAtHelp(t *testing.T) {
	dsn := fileDSN(t)
	for _, tc := range []struct {
		args []string
		want string // stderr, whole
	}{
		{nil, "flowteam: no command given\nRun \"flowteam -h\" for usage.\n"},
		{[]string{"frobnicate"}, "flowteam: unknown command \"frobnicate\"\nRun \"flowteam -h\" for usage.\n"},
		{[]string{"help", "run", "x"}, "flowteam help: help takes one command, got 2 arguments\nRun \"flowteam -h\" for usage.\n"},
		{[]string{"run"}, "flowteam run: no definition file given\nRun \"flowteam run -h\" for usage.\n"},
		{[]string{"run", leaveYML, "--colour"}, "flowteam run: flag provided but not defined: -colour\nRun \"flowteam run -h\" for usage.\n"},
		{[]string{"resume", "x"}, "flowteam resume: --store is required\nRun \"flowteam resume -h\" for usage.\n"},
		{[]string{"validate"}, "flowteam validate: no definition file given\nRun \"flowteam validate -h\" for usage.\n"},
		{[]string{"export", leaveYML}, "flowteam export: --format is required (yaml, json, plantuml, mermaid, dot or svg)\n" +
			"Run \"flowteam export -h\" for usage.\n"},
		{[]string{"audit"}, "flowteam audit: no audit file given\nRun \"flowteam audit -h\" for usage.\n"},
		{[]string{"sessions"}, "flowteam sessions: no command given: want list, show or delete\nRun \"flowteam sessions -h\" for usage.\n"},
		{[]string{"sessions", "list"}, "flowteam sessions list: --store is required\nRun \"flowteam sessions -h\" for usage.\n"},
		{[]string{"sessions", "show", "--store", dsn}, "flowteam sessions show: want 1 instance id argument(s), got 0\n" +
			"Run \"flowteam sessions -h\" for usage.\n"},
		{[]string{"version", "x"}, "flowteam version: takes no arguments, got [\"x\"]\nRun \"flowteam version -h\" for usage.\n"},
	} {
		code, stdout, stderr := call(t, dispatch, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Empty(t, stdout, "%v", tc.args)
		assert.Equal(t, tc.want, stderr, "%v", tc.args)
	}
}

// call runs a subcommand with buffers and returns the exit code, stdout and stderr.
func call(t *testing.T, cmd func(args []string, stdout, stderr io.Writer) int, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cmd(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func callJSON(t *testing.T, cmd func(args []string, stdout, stderr io.Writer) int, args ...string) (int, map[string]any, string) {
	t.Helper()
	code, stdout, stderr := call(t, cmd, append(args, "--output", "json")...)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), "stdout %q stderr %q", stdout, stderr)
	return code, out, stderr
}

// noLeaks checks, after the test and its cleanups, that it left no goroutine behind.
// (The package has no TestMain: the other commands' tests are not subject to it.)
func noLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

func fileDSN(t *testing.T) string { return "file:" + filepath.Join(t.TempDir(), "sessions") }

func TestDispatch(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, dispatch(nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `Run "flowteam -h" for usage.`)

	stdout.Reset()
	assert.Equal(t, 0, dispatch([]string{"help"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "run       run a graph")

	for _, cmd := range []string{"run", "validate", "export", "resume", "sessions", "audit", "version"} {
		stdout.Reset()
		assert.Equal(t, 0, dispatch([]string{"help", cmd}, &stdout, &stderr), cmd)
		assert.Contains(t, stdout.String(), "flowteam "+cmd, "help %s prints the command's help", cmd)
		assert.NotContains(t, stdout.String(), "Commands:", "help %s", cmd)
	}
	stderr.Reset()
	assert.Equal(t, 2, dispatch([]string{"help", "frobnicate"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `unknown command "frobnicate"`)

	stderr.Reset()
	assert.Equal(t, 2, dispatch([]string{"frobnicate"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `unknown command "frobnicate"`)

	stdout.Reset()
	assert.Equal(t, 0, dispatch([]string{"run", leaveYML, "--set", "day=1"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "graph leave: completed")
}

// An instance id that starts with "-" works in every command that takes one when it
// follows "--"; given before it, it reads as an unknown flag, and the error says how
// to give it. The general help says so too.
func TestIDsStartingWithADash(t *testing.T) {
	dsn := fileDSN(t)
	code, stdout, stderr := call(t, dispatch, "run", "testdata/misc/suspend.yml", "--store", dsn, "--instance", "-neg")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "(instance -neg)")

	code, _, stderr = call(t, dispatch, "resume", "-neg", "--store", dsn)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "flowteam resume: flag provided but not defined: -neg (an id that starts with \"-\" goes after \"--\": "+
		"flowteam resume [flags] -- -neg)\nRun \"flowteam resume -h\" for usage.\n", stderr)

	code, stdout, stderr = call(t, dispatch, "sessions", "show", "--store", dsn, "--", "-neg")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"instance": "-neg"`)
	code, stdout, stderr = call(t, dispatch, "resume", "--store", dsn, "--set", "approved=true", "--", "-neg")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "(instance -neg)")
	code, stdout, stderr = call(t, dispatch, "sessions", "delete", "--store", dsn, "--", "-neg")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "deleted -neg\n", stdout)

	_, stdout, _ = call(t, dispatch, "help")
	assert.Contains(t, stdout, `"--" ends the flags`)
}
