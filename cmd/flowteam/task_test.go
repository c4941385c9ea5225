package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/trace"
)

const leaveApprovalYML = "../../examples/leave-approval/leave.yml"

// taskCmd runs "flowteam task ARGS" in process.
func taskCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = dispatch(append([]string{"task"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// taskJSONOf runs a task command with --output json and decodes its output.
func taskJSONOf(t *testing.T, want int, args ...string) map[string]any {
	t.Helper()
	code, stdout, stderr := taskCmd(t, append(args, "--output", "json")...)
	require.Equal(t, want, code, "stderr: %s", stderr)
	if want != exitOK {
		return nil
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &m), stdout)
	return m
}

// The leave request played from the command line: filed, sent back, filed again,
// approved by the lead and, for 8 days, by the director; the exit codes of the
// refusals.
func TestTaskCommandPlaysLeaveApproval(t *testing.T) {
	store := "file:" + t.TempDir()
	on := func(args ...string) []string {
		return append([]string{args[0], leaveApprovalYML, "--instance", "req-1", "--store", store}, args[1:]...)
	}
	out := taskJSONOf(t, exitOK, on("claim", "--actor", "employee", "--set", "days=8")...)
	assert.Equal(t, map[string]any{"instance": "req-1", "graph": "leave-approval", "status": "running",
		"task": map[string]any{"node": "file", "title": "File the request", "state": "waiting", "meta": map[string]any{"actor": "employee"}}}, out)
	out = taskJSONOf(t, exitOK, on("submit", "--actor", "employee", "--node", "file", "--action", "forward")...)
	assert.Equal(t, map[string]any{"instance": "req-1", "graph": "leave-approval", "node": "file", "action": "forward", "status": "running"}, out)

	taskJSONOf(t, exitNotPermitted, on("submit", "--actor", "employee", "--node", "lead", "--action", "forward")...)
	taskJSONOf(t, exitNotPermitted, on("submit", "--actor", "lead", "--node", "file", "--action", "back_jump")...)
	out = taskJSONOf(t, exitOK, on("claim", "--actor", "employee")...)
	assert.Nil(t, out["task"], "nothing for the employee now")
	taskJSONOf(t, exitOK, on("submit", "--actor", "lead", "--node", "lead", "--action", "back", "--comment", "which dates?")...)
	out = taskJSONOf(t, exitOK, on("find")...)
	assert.Equal(t, "file", out["task"].(map[string]any)["node"])

	taskJSONOf(t, exitOK, on("submit", "--actor", "employee", "--node", "file", "--action", "forward", "--set", "days=9")...)
	taskJSONOf(t, exitConflict, on("submit", "--actor", "lead", "--node", "lead", "--action", "forward", "--if-waiting")...)
	taskJSONOf(t, exitOK, on("claim", "--actor", "lead")...)
	taskJSONOf(t, exitOK, on("submit", "--actor", "lead", "--node", "lead", "--action", "forward", "--if-waiting")...)
	out = taskJSONOf(t, exitOK, on("next")...)
	assert.Equal(t, []any{map[string]any{"node": "director", "title": "Director approves", "state": "unknown", "meta": map[string]any{"actor": "director"}}}, out["tasks"])
	taskJSONOf(t, exitConflict, on("submit", "--actor", "director", "--node", "director", "--action", "forward", "--if-waiting")...)
	out = taskJSONOf(t, exitOK, on("state", "--node", "lead")...)
	assert.Equal(t, map[string]any{"instance": "req-1", "node": "lead", "state": "completed"}, out)
	out = taskJSONOf(t, exitOK, on("submit", "--actor", "director", "--node", "director", "--action", "forward")...)
	assert.Equal(t, "completed", out["status"])

	out = taskJSONOf(t, exitOK, "history", "--instance", "req-1", "--store", store)
	h := out["history"].([]any)
	require.Len(t, h, 5)
	assert.Equal(t, "which dates?", h[1].(map[string]any)["comment"])
	assert.Equal(t, map[string]any{"days": float64(9)}, h[2].(map[string]any)["vars"])
	assert.Equal(t, map[string]any{"actor": "director"}, h[4].(map[string]any)["actor"])
	assert.Equal(t, "completed", out["status"])
}

func TestTaskCommandBadInput(t *testing.T) {
	store := "file:" + t.TempDir()
	base := []string{leaveApprovalYML, "--instance", "r", "--store", store}
	cases := map[string][]string{
		"no subcommand":     {},
		"unknown":           {"approve"},
		"missing actor":     append([]string{"claim"}, base...),
		"flag of another":   append([]string{"find", "--node", "file"}, base...),
		"unknown graph":     append([]string{"claim", "--actor", "employee", "--graph", "nope"}, base...),
		"unknown action":    append([]string{"submit", "--actor", "employee", "--node", "file", "--action", "approve"}, base...),
		"unknown node":      append([]string{"submit", "--actor", "employee", "--node", "nope", "--action", "forward"}, base...),
		"unknown instance":  {"find", leaveApprovalYML, "--instance", "nobody", "--store", store},
		"history with defs": {"history", leaveApprovalYML, "--instance", "r", "--store", store},
		"bad output":        append([]string{"find", "--output", "xml"}, base...),
	}
	taskJSONOf(t, exitOK, append([]string{"claim", "--actor", "employee"}, base...)...)
	cases["other actor key"] = append([]string{"find", "--actor-key", "role"}, base...)
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := taskCmd(t, args...)
			assert.Equal(t, exitUsage, code, stderr)
		})
	}
	code, stdout, _ := taskCmd(t, "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "flowteam task claim")
}

