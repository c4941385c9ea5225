package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// roundsYML suspends at its gate until go=true, then runs gate, more and tick and
// suspends again; it ends after three ticks.
const roundsYML = "testdata/session/rounds.yml"

// loadSnap returns the stored snapshot of instance id in the file store dir.
func loadSnap(t *testing.T, dir, id string) *session.Snapshot {
	t.Helper()
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	snap, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	return snap
}

// An instance started with --durability per-node is resumed per node unless the
// resume says otherwise: resumed on exit, a crash during the resumed run would lose
// the progress the user asked to keep. A resume of rounds.yml completes three nodes:
// per node each is saved (a version each) besides the claim and the outcome.
func TestResumeKeepsTheDurability(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, _, stderr := call(t, cmdRun, roundsYML, "--store", dsn, "--instance", "d", "--durability", "per-node")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, loadSnap(t, dir, "d").Meta, "durability=per-node")

	v := loadSnap(t, dir, "d").Version
	code, _, stderr = call(t, cmdResume, "d", "--store", dsn, "--set", "go=true")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, v+5, loadSnap(t, dir, "d").Version, "the claim, gate, more, tick, the outcome")

	// A given flag wins, and is what later resumes keep.
	v = loadSnap(t, dir, "d").Version
	code, _, stderr = call(t, cmdResume, "d", "--store", dsn, "--set", "go=true", "--durability", "on-exit")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, v+2, loadSnap(t, dir, "d").Version, "the claim and the outcome")
	assert.Contains(t, loadSnap(t, dir, "d").Meta, "durability=on-exit")
	assert.NotContains(t, loadSnap(t, dir, "d").Meta, "durability=per-node")
	v = loadSnap(t, dir, "d").Version
	code, out, stderr := callJSON(t, cmdResume, "d", "--store", dsn, "--set", "go=true")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, "completed", out["status"])
	assert.Equal(t, v+2, loadSnap(t, dir, "d").Version, "on exit, as the last resume said")
}

// The step limit given to run is the limit of each later resume of the instance too,
// each counting its own steps, until a resume gives --steps, which is then kept.
func TestResumeKeepsTheStepLimit(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, out, stderr := callJSON(t, cmdRun, roundsYML, "--store", dsn, "--instance", "s", "--steps", "3")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, "suspended", out["status"])
	require.Equal(t, 3.0, out["steps"], "s, tick, gate")
	assert.Contains(t, loadSnap(t, dir, "s").Meta, "steps=3")

	// gate, more and tick run; the fourth step, gate again, is refused. A limit of
	// the instance's total would have refused the first.
	code, out, stderr = callJSON(t, cmdResume, "s", "--store", dsn, "--set", "go=true")
	require.Equal(t, exitFail, code, stderr)
	assert.Equal(t, flow.CodeStepLimit, out["error"].(map[string]any)["code"])
	assert.Equal(t, 3.0, out["steps"])

	// gate runs again and suspends (go was used up).
	code, out, stderr = callJSON(t, cmdResume, "s", "--store", dsn, "--steps", "2")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, "suspended", out["status"])
	assert.Contains(t, loadSnap(t, dir, "s").Meta, "steps=2")
	code, out, stderr = callJSON(t, cmdResume, "s", "--store", dsn, "--set", "go=true")
	require.Equal(t, exitFail, code, stderr)
	assert.Equal(t, flow.CodeStepLimit, out["error"].(map[string]any)["code"], "the last resume's limit")
	assert.Equal(t, 2.0, out["steps"], "gate and more; tick is refused")
}

