package leaveapproval_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/testkit"
)

// flowteam builds the command once: every step of the README is a process of its
// own, as each person's action would be.
func flowteam(t *testing.T) string {
	t.Helper()
	return testkit.BuildCommand(t, "github.com/flowteam/flowteam/cmd/flowteam")
}

// task runs "flowteam task SUB leave.yml --instance req-7 --store dsn ARGS --output
// json" and returns the exit code and the decoded output.
func task(t *testing.T, dsn, sub string, args ...string) (int, map[string]any) {
	t.Helper()
	full := append([]string{"task", sub, "leave.yml", "--instance", "req-7", "--store", dsn}, args...)
	cmd := exec.Command(flowteam(t), append(full, "--output", "json")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	var out map[string]any
	if stdout.Len() > 0 {
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	}
	return code, out
}

func nodeOf(out map[string]any) any {
	if tk, ok := out["task"].(map[string]any); ok {
		return tk["node"]
	}
	return nil
}

func TestLeaveApprovalFromTheCommandLine(t *testing.T) {
	mr := miniredis.RunT(t)
	for name, dsn := range map[string]string{
		"file":  "file:" + filepath.Join(t.TempDir(), "sessions"),
		"redis": "redis://" + mr.Addr() + "/0?prefix=leave:",
	} {
		t.Run(name, func(t *testing.T) {
			ok := func(sub string, args ...string) map[string]any {
				t.Helper()
				code, out := task(t, dsn, sub, args...)
				require.Equal(t, 0, code, "%s %v", sub, args)
				return out
			}
			out := ok("claim", "--actor", "employee", "--set", "days=8", "--set", `employee="Ada"`)
			assert.Equal(t, "file", nodeOf(out))
			ok("submit", "--actor", "employee", "--node", "file", "--action", "forward")

			code, _ := task(t, dsn, "submit", "--actor", "employee", "--node", "lead", "--action", "forward")
			assert.Equal(t, 4, code, "the employee may not approve")
			code, _ = task(t, dsn, "submit", "--actor", "director", "--node", "director", "--action", "forward")
			assert.Equal(t, 3, code, "the director may not approve before the lead")

			assert.Equal(t, "lead", nodeOf(ok("claim", "--actor", "lead")))
			ok("submit", "--actor", "lead", "--node", "lead", "--action", "back", "--comment", "which dates?")
			assert.Equal(t, "file", nodeOf(ok("find")))

			ok("submit", "--actor", "employee", "--node", "file", "--action", "forward", "--set", "days=9")
			ok("claim", "--actor", "lead")
			ok("submit", "--actor", "lead", "--node", "lead", "--action", "forward", "--if-waiting")
			code, _ = task(t, dsn, "submit", "--actor", "lead", "--node", "lead", "--action", "forward", "--if-waiting")
			assert.Equal(t, 3, code, "the lead's task is done")

			next := ok("next")["tasks"].([]any)
			require.Len(t, next, 1)
			assert.Equal(t, "director", next[0].(map[string]any)["node"])
			assert.Equal(t, "director", nodeOf(ok("claim", "--actor", "director")))
			out = ok("submit", "--actor", "director", "--node", "director", "--action", "forward")
			assert.Equal(t, "completed", out["status"])

			code, _ = task(t, dsn, "submit", "--actor", "employee", "--node", "nope", "--action", "forward")
			assert.Equal(t, 2, code)

			cmd := exec.Command(flowteam(t), "task", "history", "--instance", "req-7", "--store", dsn, "--output", "json")
			data, err := cmd.Output()
			require.NoError(t, err)
			var h struct {
				Status  string `json:"status"`
				History []struct {
					Node, Action, Comment string
					Actor                 map[string]string
				} `json:"history"`
			}
			require.NoError(t, json.Unmarshal(data, &h))
			assert.Equal(t, "completed", h.Status)
			require.Len(t, h.History, 5)
			assert.Equal(t, "back", h.History[1].Action)
			assert.Equal(t, "which dates?", h.History[1].Comment)
			assert.Equal(t, map[string]string{"actor": "director"}, h.History[4].Actor)
		})
	}
}

// Four days need only the team lead: the director is not asked.
func TestShortLeaveSkipsTheDirector(t *testing.T) {
	dsn := "file:" + filepath.Join(t.TempDir(), "sessions")
	for _, step := range [][]string{
		{"claim", "--actor", "employee", "--set", "days=4"},
		{"submit", "--actor", "employee", "--node", "file", "--action", "forward"},
		{"submit", "--actor", "lead", "--node", "lead", "--action", "forward"},
	} {
		code, _ := task(t, dsn, step[0], step[1:]...)
		require.Equal(t, 0, code, "%v", step)
	}
	code, out := task(t, dsn, "find")
	require.Equal(t, 0, code)
	assert.Equal(t, "completed", out["status"])
	assert.Nil(t, out["task"])
}

// The README's audit: the lead's claim and sending back, with --audit, read back by
// "flowteam audit".
func TestLeaveApprovalAudit(t *testing.T) {
	dsn := "file:" + filepath.Join(t.TempDir(), "sessions")
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	for _, step := range [][]string{
		{"claim", "--actor", "employee", "--set", "days=8"},
		{"submit", "--actor", "employee", "--node", "file", "--action", "forward"},
		{"claim", "--actor", "lead", "--audit", audit},
		{"submit", "--actor", "lead", "--node", "lead", "--action", "back", "--comment", "which dates?", "--audit", audit},
	} {
		code, _ := task(t, dsn, step[0], step[1:]...)
		require.Equal(t, 0, code, "%v", step)
	}
	out, err := exec.Command(flowteam(t), "audit", audit).Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 3, "%s", out)
	assert.Equal(t, "tasks of instance req-7  graph leave-approval  (claims and submits)", lines[0])
	assert.Regexp(t, `#0  STARTED      lead  claim by actor=lead -> running$`, lines[1])
	assert.Regexp(t, `#0  COMPLETED    lead  submit back by actor=lead: "which dates\?" -> running$`, lines[2])
}

// The README's secrets: the employee's name, declared secret on the first command,
// is in neither the store nor the history, though the submit's comment quotes it.
func TestLeaveApprovalRedact(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	name := `employee="Ada Lovelace"`
	for _, step := range [][]string{
		{"claim", "--actor", "employee", "--set", "days=8", "--set", name, "--redact", "employee"},
		{"submit", "--actor", "employee", "--node", "file", "--action", "forward", "--set", name, "--comment", "Ada Lovelace, 8 days"},
	} {
		code, _ := task(t, dsn, step[0], step[1:]...)
		require.Equal(t, 0, code, "%v", step)
	}
	history, err := exec.Command(flowteam(t), "task", "history", "--instance", "req-7", "--store", dsn).Output()
	require.NoError(t, err)
	assert.Contains(t, string(history), `"***, 8 days"`)
	stored, err := os.ReadFile(filepath.Join(dir, "req-7.json"))
	require.NoError(t, err)
	for _, text := range []string{string(history), string(stored)} {
		assert.NotContains(t, text, "Lovelace")
	}
}
