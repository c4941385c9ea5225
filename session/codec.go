package session

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/internal/jsonvars"
	"github.com/flowteam/flowteam/trace"
)

// The snapshot codec is github.com/go-json-experiment/json (the upstream of Go's
// encoding/json/v2) with the options below; this file holds only what the library
// leaves to its caller: the numbers of untyped values, naming the variables that
// cannot be written, and the FileStore's null expiry.

// marshalOptions write variables as encoding/json does (their MarshalJSON, struct
// tags, time.Duration as nanoseconds, nil slices and maps as null, invalid UTF-8 as
// U+FFFD), but sorted, without HTML escapes, and never with a repeated key. The
// library stops a cycle, and nesting beyond 10,000 levels, which Decode refuses.
var marshalOptions = json.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	jsontext.AllowDuplicateNames(false),
	jsontext.EscapeForHTML(false),
	json.WithMarshalers(json.JoinMarshalers(
		json.MarshalToFunc(marshalFloat64),
		json.MarshalToFunc(marshalFloat32),
		json.MarshalToFunc(marshalLegacy),
		json.MarshalToFunc(marshalNumber),
	)),
)

// plainOptions are marshalOptions without their functions, for a snapshot whose
// variables and loop items are plain (see plain), for which those functions do
// nothing. Without them the library writes a value held in an interface without
// reflection (a function for float64 turns that off); with invalid UTF-8 an error,
// it skips its check for repeated keys in maps, which then cannot hold one. On any
// error marshal falls back to marshalOptions, which repair invalid UTF-8 and name
// what cannot be written.
var plainOptions = json.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	jsontext.AllowDuplicateNames(false),
	jsontext.EscapeForHTML(false),
	jsontext.AllowInvalidUTF8(false),
)

// unmarshalOptions are strict: unknown and repeated members, invalid UTF-8 and
// trailing data are errors.
var unmarshalOptions = json.JoinOptions(
	json.RejectUnknownMembers(true),
	json.WithUnmarshalers(json.JoinUnmarshalers(
		jsonvars.AnyUnmarshalers(number), // a number: an int64 when an integer literal that fits, else a float64
		json.UnmarshalFromFunc(unmarshalFrame),
	)),
)

// marshalFloat64 writes an integral float64 beyond 2^53 with all its digits: its
// shortest form (1152921504606847000 for 2^60) would read back as another int64.
func marshalFloat64(enc *jsontext.Encoder, f float64) error {
	if f == math.Trunc(f) && math.Abs(f) >= 1<<53 && math.Abs(f) < 1<<63 {
		return enc.WriteToken(jsontext.Int(int64(f)))
	}
	return errors.ErrUnsupported // the library's form
}

// marshalFloat32 is marshalFloat64 for a float32, integral from 2^24 on.
func marshalFloat32(enc *jsontext.Encoder, f float32) error {
	if g := float64(f); g == math.Trunc(g) && math.Abs(g) >= 1<<24 && math.Abs(g) < 1<<63 {
		return enc.WriteToken(jsontext.Int(int64(g)))
	}
	return errors.ErrUnsupported
}

// marshalLegacy calls a MarshalJSON method and refuses a number Decode would not
// read back (a big.Int of 400 digits); the library checks the rest of its syntax.
func marshalLegacy(enc *jsontext.Encoder, m stdjson.Marshaler) error {
	switch m.(type) {
	case time.Time, *time.Time:
		return errors.ErrUnsupported // well-behaved, and the library writes it faster
	}
	data, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	if !utf8.Valid(data) {
		data = bytes.ToValidUTF8(data, []byte("\ufffd")) // as strings are: Decode rejects invalid UTF-8
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return enc.WriteValue(data)
		}
		if err != nil {
			return err
		}
		if tok.Kind() == '0' {
			if _, err := number([]byte(tok.String())); err != nil {
				return err
			}
		}
	}
}

// marshalNumber writes an encoding/json Number as a number, as encoding/json does
// (the library does not know the type).
func marshalNumber(enc *jsontext.Encoder, n stdjson.Number) error {
	if n == "" {
		n = "0"
	}
	if _, err := number([]byte(n)); err != nil {
		return err
	}
	return enc.WriteValue(jsontext.Value(n))
}

