//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// A resume reads the instance's settings from the snapshot it loads first, before it
// loads the definitions, and the Runner claims the instance from a second load. If
// another resume saved the instance in between (here while the first waits on its
// definition file, a FIFO), the settings read are not the claimed snapshot's: the
// other resume's --redact would be dropped and the secret the first one is given saved
// in clear. The first must lose, as a concurrent resume does, and save nothing.
func TestResumeConflictsWhenTheInstanceChangesWhileLoading(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	code, _, stderr := call(t, cmdRun, roundsYML, "--store", dsn, "--instance", "c")
	require.Equal(t, exitOK, code, stderr)

	fifo := filepath.Join(t.TempDir(), "rounds.yml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	type outcome struct {
		code   int
		stderr string
	}
	done := make(chan outcome, 1)
	go func() {
		code, _, stderr := call(t, cmdResume, "c", "--store", dsn, "--file", fifo, "--set", "token=second")
		done <- outcome{code, stderr}
	}()
	// Opening the FIFO waits for the first resume to read it: it has loaded the
	// instance by then.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	code, _, stderr = call(t, cmdResume, "c", "--store", dsn, "--redact", "token", "--set", "token=first")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, loadSnap(t, dir, "c").Meta, "redact=token")
	v := loadSnap(t, dir, "c").Version
	src, err := os.ReadFile(roundsYML)
	require.NoError(t, err)
	_, err = w.Write(src)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	got := <-done
	assert.Equal(t, exitConflict, got.code, got.stderr)
	assert.Contains(t, got.stderr, "another process saved the instance")
	snap := loadSnap(t, dir, "c")
	assert.Equal(t, v, snap.Version, "nothing saved")
	assert.Equal(t, session.DefaultMask, snap.Vars["token"])
	assert.Contains(t, snap.Meta, "redact=token")
}
