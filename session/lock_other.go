//go:build !unix

package session

import (
	"context"
	"os"
)

// lockFile does nothing where flock is not available: a FileStore is then safe for
// concurrent use within one process only (its mutex), not across processes.
func lockFile(context.Context, *os.File) error { return nil }

// lockable accepts any lock file where lockFile locks nothing.
func lockable(*os.File) error { return nil }
