package main

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Without a signal, stop releases the handler and its goroutine, and cancels.
func TestInterruptibleStop(t *testing.T) {
	noLeaks(t)
	ctx, stop := interruptible()
	require.NoError(t, ctx.Err())
	stop()
	stop()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.Equal(t, context.Canceled, context.Cause(ctx), "a stop is no signal")
}

// The cancel cause names the signal: the run's error message then says what stopped it.
func TestSignalCause(t *testing.T) {
	assert.EqualError(t, signalCause(os.Interrupt), "stopped by SIGINT")
	assert.EqualError(t, signalCause(syscall.SIGTERM), "stopped by SIGTERM")
}
