package session_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
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

// Opening a file store removes the temporary files that saves of killed processes
// left more than an hour ago, and only those: a younger one may be a save in
// progress, a snapshot or another file is no leftover, and a ".tmp-" entry that is
// not a regular file is not the store's.
func TestFileStoreOpenRemovesOldTempFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-61 * time.Minute)
	write := func(name string, mtime time.Time) {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte("{"), 0o600))
		require.NoError(t, os.Chtimes(path, mtime, mtime))
	}
	write(".tmp-old", old)
	write(".tmp-young", time.Now().Add(-59*time.Minute))
	write("notes.txt", old)
	write("order-9.json", old)
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".tmp-dir"), 0o700))
	require.NoError(t, os.Chtimes(filepath.Join(dir, ".tmp-dir"), old, old))

	_, err := session.NewFileStore(dir)
	require.NoError(t, err)
	names := func() []string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	assert.ElementsMatch(t, []string{".tmp-young", ".tmp-dir", "notes.txt", "order-9.json"}, names())

	// The hour is the store's clock's: an hour later the young one is old.
	_, err = session.NewFileStore(dir, session.WithClock(func() time.Time { return time.Now().Add(2 * time.Minute) }))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{".tmp-dir", "notes.txt", "order-9.json"}, names())
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
	// A header that reads but is not valid: a save must not take version 0 for "not
	// stored", nor the first of two versions for the version.
	for _, edit := range []string{`"version":0,`, `"version":-1,`, `"version":1,"version":2,`} {
		damaged := strings.Replace(string(valid), `"version":1,`, edit, 1)
		require.NoError(t, os.WriteFile(path, []byte(damaged), 0o600))
		for _, expected := range []int64{0, 1, 2} {
			assert.ErrorIs(t, fs.Save(ctx, storetest.NewSnapshot("order-2"), expected), session.ErrCorrupt, "%s, expecting %d", edit, expected)
		}
		// Listed whatever the status, so that Load reports the damage.
		for _, status := range []session.Status{"", session.StatusSuspended, session.StatusCompleted} {
			ids, err := fs.List(ctx, status)
			require.NoError(t, err)
			assert.Contains(t, ids, "order-2", "%s, status %q", edit, status)
		}
		_, err := fs.Load(ctx, "order-2")
		assert.ErrorIs(t, err, session.ErrCorrupt, edit)
		left, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, damaged, string(left), edit)
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

// TestFileStoreReadsFilesRewrittenByOtherTools: a snapshot is plain JSON, so an
// operator may fix a variable with another tool, which may write the fields in
// another order (encoding/json sorts a map's keys, as does jq -S). The store loads,
// lists, expires and saves over such a file as over its own, and a resume continues
// from it.
func TestFileStoreReadsFilesRewrittenByOtherTools(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	clk := storetest.NewClock()
	fs, err := session.NewFileStore(dir, session.WithClock(clk.Now))
	require.NoError(t, err)
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	r := session.NewRunner(eng, fs)
	_, err = r.Run(ctx, "leave", flow.NewContextWith("edited-1", map[string]any{"days": 5}))
	require.NoError(t, err)
	expiring := storetest.NewSnapshot("edited-2")
	require.NoError(t, fs.SaveTTL(ctx, expiring, 0, time.Hour))

	// Rewrite both files as a Go program would: decoded into a map, edited, encoded.
	for _, id := range []string{"edited-1", "edited-2"} {
		path := filepath.Join(dir, id+".json")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		m["vars"].(map[string]any)["days"] = 7
		data, err = json.MarshalIndent(m, "", "  ")
		require.NoError(t, err)
		require.False(t, strings.HasPrefix(string(data), `{"format"`), "the fields are in another order")
		require.NoError(t, os.WriteFile(path, data, 0o600))
	}

	snap, err := fs.Load(ctx, "edited-1")
	require.NoError(t, err)
	assert.Equal(t, int64(7), snap.Vars["days"])
	ids, err := fs.List(ctx, session.StatusSuspended)
	require.NoError(t, err)
	assert.Equal(t, []string{"edited-1", "edited-2"}, ids)
	res, err := r.Resume(ctx, "edited-1", map[string]any{"approved": true})
	require.NoError(t, err, "the claim checks the version of the rewritten file")
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.EqualValues(t, 4, res.Version)
	assert.ErrorIs(t, fs.Save(ctx, storetest.NewSnapshot("edited-2"), 0), session.ErrConflict)

	clk.FastForward(2 * time.Hour) // edited-2 expires: its expiry is read from the rewritten file
	ids, err = fs.List(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"edited-1"}, ids)
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("edited-2"), 0), "an expired instance can be created again")
}

