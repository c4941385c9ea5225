//go:build !windows

package session

import (
	"fmt"
	"os"
)

// syncDir makes the directory's entries (a rename, a new or removed file) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("session: file store: sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("session: file store: sync directory: %w", err)
	}
	return nil
}