// An instance that records a --redact-pattern that does not compile is refused
// before the task runs, with the pattern named: masking without it could print a
// secret.
func TestTaskRefusesARecordedPatternThatDoesNotCompile(t *testing.T) {
	dir := t.TempDir()
	base := []string{leaveApprovalYML, "--instance", "r", "--store", "file:" + dir}
	taskJSONOf(t, exitOK, append([]string{"claim", "--actor", "employee"}, base...)...)
	snap := loadSnap(t, dir, "r")
	snap.Meta = append(snap.Meta, "redact-pattern=(")
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	require.NoError(t, store.Save(context.Background(), snap, snap.Version))
	code, stdout, stderr := taskCmd(t, append([]string{"find"}, base...)...)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `--redact-pattern "("`)
}

// A script that fails when a task is forwarded exits 1 and saves nothing.
func TestTaskCommandScriptFailure(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "bad.yml")
	require.NoError(t, os.WriteFile(def, []byte(`id: bad
layout:
  - {id: s, type: start, link: a}
  - {id: a, meta: {actor: x}, task: 'context.put("n", n + 1)', link: e}
  - {id: e, type: end}
`), 0o644))
	store := "file:" + filepath.Join(dir, "s")
	taskJSONOf(t, exitOK, "claim", def, "--instance", "i", "--store", store, "--actor", "x", "--set", `n="text"`)
	taskJSONOf(t, exitFail, "submit", def, "--instance", "i", "--store", store, "--actor", "x", "--node", "a", "--action", "forward")
	out := taskJSONOf(t, exitOK, "state", def, "--instance", "i", "--store", store, "--node", "a")
	assert.Equal(t, "waiting", out["state"])
}

// Twenty processes submit the same waiting task at once: exactly one wins, the
// others exit 3, and the history holds one entry.
func TestTaskSubmitRaceAcrossProcesses(t *testing.T) {
	if args := os.Getenv("FLOWTEAM_TEST_TASK_ARGS"); args != "" {
		var out, errb bytes.Buffer
		code := dispatch(strings.Split(args, "\n"), &out, &errb)
		os.Stderr.WriteString(errb.String())
		os.Exit(code)
	}
	if testing.Short() {
		t.Skip("starts 20 processes")
	}
	store := "file:" + t.TempDir()
	base := []string{leaveApprovalYML, "--instance", "race", "--store", store, "--actor", "employee"}
	taskJSONOf(t, exitOK, append([]string{"claim"}, base...)...)
	args := append([]string{"task", "submit"}, base...)
	args = append(args, "--node", "file", "--action", "forward", "--if-waiting")
	const n = 20
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestTaskSubmitRaceAcrossProcesses$")
			cmd.Env = append(os.Environ(), "FLOWTEAM_TEST_TASK_ARGS="+strings.Join(args, "\n"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			switch {
			case err == nil:
			case errors.As(err, &ee):
				codes[i] = ee.ExitCode()
			default:
				codes[i] = -1
				stderr.WriteString(err.Error())
			}
			if codes[i] != exitOK && codes[i] != exitConflict {
				t.Errorf("process %d: exit %d: %s", i, codes[i], stderr.String())
			}
		})
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		if c == exitOK {
			won++
		}
	}
	assert.Equal(t, 1, won, "exit codes %v", codes)
	out := taskJSONOf(t, exitOK, "history", "--instance", "race", "--store", store)
	assert.Len(t, out["history"], 1, fmt.Sprint(out))
}

