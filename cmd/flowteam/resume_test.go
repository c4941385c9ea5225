package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

const approvalYML = "testdata/session/approval.yml"

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

func TestRunAndResumeWithStore(t *testing.T) {
	noLeaks(t)
	mr := miniredis.RunT(t)
	for name, dsn := range map[string]string{"file": fileDSN(t), "redis": "redis://" + mr.Addr() + "/0?prefix=cli:"} {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := callJSON(t, cmdRun, approvalYML, "--store", dsn, "--instance", "req-1")
			require.Equal(t, exitOK, code, stderr)
			assert.Equal(t, "suspended", out["status"])

			code, out, stderr = callJSON(t, cmdResume, "req-1", "--store", dsn, "--set", "approved=true")
			require.Equal(t, exitOK, code, stderr)
			assert.Equal(t, "completed", out["status"], "same output as run")
			vars := out["vars"].(map[string]any)
			assert.Equal(t, "approved", vars["status"])
			assert.EqualValues(t, 1, vars["submitted"])
			for _, k := range []string{"instance", "graph", "status", "steps", "vars", "last", "error", "errors"} {
				assert.Contains(t, out, k)
			}

			code, _, stderr = call(t, cmdResume, "req-1", "--store", dsn)
			assert.Equal(t, exitConflict, code, "a completed instance: conflict")
			assert.Contains(t, stderr, "already completed")
			code, _, stderr = call(t, cmdResume, "nobody", "--store", dsn)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr, "not found")
			code, _, stderr = call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "req-1")
			assert.Equal(t, exitConflict, code, "starting an existing instance: conflict")
			assert.Contains(t, stderr, "already exists")
		})
	}
}

func TestResumeChangedDefinition(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "req-2")
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = call(t, cmdResume, "req-2", "--store", dsn, "--file", "testdata/session/approval-v2.yml", "--set", "approved=true")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "definition changed")
	eng := flow.NewEngine()
	g1, err := eng.LoadFile(approvalYML)
	require.NoError(t, err)
	g2, err := flow.NewEngine().LoadFile("testdata/session/approval-v2.yml")
	require.NoError(t, err)
	assert.Contains(t, stderr, g1.Hash(), "names the stored hash")
	assert.Contains(t, stderr, g2.Hash(), "and the loaded one")

	// The recorded files are absolute: resuming works from another directory.
	t.Chdir(t.TempDir())
	code, out, stderr := callJSON(t, cmdResume, "req-2", "--store", dsn, "--set", "approved=false")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "rejected", out["vars"].(map[string]any)["status"])
}

func TestResumeRecoverAndExpectVersion(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "req-3")
	require.Equal(t, exitOK, code, stderr)

	code, _, stderr = call(t, cmdResume, "req-3", "--store", dsn, "--expect-version", "1")
	assert.Equal(t, exitConflict, code, stderr)
	assert.Contains(t, stderr, "stored version is 2")

	// A resumer claimed the instance and died: it stays "running".
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	snap, err := store.Load(context.Background(), "req-3")
	require.NoError(t, err)
	snap.Status = session.StatusRunning
	require.NoError(t, store.Save(context.Background(), snap, 2))
	code, _, stderr = call(t, cmdResume, "req-3", "--store", dsn, "--set", "approved=true")
	assert.Equal(t, exitConflict, code)
	assert.Contains(t, stderr, "running")
	assert.Contains(t, stderr, "\nif the process running it died, --recover takes it over\n", "the command's flag, not the API's name")
	code, out, stderr := callJSON(t, cmdResume, "req-3", "--store", dsn, "--set", "approved=true", "--recover", "--expect-version", "3")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", out["status"])
}

