package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// FileStore is a Store that keeps one JSON file per instance, named after the id
// ("<id>.json"), in a directory.
//
// A save writes the snapshot to a temporary file, syncs it, and, holding the store's
// lock, checks the version in the current file, renames the temporary file over it
// and syncs the directory. A reader (or a process killed at any moment) therefore
// sees either the previous complete snapshot or the new one, never a mix. The lock
// is a mutex within the process plus an advisory lock (flock) on the file ".lock" in
// the directory across processes, so two processes sharing the directory cannot both
// win a version. Save, Delete and List wait for the lock only as long as their
// context lasts: a process that holds it for ever makes them fail with the
// context's error, not hang.
//
// On Windows the directory is not synced (it cannot be; NTFS journals the rename, but
// a crash soon after Save returns may undo it), and where flock is missing (Windows,
// Solaris and illumos, AIX) the lock is the mutex alone: one process at a time.
//
// If the directory sync fails after the rename, the new snapshot is already what
// Load returns: Save then stamps the snapshot as on success and returns an error
// wrapping ErrNotDurable (not a failed save: a crash may still bring back the previous
// version, but a retry would conflict). Delete does the same after the file is
// removed.
//
// A process killed between writing and renaming leaves a ".tmp-*" file behind. Load,
// List, Save and Delete ignore such files and remove only their own: temporary files
// are written outside the lock, so the store cannot tell one that a dead process left
// from one that another process is writing at that moment. NewFileStore removes the
// regular ".tmp-*" files last modified more than an hour ago (far longer than a save
// takes, so none is a save in progress); younger ones are left for the next open.
//
// The files are plain JSON: one rewritten by another tool (indented, its fields in
// another order) is loaded, listed and saved over like the store's own, and one
// stored under another instance's name is corrupt. The store writes the expiry in
// the header even when there is none ("expires":null), so that Save, Delete and List,
// which need only the header, read no further than the start of the body; a file
// without the field (from an earlier build or another tool) is searched to its end
// for an expiry added after the body.
//
// A file of a format this build cannot read (written by a newer build; its header
// may parse all the same) is not this store's to destroy: Save over it and Delete of
// it fail with an error wrapping ErrFormat that names the file, List lists it whatever
// the status (so that Load reports it) and never removes it as expired, and the file
// stays as it is until a build that reads it, or an operator, deals with it. A file
// that is damaged, not of another format, can still be deleted.
//
// Instance ids are checked by ValidateID, so an id cannot name a file outside the
// directory. On case-insensitive file systems ids that differ only in case collide.
//
// Symbolic links are not followed: an "<id>.json" that is not a regular file (a
// symbolic link, a directory, a named pipe) is damage as a file cut short is. Load
// and Save report it as ErrCorrupt naming the file, List lists it whatever the
// status (so that Load reports it), and Delete removes the entry itself, never what a
// link points to. Following links would let whoever can write in the directory point
// the store at files outside it, and a save could not honour one anyway: its rename
// replaces the link, it does not write through it. Where the system allows (O_NOFOLLOW,
// O_NONBLOCK), the open itself refuses a link and does not wait on a pipe, and the
// type is checked on the opened file: an entry swapped between a look and the open
// cannot get past.
//
// The lock file ".lock" is opened the same way: if it is not a
// regular file, Save and Delete fail with ErrCorrupt naming it, rather than create
// or lock what a link points to. Where the lock is an flock, a lock file with more
// than one link is refused the same way: a hard link planted at ".lock" would have
// the store lock another file (which its owner, or whoever planted the link, can
// hold locked to stop every save). The store never links it; an operator removes
// such a file when no process uses the directory (a copy made with "cp -al" shares
// it too: remove it in the copy).
type FileStore struct {
	dir string
	// syncDir syncs the directory (a field so that a test can make it fail).
	syncDir func(dir string) error
	// sem is the process mutex: a channel, so that waiting for it ends with ctx.
	sem chan struct{}
	now func() time.Time
	ttl time.Duration
}

// NewFileStore returns a FileStore on dir, creating the directory if needed (and
// syncing its parent, so that the directory survives a crash as its saves do).
func NewFileStore(dir string, opts ...StoreOption) (*FileStore, error) {
	return newFileStore(dir, syncDir, opts)
}

