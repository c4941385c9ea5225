package session

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// FormatVersion is the snapshot format this package writes and reads. Decode rejects
// any other format rather than guessing at fields it does not know.
const FormatVersion = 1

// Status is the state of a stored instance.
type Status string

// Instance statuses. The first four are how a run ended (flow.Status); StatusRunning
// marks an instance that a process has claimed and is running now.
const (
	StatusRunning   Status = "running"
	StatusSuspended Status = "suspended"
	StatusStopped   Status = "stopped"
	StatusFailed    Status = "failed"
	StatusCompleted Status = "completed"
)

// Valid reports whether s is one of the instance statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusRunning, StatusSuspended, StatusStopped, StatusFailed, StatusCompleted:
		return true
	}
	return false
}

// Snapshot is the stored state of one flow instance: where its run stands (the exact
// frontier), its variables and FlowTrace, why it halted, and the errors it recorded.
//
// The header (format to lease) is always stored in clear; the body (run id to meta)
// is sealed into Sealed when the snapshot is encrypted. Stores set Version,
// Created, Updated and Expires when they save.
type Snapshot struct {
	// Format is the snapshot format version (FormatVersion).
	Format int `json:"format"`
	// Instance is the business instance id.
	Instance string `json:"instance"`
	// Graph is the id of the root graph of the run.
	Graph string `json:"graph"`
	// Hash is the definition hash of that graph (flow.Graph.Hash) when it was saved.
	Hash string `json:"hash"`
	// Status is the state of the instance.
	Status Status `json:"status"`
	// Version increases by one with every save; Store.Save checks it.
	Version int64 `json:"version"`
	// Created is when the instance was first saved; Updated when it was last saved.
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Expires is when the store forgets the snapshot (zero: never).
	Expires time.Time `json:"expires,omitzero"`
	// Sources names where the graph definitions came from (definition files), for
	// tools that must load them again to resume, such as the flowteam command.
	Sources []string `json:"sources,omitempty"`
	// Called holds the definition hash of every graph the root graph reaches through
	// sub-graph calls ("#id" tasks, flow.Call), transitively, by graph id; the root's
	// own is Hash. It is absent when the root calls no graph, and in snapshots saved
	// before it was recorded: their resume checks the root graph alone (see
	// Runner.CheckDefinition), and the resume records it.
	Called map[string]string `json:"called,omitempty"`
	// Lease is the lease of the process running the instance, while its status is
	// running: who it is and until when it is known to be alive. It is nil in any
	// other status, and in snapshots saved by a Runner without leases.
	Lease *Lease `json:"lease,omitempty"`

	// RunID is the id of the last run (or resume) of the instance.
	RunID string `json:"runId,omitempty"`
	// Vars are the instance's variables. After Decode, JSON numbers are int64 when
	// they are integer literals that fit (the encoder writes an integral float that
	// way) and float64 otherwise; objects are map[string]any and arrays []any.
	Vars map[string]any `json:"vars,omitempty"`
	// Frontier is where the run stands; nil when it completed or nothing is pending.
	Frontier *flow.FrontierState `json:"frontier,omitempty"`
	// Trace is the FlowTrace: the last node reached per call path.
	Trace trace.FlowTrace `json:"trace,omitzero"`
	// Reason is the suspend reason.
	Reason string `json:"reason,omitempty"`
	// Errors lists the execution errors the instance recorded, oldest first.
	Errors []ErrorRecord `json:"errors,omitempty"`
	// Dropped names the variables left out because they could not be serialized
	// (only with DropUnserializable).
	Dropped []string `json:"dropped,omitempty"`
	// Redacted names the variables whose values were masked before saving. Their
	// values are not restored on resume: supply them again with the updates.
	Redacted []string `json:"redacted,omitempty"`
	// Meta holds what the program running the instance records about how it runs
	// it (WithMeta), for it to apply again when it resumes the instance, such as the
	// flowteam command's "durability=per-node". The package does not read it.
	Meta []string `json:"meta,omitempty"`

	// Sealed is the encrypted body (see Seal); when set (even empty), the body
	// fields are empty.
	Sealed []byte `json:"sealed,omitzero"`
}

