package interceptor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"

	"github.com/flowteam/flowteam/trace"
)

// Sink receives audit records: a batch of one run's redacted records, in sequence
// order. Calls for one run never overlap, calls for different runs may. A sink must
// not keep the slice after Write returns.
type Sink interface {
	Write(ctx context.Context, recs []trace.Record) error
}

// SinkFunc adapts a function to the Sink interface.
type SinkFunc func(ctx context.Context, recs []trace.Record) error

// Write calls f.
func (f SinkFunc) Write(ctx context.Context, recs []trace.Record) error { return f(ctx, recs) }

// JSONL is a Sink that writes one JSON object per line (JSON Lines). Each batch is
// written with one Write call under the sink's mutex, so concurrent runs never
// interleave their lines; a file opened with OpenJSONL is in append mode, so other
// processes can append to it too. Rotation is left to the operator.
type JSONL struct {
	mu     sync.Mutex
	w      io.Writer
	f      *os.File // the file behind w, for Sync
	owned  bool     // opened by OpenJSONL: Close closes it
	fsync  bool
	closed bool
	// syncable caches whether f can be synced (see Sync); nil until asked.
	syncable *bool
	pool     sync.Pool // *jsonlBuf encode buffers
}

// jsonlBuf is an encode buffer with its encoder, whose caches outlive a batch.
type jsonlBuf struct {
	b   []byte
	enc trace.Encoder
}

// JSONLOption configures a JSONL sink.
type JSONLOption func(*JSONL)

// WithFsync makes the sink call Sync on its file after every batch, so an audit
// survives a machine crash. A pipe, terminal, character device or socket has nothing
// to flush and is not synced.
func WithFsync() JSONLOption { return func(s *JSONL) { s.fsync = true } }

// NewJSONL returns a sink that writes to w (an *os.File can be synced: WithFsync). The
// caller keeps ownership of w.
func NewJSONL(w io.Writer, opts ...JSONLOption) *JSONL {
	s := &JSONL{w: w}
	if f, ok := w.(*os.File); ok {
		s.f = f
	}
	for _, o := range opts {
		o(s)
	}
	if s.fsync && s.f != nil && !syncable(s.f) {
		s.fsync = false
	}
	return s
}

// syncable reports whether Sync can flush f to a disk (fsync of a pipe, socket or
// character device fails). A file that cannot be inspected is tried anyway.
func syncable(f *os.File) bool {
	fi, err := f.Stat()
	return err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket|os.ModeCharDevice) == 0
}

// OpenJSONL opens (creating it with mode 0600 if needed) the file at path for
// appending and returns a sink writing to it. Close closes the file.
func OpenJSONL(path string, opts ...JSONLOption) (*JSONL, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit file: %w", err)
	}
	s := NewJSONL(f, opts...)
	s.owned = true
	return s, nil
}

// maxPooled bounds the encode buffers kept for reuse.
const maxPooled = 1 << 20

// Write encodes the batch and writes it in one call.
func (s *JSONL) Write(_ context.Context, recs []trace.Record) error {
	bp, _ := s.pool.Get().(*jsonlBuf)
	if bp == nil {
		bp = &jsonlBuf{b: make([]byte, 0, 64<<10)}
	}
	buf := bp.b[:0]
	for i := range recs {
		buf = bp.enc.Append(buf, &recs[i])
		buf = append(buf, '\n')
	}
	err := s.writeLines(buf)
	if cap(buf) <= maxPooled {
		bp.b = buf[:0]
		s.pool.Put(bp)
	}
	return err
}

// writeLines writes lines the Audit encoded as records were added, in one call.
func (s *JSONL) writeLines(buf []byte) (err error) {
	defer func() {
		// A panicking writer fails this batch; the deferred unlock keeps the sink usable.
		if p := recover(); p != nil {
			err = fmt.Errorf("audit jsonl: writer panicked: %v", p)
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("audit jsonl: %w", os.ErrClosed)
	}
	if _, err := s.w.Write(buf); err != nil {
		return fmt.Errorf("audit jsonl: %w", err)
	}
	if s.fsync && s.f != nil {
		if err := s.f.Sync(); err != nil {
			return fmt.Errorf("audit jsonl: %w", err)
		}
	}
	return nil
}

// Sync flushes the lines written so far to stable storage: it syncs the *os.File
// behind the sink, or calls the writer's own Sync() error method. It does nothing for
// a writer that has neither, for a pipe, terminal or socket, and with WithFsync
// (every batch was synced). Audit calls it after each node with WithDurableNodes.
func (s *JSONL) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("audit jsonl: %w", os.ErrClosed)
	}
	if s.fsync {
		return nil
	}
	var err error
	switch {
	case s.f != nil:
		if s.syncable == nil {
			ok := syncable(s.f)
			s.syncable = &ok
		}
		if *s.syncable {
			err = s.f.Sync()
		}
	default:
		if sy, ok := s.w.(syncer); ok {
			err = sy.Sync()
		}
	}
	if err != nil {
		return fmt.Errorf("audit jsonl: %w", err)
	}
	return nil
}

