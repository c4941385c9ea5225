//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// A process running an instance holds a lease on it: "resume --recover" from another
// process is refused while that process is alive (exit 3, naming it and when its
// lease expires), also long after the lease it took at the claim would have ended,
// because it renews it; "sessions list" shows it, and "sessions delete" needs
// --force. Once the process is killed its lease expires, and --recover takes over.
func TestRecoverRefusedWhileTheOwnerIsAlive(t *testing.T) {
	bin := buildFlowteam(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	load := func() *session.Snapshot {
		snap, err := store.Load(context.Background(), "alive")
		require.NoError(t, err)
		return snap
	}
	count := func(snap *session.Snapshot) int64 { n, _ := snap.Vars["n"].(int64); return n }

	var stderr bytes.Buffer
	owner := exec.Command(bin, "run", "testdata/misc/spin.yml", "--store", dsn, "--instance", "alive",
		"--steps=1000000000", "--durability", "per-node", "--lease-renew", "100ms", "--lease-ttl", "1s")
	owner.Stderr = &stderr
	require.NoError(t, owner.Start())
	t.Cleanup(func() { owner.Process.Kill(); owner.Wait() })
	claim := waitFor(t, "the run to progress", func() (*session.Snapshot, bool) {
		snap, err := store.Load(context.Background(), "alive")
		return snap, err == nil && snap.Status == session.StatusRunning && count(snap) > 0
	})
	require.NotNil(t, claim.Lease)
	assert.Equal(t, owner.Process.Pid, claim.Lease.PID)
	host, _ := os.Hostname()
	assert.Equal(t, host, claim.Lease.Host)

	recoverCmd := func() (int, string) {
		var out bytes.Buffer
		cmd := exec.Command(bin, "resume", "alive", "--store", dsn, "--recover", "--set", "stop=true",
			"--output", "json")
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), out.String()
		}
		require.NoError(t, err)
		return 0, out.String()
	}
	code, out := recoverCmd()
	assert.Equal(t, exitConflict, code, out)
	assert.Contains(t, out, fmt.Sprintf(`instance "alive" is running: pid %d on %s (token %s) holds its lease until `,
		owner.Process.Pid, host, claim.Lease.Token))
	assert.Contains(t, out, "--recover takes the instance over only once the lease has expired")

	// Past the claim's lease, the owner has renewed it.
	renewed := waitFor(t, "a renewal past the claim's lease", func() (*session.Snapshot, bool) {
		snap := load()
		return snap, snap.Lease.Renewed.After(claim.Lease.Expiry)
	})
	assert.Equal(t, claim.Lease.Token, renewed.Lease.Token)
	code, out = recoverCmd()
	assert.Equal(t, exitConflict, code, out)
	assert.Contains(t, out, "holds its lease until")

	c, listed, _ := call(t, cmdSessions, "list", "--store", dsn)
	require.Equal(t, exitOK, c)
	assert.Regexp(t, fmt.Sprintf(`alive\s+running\s+\d+\s+spin\s+\S+\s+%d@%s\s+until \S+`, owner.Process.Pid, host), listed)
	c, _, errOut := call(t, cmdSessions, "delete", "alive", "--store", dsn)
	assert.Equal(t, exitConflict, c, "a live instance is not deleted without --force")
	assert.Contains(t, errOut, "--force deletes it all the same")

	require.NoError(t, owner.Process.Kill())
	owner.Wait()
	dead := load()
	waitFor(t, "the lease to expire", func() (*session.Snapshot, bool) {
		return nil, !dead.Lease.Fresh(time.Now())
	})
	c, listed, _ = call(t, cmdSessions, "list", "--store", dsn)
	require.Equal(t, exitOK, c)
	assert.Contains(t, listed, "expired ")
	code, out = recoverCmd()
	require.Equal(t, exitOK, code, out)
	assert.Contains(t, out, `"status": "completed"`)
	after := load()
	assert.Equal(t, session.StatusCompleted, after.Status)
	assert.Nil(t, after.Lease)
	assert.GreaterOrEqual(t, count(after), count(dead), "continued from the dead process's last checkpoint")
}

// waitFor polls ready until it reports true, for at most a minute, and returns the
// snapshot it returned then.
func waitFor(t *testing.T, what string, ready func() (*session.Snapshot, bool)) *session.Snapshot {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if snap, ok := ready(); ok {
			return snap
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("waited a minute for %s", what)
	return nil
}