// ErrorRecord is an execution error as stored in a snapshot.
type ErrorRecord struct {
	Code    string `json:"code"`             // flow.NodeError.Code, or run_failed for a run that could not start
	Node    string `json:"node,omitempty"`   // node id
	Graph   string `json:"graph,omitempty"`  // id of the node's graph
	Path    string `json:"path,omitempty"`   // call path of that graph
	Branch  string `json:"branch,omitempty"` // branch id
	Step    int    `json:"step,omitempty"`   // the run's step count when the node ran
	Message string `json:"message"`          // the cause's message
	// Type and Severity carry the structured error model of the execution errors
	// (type such as "flow_error"; severity "recoverable" or "fatal"). The Runner
	// copies them from the run's flow.ExecutionError records; they are empty in a
	// record NewErrorRecord made and in a run_failed record.
	Type     string `json:"type,omitempty"`
	Severity string `json:"severity,omitempty"`
}

// NewErrorRecord converts an engine error into its stored form.
func NewErrorRecord(ne *flow.NodeError) ErrorRecord {
	msg := ""
	if ne.Err != nil {
		msg = ne.Err.Error()
	}
	return ErrorRecord{Code: ne.Code, Node: ne.Node, Graph: ne.Graph, Path: ne.Path, Branch: ne.Branch, Step: ne.Step, Message: msg}
}

// Errors callers can branch on with errors.Is.
var (
	// ErrCorrupt is returned by Decode for data that is not a complete, valid snapshot.
	ErrCorrupt = errors.New("corrupt snapshot")
	// ErrFormat is returned by Decode for a snapshot of another format version.
	ErrFormat = errors.New("unsupported snapshot format")
	// ErrUnserializable is wrapped by *UnserializableError.
	ErrUnserializable = errors.New("cannot serialize")
)

// UnserializableError names the variables (and other parts) of a snapshot whose
// values cannot be written as JSON: Go funcs, channels, NaN, cycles, a MarshalJSON
// that fails or panics, or one whose output Decode would not read back (a repeated
// key, a number beyond float64's range, nesting too deep).
type UnserializableError struct {
	// Names are the variable names, sorted; "frontier" when loop items of the
	// frontier are the problem.
	Names []string
	// Errs maps each name to what the encoder said.
	Errs map[string]error
	// part: the frontier or the trace is at fault, which dropping variables cannot
	// mend (a variable may have the same name).
	part bool
}

// Error names every variable with what the encoder said about it.
func (e *UnserializableError) Error() string {
	var b strings.Builder
	b.WriteString("snapshot: cannot serialize ")
	for i, n := range e.Names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q (%v)", n, e.Errs[n])
	}
	return b.String()
}

// Unwrap returns ErrUnserializable.
func (e *UnserializableError) Unwrap() error { return ErrUnserializable }

// EncodeOption configures Encode.
type EncodeOption func(*encodeConfig)

type encodeConfig struct {
	drop bool
	// nullExpiry writes "expires":null when there is no expiry, for FileStore (see
	// readHeader).
	nullExpiry bool
}

// DropUnserializable makes Encode leave out the variables that cannot be serialized
// instead of failing; their names are listed in the encoded snapshot's Dropped field.
func DropUnserializable() EncodeOption { return func(c *encodeConfig) { c.drop = true } }

// Encode returns the JSON form of s. A snapshot Decode would reject (an invalid
// instance id, hash, status, version or times, a frontier of another graph) is an
// error, so what Encode writes always reads back. s is not modified.
//
// Variables are written as encoding/json writes them (a type's MarshalJSON and
// struct tags are honoured), with map keys sorted. JSON has one number type, so
// after Decode an integer literal that fits is an int64 and any other number a
// float64 (a float64 3.0 comes back as int64 3, a uint64 beyond int64 as a float64);
// objects are map[string]any, arrays []any, and other values come back in their JSON
// form (a time.Time as a string, a struct as a map, a []byte as base64, a nil slice,
// map or pointer as nil). Invalid UTF-8 in a string is written as U+FFFD.
//
// A variable that cannot be written (a func, a channel, NaN, a cycle, a failing or
// panicking MarshalJSON, one whose output Decode would not read back, a name that is
// not valid UTF-8) is an *UnserializableError naming every such variable, unless
// DropUnserializable is given; loop items of the frontier that cannot be written are
// named "frontier" and cannot be dropped.
func Encode(s *Snapshot, opts ...EncodeOption) ([]byte, error) {
	var cfg encodeConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := s.check(); err != nil { // what Decode would refuse is not written
		return nil, fmt.Errorf("snapshot of instance %q: %w", s.Instance, err)
	}
	return encodeChecked(s, cfg)
}