// newFileStore is NewFileStore with the function that syncs a directory.
func newFileStore(dir string, sync func(dir string) error, opts []StoreOption) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("session: file store: empty directory name")
	}
	if err := mkdirDurable(dir, sync); err != nil {
		return nil, fmt.Errorf("session: file store: %w", err)
	}
	c := newStoreConfig(opts)
	f := &FileStore{dir: dir, syncDir: sync, sem: make(chan struct{}, 1), now: c.now, ttl: c.ttl}
	f.removeStaleTemps()
	return f, nil
}

// staleTempAge is the age past which a temporary file is a dead process's leftover.
const staleTempAge = time.Hour

// removeStaleTemps removes the temporary files that processes killed mid-save left
// more than staleTempAge ago. It is best effort: a file it cannot read or remove is
// left for the next open, and the store works the same with it.
func (f *FileStore) removeStaleTemps() {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return
	}
	cutoff := f.now().Add(-staleTempAge)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".tmp-") || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(f.dir, e.Name()))
		}
	}
}

// Dir returns the store's directory.
func (f *FileStore) Dir() string { return f.dir }

func (f *FileStore) path(id string) string { return filepath.Join(f.dir, id+".json") }

// Load implements Store.
func (f *FileStore) Load(ctx context.Context, id string) (*Snapshot, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := readRegular(f.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(id)
	}
	if err != nil && !errors.Is(err, ErrCorrupt) { // an os error names the file
		return nil, fmt.Errorf("session: file store: %w", err)
	}
	var s *Snapshot
	if err == nil {
		s, err = Decode(data)
	}
	if err == nil {
		err = belongsTo(s, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session: file store: %s: %w", f.path(id), err)
	}
	if !s.Expires.IsZero() && !f.now().Before(s.Expires) {
		return nil, notFound(id)
	}
	return s, nil
}

// Save implements Store.
func (f *FileStore) Save(ctx context.Context, snap *Snapshot, expectedVersion int64) error {
	return f.SaveTTL(ctx, snap, expectedVersion, f.ttl)
}

// SaveTTL implements TTLStore. An expired file stays on disk until it is saved over,
// deleted or listed, but it is never loaded.
func (f *FileStore) SaveTTL(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := f.now()
	// The expiry is written even when there is none, so that a header read stops at
	// the body (see readHeader).
	p, err := prepare(snap, expectedVersion, now, ttl, encodeConfig{nullExpiry: true})
	if err != nil {
		return err
	}
	// Write the temporary file outside the lock: it is the slow part.
	tmp, err := f.writeTemp(p.data)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp)
		}
	}()
	unlock, err := f.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	path := f.path(snap.Instance)
	h, err := readHeader(path)
	if err != nil {
		return fmt.Errorf("session: file store: %s: %w", path, err)
	}
	stored := h.Version
	if h.expired(now) {
		stored = 0
	}
	if stored != expectedVersion {
		return conflict(snap.Instance, expectedVersion, stored)
	}
	if err := recreated(snap, expectedVersion, h.Created); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("session: file store: %w", err)
	}
	renamed = true
	p.done(snap) // the new version is visible, durable or not
	if err := f.syncDir(f.dir); err != nil {
		return fmt.Errorf("%w: instance %q, version %d: %w", ErrNotDurable, snap.Instance, snap.Version, err)
	}
	return nil
}

func (f *FileStore) writeTemp(data []byte) (string, error) {
	t, err := os.CreateTemp(f.dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("session: file store: %w", err)
	}
	_, err = t.Write(data)
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(t.Name())
		return "", fmt.Errorf("session: file store: write %s: %w", t.Name(), err)
	}
	return t.Name(), nil
}

// lock takes the process mutex and the directory's file lock, waiting for them until
// ctx ends.
func (f *FileStore) lock(ctx context.Context) (func(), error) {
	select {
	case f.sem <- struct{}{}:
	default: // taken: wait, but not past ctx
		select {
		case f.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("session: file store: lock: %w", ctx.Err())
		}
	}
	// Not following a link here either: the store would create or lock its target.
	path := filepath.Join(f.dir, ".lock")
	lf, err := openFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		if err = lockable(lf); err != nil {
			lf.Close()
		}
	}
	if err != nil {
		<-f.sem
		if errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return nil, fmt.Errorf("session: file store: lock: %w", err)
	}
	if err := lockFile(ctx, lf); err != nil {
		lf.Close()
		<-f.sem
		return nil, fmt.Errorf("session: file store: lock: %w", err)
	}
	return func() {
		lf.Close() // closing releases the lock
		<-f.sem
	}, nil
}

