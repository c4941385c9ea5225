package session

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// The snapshot codec writes and reads the snapshot's JSON by hand instead of through
// encoding/json's reflection: a save per completed node (PerNode durability) must cost
// about a microsecond, not tens. The output is plain JSON, readable by any JSON tool;
// values other than the plain JSON kinds (nil, bool, numbers, strings, []any,
// map[string]any and a few common slices and maps) go through json.Marshal, so a
// type's MarshalJSON is honoured.

// maxDepth bounds the nesting of variable values, which also catches cycles.
const maxDepth = 1000

var errTooDeep = errors.New("nested more than 1000 levels deep (a cycle?)")

// errKey rejects a map key that is not valid UTF-8: repaired, two keys could become
// one, and the snapshot would not load.
var errKey = errors.New("a map key is not valid UTF-8")

// errTraceKeys rejects a FlowTrace with two paths that are one once their invalid
// UTF-8 is repaired (a path alone is repaired, as other strings are): written, the
// snapshot would not load.
var errTraceKeys = errors.New("two trace paths are the same once their invalid UTF-8 is replaced")

// traceKeysCollide returns errTraceKeys if two paths of last have the same canonical
// form.
func traceKeysCollide(last map[string]trace.NodeRecord) error {
	seen := make(map[string]bool, len(last))
	for p := range last {
		c := canonString(p)
		if seen[c] {
			return errTraceKeys
		}
		seen[c] = true
	}
	return nil
}

// encoder appends a snapshot's JSON to buf. bad collects the variables that cannot be
// encoded; with drop they are left out, else encoding stops at the end with an error.
type encoder struct {
	buf        []byte
	bad        *UnserializableError
	drop       bool
	nullExpiry bool // see encodeConfig
	// badPart: the frontier or the trace cannot be written, which dropping cannot
	// mend. Kept apart from bad's names, which a variable may share.
	badPart bool
}

func (e *encoder) fail(name string, err error) {
	if e.bad == nil {
		e.bad = &UnserializableError{Errs: map[string]error{}}
	}
	if _, dup := e.bad.Errs[name]; !dup {
		e.bad.Names = append(e.bad.Names, name)
	}
	e.bad.Errs[name] = err
}

// failPart records that part ("frontier" or "trace") cannot be written.
func (e *encoder) failPart(part string, err error) {
	e.badPart = true
	e.fail(part, err)
}

// err returns the encoding's error: the unserializable variables, unless they are
// dropped, and always the frontier or the trace.
func (e *encoder) err() error {
	if e.bad == nil {
		return nil
	}
	if e.drop && !e.badPart {
		return nil
	}
	slices.Sort(e.bad.Names)
	return e.bad
}

func (e *encoder) key(k string) {
	e.buf = append(e.buf, ',')
	e.buf = appendString(e.buf, k)
	e.buf = append(e.buf, ':')
}

func (e *encoder) str(k, v string) {
	e.key(k)
	e.buf = appendString(e.buf, v)
}

func (e *encoder) optStr(k, v string) {
	if v != "" {
		e.str(k, v)
	}
}

func (e *encoder) int(k string, v int64) {
	e.key(k)
	e.buf = strconv.AppendInt(e.buf, v, 10)
}

func (e *encoder) optInt(k string, v int) {
	if v != 0 {
		e.int(k, int64(v))
	}
}

func (e *encoder) time(k string, t time.Time) error {
	e.key(k)
	if y := t.Year(); y < 0 || y > 9999 {
		return fmt.Errorf("%s: year %d outside [0,9999]", k, y)
	}
	e.buf = append(e.buf, '"')
	e.buf = t.AppendFormat(e.buf, time.RFC3339Nano)
	e.buf = append(e.buf, '"')
	return nil
}

func (e *encoder) strings(k string, ss []string) {
	if len(ss) == 0 {
		return
	}
	e.key(k)
	e.buf = appendStrings(e.buf, ss)
}

// snapshot appends s as one JSON object, header first (readHeader relies on that).
func (e *encoder) snapshot(s *Snapshot) error {
	e.buf = append(e.buf, `{"format":`...)
	e.buf = strconv.AppendInt(e.buf, int64(s.Format), 10)
	e.str("instance", s.Instance)
	e.str("graph", s.Graph)
	e.str("hash", s.Hash)
	e.str("status", string(s.Status))
	e.int("version", s.Version)
	if err := e.time("created", s.Created); err != nil {
		return err
	}
	if err := e.time("updated", s.Updated); err != nil {
		return err
	}
	if !s.Expires.IsZero() {
		if err := e.time("expires", s.Expires); err != nil {
			return err
		}
	} else if e.nullExpiry {
		e.key("expires")
		e.buf = append(e.buf, "null"...)
	}
	e.strings("sources", s.Sources)
	e.body(s)
	if s.Sealed != nil {
		e.key("sealed")
		e.buf = append(e.buf, '"')
		e.buf = base64.StdEncoding.AppendEncode(e.buf, s.Sealed)
		e.buf = append(e.buf, '"')
	}
	e.buf = append(e.buf, '}')
	return nil
}