// Decode parses a snapshot. It is strict: unknown or repeated fields, trailing data,
// a missing required field, a format other than FormatVersion, a number out of range
// or bytes that are not valid UTF-8 reject the whole snapshot with an error wrapping
// ErrCorrupt (or ErrFormat), and nothing is returned. Numbers become int64 when they
// are integer literals that fit, float64 otherwise.
func Decode(data []byte) (*Snapshot, error) {
	s := new(Snapshot)
	err := unmarshal(data, s)
	if err != nil || s.Format != FormatVersion {
		// A newer format may well have fields this build does not know.
		if f, ok := formatOf(data); ok && f != FormatVersion {
			return nil, formatErr(f)
		}
	}
	switch {
	case err != nil:
		return nil, err
	case s.Format != FormatVersion:
		return nil, fmt.Errorf("%w: no format version", ErrCorrupt)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return s, nil
}

func formatErr(f int) error {
	return fmt.Errorf("%w %d (this build reads format %d)", ErrFormat, f, FormatVersion)
}

// check validates the required fields of a decoded snapshot.
func (s *Snapshot) check() error {
	if err := ValidateID(s.Instance); err != nil {
		return err
	}
	return s.checkAfterID()
}

// checkAfterID is check for a snapshot whose instance id was validated.
func (s *Snapshot) checkAfterID() error {
	bad := fmt.Errorf
	switch {
	case s.Graph == "":
		return bad("no graph id")
	case !validHash(s.Hash):
		return bad("definition hash %q is not a hex SHA-256", s.Hash)
	case !s.Status.Valid():
		return bad("unknown status %q", s.Status)
	case s.Version < 1:
		return bad("version %d (want 1 or more)", s.Version)
	case s.Created.IsZero() || s.Updated.IsZero():
		return bad("missing created or updated time")
	}
	for id, h := range s.Called {
		if id == "" || !validHash(h) {
			return bad("called graph %q: definition hash %q is not a hex SHA-256", id, h)
		}
	}
	if err := s.Lease.check(); err != nil {
		return bad("lease: %v", err)
	}
	if s.Sealed != nil {
		if s.hasClearBody() {
			return bad("sealed snapshot with a clear body")
		}
		return nil
	}
	return s.checkBody()
}

// hasClearBody reports whether any body field holds something. Empty lists and maps
// hold nothing (Encode writes none), so a tool that writes "errors": [] beside a
// sealed body does not damage it.
func (s *Snapshot) hasClearBody() bool {
	return len(s.Vars) > 0 || s.Frontier != nil || len(s.Trace.Last) > 0 || s.Reason != "" || len(s.Errors) > 0 ||
		len(s.Dropped) > 0 || len(s.Redacted) > 0 || len(s.Meta) > 0 || s.RunID != ""
}

func (s *Snapshot) checkBody() error {
	if f := s.Frontier; f != nil {
		if f.Graph != s.Graph {
			return fmt.Errorf("frontier is for graph %q, snapshot for %q", f.Graph, s.Graph)
		}
		if len(f.Frames) == 0 || len(f.Tokens) == 0 {
			return errors.New("empty frontier")
		}
	}
	return nil
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range []byte(h) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Clone returns a copy of s that shares no maps or slices with it at the top level
// (variable values themselves are shared).
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Sources = slices.Clone(s.Sources)
	c.Called = maps.Clone(s.Called)
	if s.Lease != nil {
		l := *s.Lease
		c.Lease = &l
	}
	if s.Vars != nil {
		c.Vars = make(map[string]any, len(s.Vars))
		for k, v := range s.Vars {
			c.Vars[k] = v
		}
	}
	c.Trace = s.Trace.Clone()
	if s.Trace.Last == nil {
		c.Trace.Last = nil
	}
	c.Errors = slices.Clone(s.Errors)
	c.Dropped = slices.Clone(s.Dropped)
	c.Redacted = slices.Clone(s.Redacted)
	c.Meta = slices.Clone(s.Meta)
	c.Sealed = slices.Clone(s.Sealed)
	return &c
}
