//go:build unix && !solaris && !aix

package session

import (
	"context"
	"fmt"
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

// lockable returns ErrCorrupt if f, the directory's lock file, has another name than
// its own: a hard link planted at ".lock" to a file elsewhere would have the store
// lock that file's inode, so that whoever holds a lock on that file (its owner, or
// whoever planted the link) stops every save, and the store's saves stop any program
// that locks that file. The store never links its lock file, so it is refused rather
// than locked; checked on the opened file, before it is locked.
func lockable(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(st.Nlink) != 1 {
		return fmt.Errorf("%w: %d links to it, not a lock file of the store's own", ErrCorrupt, st.Nlink)
	}
	return nil
}