// body appends the body fields, each preceded by a comma.
func (e *encoder) body(s *Snapshot) {
	e.optStr("runId", s.RunID)
	if len(s.Vars) > 0 {
		e.key("vars")
		e.vars(s.Vars)
	}
	if s.Frontier != nil {
		e.key("frontier")
		e.frontier(s.Frontier)
	}
	if s.Trace.Last != nil {
		e.key("trace")
		e.trace(s.Trace)
	}
	e.optStr("reason", s.Reason)
	if len(s.Errors) > 0 {
		e.key("errors")
		e.buf = append(e.buf, '[')
		for i := range s.Errors {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.errorRecord(&s.Errors[i])
		}
		e.buf = append(e.buf, ']')
	}
	dropped := s.Dropped
	if e.drop && e.bad != nil {
		dropped = append(slices.Clone(dropped), e.bad.Names...)
		slices.Sort(dropped)
		dropped = slices.Compact(dropped)
	}
	e.strings("dropped", dropped)
	e.strings("redacted", s.Redacted)
	e.strings("meta", s.Meta)
}

func (e *encoder) vars(vars map[string]any) {
	e.buf = append(e.buf, '{')
	first := true
	var keyBuf [32]string
	keys := keyBuf[:0]
	for k := range vars {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		mark := len(e.buf)
		if !first {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendString(e.buf, k)
		e.buf = append(e.buf, ':')
		var err error
		if !utf8.ValidString(k) {
			err = errKey
		} else {
			e.buf, err = appendValue(e.buf, vars[k], 0)
		}
		if err != nil {
			e.fail(k, err)
			e.buf = e.buf[:mark]
			continue
		}
		first = false
	}
	e.buf = append(e.buf, '}')
}

func (e *encoder) frontier(f *flow.FrontierState) {
	e.buf = append(e.buf, `{"graph":`...)
	e.buf = appendString(e.buf, f.Graph)
	e.buf = append(e.buf, `,"frames":`...)
	if f.Frames == nil {
		e.buf = append(e.buf, "null"...)
	} else {
		e.buf = append(e.buf, '[')
		for i := range f.Frames {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.frame(&f.Frames[i])
		}
		e.buf = append(e.buf, ']')
	}
	e.buf = append(e.buf, `,"tokens":`...)
	if f.Tokens == nil {
		e.buf = append(e.buf, "null"...)
	} else {
		e.buf = append(e.buf, '[')
		for i, t := range f.Tokens {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(e.buf, `{"node":`...)
			e.buf = appendString(e.buf, t.Node)
			e.str("mode", t.Mode)
			e.int("frame", int64(t.Frame))
			e.str("branch", t.Branch)
			e.optInt("arrivals", t.Arrivals)
			if t.Error != nil {
				e.key("error")
				e.structured(t.Error)
			}
			e.buf = append(e.buf, '}')
		}
		e.buf = append(e.buf, ']')
	}
	e.buf = append(e.buf, '}')
}

// frame appends a flow.FrameState with the names and omissions of its JSON tags;
// TestCodecCoversFlowTypes fails when flow adds a field this does not write.
func (e *encoder) frame(f *flow.FrameState) {
	e.buf = append(e.buf, `{"kind":`...)
	e.buf = appendString(e.buf, f.Kind)
	e.int("parent", int64(f.Parent))
	e.int("call", int64(f.Call))
	e.int("pending", int64(f.Pending))
	e.str("branch", f.Branch)
	e.optStr("split", f.Split)
	e.optStr("join", f.Join)
	e.optInt("arrived", f.Arrived)
	e.optStr("policy", f.Policy)
	if len(f.Failed) > 0 {
		e.key("failed")
		e.buf = append(e.buf, '[')
		for i := range f.Failed {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			b := &f.Failed[i]
			e.buf = append(e.buf, `{"node":`...)
			e.buf = appendString(e.buf, b.Node)
			e.str("branch", b.Branch)
			e.key("error")
			e.structured(&b.Error)
			e.buf = append(e.buf, '}')
		}
		e.buf = append(e.buf, ']')
	}
	e.optStr("loop", f.Loop)
	if len(f.Items) > 0 {
		e.key("items")
		var err error
		if e.buf, err = appendValue(e.buf, f.Items, 0); err != nil {
			e.failPart("frontier", err)
		}
	}
	e.optInt("index", f.Index)
	e.optStr("closing", f.Closing)
	e.optStr("graphId", f.Graph)
	e.optStr("path", f.Path)
	e.optStr("node", f.Node)
	e.int("caller", int64(f.Caller))
	e.buf = append(e.buf, '}')
}

// structured appends a flow.StructuredError.
func (e *encoder) structured(se *flow.StructuredError) {
	e.buf = append(e.buf, `{"type":`...)
	e.buf = appendString(e.buf, se.Type)
	e.str("code", se.Code)
	e.str("message", se.Message)
	e.buf = append(e.buf, '}')
}

func (e *encoder) trace(t trace.FlowTrace) {
	e.buf = append(e.buf, `{"last":{`...)
	repaired := false
	for i, k := range sortedKeys(t.Last) {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if !repaired && !validString(k) {
			repaired = true
			if err := traceKeysCollide(t.Last); err != nil {
				e.failPart("trace", err)
			}
		}
		r := t.Last[k]
		e.buf = appendString(e.buf, k)
		e.buf = append(e.buf, `:{"path":`...)
		e.buf = appendString(e.buf, r.Path)
		e.str("graph", r.GraphID)
		e.str("node", r.NodeID)
		e.str("type", r.NodeType)
		e.optStr("title", r.Title)
		if err := e.time("time", r.Time); err != nil {
			e.failPart("trace", err)
		}
		e.buf = append(e.buf, '}')
	}
	e.buf = append(e.buf, "}}"...)
}

func (e *encoder) errorRecord(r *ErrorRecord) {
	e.buf = append(e.buf, `{"code":`...)
	e.buf = appendString(e.buf, r.Code)
	e.optStr("node", r.Node)
	e.optStr("graph", r.Graph)
	e.optStr("path", r.Path)
	e.optStr("branch", r.Branch)
	e.optInt("step", r.Step)
	e.str("message", r.Message)
	e.optStr("type", r.Type)
	e.optStr("severity", r.Severity)
	e.buf = append(e.buf, '}')
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendValue appends v as JSON.
func appendValue(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return b, errTooDeep
	}
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, t), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case int:
		return strconv.AppendInt(b, int64(t), 10), nil
	case int64:
		return strconv.AppendInt(b, t, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(t), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(t), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(t), 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(t), 10), nil
	case uint64:
		return strconv.AppendUint(b, t, 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(t), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(t), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(t), 10), nil
	case float64:
		return appendFloat(b, t, 64)
	case float32:
		return appendFloat(b, float64(t), 32)
	case []any:
		b = append(b, '[')
		for i, x := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, x, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		b = append(b, '{')
		// The keys of a small map are sorted on the stack: a list of many small
		// objects otherwise allocates more for its keys than for its encoding.
		var keyBuf [16]string
		keys := keyBuf[:0]
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if !utf8.ValidString(k) {
				return b, errKey
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, t[k], depth+1); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case []string:
		if t == nil {
			return append(b, "null"...), nil
		}
		return appendStrings(b, t), nil
	case map[string]string:
		if t == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '{')
		for i, k := range sortedKeys(t) {
			if !utf8.ValidString(k) {
				return b, errKey
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, t[k])
		}
		return append(b, '}'), nil
	}
	// Anything else (structs, time.Time, json.Number, typed slices and maps, a
	// MarshalJSON) is encoding/json's business.
	data, err := marshalAny(v)
	if err != nil {
		return b, err
	}
	if !utf8.Valid(data) {
		// A MarshalJSON wrote invalid UTF-8 (encoding/json passes it through), which
		// Decode rejects as damage: repaired as encoding/json repairs a string's.
		data = repairUTF8(data)
	}
	if c := data[0]; c != '"' && c != 't' && c != 'f' && c != 'n' {
		// An object, array or number: encoding/json checks the syntax of what a
		// MarshalJSON wrote, not what Decode also rejects (repeated keys, keys that
		// became one once repaired, numbers out of float64 range such as a big.Int of
		// 400 digits, values nested too deep). Make sure what is written can be read.
		d := decoder{data: data}
		if err := d.readable(depth); err != nil {
			return b, err
		}
	}
	return append(growFor(b, len(data)), data...), nil
}

// repairUTF8 returns data with each byte that is not part of valid UTF-8 replaced by
// the escape \ufffd. Such bytes can only be inside JSON strings (anywhere else the
// JSON would not be valid, and encoding/json checks it).
func repairUTF8(data []byte) []byte {
	out := make([]byte, 0, len(data)+16)
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, `\ufffd`...)
		} else {
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	return out
}

// appendFloat formats f as encoding/json does; NaN and infinities are errors.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, bits)}
	}
	abs := math.Abs(f)
	if abs >= 1<<24 && abs < 1<<63 && f == math.Trunc(f) && (bits == 32 || abs >= 1<<53) {
		// An integer too large for every integer near it to be a float: its shortest
		// form (1152921504606847000 for 2^60) would read back as another int64, so it
		// is written with all its digits. (Below, the shortest form is all the digits.)
		return strconv.AppendInt(b, int64(f), 10), nil
	}
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' { // e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendString appends s as a JSON string (trace.AppendJSONString).
func appendString(b []byte, s string) []byte { return trace.AppendJSONString(b, s) }