func TestResumeUsage(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	require.NoError(t, os.MkdirAll(strings.TrimPrefix(dsn, "file:"), 0o700))
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"x"}, "--store is required"},
		{[]string{"--store", dsn}, "exactly one instance id"},
		{[]string{"a", "b", "--store", dsn}, "exactly one instance id"},
		{[]string{"x", "--store", "ftp://x"}, "unknown store"},
		{[]string{"x", "--store", "nocolon"}, "want memory:"},
		{[]string{"x", "--store", dsn, "--set", "novalue"}, "KEY=VALUE"},
		{[]string{"x", "--store", dsn, "--output", "yaml"}, "--output"},
		{[]string{"x", "--store", dsn, "--bogus"}, "bogus"},
		{[]string{"x", "--store", dsn, "--steps", "0"}, "--steps must be at least 1"},
		// Versions start at 1: "only if the version is 0" must not mean "whatever it is".
		{[]string{"x", "--store", dsn, "--expect-version", "0"}, "--expect-version must be at least 1"},
		{[]string{"x", "--store", dsn, "--expect-version=0"}, "--expect-version must be at least 1"},
		{[]string{"../etc", "--store", dsn}, "invalid instance id"},
	} {
		code, _, stderr := call(t, cmdResume, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Contains(t, stderr, tc.msg, "%v", tc.args)
	}
	code, stdout, _ := call(t, cmdResume, "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "Usage: flowteam resume ID --store DSN")
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--durability", "sometimes")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "durability")
}

func TestSessionsCommands(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	for _, id := range []string{"b-2", "a-1", "c-3"} {
		code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", id, "--set", "token=s3cr3t", "--redact", "token")
		require.Equal(t, exitOK, code, stderr)
	}
	code, _, stderr := call(t, cmdResume, "c-3", "--store", dsn, "--set", "approved=true", "--set", "token=again", "--redact", "token")
	require.Equal(t, exitOK, code, stderr)

	code, stdout, stderr := call(t, cmdSessions, "list", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	assert.True(t, strings.HasPrefix(lines[1], "a-1 "), stdout)
	assert.Contains(t, lines[3], "completed")

	code, stdout, _ = call(t, cmdSessions, "list", "--store", dsn, "--status", "suspended", "--output", "json")
	require.Equal(t, exitOK, code)
	var entries []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &entries))
	require.Len(t, entries, 2)
	assert.Equal(t, "a-1", entries[0]["instance"])
	assert.Equal(t, "waiting for the manager", entries[0]["reason"])

	code, stdout, stderr = call(t, cmdSessions, "show", "a-1", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	var snap map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &snap))
	assert.Equal(t, "suspended", snap["status"])
	assert.Equal(t, session.DefaultMask, snap["vars"].(map[string]any)["token"], "redacted in the store")
	assert.NotContains(t, stdout, "s3cr3t")
	abs, _ := filepath.Abs(approvalYML)
	assert.Equal(t, []any{abs}, snap["sources"])

	code, stdout, _ = call(t, cmdSessions, "delete", "b-2", "--store", dsn)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "deleted b-2")
	code, _, stderr = call(t, cmdSessions, "show", "b-2", "--store", dsn)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "not found")

	for _, args := range [][]string{{}, {"frob", "--store", dsn}, {"list"}, {"show", "--store", dsn}, {"list", "--store", dsn, "--status", "odd"}} {
		code, _, _ := call(t, cmdSessions, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
	}
}

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

