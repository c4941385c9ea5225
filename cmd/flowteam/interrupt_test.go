package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The first Ctrl-C cancels the command's context; the second kills the process, as
// the command promises, even while the command still runs. The process signals
// itself, so the test runs in a child process (this test binary, re-executed).
func TestSecondInterruptKills(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send")
	}
	if os.Getenv("FLOWTEAM_TEST_SIGINT") != "" {
		ctx, stop := interruptible()
		defer stop()
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
		<-ctx.Done()
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
		// Only reached when the second signal was swallowed: the bound ends a failing
		// child instead of hanging the test.
		time.Sleep(10 * time.Second)
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondInterruptKills$")
	cmd.Env = append(os.Environ(), "FLOWTEAM_TEST_SIGINT=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "the child survived: %v\n%s", err, out)
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	assert.True(t, ws.Signaled(), "exit: %v\n%s", err, out)
	assert.Equal(t, syscall.SIGINT, ws.Signal())
}

// Without a Ctrl-C, stop releases the handler and its goroutine, and cancels.
func TestInterruptibleStop(t *testing.T) {
	noLeaks(t)
	ctx, stop := interruptible()
	require.NoError(t, ctx.Err())
	stop()
	stop()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
}
