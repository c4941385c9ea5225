//go:build unix && !solaris && !aix

package session

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileStoreNamedPipeSwappedIn: a named pipe put at "<id>.json" at the last
// moment, after anything the store could check by name and before it opens the file,
// is reported as ErrCorrupt by Load and Save, not waited on.
func TestFileStoreNamedPipeSwappedIn(t *testing.T) {
	ctx := t.Context()
	fs, err := NewFileStore(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, fs.Save(ctx, testSnapshot("swap-1"), 0))
	path := fs.path("swap-1")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	openHook = func(p string) {
		if p == path {
			require.NoError(t, os.Remove(p))
			require.NoError(t, syscall.Mkfifo(p, 0o600))
		}
	}
	t.Cleanup(func() { openHook = nil })

	_, err = fs.Load(ctx, "swap-1")
	require.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "special file")

	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, data, 0o600))
	err = fs.Save(ctx, testSnapshot("swap-1"), 1)
	require.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "special file")
}