// TestFileStoreListRemovesExpiredFiles: as its documentation says, an expired
// snapshot file stays on disk only until it is saved over, deleted or listed: List
// removes it (an expired snapshot may hold personal data its expiry was meant to
// forget).
func TestFileStoreListRemovesExpiredFiles(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	clk := storetest.NewClock()
	fs, err := session.NewFileStore(dir, session.WithClock(clk.Now))
	require.NoError(t, err)
	require.NoError(t, fs.SaveTTL(ctx, storetest.NewSnapshot("gone"), 0, time.Hour))
	require.NoError(t, fs.SaveTTL(ctx, storetest.NewSnapshot("kept"), 0, 3*time.Hour))
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("forever"), 0))
	clk.FastForward(2 * time.Hour)

	ids, err := fs.List(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"forever", "kept"}, ids)
	_, err = os.Stat(filepath.Join(dir, "gone.json"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the expired file is removed")
	for _, id := range []string{"kept", "forever"} {
		_, err = os.Stat(filepath.Join(dir, id+".json"))
		assert.NoError(t, err, id)
	}
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("gone"), 0), "the id can be used again")
}

// TestFileStoreExpiryAddedAfterTheBody: a tool that keeps the order of the fields it
// read and adds an expiry to a file that has none (written by an earlier build, which
// left out an empty expiry) appends it after the body; to a file of this build, which
// writes "expires":null, it sets that field in place. The store reads that expiry as
// Load does: the expired instance is neither listed nor in the way of a new one with
// its id.
func TestFileStoreExpiryAddedAfterTheBody(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	clk := storetest.NewClock()
	fs, err := session.NewFileStore(dir, session.WithClock(clk.Now))
	require.NoError(t, err)
	for _, key := range []string{`"expires"`, `"\u0065xpires"`, "in place"} {
		require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("late"), 0))
		path := filepath.Join(dir, "late.json")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		expires := clk.Now().Add(time.Hour).Format(time.RFC3339Nano)
		if key == "in place" {
			data = []byte(strings.Replace(string(data), `"expires":null`, `"expires":"`+expires+`"`, 1))
		} else {
			data = []byte(strings.Replace(string(data), `,"expires":null`, "", 1))
			data = append(data[:len(data)-1], `,`+key+`:"`+expires+`"}`...)
		}
		require.NoError(t, os.WriteFile(path, data, 0o600))
		ids, err := fs.List(ctx, "")
		require.NoError(t, err)
		assert.Equal(t, []string{"late"}, ids, "%s: not expired yet", key)

		clk.FastForward(2 * time.Hour)
		_, err = fs.Load(ctx, "late")
		require.ErrorIs(t, err, session.ErrNotFound, key)
		ids, err = fs.List(ctx, "")
		require.NoError(t, err)
		assert.Empty(t, ids, "%s: an expired instance is not listed", key)
		require.NoError(t, os.WriteFile(path, data, 0o600)) // List removed it: put it back
		require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("late"), 0), "%s: an expired id can be created again", key)
		require.NoError(t, fs.Delete(ctx, "late"))
	}
}

// TestFileStoreRefusesSymlinks: an "<id>.json" that is a symbolic link (or a
// directory) is not followed by any method: Load and Save report it as ErrCorrupt
// naming the file, List lists it like any file it cannot read, and Delete removes the
// link, not its target.
func TestFileStoreRefusesSymlinks(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	fs, err := session.NewFileStore(dir)
	require.NoError(t, err)
	other, err := session.NewFileStore(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, other.Save(ctx, storetest.NewSnapshot("link-1"), 0))
	target := filepath.Join(other.Dir(), "link-1.json")
	targetData, err := os.ReadFile(target)
	require.NoError(t, err)
	link := filepath.Join(dir, "link-1.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dir-1.json"), 0o700))
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("plain-1"), 0))

	ids, err := fs.List(ctx, session.StatusSuspended)
	require.NoError(t, err)
	assert.Equal(t, []string{"dir-1", "link-1", "plain-1"}, ids, "listed, so that Load reports them")
	for id, what := range map[string]string{"link-1": "symbolic link", "dir-1": "directory"} {
		path := filepath.Join(dir, id+".json")
		_, err = fs.Load(ctx, id)
		require.ErrorIs(t, err, session.ErrCorrupt, id)
		assert.ErrorContains(t, err, path, id)
		assert.ErrorContains(t, err, what, id)
		for _, expected := range []int64{0, 1} {
			err := fs.Save(ctx, storetest.NewSnapshot(id), expected)
			require.ErrorIs(t, err, session.ErrCorrupt, "%s, expecting %d", id, expected)
			assert.ErrorContains(t, err, what, id)
		}
	}
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is still there")

	require.NoError(t, fs.Delete(ctx, "link-1"))
	_, err = os.Lstat(link)
	assert.ErrorIs(t, err, os.ErrNotExist)
	left, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, targetData, left, "the target is not touched")
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("link-1"), 0), "the id can be used again")
	require.NoError(t, fs.Delete(ctx, "dir-1"))
}

