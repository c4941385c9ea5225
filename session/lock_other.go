//go:build !unix || solaris || aix

package session

import (
	"context"
	"os"
)

// lockFile does nothing where flock is not available (Windows, Solaris and illumos,
// AIX; an fcntl lock there would not exclude two stores of one process either): a
// FileStore is then safe for
// concurrent use within one process only (its mutex), not across processes.
func lockFile(context.Context, *os.File) error { return nil }

// lockable accepts any lock file where lockFile locks nothing.
func lockable(*os.File) error { return nil }
