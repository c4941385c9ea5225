//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// The first SIGINT or SIGTERM cancels the command's context; the second ends the
// process, as the command promises, even while the command still runs. The process
// signals itself, so the test runs in a child process (this test binary, re-executed).
func TestSecondSignalKills(t *testing.T) {
	for name, sig := range map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM} {
		t.Run(name, func(t *testing.T) {
			if os.Getenv("FLOWTEAM_TEST_SIGNAL") == name {
				ctx, stop := interruptible()
				defer stop()
				require.NoError(t, syscall.Kill(os.Getpid(), sig))
				<-ctx.Done()
				require.NoError(t, syscall.Kill(os.Getpid(), sig))
				// Only reached when the second signal was swallowed: the bound ends a
				// failing child instead of hanging the test.
				time.Sleep(10 * time.Second)
				os.Exit(0)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestSecondSignalKills$/^"+name+"$")
			cmd.Env = append(os.Environ(), "FLOWTEAM_TEST_SIGNAL="+name)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "the child survived: %v\n%s", err, out)
			ws, ok := ee.Sys().(syscall.WaitStatus)
			require.True(t, ok)
			assert.True(t, ws.Signaled(), "exit: %v\n%s", err, out)
			assert.Equal(t, sig, ws.Signal())
		})
	}
}

// SIGTERM, with which Kubernetes, systemd and Docker stop a process, does what Ctrl-C
// does in run and in resume: the run is cancelled, the instance is saved where it
// stood (failed, with its frontier, not left "running"), the outcome is printed and
// the command exits 1. A later resume continues from that frontier. (Per-node
// durability lets the test see the run progress before it sends the signal.)
func TestTermSavesTheFrontier(t *testing.T) {
	bin := buildFlowteam(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	count := func(snap *session.Snapshot) int64 { n, _ := snap.Vars["n"].(int64); return n }

	steps := "--steps=1000000000" // the spin ends when it is stopped, not at the limit
	run := exec.Command(bin, "run", "testdata/misc/spin.yml", "--store", dsn, "--instance", "st", steps,
		"--durability", "per-node", "--output", "json")
	out, seen := terminate(t, run, store, "st", func(snap *session.Snapshot) bool { return count(snap) > 0 })
	assert.Equal(t, "failed", out["status"])
	runErr := out["error"].(map[string]any)
	assert.Equal(t, "cancelled", runErr["code"])
	assert.Contains(t, runErr["message"], "stopped by SIGTERM")
	assert.NotEmpty(t, out["frontier"])
	snap := loadSnap(t, dir, "st")
	assert.Equal(t, session.StatusFailed, snap.Status, "saved, not left running")
	assert.Greater(t, snap.Version, seen.Version)
	assert.GreaterOrEqual(t, count(snap), count(seen), "the progress is kept")

	prev := snap
	resume := exec.Command(bin, "resume", "st", "--store", dsn, steps, "--output", "json")
	out, seen = terminate(t, resume, store, "st", func(snap *session.Snapshot) bool {
		return snap.Version > prev.Version && count(snap) > count(prev)
	})
	assert.Equal(t, "failed", out["status"])
	assert.Equal(t, "cancelled", out["error"].(map[string]any)["code"])
	snap = loadSnap(t, dir, "st")
	assert.Equal(t, session.StatusFailed, snap.Status)
	assert.Greater(t, snap.Version, seen.Version)
	assert.GreaterOrEqual(t, count(snap), count(seen), "the resume continued the count")

	code, out, stderr := callJSON(t, cmdResume, "st", "--store", dsn, "--set", "stop=true")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", out["status"])
	assert.GreaterOrEqual(t, out["vars"].(map[string]any)["n"], float64(count(snap)), "continued, not replayed")
}

// terminate starts cmd, waits until the instance id in store is running and ready
// says the run has got far enough, sends the process SIGTERM, and returns its JSON
// output, after checking that it exited 1, and the snapshot that was ready.
func terminate(t *testing.T, cmd *exec.Cmd, store session.Store, id string,
	ready func(*session.Snapshot) bool) (map[string]any, *session.Snapshot) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() }) // a no-op once it exited; else a failed test leaves no process behind
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// A process has no way to say how far its run got but its stored instance: poll it.
	deadline := time.After(time.Minute)
	var seen *session.Snapshot
	for seen == nil {
		snap, err := store.Load(context.Background(), id)
		if err == nil && snap.Status == session.StatusRunning && ready(snap) {
			seen = snap
		}
		select {
		case err := <-exited:
			t.Fatalf("exited before the signal: %v\nstdout: %s\nstderr: %s", err, &stdout, &stderr)
		case <-deadline:
			t.Fatalf("instance %q not far enough within a minute: stderr: %s", id, &stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := <-exited
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "exit: %v\nstderr: %s", err, &stderr)
	require.Equal(t, exitFail, ee.ExitCode(), "not killed by the signal, but exits 1: stderr: %s", &stderr)
	var out map[string]any
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), "stdout: %s\nstderr: %s", &stdout, &stderr)
	return out, seen
}
