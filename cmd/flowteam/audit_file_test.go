package main

import (
	"io/fs"
	"os"
	"path/filepath"
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

// An audit file saved by an editor that wrote a UTF-8 byte order mark keeps its first
// record (the run's STARTED): the mark is no part of the line.
func TestAuditByteOrderMark(t *testing.T) {
	path, _ := writeAuditFile(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	marked := filepath.Join(t.TempDir(), "marked.jsonl")
	require.NoError(t, os.WriteFile(marked, append([]byte("\xef\xbb\xbf"), data...), 0o600))
	code, want, _ := auditCmd(t, path)
	require.Equal(t, exitOK, code)
	code, got, stderr := auditCmd(t, marked)
	require.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	assert.Equal(t, want, got)
}
