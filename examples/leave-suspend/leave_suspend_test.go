package leavesuspend_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// flowteam builds the command once into a temporary directory and returns its path:
// every step below is a separate process, as an employee's request and the manager's
// decision days later would be.
func flowteam(t *testing.T) string {
	t.Helper()
	return testkit.BuildCommand(t, "github.com/flowteam/flowteam/cmd/flowteam")
}

// run runs the command and returns its exit code and decoded JSON output.
func run(t *testing.T, args ...string) (int, map[string]any, string) {
	t.Helper()
	cmd := exec.Command(flowteam(t), args...)
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
	return code, out, stderr.String()
}

// stores returns the DSNs the example runs against: a file store in a temporary
// directory, and a Redis (miniredis) store.
func stores(t *testing.T) map[string]string {
	mr := miniredis.RunT(t)
	return map[string]string{
		"file":  "file:" + filepath.Join(t.TempDir(), "sessions"),
		"redis": "redis://" + mr.Addr() + "/0?prefix=leave:",
	}
}

func TestLeaveApprovalAcrossProcesses(t *testing.T) {
	for name, dsn := range stores(t) {
		t.Run(name, func(t *testing.T) {
			// Process 1: the employee's request suspends at the manager.
			code, out, stderr := run(t, "run", "leave-suspend.yml", "--store", dsn, "--instance", "leave-42",
				"--set", `employee="Ada"`, "--set", "days=5", "--output", "json")
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, "suspended", out["status"])
			assert.Equal(t, "waiting for the manager to approve 5 days for Ada", out["reason"])
			assert.Equal(t, []any{"leave-suspend:manager"}, out["frontier"])

			// Process 2, later: the manager approves; the run continues at the manager
			// node, which now sees approved=true.
			code, out, stderr = run(t, "resume", "leave-42", "--store", dsn, "--set", "approved=true", "--output", "json")
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, "completed", out["status"])
			vars := out["vars"].(map[string]any)
			assert.Equal(t, "approved", vars["status"])
			assert.Equal(t, "manager", vars["decidedBy"])
			assert.EqualValues(t, 1, vars["submissions"], "the request was submitted once: nothing replayed")
			assert.EqualValues(t, 5, vars["days"])
			assert.Equal(t, map[string]any{"leave-suspend": "e"}, out["last"])

			// A second decision finds the instance completed: a conflict, exit 3.
			code, _, stderr = run(t, "resume", "leave-42", "--store", dsn, "--set", "approved=false")
			assert.Equal(t, 3, code)
			assert.Contains(t, stderr, "already completed")

			// An unknown instance is bad input, exit 2.
			code, _, stderr = run(t, "resume", "leave-404", "--store", dsn)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, "not found")
		})
	}
}

func TestLeaveApprovalRejected(t *testing.T) {
	dsn := "file:" + filepath.Join(t.TempDir(), "sessions")
	code, _, stderr := run(t, "run", "leave-suspend.yml", "--store", dsn, "--instance", "leave-7",
		"--set", `employee="Bob"`, "--set", "days=30", "--output", "json")
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "resume", "leave-7", "--store", dsn, "--set", "approved=false", "--output", "json")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "rejected", out["vars"].(map[string]any)["status"])
}

// TestLeaveApprovalTwoManagersAtOnce starts two resume processes of one suspended
// request at the same moment: exactly one decides, the other exits 3.
func TestLeaveApprovalTwoManagersAtOnce(t *testing.T) {
	for name, dsn := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for round := range 3 {
				id := "race-" + string(rune('a'+round))
				code, _, stderr := run(t, "run", "leave-suspend.yml", "--store", dsn, "--instance", id,
					"--set", `employee="Eve"`, "--set", "days=2", "--output", "json")
				require.Equal(t, 0, code, stderr)
				var (
					wg    sync.WaitGroup
					codes [2]int
					outs  [2]map[string]any
				)
				for i, decision := range []string{"approved=true", "approved=false"} {
					wg.Go(func() {
						codes[i], outs[i], _ = run(t, "resume", id, "--store", dsn, "--set", decision, "--output", "json")
					})
				}
				wg.Wait()
				assert.ElementsMatch(t, []int{0, 3}, codes[:], "round %d: one winner, one conflict", round)
				for i, c := range codes {
					if c == 0 {
						want := map[int]string{0: "approved", 1: "rejected"}[i]
						assert.Equal(t, want, outs[i]["vars"].(map[string]any)["status"], "the winner's decision stands")
					}
				}
			}
		})
	}
}