// A stored instance that cannot be read (a torn or foreign file) is bad input, exit 2,
// like an unknown one: nothing ran, so it is not a failed run (exit 1).
func TestResumeCorruptSession(t *testing.T) {
	dsn := fileDSN(t)
	dir := strings.TrimPrefix(dsn, "file:")
	for _, id := range []string{"torn", "junk"} {
		code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", id)
		require.Equal(t, exitOK, code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "torn.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "torn.json"), data[:len(data)/2], 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "junk.json"), []byte("not a snapshot\n"), 0o600))

	for _, id := range []string{"torn", "junk"} {
		code, stdout, stderr := call(t, cmdResume, id, "--store", dsn, "--set", "approved=true")
		assert.Equal(t, exitUsage, code, "resume %s: %s", id, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, id+".json")
		assert.Contains(t, stderr, "corrupt snapshot")

		code, _, stderr = call(t, cmdSessions, "show", id, "--store", dsn)
		assert.Equal(t, exitUsage, code, "show %s: %s", id, stderr)
		assert.Contains(t, stderr, "corrupt snapshot")
	}
}

// When the definition file recorded for an instance is gone, resume says that it is the
// recorded one and that --file loads another.
func TestResumeRecordedFileGone(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	data, err := os.ReadFile(approvalYML)
	require.NoError(t, err)
	def := filepath.Join(t.TempDir(), "approval.yml")
	require.NoError(t, os.WriteFile(def, data, 0o600))
	code, _, stderr := call(t, cmdRun, def, "--store", dsn, "--instance", "moved")
	require.Equal(t, exitOK, code, stderr)
	require.NoError(t, os.Remove(def))

	code, stdout, stderr := call(t, cmdResume, "moved", "--store", dsn, "--set", "approved=true")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `the definition files recorded for instance "moved" (--file loads others): `)
	assert.Contains(t, stderr, def)

	code, out, stderr := callJSON(t, cmdResume, "moved", "--store", dsn, "--set", "approved=true", "--file", approvalYML)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", out["status"])
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

// One unreadable instance does not hide the others from "sessions list": it is named
// on stderr and the command exits 2 after listing the rest.
func TestSessionsListSkipsCorruptInstance(t *testing.T) {
	noLeaks(t)
	mr := miniredis.RunT(t)
	dsn := "redis://" + mr.Addr() + "/0"
	for _, id := range []string{"good", "torn"} {
		code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", id)
		require.Equal(t, exitOK, code, stderr)
	}
	// Tear the snapshot body of "torn", wherever the store keeps it.
	torn := 0
	for _, key := range mr.Keys() {
		if !strings.HasSuffix(key, ":torn") || mr.Type(key) != "hash" {
			continue
		}
		fields, err := mr.HKeys(key)
		require.NoError(t, err)
		for _, field := range fields {
			if v := mr.HGet(key, field); strings.HasPrefix(v, "{") {
				mr.HSet(key, field, v[:len(v)/2])
				torn++
			}
		}
	}
	require.Equal(t, 1, torn, "the snapshot of torn: %v", mr.Keys())

	code, stdout, stderr := call(t, cmdSessions, "list", "--store", dsn)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stdout, "good ")
	assert.NotContains(t, stdout, "torn")
	assert.Contains(t, stderr, `"torn"`)
	assert.Contains(t, stderr, "corrupt snapshot")

	code, stdout, stderr = call(t, cmdSessions, "list", "--store", dsn, "--output", "json")
	assert.Equal(t, exitUsage, code)
	var entries []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &entries), stderr)
	require.Len(t, entries, 1)
	assert.Equal(t, "good", entries[0]["instance"])
}

// The same with a file store, where the damaged file's header cannot even say the
// instance's status.
func TestSessionsListSkipsCorruptFile(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"good", "torn"} {
		code, _, stderr := call(t, cmdRun, approvalYML, "--store", "file:"+dir, "--instance", id)
		require.Equal(t, exitOK, code, stderr)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "torn.json"), []byte("garbage"), 0o600))
	for _, status := range []string{"", "suspended"} {
		args := []string{"list", "--store", "file:" + dir}
		if status != "" {
			args = append(args, "--status", status)
		}
		code, stdout, stderr := call(t, cmdSessions, args...)
		assert.Equal(t, exitUsage, code, status)
		assert.Contains(t, stdout, "good ", status)
		assert.NotContains(t, stdout, "torn", status)
		assert.Contains(t, stderr, "torn.json", status)
		assert.Contains(t, stderr, "corrupt snapshot", status)
	}
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

// A variable the run redacted stays redacted when a resume supplies it again, as the
// help tells the user to, without repeating --redact: the instance's redaction is
// recorded in its snapshot, so forgetting the flag must not store the secret in clear.
func TestResumeKeepsRedaction(t *testing.T) {
	noLeaks(t)
	clearAndSealed(t, func(t *testing.T, sealed bool) {
		dir := filepath.Join(t.TempDir(), "sessions")
		dsn := "file:" + dir
		code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "r",
			"--set", "token=s3cr3t", "--redact", "token")
		require.Equal(t, exitOK, code, stderr)

		// approved is not set: the run suspends again, and is saved.
		code, out, stderr := callJSON(t, cmdResume, "r", "--store", dsn, "--set", "token=s3cr3t")
		require.Equal(t, exitOK, code, stderr)
		require.Equal(t, "suspended", out["status"])
		assert.Equal(t, session.DefaultMask, out["vars"].(map[string]any)["token"], "masked in the output too")

		raw, err := os.ReadFile(filepath.Join(dir, "r.json"))
		require.NoError(t, err)
		assert.NotContains(t, string(raw), "s3cr3t")
		code, stdout, stderr := call(t, cmdSessions, "show", "r", "--store", dsn)
		require.Equal(t, exitOK, code, stderr)
		assert.NotContains(t, stdout, "s3cr3t", "masked, also once opened")
		assert.Contains(t, stdout, session.DefaultMask)
	})
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

