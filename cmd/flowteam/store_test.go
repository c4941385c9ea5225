package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncryptedSessions(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	t.Setenv(keyEnv, hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "enc-1", "--set", `salary="confidential-77"`)
	require.Equal(t, exitOK, code, stderr)
	raw, err := os.ReadFile(filepath.Join(dir, "enc-1.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "confidential-77", "the body is encrypted at rest")
	assert.Contains(t, string(raw), `"sealed"`)

	code, stdout, _ := call(t, cmdSessions, "show", "enc-1", "--store", dsn)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "confidential-77", "opened with the key")

	t.Setenv(keyEnv, "")
	code, _, stderr = call(t, cmdResume, "enc-1", "--store", dsn, "--set", "approved=true")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "encrypted")
	assert.Contains(t, stderr, "set $"+keyEnv+" to the key", "the message says how to give the key")
	t.Setenv(keyEnv, "zz")
	code, _, stderr = call(t, cmdResume, "enc-1", "--store", dsn)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, keyEnv)

	t.Setenv(keyEnv, hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	code, out, stderr := callJSON(t, cmdResume, "enc-1", "--store", dsn, "--set", "approved=true")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "confidential-77", out["vars"].(map[string]any)["salary"])
}

func TestOpenStoreDSN(t *testing.T) {
	noLeaks(t)
	mr := miniredis.RunT(t)
	for _, dsn := range []string{"memory:", "file:" + t.TempDir(), "redis://" + mr.Addr() + "/0", "redis://" + mr.Addr() + "/2?prefix=x:&ttl=1h"} {
		s, closeFn, err := openStore(dsn)
		require.NoError(t, err, dsn)
		_, err = s.List(context.Background(), "")
		assert.NoError(t, err, dsn)
		closeFn()
	}
	for _, dsn := range []string{"", "memory:x", "file:", "redis://" + mr.Addr() + "/0?ttl=soon", "redis://h:1/0?bogus=1", "postgres://x"} {
		_, _, err := openStore(dsn)
		assert.Error(t, err, dsn)
	}
}

// resume and sessions do not create a file store's directory: a mistyped path is
// reported, not created and found empty.
func TestMissingStoreDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sesions")
	dsn := "file:" + dir
	for _, args := range [][]string{
		{"resume", "x", "--store", dsn},
		{"sessions", "list", "--store", dsn},
		{"sessions", "show", "x", "--store", dsn},
		{"sessions", "delete", "x", "--store", dsn},
	} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, exitUsage, dispatch(args, &stdout, &stderr), "%v", args)
		assert.Empty(t, stdout.String(), "%v", args)
		assert.Contains(t, stderr.String(), "directory "+dir+" does not exist", "%v", args)
		assert.NoDirExists(t, dir, "%v", args)
	}
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	code, _, stderr := call(t, cmdSessions, "list", "--store", "file:"+file)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, file+" is not a directory")

	// run creates it.
	code, _, stderr = call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "a")
	require.Equal(t, exitOK, code, stderr)
	code, stdout, stderr := call(t, cmdSessions, "list", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "a ")
}

// An unreachable Redis is reported once, by the command, and not also by go-redis's
// own logger, which writes to the process's stderr: so the command runs in a child
// process (this test binary, re-executed).
func TestRedisUnreachableReportedOnce(t *testing.T) {
	if args := os.Getenv("FLOWTEAM_TEST_DISPATCH"); args != "" {
		os.Exit(dispatch(strings.Split(args, "\n"), os.Stdout, os.Stderr))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now

	cmd := exec.Command(os.Args[0], "-test.run=^TestRedisUnreachableReportedOnce$")
	cmd.Env = append(os.Environ(), "FLOWTEAM_TEST_DISPATCH="+
		strings.Join([]string{"run", approvalYML, "--store", "redis://" + addr + "/0", "--instance", "r"}, "\n"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	assert.Equal(t, exitFail, ee.ExitCode())
	assert.Empty(t, stdout.String())
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	require.Len(t, lines, 1, stderr.String())
	assert.Regexp(t, `^flowteam run: .*connection refused$`, lines[0])
}

// A --store DSN that is refused is named in the message, but never with its password:
// stderr ends up in CI logs and terminals shared on screen.
func TestStoreErrorsHideThePassword(t *testing.T) {
	for _, dsn := range []string{
		"redis://app:hunter2@127.0.0.1:6379/0?ttl=soon",
		"redis://app:hunter2@127.0.0.1:6379/0?bogus=1",
		"redis://:hunter2@127.0.0.1:6379/0/x",
		"rediss://app:hunter2@127.0.0.1:6379/0?ttl=-1h",
		"redis://app:hunter2%zz@127.0.0.1:6379/0", // does not parse as a URL
		"redsi://app:hunter2@127.0.0.1:6379/0",    // a typo in the scheme
	} {
		_, _, err := openStore(dsn)
		require.Error(t, err, dsn)
		assert.NotContains(t, err.Error(), "hunter2", dsn)
		assert.Contains(t, err.Error(), "--store", dsn)
		for _, cmd := range [][]string{{"run", approvalYML, "--store", dsn}, {"sessions", "list", "--store", dsn}} {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, exitUsage, dispatch(cmd, &stdout, &stderr), "%v", cmd)
			assert.NotContains(t, stderr.String(), "hunter2", "%v", cmd)
		}
	}
	_, _, err := openStore("redis://app:hunter2@127.0.0.1:6379/0?ttl=soon")
	assert.ErrorContains(t, err, `"redis://app:xxxxx@127.0.0.1:6379/0?ttl=soon"`, "the rest of the DSN is shown")
}

// "file:~/sessions" is in the home directory: no shell expands a "~" after "file:",
// and taken as is it would make a directory named "~" in the current one (which a
// later "rm -rf ~" would take for the home directory), where a resume from elsewhere
// would find nothing.
func TestFileStoreInHomeDirectory(t *testing.T) {
	noLeaks(t)
	def, err := filepath.Abs(approvalYML)
	require.NoError(t, err)
	home := t.TempDir()
	t.Setenv("HOME", home)
	cwd := t.TempDir()
	t.Chdir(cwd)
	code, _, stderr := call(t, cmdRun, def, "--store", "file:~/sessions", "--instance", "h")
	require.Equal(t, exitOK, code, stderr)
	assert.NoDirExists(t, filepath.Join(cwd, "~"))
	assert.FileExists(t, filepath.Join(home, "sessions", "h.json"))

	t.Chdir(t.TempDir())
	code, stdout, stderr := call(t, cmdSessions, "list", "--store", "file:~/sessions")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "h ")
	code, _, stderr = call(t, cmdResume, "h", "--store", "file:~/sessions", "--set", "approved=true")
	assert.Equal(t, exitOK, code, stderr)
}
