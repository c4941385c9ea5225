package main

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unwritableDir returns an existing directory in which no file can be created: a
// read-only one, or for root (whom permissions do not stop) /sys or /proc. It skips the
// test where it finds none.
func unwritableDir(t *testing.T) string {
	t.Helper()
	ro := t.TempDir()
	require.NoError(t, os.Chmod(ro, 0o500))
	t.Cleanup(func() { os.Chmod(ro, 0o700) })
	for _, dir := range []string{ro, "/sys", "/proc"} {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		f, err := os.CreateTemp(dir, "probe-*")
		if err != nil {
			return dir
		}
		f.Close()
		os.Remove(f.Name())
	}
	t.Skip("no directory here refuses new files")
	return ""
}

// "--audit FILE" in an existing directory that does not let FILE be created is bad
// input found before the run starts (exit 2, nothing run, nothing created), not a run
// that fails at its first record; the same for resume.
func TestAuditUnwritableDirectory(t *testing.T) {
	noLeaks(t)
	path := filepath.Join(unwritableDir(t), "out.jsonl")
	code, stdout, stderr := call(t, cmdRun, leaveYML, "--set", "day=5", "--audit", path)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Empty(t, stdout, "the run started")
	assert.Contains(t, stderr, "--audit: "+path)
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist)

	dsn := fileDSN(t)
	code, _, stderr = call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "a-1")
	require.Equal(t, exitOK, code, stderr)
	code, stdout, stderr = call(t, cmdResume, "a-1", "--store", dsn, "--set", "approved=true", "--audit", path)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Empty(t, stdout, "the run resumed")
	code, stdout, _ = call(t, cmdSessions, "list", "--store", dsn, "--status", "suspended")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "a-1", "the instance is still suspended")
}

// Checking the directory leaves nothing in it: a run that starts creates FILE alone,
// and one that does not start leaves the directory as it was.
func TestAuditCheckLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	code, _, stderr := call(t, cmdRun, "testdata/bad/syntax.yml", "--audit", path)
	require.Equal(t, exitUsage, code, stderr)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)

	code, _, stderr = call(t, cmdRun, leaveYML, "--set", "day=5", "--audit", path)
	require.Equal(t, exitOK, code, stderr)
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "out.jsonl", entries[0].Name())
}

// "--audit -" is a usage error, not a file named "-": the run's outcome goes to stdout.
func TestRunAuditToDashIsAUsageError(t *testing.T) {
	dir := t.TempDir()
	leave, err := filepath.Abs(leaveYML)
	require.NoError(t, err)
	t.Chdir(dir)
	code, _, stderr := runCmd(t, leave, "--set", "day=5", "--audit", "-")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--audit: "-" is not a file`)
	assert.NoFileExists(t, filepath.Join(dir, "-"))
}

// "flowteam run --audit FILE" appends each run's records; "flowteam audit" reads them.
func TestRunAuditFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leave.audit.jsonl")
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, cmdRun([]string{"../../examples/leave/leave.yml", "--set", "day=5", "--instance", "req-1", "--audit", path}, &stdout, &stderr), stderr.String())
	require.Equal(t, exitFail, cmdRun([]string{"--audit", path, "../../examples/leave/leave.yml", "--instance", "req-2"}, &stdout, &stderr))

	code, out, errOut := auditCmd(t, path)
	require.Equal(t, exitOK, code, errOut)
	blocks := strings.Split(strings.TrimSpace(out), "\n\n")
	require.Len(t, blocks, 2, out)
	assert.Contains(t, blocks[0], "instance req-1  graph leave")
	assert.Contains(t, blocks[0], "-> COMPLETED")
	assert.Contains(t, blocks[1], "instance req-2  graph leave")
	assert.Contains(t, blocks[1], "-> FAILED")
	assert.Contains(t, blocks[1], "FAILED  ")

	code, out, _ = auditCmd(t, path, "--instance", "req-1", "--summary")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "1 run: 1 completed")

	// An audit file that cannot be written fails the run instead of losing the audit.
	code = cmdRun([]string{"../../examples/leave/leave.yml", "--set", "day=5", "--audit", t.TempDir()}, &stdout, &stderr)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr.String(), "--audit")
	if _, err := os.Stat("/dev/full"); err == nil {
		stdout.Reset()
		code = cmdRun([]string{"../../examples/leave/leave.yml", "--set", "day=5", "--audit", "/dev/full"}, &stdout, &stderr)
		assert.Equal(t, exitFail, code)
		assert.Contains(t, stdout.String(), "no space left on device")
	}
}

// A command that ends before its run starts (bad input, a lost claim) leaves no audit
// file behind: "--audit OUT" must not create OUT for a run that never happened.
func TestAuditFileNotCreatedWithoutRun(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "taken")
	require.Equal(t, exitOK, code, stderr)
	for _, tc := range []struct {
		name string
		cmd  func(args []string, stdout, stderr io.Writer) int
		args []string
		code int
	}{
		{"syntax error", cmdRun, []string{"testdata/bad/syntax.yml"}, exitUsage},
		{"missing link", cmdRun, []string{"testdata/bad/missing-link.yml"}, exitUsage},
		{"go task", cmdRun, []string{"testdata/misc/gotask.yml"}, exitUsage},
		{"unknown graph", cmdRun, []string{leaveYML, "--graph", "nope"}, exitUsage},
		{"bad store", cmdRun, []string{leaveYML, "--store", "bogus:"}, exitUsage},
		{"bad durability", cmdRun, []string{leaveYML, "--store", dsn, "--durability", "never"}, exitUsage},
		{"instance exists", cmdRun, []string{approvalYML, "--store", dsn, "--instance", "taken"}, exitConflict},
		{"resume unknown", cmdResume, []string{"nobody", "--store", dsn}, exitUsage},
		{"resume bad file", cmdResume, []string{"taken", "--store", dsn, "--file", "testdata/bad/syntax.yml"}, exitUsage},
		{"resume changed", cmdResume, []string{"taken", "--store", dsn, "--file", "testdata/session/approval-v2.yml"}, exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.jsonl")
			code, _, stderr := call(t, tc.cmd, append(tc.args, "--audit", path)...)
			require.Equal(t, tc.code, code, stderr)
			_, err := os.Stat(path)
			assert.ErrorIs(t, err, fs.ErrNotExist, "the audit file was created")
		})
	}
}