// With --audit, claims and submits append task records to the file, the run
// records of "flowteam run --audit" beside them unchanged; "flowteam audit" shows
// them as the instance's tasks and leaves them out of its summary.
func TestTaskCommandAudit(t *testing.T) {
	store := "file:" + t.TempDir()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	on := func(args ...string) []string {
		return append([]string{args[0], leaveApprovalYML, "--instance", "req-1", "--store", store, "--audit", path}, args[1:]...)
	}
	taskJSONOf(t, exitOK, on("claim", "--actor", "employee", "--set", "days=8")...)
	taskJSONOf(t, exitOK, on("submit", "--actor", "employee", "--node", "file", "--action", "forward")...)
	taskJSONOf(t, exitNotPermitted, on("submit", "--actor", "employee", "--node", "lead", "--action", "forward")...)
	taskJSONOf(t, exitOK, on("submit", "--actor", "lead", "--node", "lead", "--action", "back", "--comment", "which dates?")...)
	code, _, stderr := taskCmd(t, "find", leaveApprovalYML, "--instance", "req-1", "--store", store, "--audit", path)
	assert.Equal(t, exitUsage, code, "find changes nothing to audit")
	assert.Contains(t, stderr, "--audit does not apply to find")
	code, _, stderr = call(t, cmdRun, "../../examples/leave/leave.yml", "--set", "day=5", "--instance", "req-2", "--audit", path)
	require.Equal(t, exitOK, code, stderr)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var recs trace.Records
	for line := range strings.Lines(string(data)) {
		var r trace.Record
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		recs = append(recs, r)
	}
	require.NoError(t, recs.Verify())
	tasks := recs.ByRun("task:req-1")
	require.Len(t, tasks, 3, "the refused submit is not recorded")
	var got []string
	for _, r := range tasks {
		got = append(got, fmt.Sprint(r.Status, " ", r.NodeID, " ", r.Attrs))
	}
	assert.Equal(t, []string{
		"STARTED file map[actor:actor=employee status:running task:claim]",
		"COMPLETED file map[action:forward actor:actor=employee status:running task:submit]",
		"COMPLETED lead map[action:back actor:actor=lead comment:which dates? status:running task:submit]",
	}, got)
	assert.Equal(t, "leave-approval", tasks[0].GraphID)
	assert.Len(t, recs, 3+14, "the run's records follow")

	code, out, _ := call(t, cmdAudit, path)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "tasks of instance req-1  graph leave-approval  (claims and submits)\n")
	assert.Contains(t, out, `lead  submit back by actor=lead: "which dates?" -> running`)
	code, out, _ = call(t, cmdAudit, path, "--summary")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "1 run: 1 completed")
}

// A task record that cannot be written is exit 1, though the submit took effect.
func TestTaskCommandAuditWriteFailure(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full")
	}
	store := "file:" + t.TempDir()
	code, stdout, stderr := taskCmd(t, "submit", leaveApprovalYML, "--instance", "req-1", "--store", store,
		"--actor", "employee", "--node", "file", "--action", "forward", "--audit", "/dev/full")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stdout, "forward file")
	assert.Contains(t, stderr, "it took effect, but its audit record was not written")
	out := taskJSONOf(t, exitOK, "state", leaveApprovalYML, "--instance", "req-1", "--store", store, "--node", "file")
	assert.Equal(t, "completed", out["state"])
}