// UnmarshalVars decodes a JSON object of variables as a snapshot's variables are
// decoded: a number is an int64 when it is an integer literal that fits, else a
// float64, and objects and arrays hold such values. Variables that cross a process
// boundary as JSON (a queued resume's updates) so reach the run with the types a
// resume from the store gives them, not encoding/json's float64.
func UnmarshalVars(data []byte) (map[string]any, error) {
	var vars map[string]any
	if err := json.Unmarshal(data, &vars, unmarshalOptions); err != nil {
		return nil, jsonvars.ObjectError(err) // names the variable
	}
	return vars, nil
}

// number converts a JSON number literal.
func number(raw []byte) (any, error) {
	if !bytes.ContainsAny(raw, ".eE") {
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return nil, fmt.Errorf("number %s out of range", raw)
	}
	return f, nil
}

// plainFrame is flow.FrameState without its UnmarshalJSON, which is lenient (it
// takes unknown fields).
type plainFrame flow.FrameState

func unmarshalFrame(dec *jsontext.Decoder, f *flow.FrameState) error {
	return json.UnmarshalDecode(dec, (*plainFrame)(f))
}

// sealedBody is the part of a snapshot Cipher seals: the fields after the header.
type sealedBody struct {
	RunID    string              `json:"runId,omitempty"`
	Vars     map[string]any      `json:"vars,omitempty"`
	Frontier *flow.FrontierState `json:"frontier,omitempty"`
	Trace    trace.FlowTrace     `json:"trace,omitzero"`
	Reason   string              `json:"reason,omitempty"`
	Errors   []ErrorRecord       `json:"errors,omitempty"`
	Dropped  []string            `json:"dropped,omitempty"`
	Redacted []string            `json:"redacted,omitempty"`
	Meta     []string            `json:"meta,omitempty"`
}

func bodyOf(s *Snapshot) *sealedBody {
	return &sealedBody{RunID: s.RunID, Vars: s.Vars, Frontier: s.Frontier, Trace: s.Trace, Reason: s.Reason,
		Errors: s.Errors, Dropped: s.Dropped, Redacted: s.Redacted, Meta: s.Meta}
}

func (b *sealedBody) into(s *Snapshot) {
	s.RunID, s.Vars, s.Frontier, s.Trace, s.Reason = b.RunID, b.Vars, b.Frontier, b.Trace, b.Reason
	s.Errors, s.Dropped, s.Redacted, s.Meta = b.Errors, b.Dropped, b.Redacted, b.Meta
}

