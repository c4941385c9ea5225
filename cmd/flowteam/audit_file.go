package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
)

// runAudit is the audit behind "flowteam run --audit FILE": an engine-wide audit
// interceptor appending the run's records to FILE as JSON Lines. It is strict: if the
// records cannot be written the run is reported failed, so an audit the user asked for
// is never silently incomplete. It keeps up with the store: with per-node durability
// each node's records are written and synced before the node's checkpoint is saved
// (interceptor.WithDurableNodes), otherwise they are written at least every second
// and when the run ends, so that a process killed loses at most a second of them.
type runAudit struct {
	file  *auditFile
	sink  *interceptor.JSONL
	audit *interceptor.Audit
}

// auditFlushInterval is how often the audit of a run saved on exit is written.
const auditFlushInterval = time.Second

// openRunAudit checks that the audit file can be appended to (without creating it).
// The records are redacted with red; d is the durability of the run's store.
func openRunAudit(path string, d session.Durability, stderr io.Writer, red *redact.Redactor) (*runAudit, error) {
	file, err := openAuditFile(path)
	if err != nil {
		return nil, fmt.Errorf("--audit: %w", err)
	}
	sink := interceptor.NewJSONL(file)
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	keepUp := interceptor.WithFlushInterval(auditFlushInterval)
	if d == session.PerNode {
		keepUp = interceptor.WithDurableNodes()
	}
	return &runAudit{file: file, sink: sink, audit: interceptor.NewAudit(interceptor.WithSink(sink), interceptor.WithStrict(),
		interceptor.WithLogger(logger), interceptor.WithRedactor(red), keepUp)}, nil
}

// option returns the engine option that installs the audit.
func (a *runAudit) option() flow.Option { return flow.WithInterceptor(a.audit, 0) }

// Close closes the audit file.
func (a *runAudit) Close() error {
	a.sink.Close()
	return a.file.Close()
}

// auditFile is the file behind --audit, created by the first record written: a
// command that ends before its run starts (a definition that does not load, a store
// that does not open, an instance another process holds) leaves no file behind. The
// JSONL sink serializes the writes.
type auditFile struct {
	path    string
	f       *os.File
	created bool  // the first write created f: its directory is synced with it
	regular *bool // whether f is a regular file, which Sync syncs; nil until asked
}

// openAuditFile checks, leaving nothing behind, that path can take the audit: an
// existing file is opened for appending now; for a new one, a probe file is created in
// its directory and removed at once, so that a directory that refuses new files is bad
// input before the run starts rather than a run that fails at its first record. (The
// probe has a name of its own: creating and removing path itself could remove the file
// another "flowteam run --audit path" had just opened.)
func openAuditFile(path string) (*auditFile, error) {
	if path == "-" {
		// "audit -" reads standard input, but the run's outcome goes to stdout: the
		// records would be mixed into it, or a file named "-" made instead.
		return nil, errors.New(`"-" is not a file: the run's outcome goes to stdout; give a file (/dev/stderr for the terminal)`)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		return &auditFile{path: path, f: f}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	probe, err := os.CreateTemp(dir, ".flowteam-audit-probe-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the probe's name would only confuse
		}
		return nil, fmt.Errorf("%s: cannot create a file in %s: %w", path, dir, err)
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		return nil, err
	}
	return &auditFile{path: path}, nil
}

func (a *auditFile) Write(p []byte) (int, error) {
	if a.f == nil {
		f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return 0, err
		}
		a.f, a.created = f, true
	}
	return a.f.Write(p)
}

// Sync flushes the records written to the disk, and, once, the directory entry of a
// file the audit created, so that both outlive a machine crash as the store's saves
// do. A terminal, pipe or device (--audit /dev/stderr) has nothing to flush.
func (a *auditFile) Sync() error {
	if a.f == nil {
		return nil
	}
	if a.regular == nil {
		fi, err := a.f.Stat()
		regular := err == nil && fi.Mode().IsRegular()
		a.regular = &regular
	}
	if !*a.regular {
		return nil
	}
	if err := a.f.Sync(); err != nil {
		return err
	}
	if a.created {
		if err := syncDir(filepath.Dir(a.path)); err != nil {
			return err
		}
		a.created = false
	}
	return nil
}

// syncDir syncs a directory, so that a file created in it is found after a crash.
// Where directories cannot be synced (Windows), the error is not one to report.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) && runtime.GOOS != "windows" {
		return err
	}
	return nil
}

// Close closes the file if a record created or opened it.
func (a *auditFile) Close() error {
	if a.f == nil {
		return nil
	}
	return a.f.Close()
}
