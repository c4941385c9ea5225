//go:build unix && !solaris && !aix

package session_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
)

// waitingContext is a context that tells when someone first waits on it (calls
// Done): a FileStore does so only while it waits for its lock, so a test knows the
// call is blocked there without sleeping.
type waitingContext struct {
	context.Context
	once    sync.Once
	waiting chan struct{}
}

func newWaitingContext(parent context.Context) (*waitingContext, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	return &waitingContext{Context: ctx, waiting: make(chan struct{})}, cancel
}

func (c *waitingContext) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waiting) })
	return c.Context.Done()
}

// holdDirLock takes the directory's file lock as another process would and returns
// the function that releases it.
func holdDirLock(t *testing.T, dir string) func() {
	t.Helper()
	lf, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(lf.Fd()), syscall.LOCK_EX))
	var once sync.Once
	release := func() { once.Do(func() { lf.Close() }) }
	t.Cleanup(release)
	return release
}

// TestFileStoreLockHonoursContext: while another process holds the directory's lock,
// Save, Delete and List wait for it only as long as their context lasts, and then
// fail with the context's error (List still lists: only its removal of expired files
// needs the lock).
func TestFileStoreLockHonoursContext(t *testing.T) {
	dir := t.TempDir()
	clk := storetest.NewClock()
	fs, err := session.NewFileStore(dir, session.WithClock(clk.Now))
	require.NoError(t, err)
	require.NoError(t, fs.Save(t.Context(), storetest.NewSnapshot("held-1"), 0))
	require.NoError(t, fs.SaveTTL(t.Context(), storetest.NewSnapshot("expired-1"), 0, time.Hour))
	clk.FastForward(2 * time.Hour)
	release := holdDirLock(t, dir)

	// blocked runs call with a context that is cancelled once call waits on it.
	blocked := func(call func(ctx context.Context) error) error {
		ctx, cancel := newWaitingContext(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- call(ctx) }()
		<-ctx.waiting
		cancel()
		return <-done
	}
	err = blocked(func(ctx context.Context) error { return fs.Save(ctx, storetest.NewSnapshot("held-2"), 0) })
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "lock")
	assert.Empty(t, tempFiles(t, dir), "the abandoned save removed its temporary file")
	err = blocked(func(ctx context.Context) error { return fs.Delete(ctx, "held-1") })
	require.ErrorIs(t, err, context.Canceled)
	err = blocked(func(ctx context.Context) error {
		ids, err := fs.List(ctx, "")
		assert.Equal(t, []string{"held-1"}, ids)
		return err
	})
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "expired-1.json"))
	require.NoError(t, err, "left for a List that gets the lock")

	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	require.ErrorIs(t, fs.Save(ctx, storetest.NewSnapshot("held-2"), 0), context.DeadlineExceeded)

	release()
	require.NoError(t, fs.Save(t.Context(), storetest.NewSnapshot("held-2"), 0), "nothing of the abandoned waits holds the lock")
	require.NoError(t, fs.Delete(t.Context(), "held-1"))
	ids, err := fs.List(t.Context(), "")
	require.NoError(t, err)
	assert.Equal(t, []string{"held-2"}, ids)
	_, err = os.Stat(filepath.Join(dir, "expired-1.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestFileStoreProcessLockHonoursContext: a save waiting for the directory's lock
// holds the store's process mutex; another save on the same store waits for the mutex
// only as long as its context lasts. The first save completes once the lock is free.
func TestFileStoreProcessLockHonoursContext(t *testing.T) {
	dir := t.TempDir()
	fs, err := session.NewFileStore(dir)
	require.NoError(t, err)
	release := holdDirLock(t, dir)

	first, cancelFirst := newWaitingContext(t.Context())
	defer cancelFirst()
	firstDone := make(chan error, 1)
	go func() { firstDone <- fs.Save(first, storetest.NewSnapshot("m-1"), 0) }()
	<-first.waiting // it holds the mutex and waits for the file lock

	second, cancelSecond := newWaitingContext(t.Context())
	secondDone := make(chan error, 1)
	go func() { secondDone <- fs.Save(second, storetest.NewSnapshot("m-2"), 0) }()
	<-second.waiting
	cancelSecond()
	err = <-secondDone
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "lock")

	release()
	require.NoError(t, <-firstDone)
	require.NoError(t, fs.Save(t.Context(), storetest.NewSnapshot("m-2"), 0))
}

// TestFileStoreNamedPipe: a named pipe at "<id>.json" is reported as ErrCorrupt by
// Load and Save, and listed.
func TestFileStoreNamedPipe(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	fs, err := session.NewFileStore(dir)
	require.NoError(t, err)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe-1.json"), 0o600))
	_, err = fs.Load(ctx, "pipe-1")
	require.ErrorIs(t, err, session.ErrCorrupt)
	assert.ErrorContains(t, err, "special file")
	require.ErrorIs(t, fs.Save(ctx, storetest.NewSnapshot("pipe-1"), 0), session.ErrCorrupt)
	ids, err := fs.List(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"pipe-1"}, ids)
	require.NoError(t, fs.Delete(ctx, "pipe-1"))
}

