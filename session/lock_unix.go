//go:build unix

package session

import (
	"context"
	"os"
	"syscall"
	"time"
)

// Bounds of the pause between two attempts to take a file lock another process holds.
const (
	lockRetryMin = time.Millisecond
	lockRetryMax = 100 * time.Millisecond
)

// lockFile takes an exclusive advisory lock on f, waiting for it until ctx ends;
// closing f releases it. The attempts do not block, with a growing pause between
// them: a blocking flock cannot be interrupted by ctx, and one left blocking in a
// goroutine could take the lock after its caller gave up.
func lockFile(ctx context.Context, f *os.File) error {
	pause := lockRetryMin
	var t *time.Timer
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
		default:
			return err
		}
		if t == nil {
			t = time.NewTimer(pause)
			defer t.Stop()
		} else {
			t.Reset(pause)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, lockRetryMax)
	}
}