// mkdirDurable creates dir and its missing parents, and syncs the parent of each
// directory it created: a save syncs its file and the store's directory, which does
// not make the directory's own entry durable, and a crash could otherwise lose the
// directory with every save in it. The syncs are best effort, as removeExpired's: a
// system that cannot sync a directory (Save then reports ErrNotDurable) can still
// have a store.
func mkdirDurable(dir string, sync func(dir string) error) error {
	var created []string // the missing directories, deepest first
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		created = append(created, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, d := range created {
		sync(filepath.Dir(d))
	}
	return nil
}

// Delete implements Store.
func (f *FileStore) Delete(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := f.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	path := f.path(id)
	// A corrupt file can still be deleted: only its expiry is of interest here. One of
	// another format is not damage but a newer build's: left to a build that reads it.
	h, herr := readHeader(path)
	if errors.Is(herr, ErrFormat) {
		return fmt.Errorf("session: file store: %s: %w", path, herr)
	}
	if herr == nil && h.Version == 0 {
		return notFound(id)
	}
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return notFound(id)
		}
		return fmt.Errorf("session: file store: %w", err)
	}
	serr := f.syncDir(f.dir)
	if herr == nil && h.expired(f.now()) {
		return notFound(id) // it was already gone as far as Load could tell
	}
	if serr != nil {
		return fmt.Errorf("%w: delete of instance %q: %w", ErrNotDurable, id, serr)
	}
	return nil
}

// List implements Store. Expired snapshots are not listed, and their files are
// removed. A file whose header cannot be read is listed whatever the status asked
// for, as the Redis store lists an id its index holds whatever its payload: Load then
// reports the damage (ErrCorrupt, naming the file), where failing the whole list
// would hide every other instance and leaving it out would report "not there" for an
// instance the store could not read.
func (f *FileStore) List(ctx context.Context, status Status) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(f.dir)
	if err != nil {
		return nil, fmt.Errorf("session: file store: %w", err)
	}
	now := f.now()
	ids := []string{}
	var expired []string
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		// Not only regular files: readHeader reports any other as damage, listed.
		if !ok || ValidateID(id) != nil {
			continue
		}
		h, err := readHeader(filepath.Join(f.dir, e.Name()))
		if err != nil {
			ids = append(ids, id)
			continue
		}
		if h.expired(now) {
			expired = append(expired, id)
		}
		if h.Version == 0 || h.expired(now) {
			continue // deleted meanwhile, or expired
		}
		if status == "" || h.Status == status {
			ids = append(ids, id)
		}
	}
	f.removeExpired(ctx, expired, now)
	slices.Sort(ids)
	return ids, nil
}

// removeExpired removes the files of the ids whose snapshots had expired at now, as
// far as it can: the list is right without it. Each file's header is read again
// under the lock, so a snapshot saved again since List read it is kept. If the lock
// cannot be had before ctx ends, the files stay for a later List.
func (f *FileStore) removeExpired(ctx context.Context, ids []string, now time.Time) {
	if len(ids) == 0 {
		return
	}
	unlock, err := f.lock(ctx)
	if err != nil {
		return
	}
	defer unlock()
	removed := false
	for _, id := range ids {
		path := f.path(id)
		if h, err := readHeader(path); err == nil && h.Version > 0 && h.expired(now) && os.Remove(path) == nil {
			removed = true
		}
	}
	if removed {
		f.syncDir(f.dir) // best effort too: a file that comes back is still expired
	}
}

// header is the part of a stored snapshot a store needs to check a save.
type header struct {
	Status  Status
	Version int64
	Created time.Time
	Expires time.Time
}

func (h header) expired(now time.Time) bool { return !h.Expires.IsZero() && !now.Before(h.Expires) }

// headerOrder is the order in which Encode writes the header fields.
var headerOrder = [...]string{"format", "instance", "graph", "hash", "status", "version", "created", "updated", "expires"}