// An instance no resume may continue (completed, running, or not at --expect-version)
// is a conflict, exit 3, also when its recorded definition files have gone since (a
// deploy moved them): a script retrying a resume must not take an instance finished
// long ago for bad input, nor be told to give --file for it.
func TestResumeConflictBeforeDefinitions(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	data, err := os.ReadFile(approvalYML)
	require.NoError(t, err)
	def := filepath.Join(t.TempDir(), "approval.yml")
	require.NoError(t, os.WriteFile(def, data, 0o600))
	for _, id := range []string{"done", "busy", "waiting"} {
		code, _, stderr := call(t, cmdRun, def, "--store", dsn, "--instance", id)
		require.Equal(t, exitOK, code, stderr)
	}
	code, _, stderr := call(t, cmdResume, "done", "--store", dsn, "--set", "approved=true")
	require.Equal(t, exitOK, code, stderr)
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	snap, err := store.Load(context.Background(), "busy")
	require.NoError(t, err)
	snap.Status = session.StatusRunning // its resumer is at work, or died
	require.NoError(t, store.Save(context.Background(), snap, snap.Version))
	require.NoError(t, os.Remove(def))

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"done"}, "already completed"},
		{[]string{"busy"}, "--recover takes it over"},
		{[]string{"waiting", "--expect-version", "1"}, "stored version is 2"},
	} {
		code, stdout, stderr := call(t, cmdResume, append(tc.args, "--store", dsn, "--set", "approved=true")...)
		assert.Equal(t, exitConflict, code, "%v: %s", tc.args, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, tc.msg, "%v", tc.args)
		assert.NotContains(t, stderr, "definition files", "%v", tc.args)
	}
	// Resumable, it needs the files: their absence is bad input, as before.
	code, _, stderr = call(t, cmdResume, "waiting", "--store", dsn, "--set", "approved=true")
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "definition files recorded")
}

// A resume keeps the instance's time to live unless --ttl is given: an instance
// started with --ttl 720h (kept no longer than that) must not be kept forever because
// the resume did not repeat the flag. --ttl 0 removes it.
func TestResumeKeepsTheTTL(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	ttlOf := func() time.Duration {
		t.Helper()
		snap, err := store.Load(context.Background(), "t")
		require.NoError(t, err)
		if snap.Expires.IsZero() {
			return 0
		}
		return snap.Expires.Sub(snap.Updated)
	}
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "t", "--ttl", "720h")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, 720*time.Hour, ttlOf())

	// approved is not set: each resume suspends again, and saves.
	code, _, stderr = call(t, cmdResume, "t", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 720*time.Hour, ttlOf(), "kept")
	code, _, stderr = call(t, cmdResume, "t", "--store", dsn, "--ttl", "2h")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 2*time.Hour, ttlOf(), "replaced")
	code, _, stderr = call(t, cmdResume, "t", "--store", dsn, "--ttl", "0")
	require.Equal(t, exitOK, code, stderr)
	assert.Zero(t, ttlOf(), "removed")
	code, _, stderr = call(t, cmdResume, "t", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	assert.Zero(t, ttlOf(), "none to keep")
}

// A redis DSN's ttl= is the store's time to live for every save: a resume through a
// DSN that sets one follows it, rather than the time to live the instance had.
func TestResumeFollowsTheDSNTTL(t *testing.T) {
	noLeaks(t)
	mr := miniredis.RunT(t)
	dsn := "redis://" + mr.Addr() + "/0"
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn+"?ttl=1h", "--instance", "t")
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = call(t, cmdResume, "t", "--store", dsn+"?ttl=3h")
	require.Equal(t, exitOK, code, stderr)
	var key string
	for _, k := range mr.Keys() {
		if strings.HasSuffix(k, ":t") {
			key = k
		}
	}
	assert.Equal(t, 3*time.Hour, mr.TTL(key))
}

// "file:~/sessions" is in the home directory: no shell expands a "~" after "file:",
// and taken as is it made a directory named "~" in the current one (which a later
// "rm -rf ~" would take for the home directory), so that a resume from elsewhere
// found nothing.
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

// clearAndSealed runs f as two subtests: with snapshots stored in clear, and sealed
// with a key in the environment variable keyEnv.
func clearAndSealed(t *testing.T, f func(t *testing.T, sealed bool)) {
	key := hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	for _, sealed := range []bool{false, true} {
		t.Run(map[bool]string{false: "clear", true: "sealed"}[sealed], func(t *testing.T) {
			if sealed {
				t.Setenv(keyEnv, key)
			}
			f(t, sealed)
		})
	}
}
