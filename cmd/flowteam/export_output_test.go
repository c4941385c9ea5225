//go:build linux || darwin

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// "export -o OUT" that fails half way through writing (here: the file size limit,
// set in a child process, this test binary re-executed) leaves OUT as it was, and no
// temporary file beside it.
func TestExportFailedWriteKeepsOldOutput(t *testing.T) {
	if out := os.Getenv("FLOWTEAM_TEST_FSIZE_OUT"); out != "" {
		// The first 64 bytes of the yaml can be written, the rest not.
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 64, Max: 64}))
		code, _, stderr := exportCmd(t, leaveYML, "--format", "yaml", "-o", out)
		os.Stderr.WriteString(stderr)
		os.Exit(code)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "leave.yml")
	const old = "the previous export, which a failed one must not destroy\n"
	require.NoError(t, os.WriteFile(out, []byte(old), 0o644))

	cmd := exec.Command(os.Args[0], "-test.run=^TestExportFailedWriteKeepsOldOutput$")
	cmd.Env = append(os.Environ(), "FLOWTEAM_TEST_FSIZE_OUT="+out)
	stderr, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", stderr)
	require.Equal(t, exitFail, ee.ExitCode(), "%s", stderr)
	assert.Contains(t, string(stderr), "-o "+out+": write: file too large")
	assert.NotContains(t, string(stderr), ".tmp", "the message names the temporary file, gone by now")

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, old, string(data))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "a temporary file is left: %v", entries)
}

// Replacing OUT through a temporary file keeps what writing in place kept: a symbolic
// link stays a link (its target gets the export), the file's mode stays, and a
// device is written, not replaced.
func TestExportReplacesOutputLikeInPlace(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.yml")
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o600))
	link := filepath.Join(dir, "link.yml")
	require.NoError(t, os.Symlink(target, link))

	code, _, stderr := exportCmd(t, leaveYML, "--format", "yaml", "-o", link)
	require.Equal(t, exitOK, code, stderr)
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is still a link")
	fi, err = os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Contains(t, string(data), "id: leave")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "a temporary file is left: %v", entries)

	code, _, stderr = exportCmd(t, leaveYML, "--format", "yaml", "-o", os.DevNull)
	assert.Equal(t, exitOK, code, stderr)
}

// A read-only OUT is refused, as writing in place refused it, rather than replaced by
// a rename that needs only the directory's permission.
func TestExportKeepsAReadOnlyOutput(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write any file")
	}
	out := filepath.Join(t.TempDir(), "ro.yml")
	require.NoError(t, os.WriteFile(out, []byte("old\n"), 0o444))
	code, _, stderr := exportCmd(t, leaveYML, "--format", "yaml", "-o", out)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "permission denied")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(data))
}