// readHeader reads the status, version and expiry of the snapshot in path. A file in
// the order Encode writes is parsed only up to its body (the rest is only searched
// for an expiry written after it, see laterExpiry); one whose fields are in another
// order (rewritten by another JSON tool: encoding/json and jq -S sort them) is decoded
// whole, as Load would. A missing file is the zero header.
func readHeader(path string) (header, error) {
	var h header
	fl, err := openRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, err
	}
	defer fl.Close()
	dec := json.NewDecoder(fl)
	bad := func(err error) (header, error) {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return header{}, fmt.Errorf("%w: header: %v", ErrCorrupt, err)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return bad(fmt.Errorf("not a JSON object (%v)", err))
	}
	const complete = 8 // "updated" read: what follows is the optional expiry, then the body
	next := 0          // the index in headerOrder of the field expected next, or after
	formatRead := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		key, _ := t.(string)
		i := slices.Index(headerOrder[:], key)
		if i < 0 && next >= complete && h.Version >= 1 && formatRead { // the body starts: the header is complete
			if next > complete { // the expiry was read
				return h, nil
			}
			return laterExpiry(h, path, io.MultiReader(dec.Buffered(), fl))
		}
		if i < next { // a body field before the header's end, a header field out of order, a bad version
			return readWholeHeader(path)
		}
		next = i + 1
		formatRead = formatRead || i == 0
		switch key {
		case "format":
			// What this build cannot read, it must not save over or remove either: a
			// header of another format is not trusted, Decode says what is wrong.
			var format int
			if err := dec.Decode(&format); err != nil || format != FormatVersion {
				return readWholeHeader(path)
			}
		case "status":
			err = dec.Decode(&h.Status)
		case "version":
			err = dec.Decode(&h.Version)
		case "created":
			err = dec.Decode(&h.Created)
		case "expires":
			err = dec.Decode(&h.Expires)
		default:
			err = dec.Decode(new(json.RawMessage))
		}
		if err != nil {
			return bad(err)
		}
	}
	if next < complete || h.Version < 1 || !formatRead {
		return readWholeHeader(path) // Decode says what is wrong
	}
	return h, nil
}

// laterExpiry returns h, read from the file at path up to its body, once the rest of
// the file, rest, is known to hold no expiry. The encoder writes the expiry before the
// body (FileStore even when there is none, see readHeader); a tool that keeps the
// order of the fields it read and adds one to a file without it appends it after.
// The word "expires" cannot be missing from the rest then, but for an escaped key
// (\u), so the file is decoded whole only if either is in it. The rest is searched a
// piece at a time: a large body is read, not held.
func laterExpiry(h header, path string, rest io.Reader) (header, error) {
	const word = "expires"
	buf := make([]byte, 32<<10)
	kept := 0 // the end of the previous piece: a word may straddle two
	for {
		n, err := rest.Read(buf[kept:])
		piece := buf[:kept+n]
		if bytes.Contains(piece, []byte(word)) || bytes.Contains(piece, []byte(`\u`)) {
			return readWholeHeader(path)
		}
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return header{}, err
		}
		kept = copy(buf, piece[len(piece)-min(len(piece), len(word)-1):])
	}
}

// readWholeHeader is readHeader for a file not in the encoder's order: it is decoded
// whole, as strictly as Load decodes it.
func readWholeHeader(path string) (header, error) {
	data, err := readRegular(path)
	if err != nil {
		return header{}, err
	}
	s, err := Decode(data)
	if err != nil {
		return header{}, err
	}
	return header{Status: s.Status, Version: s.Version, Created: s.Created, Expires: s.Expires}, nil
}

// openRegular opens the file at path for reading if it is a regular file, not
// following a symbolic link and not waiting on a named pipe (see FileStore and
// openFile); any other file is ErrCorrupt.
func openRegular(path string) (*os.File, error) {
	if openHook != nil {
		openHook(path)
	}
	return openFile(path, os.O_RDONLY, 0)
}

// readRegular is os.ReadFile through openRegular.
func readRegular(path string) ([]byte, error) {
	fl, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer fl.Close()
	return io.ReadAll(fl)
}

// regular returns nil if fi is a regular file, else ErrCorrupt.
func regular(fi fs.FileInfo) error {
	var what string
	switch m := fi.Mode(); {
	case m.IsRegular():
		return nil
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link"
	case m.IsDir():
		what = "a directory"
	default:
		what = "a special file (" + m.Type().String() + ")"
	}
	return fmt.Errorf("%w: %s, not a regular file", ErrCorrupt, what)
}

// openHook, if not nil, runs just before openRegular opens path: a test puts
// something else at the path there, as another process could.
var openHook func(path string)