// Close closes the file opened by OpenJSONL (not NewJSONL's writer); later writes fail.
func (s *JSONL) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.owned {
		return s.f.Close()
	}
	return nil
}

// Memory is a Sink that keeps the records in memory, for tests. The query helpers
// return copies in the order records were written (per run: sequence order).
type Memory struct {
	mu   sync.Mutex
	recs trace.Records
}

// NewMemory returns an empty in-memory sink.
func NewMemory() *Memory { return &Memory{} }

// Write appends the records.
func (m *Memory) Write(_ context.Context, recs []trace.Record) error {
	m.mu.Lock()
	m.recs = append(m.recs, recs...)
	m.mu.Unlock()
	return nil
}

// Records returns every record written so far.
func (m *Memory) Records() trace.Records {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.recs)
}

// Reset forgets the records.
func (m *Memory) Reset() {
	m.mu.Lock()
	m.recs = nil
	m.mu.Unlock()
}

// Len returns how many records were written.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

// ByRun returns the records of one run.
func (m *Memory) ByRun(runID string) trace.Records { return m.Records().ByRun(runID) }

// ByInstance returns the records of every run of one flow instance.
func (m *Memory) ByInstance(instanceID string) trace.Records {
	return m.Records().ByInstance(instanceID)
}

// ByNode returns the records of a node (a plain or "callpath:node" id).
func (m *Memory) ByNode(id string) trace.Records { return m.Records().ByNode(id) }

// ByStatus returns the records with the given status.
func (m *Memory) ByStatus(s trace.Status) trace.Records { return m.Records().ByStatus(s) }

// ByBranch returns the node records of one branch.
func (m *Memory) ByBranch(branchID string) trace.Records { return m.Records().ByBranch(branchID) }

// RunIDs returns the ids of the runs recorded, in order.
func (m *Memory) RunIDs() []string { return m.Records().RunIDs() }

// Metrics computes a run's metrics from its records.
func (m *Memory) Metrics(runID string) trace.Metrics { return m.Records().Metrics(runID) }

// Verify checks the audit invariants over the records (see trace.Records.Verify).
func (m *Memory) Verify() error { return m.Records().Verify() }

// Slog is a Sink that logs every record through a log/slog logger, message "flow
// audit". Unless Level is set, FAILED records log at Error (Warn when retried or
// recovered), SUSPENDED and INTERRUPTED at Warn, the rest at Info.
type Slog struct {
	logger *slog.Logger
	// Level chooses the level of a record; nil uses the default above.
	Level func(*trace.Record) slog.Level
}

// NewSlog returns a sink that logs through logger (slog.Default() if nil).
func NewSlog(logger *slog.Logger) *Slog {
	if logger == nil {
		logger = slog.Default()
	}
	return &Slog{logger: logger}
}

// Write logs each record.
func (s *Slog) Write(ctx context.Context, recs []trace.Record) error {
	for i := range recs {
		r := &recs[i]
		lvl := defaultLevel(r)
		if s.Level != nil {
			lvl = s.Level(r)
		}
		if !s.logger.Enabled(ctx, lvl) {
			continue
		}
		s.logger.LogAttrs(ctx, lvl, "flow audit", recordAttrs(r)...)
	}
	return nil
}

func defaultLevel(r *trace.Record) slog.Level {
	switch r.Status {
	case trace.Failed:
		if r.Retrying || r.Recovered {
			return slog.LevelWarn
		}
		return slog.LevelError
	case trace.Suspended, trace.Interrupted:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

func recordAttrs(r *trace.Record) []slog.Attr {
	a := make([]slog.Attr, 0, 20)
	a = append(a, slog.Int64("seq", r.Seq), slog.Time("time", r.Time), slog.String("status", string(r.Status)),
		slog.String("graph", r.GraphID), slog.String("path", r.Path))
	str := func(k, v string) {
		if v != "" {
			a = append(a, slog.String(k, v))
		}
	}
	num := func(k string, v int) {
		if v != 0 {
			a = append(a, slog.Int(k, v))
		}
	}
	str("node", r.NodeID)
	str("type", r.NodeType)
	str("title", r.Title)
	a = append(a, slog.String("instance", r.InstanceID), slog.String("run", r.RunID))
	str("branch", r.BranchID)
	str("agent", r.Agent)
	num("step", r.Step)
	num("attempt", r.Attempt)
	if r.Duration != 0 {
		a = append(a, slog.Duration("duration", r.Duration))
	}
	if e := r.Error; e != nil {
		a = append(a, slog.Group("error", slog.String("type", e.Type), slog.String("code", e.Code), slog.String("message", e.Message)))
	}
	str("reason", r.Reason)
	num("arrivals", r.Arrivals)
	if r.Retrying {
		a = append(a, slog.Bool("retrying", true))
	}
	if r.Recovered {
		a = append(a, slog.Bool("recovered", true))
	}
	str("goto", r.Goto)
	if r.Resumed {
		a = append(a, slog.Bool("resumed", true))
	}
	if len(r.Attrs) > 0 {
		a = append(a, slog.Any("attrs", r.Attrs))
	}
	return a
}
