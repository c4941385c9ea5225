package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
)

// tempFiles lists the ".tmp-*" files in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	require.NoError(t, err)
	return m
}

// TestFileStoreCrashLeftovers: what a process killed mid-save leaves behind (a
// temporary file, complete or cut short, of the next version) changes nothing: the
// previous snapshot loads, is listed and can be saved over; the leftover is not
// listed and not touched. Failed saves leave no temporary file of their own.
func TestFileStoreCrashLeftovers(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	fs, err := session.NewFileStore(dir)
	require.NoError(t, err)
	snap := storetest.NewSnapshot("order-1")
	require.NoError(t, fs.Save(ctx, snap, 0))
	before, err := fs.Load(ctx, "order-1")
	require.NoError(t, err)

	next := storetest.NewSnapshot("order-1")
	next.Reason = "the next version"
	next.Version, next.Created, next.Updated = 2, snap.Created, snap.Updated
	data, err := session.Encode(next)
	require.NoError(t, err)
	leftovers := map[string][]byte{".tmp-123": data, ".tmp-456": data[:len(data)/2], ".tmp-789": {}}
	for name, b := range leftovers {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}

	got, err := fs.Load(ctx, "order-1")
	require.NoError(t, err)
	assert.Equal(t, before, got, "the previous complete snapshot")
	ids, err := fs.List(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"order-1"}, ids)
	require.ErrorIs(t, fs.Save(ctx, storetest.NewSnapshot("order-1"), 0), session.ErrConflict)
	bad := storetest.NewSnapshot("order-1")
	bad.Vars["f"] = func() {}
	require.ErrorIs(t, fs.Save(ctx, bad, 1), session.ErrUnserializable)
	assert.Len(t, tempFiles(t, dir), len(leftovers), "failed saves leave no temporary file")
	require.NoError(t, fs.Save(ctx, got, 1))
	got, err = fs.Load(ctx, "order-1")
	require.NoError(t, err)
	assert.EqualValues(t, 2, got.Version)
	for name, b := range leftovers {
		left, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.Equal(t, b, left, "%s is not touched", name)
	}
}

// TestFileStoreDamagedFile: a snapshot file cut short or emptied (a disk that lost
// the end of a write, a hand edit) is reported with its path as ErrCorrupt and left
// as it is by Load and by a save, which cannot check its version and so refuses to
// replace it; Delete removes it, and the id can then be used again.
func TestFileStoreDamagedFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	fs, err := session.NewFileStore(dir)
	require.NoError(t, err)
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("order-2"), 0))
	path := filepath.Join(dir, "order-2.json")
	valid, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, n := range []int{0, 1, 20, len(valid) / 2, len(valid) - 1} {
		damaged := valid[:n]
		require.NoError(t, os.WriteFile(path, damaged, 0o600))
		_, err := fs.Load(ctx, "order-2")
		require.ErrorIs(t, err, session.ErrCorrupt, "cut at %d", n)
		assert.ErrorContains(t, err, path, "the error names the file")
		if !strings.Contains(string(damaged), `"version":1,`) { // the header is damaged too
			assert.ErrorIs(t, fs.Save(ctx, storetest.NewSnapshot("order-2"), 1), session.ErrCorrupt, "cut at %d", n)
			assert.ErrorIs(t, fs.Save(ctx, storetest.NewSnapshot("order-2"), 0), session.ErrCorrupt, "cut at %d", n)
		}
		left, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, damaged, left, "cut at %d: the file is left for an operator to look at", n)
	}
	require.NoError(t, fs.Delete(ctx, "order-2"))
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("order-2"), 0))
}

// TestFileStorePermissions: snapshots may hold personal data, so the directory the
// store creates and every snapshot file are for the owner only.
func TestFileStorePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "nested")
	fs, err := session.NewFileStore(dir)
	require.NoError(t, err)
	require.NoError(t, fs.Save(t.Context(), storetest.NewSnapshot("p-1"), 0))
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Zero(t, st.Mode().Perm()&0o077, "directory mode %v", st.Mode().Perm())
	st, err = os.Stat(filepath.Join(dir, "p-1.json"))
	require.NoError(t, err)
	assert.Zero(t, st.Mode().Perm()&0o077, "file mode %v", st.Mode().Perm())
}

// TestFileStoreIDsStayInTheDirectory: ids that look like paths are rejected by every
// method, and ids with dots or names of the store's own files inside them name files
// in the directory and nowhere else.
func TestFileStoreIDsStayInTheDirectory(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	dir := filepath.Join(root, "store")
	fs, err := session.NewFileStore(dir)
	require.NoError(t, err)
	for _, id := range []string{"../escape", "..", "sub/../../escape", "/tmp/abs", `..\escape`, ".lock", ".tmp-1", ".json"} {
		snap := storetest.NewSnapshot("x")
		snap.Instance = id
		assert.ErrorIs(t, fs.Save(ctx, snap, 0), session.ErrInvalidID, id)
		_, err := fs.Load(ctx, id)
		assert.ErrorIs(t, err, session.ErrInvalidID, id)
		assert.ErrorIs(t, fs.Delete(ctx, id), session.ErrInvalidID, id)
	}
	ids := []string{"a..b", "x.json", "lock", "tmp-1", "a..", "a. ."}
	for _, id := range ids {
		require.NoError(t, fs.Save(ctx, storetest.NewSnapshot(id), 0), id)
	}
	ents, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, ents, 1, "nothing was written beside the store's directory")
	listed, err := fs.List(ctx, "")
	require.NoError(t, err)
	assert.ElementsMatch(t, ids, listed)
	for _, id := range ids {
		got, err := fs.Load(ctx, id)
		require.NoError(t, err, id)
		assert.Equal(t, id, got.Instance)
	}
}