// TestFileStoreLockFileNotFollowed: a symbolic link or a named pipe at the
// directory's lock file is not followed nor waited on: Save and Delete fail with
// ErrCorrupt naming the lock file, and the link's target is neither created nor
// locked.
func TestFileStoreLockFileNotFollowed(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	fs, err := session.NewFileStore(dir)
	require.NoError(t, err)
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("l-1"), 0))
	lock := filepath.Join(dir, ".lock")
	require.NoError(t, os.Remove(lock))
	target := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.Symlink(target, lock))

	for _, what := range []string{"symbolic link", "special file"} {
		err = fs.Save(ctx, storetest.NewSnapshot("l-2"), 0)
		require.ErrorIs(t, err, session.ErrCorrupt, what)
		assert.ErrorContains(t, err, lock)
		assert.ErrorContains(t, err, what)
		require.ErrorIs(t, fs.Delete(ctx, "l-1"), session.ErrCorrupt, what)
		_, err = os.Lstat(target)
		require.ErrorIs(t, err, os.ErrNotExist, "%s: the target is not created", what)
		require.NoError(t, os.Remove(lock))
		require.NoError(t, syscall.Mkfifo(lock, 0o600)) // next: a named pipe
	}
	ids, err := fs.List(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"l-1"}, ids, "nothing was saved or deleted")

	require.NoError(t, os.Remove(lock))
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("l-2"), 0), "a lock file the store creates itself works")
	require.NoError(t, fs.Delete(ctx, "l-1"))
}

// TestFileStoreLockFileHardLink: a lock file with another name (a hard link planted
// at ".lock", to a file elsewhere that whoever planted it can lock) is refused: Save
// and Delete fail with ErrCorrupt naming it, and the other file is never locked.
func TestFileStoreLockFileHardLink(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	fs, err := session.NewFileStore(dir)
	require.NoError(t, err)
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("h-1"), 0))
	lock := filepath.Join(dir, ".lock")
	require.NoError(t, os.Remove(lock))
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("other"), 0o600))
	require.NoError(t, os.Link(victim, lock))
	// The other file's owner holds a lock on it: were the store to lock the same
	// inode, it would wait, and the context ends once it does.
	vf, err := os.Open(victim)
	require.NoError(t, err)
	defer vf.Close()
	require.NoError(t, syscall.Flock(int(vf.Fd()), syscall.LOCK_EX))
	wctx, cancel := newWaitingContext(ctx)
	defer cancel()
	go func() {
		select {
		case <-wctx.waiting:
			cancel()
		case <-wctx.Context.Done(): // not wctx.Done, which would count as waiting
		}
	}()

	err = fs.Save(wctx, storetest.NewSnapshot("h-2"), 0)
	require.NotErrorIs(t, err, context.Canceled, "the store waited for the other file's lock")
	require.ErrorIs(t, err, session.ErrCorrupt)
	assert.ErrorContains(t, err, lock)
	assert.ErrorContains(t, err, "2 links")
	require.ErrorIs(t, fs.Delete(ctx, "h-1"), session.ErrCorrupt)
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "other", string(data))

	require.NoError(t, os.Remove(lock))
	require.NoError(t, fs.Save(ctx, storetest.NewSnapshot("h-2"), 0), "a lock file the store creates itself works")
	require.NoError(t, fs.Delete(ctx, "h-1"))
}
