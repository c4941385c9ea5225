package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

const approvalYML = "testdata/session/approval.yml"

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
		if strings.HasSuffix(k, ":{t}") {
			key = k
		}
	}
	assert.Equal(t, 3*time.Hour, mr.TTL(key))
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

// A resume after a called graph's file changed (main.yml calls #child; a script in
// child.yml was edited) is refused, naming the child and both hashes; the instance is
// untouched. --accept-changed-definition resumes on the new child, says so on stderr,
// and records its hash, so that the next resume needs no flag.
func TestResumeRefusesChangedCalledGraph(t *testing.T) {
	noLeaks(t)
	mainPath, childPath := writeCallingFiles(t, t.TempDir(), 1)
	child1, err := flow.NewEngine().LoadFile(childPath)
	require.NoError(t, err)
	dsn := fileDSN(t)
	code, _, stderr := call(t, cmdRun, mainPath, childPath, "--graph", "main", "--store", dsn, "--instance", "c-1")
	require.Equal(t, exitOK, code, stderr)

	writeCallingFiles(t, filepath.Dir(mainPath), 2)
	child2, err := flow.NewEngine().LoadFile(childPath)
	require.NoError(t, err)
	before := loadSnap(t, strings.TrimPrefix(dsn, "file:"), "c-1")
	code, _, stderr = call(t, cmdResume, "c-1", "--store", dsn, "--set", "approved=true")
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, `graph "child" (called by "main") was saved with definition hash `+child1.Hash()+
		", the loaded definition has hash "+child2.Hash())
	assert.Contains(t, stderr, "\n--accept-changed-definition resumes on the loaded definitions")
	assert.Equal(t, before, loadSnap(t, strings.TrimPrefix(dsn, "file:"), "c-1"), "nothing was claimed")

	code, out, stderr := callJSON(t, cmdResume, "c-1", "--store", dsn, "--set", "approved=true",
		"--accept-changed-definition")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, `graph "child" (called by "main") was saved with definition hash `+child1.Hash())
	assert.Contains(t, stderr, "resuming on the loaded definitions (--accept-changed-definition)")
	assert.Equal(t, "completed", out["status"])
	assert.EqualValues(t, 2, out["vars"].(map[string]any)["v"], "the new child ran")
	after := loadSnap(t, strings.TrimPrefix(dsn, "file:"), "c-1")
	assert.Equal(t, map[string]string{"child": child2.Hash()}, after.Called)
}

// writeCallingFiles writes main.yml, which waits for "approved" and then calls child,
// and child.yml, which sets "v" to v, into dir.
func writeCallingFiles(t *testing.T, dir string, v int) (mainPath, childPath string) {
	t.Helper()
	mainYML := `id: main
layout:
  - {id: s, type: start}
  - {id: wait, task: 'approved == nil ? context.suspend("waiting") : context.put("decided", true)'}
  - {id: call, task: "#child"}
  - {id: e, type: end}
`
	childYML := fmt.Sprintf(`id: child
layout:
  - {id: cs, type: start}
  - {id: c1, task: 'context.put("v", %d)'}
  - {id: ce, type: end}
`, v)
	mainPath, childPath = filepath.Join(dir, "main.yml"), filepath.Join(dir, "child.yml")
	require.NoError(t, os.WriteFile(mainPath, []byte(mainYML), 0o600))
	require.NoError(t, os.WriteFile(childPath, []byte(childYML), 0o600))
	return mainPath, childPath
}

// A snapshot saved before the called graphs' hashes were recorded (its file has no
// "called") resumes on unchanged files, checked on its root graph alone; the resume
// records the called graphs' hashes.
func TestResumeSnapshotWithoutCalledHashes(t *testing.T) {
	noLeaks(t)
	mainPath, childPath := writeCallingFiles(t, t.TempDir(), 1)
	child, err := flow.NewEngine().LoadFile(childPath)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, _, stderr := call(t, cmdRun, mainPath, childPath, "--graph", "main", "--store", dsn, "--instance", "old-1")
	require.Equal(t, exitOK, code, stderr)
	path := filepath.Join(dir, "old-1.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	old := regexp.MustCompile(`"called":\{[^}]*\},`).ReplaceAll(data, nil)
	require.NotEqual(t, data, old)
	require.NoError(t, os.WriteFile(path, old, 0o600))
	require.Nil(t, loadSnap(t, dir, "old-1").Called, "as saved before")

	code, out, stderr := callJSON(t, cmdResume, "old-1", "--store", dsn, "--set", "approved=true")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", out["status"])
	assert.Equal(t, map[string]string{"child": child.Hash()}, loadSnap(t, dir, "old-1").Called)
}