// A --redact name is recorded whether or not a variable of that name exists when the
// instance is saved: approval.yml sets status only once approved, and the resume that
// sets it must mask it although no save before had a status to mask.
func TestResumeRedactsAVariableSetLater(t *testing.T) {
	noLeaks(t)
	clearAndSealed(t, func(t *testing.T, sealed bool) {
		dir := filepath.Join(t.TempDir(), "sessions")
		dsn := "file:" + dir
		code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "r", "--redact", "status")
		require.Equal(t, exitOK, code, stderr)
		if !sealed {
			assert.Contains(t, loadSnap(t, dir, "r").Meta, "redact=status")
		}
		// Not approved yet: suspended again, still without a status.
		code, _, stderr = call(t, cmdResume, "r", "--store", dsn)
		require.Equal(t, exitOK, code, stderr)

		code, out, stderr := callJSON(t, cmdResume, "r", "--store", dsn, "--set", "approved=true")
		require.Equal(t, exitOK, code, stderr)
		require.Equal(t, "completed", out["status"])
		assert.Equal(t, session.DefaultMask, out["vars"].(map[string]any)["status"], "masked in the output too")
		raw, err := os.ReadFile(filepath.Join(dir, "r.json"))
		require.NoError(t, err)
		assert.NotContains(t, string(raw), `"status":"approved"`)
		code, stdout, stderr := call(t, cmdSessions, "show", "r", "--store", dsn)
		require.Equal(t, exitOK, code, stderr)
		assert.NotContains(t, stdout, `"status": "approved"`, "masked, also once opened")
		assert.Contains(t, stdout, `"status": "`+session.DefaultMask+`"`)
	})
}

// stripMeta rewrites instance id in the file store dir as the command wrote it
// before it recorded its settings, with meta instead of the recorded entries.
func stripMeta(t *testing.T, dir, id string, meta ...string) {
	t.Helper()
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	snap, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	snap.Meta = meta
	require.NoError(t, store.Save(context.Background(), snap, snap.Version))
}

// An instance saved without recorded settings (by another program) resumes on exit,
// with the engine's step limit, masking the variables its last save masked.
func TestResumeInstanceSavedWithoutSettings(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, _, stderr := call(t, cmdRun, roundsYML, "--store", dsn, "--instance", "o", "--durability", "per-node",
		"--steps", "3", "--set", "token=s3cr3t", "--redact", "token,absent")
	require.Equal(t, exitOK, code, stderr)
	stripMeta(t, dir, "o")
	raw, err := os.ReadFile(filepath.Join(dir, "o.json"))
	require.NoError(t, err)
	require.NotContains(t, string(raw), `"meta"`)

	v := loadSnap(t, dir, "o").Version
	code, out, stderr := callJSON(t, cmdResume, "o", "--store", dsn, "--set", "go=true", "--set", "token=fresh")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "suspended", out["status"])
	assert.Equal(t, 4.0, out["steps"], "the engine's limit, not 3")
	snap := loadSnap(t, dir, "o")
	assert.Equal(t, v+2, snap.Version, "on exit: the claim and the outcome")
	assert.Equal(t, session.DefaultMask, snap.Vars["token"])
	assert.Equal(t, []string{"durability=on-exit", "redact=token"}, snap.Meta, "recorded now")
}

// Entries of the meta that are not the command's settings (another program's) are
// kept; a setting the command cannot read is bad input, not a default.
func TestResumeRecordedSettingsOfOthers(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, _, stderr := call(t, cmdRun, roundsYML, "--store", dsn, "--instance", "m")
	require.Equal(t, exitOK, code, stderr)
	stripMeta(t, dir, "m", "owner=billing", "durability=per-node")
	code, _, stderr = call(t, cmdResume, "m", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, []string{"durability=per-node", "owner=billing"}, loadSnap(t, dir, "m").Meta)

	for _, bad := range []string{"durability=sometimes", "steps=0", "steps=many", "solon-types=maybe"} {
		stripMeta(t, dir, "m", bad)
		code, _, stderr = call(t, cmdResume, "m", "--store", dsn)
		assert.Equal(t, exitUsage, code, bad)
		assert.Contains(t, stderr, `instance "m" records a bad setting`, bad)
	}
}

// The definition files a resume loads with --file are the instance's from then on: a
// later resume without --file loads them, not the files recorded at the start, which
// the user replaced because they had moved or gone.
func TestResumeRecordsTheFilesItLoads(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	src, err := os.ReadFile(roundsYML)
	require.NoError(t, err)
	old, moved := filepath.Join(t.TempDir(), "rounds.yml"), filepath.Join(t.TempDir(), "rounds.yml")
	require.NoError(t, os.WriteFile(old, src, 0o600))
	require.NoError(t, os.WriteFile(moved, src, 0o600))
	code, _, stderr := call(t, cmdRun, old, "--store", dsn, "--instance", "f")
	require.Equal(t, exitOK, code, stderr)
	require.NoError(t, os.Remove(old))

	code, _, stderr = call(t, cmdResume, "f", "--store", dsn, "--set", "go=true", "--file", moved)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, []string{moved}, loadSnap(t, dir, "f").Sources)
	code, out, stderr := callJSON(t, cmdResume, "f", "--store", dsn, "--set", "go=true")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "suspended", out["status"])
}