// plain reports whether v and what it holds are nil, booleans, strings, integers,
// floats that marshalFloat64 leaves to the library, times, map[string]any or []any,
// nested at most maxPlainDepth deep (a slice may hold itself).
func plain(v any, depth int) bool {
	switch v := v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, time.Time:
		return true
	case float64:
		return v != math.Trunc(v) || math.Abs(v) < 1<<53
	case map[string]any:
		for _, e := range v {
			if depth >= maxPlainDepth || !plain(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range v {
			if depth >= maxPlainDepth || !plain(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// maxPlainDepth bounds plain's recursion: a deeper value (or a cycle) takes
// marshalOptions.
const maxPlainDepth = 100

// plainSnapshot reports whether the variables and loop items of s are plain.
func plainSnapshot(s *Snapshot) bool {
	if !plain(s.Vars, 0) {
		return false
	}
	if s.Frontier != nil {
		for _, f := range s.Frontier.Frames {
			if !plain(f.Items, 0) {
				return false
			}
		}
	}
	return true
}

// anyVars is a snapshot with its variables held in an interface, where the library
// writes a map[string]any without reflection (with plainOptions); the variables
// come last in the encoding.
type anyVars struct {
	*Snapshot
	Vars any `json:"vars,omitempty"`
}

// wire returns what Encode marshals for s.
func wire(s *Snapshot) *anyVars {
	w := &anyVars{Snapshot: s}
	if len(s.Vars) > 0 {
		w.Vars = s.Vars // a nil interface when there are none, omitted as an empty map is
	}
	return w
}

// marshal encodes v, s or its body; what cannot be written is an
// *UnserializableError naming every variable (and "frontier" or "trace") at fault.
func marshal(v any, s *Snapshot) ([]byte, error) {
	if plainSnapshot(s) {
		// It succeeds only where every string and name is valid UTF-8 (so validNames
		// holds); else marshalOptions repair the strings or name what is at fault.
		if data, err := json.Marshal(v, plainOptions); err == nil {
			return data, nil
		}
	}
	data, err := marshalValue(v)
	if err == nil && !validNames(s.Vars) {
		err = errKey
	}
	if err == nil {
		return data, nil
	}
	if bad := unserializable(s); bad != nil {
		return nil, bad
	}
	return nil, fmt.Errorf("snapshot of instance %q: %w", s.Instance, err)
}

// marshalValue is json.Marshal with a panicking MarshalJSON turned into an error.
func marshalValue(v any) (data []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("MarshalJSON panicked: %v", r)
		}
	}()
	return json.Marshal(v, marshalOptions)
}

// errKey rejects a variable name that is not valid UTF-8: repaired, it would be
// another variable's name, or another name than the one saved.
var errKey = errors.New("the name is not valid UTF-8")

func validNames(vars map[string]any) bool {
	for k := range vars {
		if !utf8.ValidString(k) {
			return false
		}
	}
	return true
}

// unserializable returns the error naming what of s cannot be written, nil if all
// of it can.
func unserializable(s *Snapshot) *UnserializableError {
	bad := &UnserializableError{Errs: map[string]error{}}
	for k, v := range s.Vars {
		if !utf8.ValidString(k) {
			bad.Errs[k] = errKey
		} else if _, err := marshalValue(v); err != nil {
			bad.Errs[k] = err
		}
	}
	for name, v := range map[string]any{"frontier": s.Frontier, "trace": s.Trace} {
		if _, err := marshalValue(v); err != nil {
			bad.Errs[name], bad.part = err, true
		}
	}
	if len(bad.Errs) == 0 {
		return nil
	}
	for n := range bad.Errs {
		bad.Names = append(bad.Names, n)
	}
	slices.Sort(bad.Names)
	return bad
}

// encodeChecked is Encode for a snapshot that passed check (a store's save checks it
// while stamping it).
func encodeChecked(s *Snapshot, cfg encodeConfig) ([]byte, error) {
	data, err := marshal(wire(s), s)
	if err != nil && cfg.drop {
		data, err = encodeDropping(s, err)
	}
	if err != nil {
		return nil, err
	}
	if cfg.nullExpiry && s.Expires.IsZero() {
		data = withNullExpiry(data, s.Updated)
	}
	return data, nil
}

// encodeDropping encodes s without the variables err names (DropUnserializable),
// listing them in Dropped; it returns err itself when dropping cannot mend it.
func encodeDropping(s *Snapshot, err error) ([]byte, error) {
	var bad *UnserializableError
	if !errors.As(err, &bad) || bad.part {
		return nil, err
	}
	c := *s
	c.Vars = make(map[string]any, len(s.Vars))
	for k, v := range s.Vars {
		if bad.Errs[k] == nil {
			c.Vars[k] = v
		}
	}
	c.Dropped = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(s.Dropped), bad.Names...))))
	return marshal(wire(&c), &c)
}

// withNullExpiry inserts "expires":null after the "updated" member of data, so that
// the header a FileStore reads ends there (see readHeader). The first match is the
// header's: no string of the encoding holds an unescaped quote.
func withNullExpiry(data []byte, updated time.Time) []byte {
	key := fmt.Appendf(nil, `"updated":"%s"`, updated.Format(time.RFC3339Nano))
	i := bytes.Index(data, key)
	if i < 0 {
		return data // read all the same, at the cost of a search (see laterExpiry)
	}
	i += len(key)
	return slices.Concat(data[:i], []byte(`,"expires":null`), data[i:])
}

// unmarshal decodes data into v strictly, its errors wrapping ErrCorrupt.
func unmarshal(data []byte, v any) error {
	err := json.Unmarshal(data, v, unmarshalOptions)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: truncated after %d bytes", ErrCorrupt, len(data))
	}
	return fmt.Errorf("%w: %s", ErrCorrupt, strings.TrimPrefix(err.Error(), "json: "))
}

// formatOf returns the format data says it has, read leniently, if its "format"
// member is null or an integer.
func formatOf(data []byte) (int, bool) {
	var probe struct {
		Format jsontext.Value `json:"format"`
	}
	if json.Unmarshal(data, &probe) != nil || probe.Format == nil {
		return 0, false
	}
	if string(probe.Format) == "null" {
		return 0, true
	}
	n, err := strconv.Atoi(string(probe.Format))
	return n, err == nil
}