// allocated returns the bytes f allocates (run with one P, so that nothing else runs).
func allocated(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestFileStoreReadsOnlyTheHeader: List, Save and Delete need only the header of a
// stored file (status, version, expiry), and read no more of a file the store wrote
// than its start, however large its body: the store writes the expiry in the header
// even when there is none ("expires":null), so no expiry can come after the body.
func TestFileStoreReadsOnlyTheHeader(t *testing.T) {
	ctx := t.Context()
	fs, err := session.NewFileStore(t.TempDir())
	require.NoError(t, err)
	s := storetest.NewSnapshot("big-1")
	s.Vars["big"] = strings.Repeat("expires \u0001 ", 100<<10) // words a later expiry would be found by
	require.NoError(t, fs.Save(ctx, s, 0))
	fi, err := os.Stat(filepath.Join(fs.Dir(), "big-1.json"))
	require.NoError(t, err)
	require.Greater(t, fi.Size(), int64(1<<20))

	const most = 64 << 10
	var ids []string
	assert.Less(t, allocated(func() { ids, err = fs.List(ctx, session.StatusSuspended) }), uint64(most), "List")
	require.NoError(t, err)
	assert.Equal(t, []string{"big-1"}, ids)
	assert.Less(t, allocated(func() { err = fs.Delete(ctx, "big-1") }), uint64(most), "Delete")
	require.NoError(t, err)
}

// TestFileStoreKeepsFilesOfAnotherFormat: a file written by a build with a format
// this one cannot read (here 2) has a header that parses, and Save, Delete and List
// read only the header. A store must not destroy what it cannot read: Save over it
// and Delete of it fail with ErrFormat naming the file, and List does not remove it
// when its expiry has passed; the file is left as it was.
func TestFileStoreKeepsFilesOfAnotherFormat(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	clk := storetest.NewClock()
	fs, err := session.NewFileStore(dir, session.WithClock(clk.Now))
	require.NoError(t, err)
	for _, id := range []string{"future-1", "future-ttl"} {
		ttl := time.Duration(0)
		if id == "future-ttl" {
			ttl = time.Hour
		}
		require.NoError(t, fs.SaveTTL(ctx, storetest.NewSnapshot(id), 0, ttl))
		path := filepath.Join(dir, id+".json")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		future, n := strings.CutPrefix(string(data), `{"format":1,`)
		require.True(t, n)
		require.NoError(t, os.WriteFile(path, []byte(`{"format":2,`+future), 0o600))
	}
	clk.FastForward(2 * time.Hour)
	path := filepath.Join(dir, "future-1.json")
	want, err := os.ReadFile(path)
	require.NoError(t, err)

	err = fs.Save(ctx, storetest.NewSnapshot("future-1"), 1)
	require.ErrorIs(t, err, session.ErrFormat)
	assert.ErrorContains(t, err, path)
	err = fs.Delete(ctx, "future-1")
	require.ErrorIs(t, err, session.ErrFormat)
	assert.ErrorContains(t, err, path)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "the file is left as it was")
	_, err = fs.Load(ctx, "future-1")
	assert.ErrorIs(t, err, session.ErrFormat)

	// Expired as far as this build can tell, but only the writer knows what its
	// expiry means: neither saved over nor removed.
	err = fs.Save(ctx, storetest.NewSnapshot("future-ttl"), 0)
	require.ErrorIs(t, err, session.ErrFormat)
	ids, err := fs.List(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"future-1", "future-ttl"}, ids, "listed, so that Load reports them")
	_, err = os.Stat(filepath.Join(dir, "future-ttl.json"))
	assert.NoError(t, err, "List did not remove it")
	assert.Empty(t, tempFiles(t, dir))
}