// A variable named by --redact is masked in what run and resume print too, text and
// JSON: the user said it is a secret, and the output often lands in a CI log. The
// run itself has the value.
func TestRedactedVariablesAreMaskedInTheOutput(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, stdout, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "o",
		"--set", "token=s3cr3t", "--set", `check="ok"`, "--redact", "token")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "s3cr3t")
	assert.Contains(t, stdout, session.DefaultMask)
	assert.Contains(t, stdout, `"ok"`, "other variables are printed")

	code, out, stderr := callJSON(t, cmdResume, "o", "--store", dsn, "--set", "token=s3cr3t")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, session.DefaultMask, out["vars"].(map[string]any)["token"], "the recorded name, without --redact")
	assert.Equal(t, "ok", out["vars"].(map[string]any)["check"])
}

// An instance run with --solon-types records it, so its resumes read the definition
// files the same way; a resume that gives the flag decides, and later resumes keep
// what it gave.
func TestResumeKeepsSolonTypes(t *testing.T) {
	noLeaks(t)
	file := filepath.Join(writeDefs(t, map[string]string{"solon.yml": `
id: solonrounds
layout:
  - {id: s, type: start, link: a}
  - {id: a, type: startb, task: 'context.incr("n")', link: gate}
  - id: gate
    task: 'go == true ? context.put("go", false) : context.suspend("waiting for go")'
    link: e
  - {id: e, type: end}
`}), "solon.yml")
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, out, stderr := callJSON(t, cmdRun, file, "--store", dsn, "--instance", "st", "--solon-types")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, "suspended", out["status"])
	assert.Contains(t, loadSnap(t, dir, "st").Meta, "solon-types=true")

	v := loadSnap(t, dir, "st").Version
	code, _, stderr = call(t, cmdResume, "st", "--store", dsn, "--solon-types=false")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown node type "startb" (did you mean start?)`)
	assert.Equal(t, v, loadSnap(t, dir, "st").Version, "nothing ran")

	code, out, stderr = callJSON(t, cmdResume, "st", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "suspended", out["status"], "the gate waits again")
	assert.Contains(t, loadSnap(t, dir, "st").Meta, "solon-types=true")

	code, out, stderr = callJSON(t, cmdResume, "st", "--store", dsn, "--set", "go=true")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", out["status"])
}

// An instance run without --solon-types records nothing, and its resumes refuse an
// unknown node type (here one that appeared in the files since) unless given the flag,
// which is then recorded.
func TestResumeGivenSolonTypes(t *testing.T) {
	noLeaks(t)
	defs := writeDefs(t, map[string]string{"r.yml": `
id: r
layout:
  - {id: s, type: start, link: gate}
  - id: gate
    task: 'go == true ? context.put("go", false) : context.suspend("waiting for go")'
    link: e
  - {id: e, type: end}
`})
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, _, stderr := call(t, cmdRun, filepath.Join(defs, "r.yml"), "--store", dsn, "--instance", "g")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, loadSnap(t, dir, "g").Meta, "solon-types=true")

	changed := filepath.Join(defs, "r2.yml")
	require.NoError(t, os.WriteFile(changed, []byte("id: r\nlayout:\n  - {id: s, type: start, link: gate}\n"+
		"  - {id: gate, type: endb, task: 'context.put(\"done\", true)'}\n"), 0o644))
	code, _, stderr = call(t, cmdResume, "g", "--store", dsn, "--file", changed, "--accept-changed-definition")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown node type "endb" (did you mean end?)`)

	code, out, stderr := callJSON(t, cmdResume, "g", "--store", dsn, "--file", changed, "--accept-changed-definition",
		"--solon-types")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", out["status"])
	assert.Equal(t, true, out["vars"].(map[string]any)["done"], "the endb node ran as an activity")
	assert.Contains(t, loadSnap(t, dir, "g").Meta, "solon-types=true")
}