// The leave-approval example played with --redact employee and --redact-pattern
// leaves the employee's name and the card number in no artifact: not in the output
// of claim, submit, find, next, state and history (text and JSON), nor in an error
// message, the store, the audit file, "flowteam audit", "sessions list" or "sessions
// show". The commands after the first give no --redact: the instance records the
// rules. A command that sets the name again (as one that needs it does: the store
// holds ***) has it masked where other text quotes it.
func TestTaskRedactLeavesNoTraceOfTheValue(t *testing.T) {
	const name, card = "Ada Lovelace", "card-4242"
	dir := t.TempDir()
	store := "file:" + filepath.Join(dir, "sessions")
	audit := filepath.Join(dir, "audit.jsonl")
	artifacts := map[string]string{}
	add := func(want int, args ...string) string {
		t.Helper()
		code, stdout, stderr := taskCmd(t, args...)
		require.Equal(t, want, code, "%v: %s", args, stderr)
		artifacts[strings.Join(args, " ")] = stdout + stderr
		return stdout + stderr
	}
	setName := "employee=\"" + name + "\""
	for _, format := range []string{"text", "json"} {
		on := func(args ...string) []string {
			return append([]string{args[0], leaveApprovalYML, "--instance", "req-" + format, "--store", store,
				"--output", format}, args[1:]...)
		}
		add(exitOK, on("claim", "--actor", "employee", "--set", "days=8", "--set", setName,
			"--redact", "employee", "--redact-pattern", `card-\d+`, "--audit", audit)...)
		add(exitOK, on("submit", "--actor", "employee", "--node", "file", "--action", "forward", "--set", setName,
			"--set", `note="leave for `+name+`"`, "--comment", "filed by "+name, "--audit", audit)...)
		add(exitOK, on("submit", "--actor", "lead", "--node", "lead", "--action", "back",
			"--comment", "pay with "+card+"?", "--audit", audit)...)
		add(exitNotPermitted, on("submit", "--actor", "lead", "--node", "file", "--action", "forward", "--set", setName)...)
		add(exitOK, on("find")...)
		add(exitOK, on("next")...)
		add(exitOK, on("state", "--node", "lead")...)
		out := add(exitOK, "history", "--instance", "req-"+format, "--store", store, "--output", format)
		assert.Contains(t, out, "filed by ***", format)
		assert.Contains(t, out, "pay with ***?", format)
	}
	out := add(exitOK, "history", "--instance", "req-json", "--store", store, "--output", "json")
	assert.Contains(t, out, `"vars":{"employee":"***","note":"leave for ***"}`)

	def := filepath.Join(dir, "bad.yml")
	require.NoError(t, os.WriteFile(def, []byte(`id: bad
layout:
  - {id: s, type: start, link: a}
  - {id: a, meta: {actor: x}, task: 'context.put("n", int(employee))', link: e}
  - {id: e, type: end}
`), 0o644))
	bad := []string{def, "--instance", "bad", "--store", store, "--actor", "x", "--set", setName, "--redact", "employee"}
	add(exitOK, append([]string{"claim"}, bad...)...)
	out = add(exitFail, append([]string{"submit", "--node", "a", "--action", "forward"}, bad...)...)
	assert.Contains(t, out, "int(***)", "the error message quotes the value")

	for _, args := range [][]string{{"list", "--store", store}, {"list", "--store", store, "--output", "json"},
		{"show", "req-text", "--store", store}, {"show", "req-json", "--store", store}} {
		code, stdout, stderr := call(t, cmdSessions, args...)
		require.Equal(t, exitOK, code, stderr)
		artifacts["sessions "+strings.Join(args, " ")] = stdout + stderr
	}
	code, stdout, stderr := call(t, cmdAudit, audit)
	require.Equal(t, exitOK, code, stderr)
	artifacts["audit"] = stdout + stderr
	assert.Contains(t, stdout, `submit forward by actor=employee: "filed by ***"`)
	addFiles(t, artifacts, dir)
	for _, f := range []string{audit, filepath.Join(dir, "sessions", "req-text.json"), filepath.Join(dir, "sessions", "req-json.json")} {
		require.Contains(t, artifacts, f)
	}
	for what, text := range artifacts {
		assert.NotContains(t, strings.ToLower(text), "lovelace", what)
		assert.NotContains(t, text, card, what)
	}
}

// Without --redact an instance is stored whole, and the output still masks: the
// variables under sensitive keys always, a variable named with --redact (and its
// value where the history quotes it) when the command names it. A pattern that does
// not compile is bad input.
func TestTaskHistoryMasksWhatTheStoreHolds(t *testing.T) {
	dir := t.TempDir()
	store := "file:" + dir
	on := []string{leaveApprovalYML, "--instance", "r", "--store", store, "--actor", "employee"}
	taskJSONOf(t, exitOK, append([]string{"claim", "--set", `api_key="k-123456"`, "--set", `employee="Grace Hopper"`}, on...)...)
	taskJSONOf(t, exitOK, append([]string{"submit", "--node", "file", "--action", "forward", "--set", `api_key="k-123456"`,
		"--comment", "for Grace Hopper"}, on...)...)
	raw, err := os.ReadFile(filepath.Join(dir, "r.json"))
	require.NoError(t, err)
	assert.Contains(t, string(raw), "k-123456", "stored whole without --redact, for the next submit's scripts")

	_, stdout, _ := taskCmd(t, "history", "--instance", "r", "--store", store, "--output", "json")
	assert.NotContains(t, stdout, "k-123456")
	assert.Contains(t, stdout, `"vars":{"api_key":"***"},"comment":"for Grace Hopper"`)
	_, stdout, _ = taskCmd(t, "history", "--instance", "r", "--store", store, "--redact", "employee")
	assert.Contains(t, stdout, `"for ***"`)
	code, _, stderr := taskCmd(t, "history", "--instance", "r", "--store", store, "--redact-pattern", "(")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--redact-pattern "("`)
}
