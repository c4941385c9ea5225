package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// errDisk is the error of a failing directory sync.
var errDisk = errors.New("input/output error")

// failingSyncStore returns a FileStore in a new directory whose directory syncs fail
// while *fail is true.
func failingSyncStore(t *testing.T) (fs *FileStore, fail *bool) {
	fs, err := NewFileStore(t.TempDir())
	require.NoError(t, err)
	fail = new(bool)
	fs.syncDir = func(dir string) error {
		if *fail {
			return fmt.Errorf("session: file store: sync directory: %w", errDisk)
		}
		return syncDir(dir)
	}
	return fs, fail
}

func testSnapshot(id string) *Snapshot {
	return &Snapshot{Instance: id, Graph: "g", Hash: strings.Repeat("a", 64), Status: StatusSuspended,
		Vars: map[string]any{"n": int64(1)}}
}

// TestFileStoreNotDurable: when the directory sync fails after the rename, the new
// version is already stored. Save says so (ErrNotDurable, not a failed save nor a
// conflict), stamps the snapshot as on success, and the next save expecting that
// version succeeds.
func TestFileStoreNotDurable(t *testing.T) {
	ctx := t.Context()
	fs, fail := failingSyncStore(t)
	snap := testSnapshot("nd-1")
	require.NoError(t, fs.Save(ctx, snap, 0))

	*fail = true
	err := fs.Save(ctx, snap, 1)
	require.ErrorIs(t, err, ErrNotDurable)
	require.ErrorIs(t, err, errDisk, "the cause is kept")
	assert.NotErrorIs(t, err, ErrConflict)
	assert.EqualValues(t, 2, snap.Version, "stamped as the stored version")
	got, err := fs.Load(ctx, "nd-1")
	require.NoError(t, err)
	assert.EqualValues(t, 2, got.Version, "the save is visible")

	*fail = false
	require.NoError(t, fs.Save(ctx, snap, snap.Version))
	*fail = true
	require.ErrorIs(t, fs.Delete(ctx, "nd-1"), ErrNotDurable)
	_, err = fs.Load(ctx, "nd-1")
	require.ErrorIs(t, err, ErrNotFound, "the delete is visible")
}

// TestRunnerCheckpointNotDurable: a per-node checkpoint that is stored but not
// durable fails the run at that node (checkpoint_failed), and the run's outcome is
// saved over it: the Runner expects the version the checkpoint stored.
func TestRunnerCheckpointNotDurable(t *testing.T) {
	ctx := t.Context()
	fs, fail := failingSyncStore(t)
	eng := flow.NewEngine()
	s := flow.NewSpec("nd")
	s.Start("s").LinkTo("a")
	s.Activity("a").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		*fail = true // the checkpoint after this node is not durable
		return nil
	}).LinkTo("b")
	s.Activity("b").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		*fail = false
		return nil
	}).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))

	r := NewRunner(eng, fs, WithDurability(PerNode))
	res, runErr := r.Run(ctx, "nd", flow.NewContext("nd-run"))
	require.ErrorIs(t, runErr, ErrNotDurable)
	assert.NotErrorIs(t, runErr, ErrConflict, "the outcome is saved over the checkpoint")
	require.NotNil(t, res)
	*fail = false
	got, err := fs.Load(ctx, "nd-run")
	require.NoError(t, err)
	assert.Equal(t, StatusFailed, got.Status)
	assert.Equal(t, res.Version, got.Version)
	var ne *flow.NodeError
	require.ErrorAs(t, runErr, &ne)
	assert.Equal(t, flow.CodeCheckpoint, ne.Code)
	assert.Equal(t, "a", ne.Node, "the run fails at the node whose checkpoint was not durable")
}

// TestRunnerClaimNotDurable: a claim that is stored but not durable ends Run and
// Resume with ErrNotDurable before any node runs, and records the instance as failed
// with its frontier, so a later Resume continues it without Recover.
func TestRunnerClaimNotDurable(t *testing.T) {
	ctx := t.Context()
	fs, fail := failingSyncStore(t)
	eng := flow.NewEngine()
	ran := 0
	s := flow.NewSpec("claim")
	s.Start("s").LinkTo("a")
	s.Activity("a").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		ran++
		if _, ok := c.Get("go"); !ok {
			c.Suspend("waiting")
		}
		return nil
	}).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
	r := NewRunner(eng, fs)

	*fail = true
	_, err = r.Run(ctx, "claim", flow.NewContext("c-1"))
	require.ErrorIs(t, err, ErrNotDurable)
	assert.Zero(t, ran, "nothing runs after a claim that is not durable")
	*fail = false
	got, err := fs.Load(ctx, "c-1")
	require.NoError(t, err)
	assert.Equal(t, StatusFailed, got.Status)
	res, err := r.Resume(ctx, "c-1", nil)
	require.NoError(t, err, "no Recover needed")
	assert.Equal(t, flow.StatusSuspended, res.Status)

	*fail = true
	_, err = r.Resume(ctx, "c-1", map[string]any{"go": true})
	require.ErrorIs(t, err, ErrNotDurable)
	assert.Equal(t, 1, ran)
	*fail = false
	got, err = fs.Load(ctx, "c-1")
	require.NoError(t, err)
	assert.Equal(t, StatusFailed, got.Status)
	res, err = r.Resume(ctx, "c-1", map[string]any{"go": true})
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 2, ran)
}

// TestLaterExpiryFindsTheWordAcrossReads: laterExpiry searches the rest of a file a
// piece at a time; a word cut between two reads is still found, and a rest without
// one is read to its end without decoding the file.
func TestLaterExpiryFindsTheWordAcrossReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	s := testSnapshot("x")
	s.Format, s.Version = FormatVersion, 1
	s.Created = time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	s.Updated, s.Expires = s.Created, s.Created.Add(time.Hour)
	data, err := Encode(s)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	h := header{Status: s.Status, Version: 1}
	for _, word := range []string{`"expires"`, `\u0065`} {
		for _, pad := range []int{0, 32<<10 - 3, 64 << 10} {
			rest := strings.Repeat(" ", pad) + word + " tail"
			for name, r := range map[string]io.Reader{
				"one byte": iotest.OneByteReader(strings.NewReader(rest)),
				"half":     iotest.HalfReader(strings.NewReader(rest)),
				"whole":    strings.NewReader(rest),
			} {
				got, err := laterExpiry(h, path, r)
				require.NoError(t, err)
				assert.Equal(t, s.Expires, got.Expires, "%s after %d bytes, %s reads", word, pad, name)
			}
		}
	}
	got, err := laterExpiry(h, filepath.Join(t.TempDir(), "missing.json"), strings.NewReader(strings.Repeat("expire ", 20000)))
	require.NoError(t, err, "not decoded")
	assert.Equal(t, h, got)
}

// TestFileStoreSyncsCreatedDirectory: a directory NewFileStore creates is made
// durable in its parent (and each parent it creates in theirs) before the store is
// returned: a save syncs its file and the store's directory, which does not keep the
// directory's own entry after a crash.
func TestFileStoreSyncsCreatedDirectory(t *testing.T) {
	root := t.TempDir()
	var synced []string
	record := func(dir string) error {
		synced = append(synced, dir)
		return syncDir(dir)
	}
	dir := filepath.Join(root, "a", "b")
	_, err := newFileStore(dir, record, nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{root, filepath.Join(root, "a")}, synced)

	synced = nil
	_, err = newFileStore(dir, record, nil)
	require.NoError(t, err)
	assert.Empty(t, synced, "nothing created, nothing synced")
}
