package session

import (
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// canonicalClone returns exactly what Decode(Encode(s)) returns, without writing JSON:
// the MemoryStore keeps and returns snapshots this way, so it costs a copy instead of
// an encode per save and a decode per load, and still behaves like the other stores
// (numbers become int64 or float64, values that cannot be serialized are errors
// naming them, nothing is shared with the caller). Plain values (nil, bool, integers,
// float64, valid UTF-8 strings, []any, map[string]any, []string, map[string]string)
// are converted here; anything else goes through the codec. TestCloneMatchesCodec
// and FuzzCloneMatchesCodec hold the two to the same result.
func canonicalClone(s *Snapshot) (*Snapshot, error) { return canonicalize(s, false, nil, false) }

// canonicalOwned is canonicalClone for a snapshot that is handed over with its Vars
// map, Frontier and Trace.Last map (made for this save and never touched again by
// the caller): s itself is overwritten with the result, and those parts are converted
// in place and kept instead of copied. Values inside
// the variables and the loop items of the frontier are still copied (they may be
// shared with a running flow). On error the handed-over parts may have been partly
// converted: to what the codec would read back, so they still mean the same.
//
// hint (optional) is a canonical snapshot that nothing modifies, such as the one the
// previous save stored: a variable whose canonical form equals hint's value of the
// same name gets hint's value, which saves copying values that did not change, and
// strings equal to hint's in the same place need no check.
func canonicalOwned(s *Snapshot, hint *Snapshot) (*Snapshot, error) {
	return canonicalize(s, true, hint, false)
}

// noHint is the hint of a canonicalization without one.
var (
	noHint  = &Snapshot{Frontier: &flow.FrontierState{}}
	noFrame flow.FrameState
	noToken flow.TokenState
)

// canonicalize is canonicalClone or, with owned, canonicalOwned; with varsDone
// (owned only) the Vars map is canonical already and kept as it is.
func canonicalize(orig *Snapshot, owned bool, hint *Snapshot, varsDone bool) (*Snapshot, error) {
	c := orig
	if !owned {
		c = new(Snapshot)
	}
	if err := canonInto(c, orig, owned, hint, varsDone); err != nil {
		return nil, err
	}
	return c, nil
}

// canonInto is canonicalize writing the result to dst, which may be s itself (owned),
// a new Snapshot, or one that holds an earlier snapshot of the same instance (the
// MemoryStore's spare): the result is built on the stack and dst gets only the fields
// that differ (see assign), so refilling a spare writes few pointers. On error dst is
// unchanged (but owned parts of s may have been converted, see canonicalOwned).
func canonInto(dst, s *Snapshot, owned bool, hint *Snapshot, varsDone bool) error {
	var out Snapshot
	c := &out
	h := hint
	if h == nil {
		h = noHint
	}
	prev := h.Vars
	hf := h.Frontier
	if hf == nil {
		hf = noHint.Frontier
	}
	sources := h.Sources
	if !slices.Equal(s.Sources, sources) {
		sources = canonStrings(s.Sources)
	}
	var bad *UnserializableError
	fail := func(name string, err error) {
		if bad == nil {
			bad = &UnserializableError{Errs: map[string]error{}}
		}
		bad.Names = append(bad.Names, name)
		bad.Errs[name] = err
	}
	*c = Snapshot{Format: s.Format, Instance: cs(s.Instance, h.Instance), Graph: cs(s.Graph, h.Graph), Hash: cs(s.Hash, h.Hash),
		Status: Status(cs(string(s.Status), string(h.Status))), Version: s.Version, Sources: sources,
		RunID: cs(s.RunID, h.RunID), Reason: cs(s.Reason, h.Reason), Dropped: canonStrings(s.Dropped), Redacted: canonStrings(s.Redacted)}
	var err error
	if c.Created, err = canonTime(s.Created); err != nil {
		return err
	}
	if c.Updated, err = canonTime(s.Updated); err != nil {
		return err
	}
	if !s.Expires.IsZero() {
		if c.Expires, err = canonTime(s.Expires); err != nil {
			return err
		}
	}
	if len(s.Vars) > 0 {
		if owned && varsDone {
			c.Vars = s.Vars
		} else if owned {
			c.Vars = s.Vars
			for k, v := range s.Vars {
				if !validString(k) {
					fail(k, errKey)
					continue
				}
				if canonical(v) {
					continue
				}
				if pv, ok := prev[k]; ok && sameCanon(v, pv) {
					s.Vars[k] = pv
					continue
				}
				cv, err := canonValue(v, 0)
				if err != nil {
					fail(k, err)
					continue
				}
				s.Vars[k] = cv // an existing key: allowed while ranging
			}
		} else {
			c.Vars = make(map[string]any, len(s.Vars))
			for k, v := range s.Vars {
				if !validString(k) {
					fail(k, errKey)
					continue
				}
				cv, err := canonValue(v, 0)
				if err != nil {
					fail(k, err)
					continue
				}
				c.Vars[k] = cv
			}
		}
	}
	if f := s.Frontier; f != nil {
		if owned {
			c.Frontier = f
			setString(&f.Graph, cs(f.Graph, hf.Graph))
		} else {
			c.Frontier = &flow.FrontierState{Graph: canonString(f.Graph)}
		}
		if f.Frames != nil {
			frames := f.Frames
			if !owned {
				frames = make([]flow.FrameState, len(f.Frames))
			}
			for i := range f.Frames {
				fr := &f.Frames[i] // not a copy: owned, most of it is not read
				hr := &noFrame
				if i < len(hf.Frames) {
					hr = &hf.Frames[i]
				}
				if owned {
					if err := canonFrameOwned(&frames[i], hr); err != nil {
						fail("frontier", err)
					}
					continue
				}
				cf := flow.FrameState{Kind: cs(fr.Kind, hr.Kind), Parent: fr.Parent, Call: fr.Call, Pending: fr.Pending,
					Branch: cs(fr.Branch, hr.Branch), Split: cs(fr.Split, hr.Split), Join: cs(fr.Join, hr.Join), Arrived: fr.Arrived,
					Policy: cs(fr.Policy, hr.Policy), Loop: cs(fr.Loop, hr.Loop), Index: fr.Index, Closing: cs(fr.Closing, hr.Closing),
					Graph: cs(fr.Graph, hr.Graph), Path: cs(fr.Path, hr.Path), Node: cs(fr.Node, hr.Node), Caller: fr.Caller}
				if len(fr.Items) > 0 {
					items, err := canonValue(fr.Items, 0)
					if err != nil {
						fail("frontier", err)
					} else {
						cf.Items = items.([]any)
					}
				}
				frames[i] = cf
			}
			setSlice(&c.Frontier.Frames, frames)
		}
		if f.Tokens != nil {
			tokens := f.Tokens
			if !owned {
				tokens = make([]flow.TokenState, len(f.Tokens))
			}
			for i, t := range f.Tokens {
				ht := &noToken
				if i < len(hf.Tokens) {
					ht = &hf.Tokens[i]
				}
				if owned { // in place, mostly without a write
					ct := &tokens[i]
					canonIn(&ct.Node, ht.Node)
					canonIn(&ct.Mode, ht.Mode)
					canonIn(&ct.Branch, ht.Branch)
				} else {
					tokens[i] = flow.TokenState{Node: cs(t.Node, ht.Node), Mode: cs(t.Mode, ht.Mode), Frame: t.Frame, Branch: cs(t.Branch, ht.Branch)}
				}
				if t.Error != nil { // copied: the engine may still hold it
					tokens[i].Error = &flow.StructuredError{Type: canonString(t.Error.Type), Code: canonString(t.Error.Code),
						Message: canonString(t.Error.Message)}
				}
			}
			setSlice(&c.Frontier.Tokens, tokens)
		}
	}
	if s.Trace.Last != nil {
		// Owned, the map is kept and its records converted in place, unless a path
		// needs converting: then the records converted so far are converted again
		// (to themselves) into a new map.
		kept := owned
		if owned {
			var errs []error // reported once the map is known to be kept
			c.Trace.Last = s.Trace.Last
			for p, r := range s.Trace.Last {
				if !validString(p) {
					kept = false
					break
				}
				t, err := canonTime(r.Time)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				cr := trace.NodeRecord{Path: canonString(r.Path), GraphID: canonString(r.GraphID),
					NodeID: canonString(r.NodeID), NodeType: canonString(r.NodeType), Title: canonString(r.Title), Time: t}
				if cr != r { // a time with a monotonic reading, mostly: no write otherwise
					s.Trace.Last[p] = cr
				}
			}
			for _, err := range errs {
				if kept {
					fail("trace", err)
				}
			}
		}
		if !kept {
			c.Trace.Last = make(map[string]trace.NodeRecord, len(s.Trace.Last))
			for p, r := range s.Trace.Last {
				t, err := canonTime(r.Time)
				if err != nil {
					fail("trace", err)
					continue
				}
				c.Trace.Last[canonString(p)] = trace.NodeRecord{Path: canonString(r.Path), GraphID: canonString(r.GraphID),
					NodeID: canonString(r.NodeID), NodeType: canonString(r.NodeType), Title: canonString(r.Title), Time: t}
			}
		}
	}
	if len(s.Errors) > 0 {
		c.Errors = make([]ErrorRecord, len(s.Errors))
		for i, r := range s.Errors {
			c.Errors[i] = ErrorRecord{Code: canonString(r.Code), Node: canonString(r.Node), Graph: canonString(r.Graph),
				Path: canonString(r.Path), Branch: canonString(r.Branch), Step: r.Step, Message: canonString(r.Message),
				Type: canonString(r.Type), Severity: canonString(r.Severity)}
		}
	}
	if s.Sealed != nil {
		c.Sealed = slices.Clone(s.Sealed)
	}
	if bad != nil {
		slices.Sort(bad.Names)
		return bad
	}
	dst.assign(c)
	return nil
}

// canonFrameOwned converts an owned frame in place as canonInto converts a copy
// (hr is the hint's frame in the same place), writing only what changes: the
// engine's frames mostly hold the same strings from one checkpoint to the next.
func canonFrameOwned(fr, hr *flow.FrameState) error {
	canonIn(&fr.Kind, hr.Kind)
	canonIn(&fr.Branch, hr.Branch)
	canonIn(&fr.Split, hr.Split)
	canonIn(&fr.Join, hr.Join)
	canonIn(&fr.Policy, hr.Policy)
	canonIn(&fr.Loop, hr.Loop)
	canonIn(&fr.Closing, hr.Closing)
	canonIn(&fr.Graph, hr.Graph)
	canonIn(&fr.Path, hr.Path)
	canonIn(&fr.Node, hr.Node)
	if len(fr.Items) == 0 {
		if fr.Items != nil {
			fr.Items = nil // as the codec reads an empty list back (omitempty)
		}
		return nil
	}
	items, err := canonValue(fr.Items, 0) // copied: the engine's loop may still hold them
	if err != nil {
		return err
	}
	fr.Items = items.([]any)
	return nil
}

// canonIn makes *x canonical in place (see cs), writing only when it is not.
func canonIn(x *string, hx string) {
	if *x != hx && !validString(*x) {
		*x = canonString(*x)
	}
}

// canonical reports whether canonValue(v) is v itself, a value that needs no copy.
func canonical(v any) bool {
	switch t := v.(type) {
	case nil, bool, int64:
		return true
	case string:
		return validString(t)
	case float64:
		return t != math.Trunc(t) && !math.IsNaN(t) && !math.IsInf(t, 0)
	}
	return false
}

// sameCanon reports whether canonValue(v) would equal c, a canonical value (as
// canonValue returns them) that nothing modifies, so c may stand for v. Only plain
// values are compared; for any other v it reports false.
func sameCanon(v, c any) bool {
	switch t := v.(type) {
	case nil:
		return c == nil
	case bool:
		b, ok := c.(bool)
		return ok && b == t
	case int64:
		n, ok := c.(int64)
		return ok && n == t
	case string: // c is valid UTF-8, so an equal t is too
		s, ok := c.(string)
		return ok && s == t
	case float64: // c is finite and not integral, so an equal t is too
		f, ok := c.(float64)
		return ok && f == t
	case []any:
		cs, ok := c.([]any)
		if !ok || len(cs) != len(t) {
			return false
		}
		for i, e := range t {
			if !sameCanon(e, cs[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		cm, ok := c.(map[string]any)
		if !ok || len(cm) != len(t) {
			return false
		}
		for k, e := range t {
			ce, ok := cm[k]
			if !ok || !sameCanon(e, ce) { // c's keys are valid UTF-8, so k is too
				return false
			}
		}
		return true
	}
	return false
}

// cs is canonString(x), or hx, the hint's string in the same place, when they are
// equal (hx is canonical, so x is valid): usually the same string, compared by its
// pointer.
func cs(x, hx string) string {
	if x == hx {
		return hx
	}
	return canonString(x)
}

// validString is utf8.ValidString, quicker for the short ASCII strings that names,
// keys and ids mostly are: the standard one goes a byte at a time below 9 bytes, and
// a save checks dozens of such strings.
func validString(s string) bool {
	var or uint64
	for len(s) >= 8 {
		w := s[:8]
		or |= uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if or&hiBits != 0 {
			return utf8.ValidString(s)
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		or |= uint64(s[i])
	}
	return or&hiBits == 0 || utf8.ValidString(s)
}

// canonString is s as the codec reads it back: invalid UTF-8 becomes U+FFFD.
func canonString(s string) string {
	if validString(s) {
		return s
	}
	v, _ := viaCodec(s, 0)
	return v.(string)
}

func canonStrings(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = canonString(s)
	}
	return out
}

// canonTime is t as the codec reads it back: RFC 3339 with nanoseconds, no monotonic
// clock reading; UTC when the offset is zero.
func canonTime(t time.Time) (time.Time, error) {
	// The year is that of the local seconds, checked against the bounds of years 0
	// and 9999 without working out the date (t.Year would, and look up the zone again).
	_, off := t.Zone()
	if sec := t.Unix() + int64(off); sec < minYearSec || sec >= maxYearSec {
		return time.Time{}, errYear(t.Year())
	}
	if off == 0 {
		return t.UTC(), nil
	}
	var out time.Time
	err := out.UnmarshalText(t.AppendFormat(nil, time.RFC3339Nano))
	return out, err
}

// Unix seconds of 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z, the years the codec
// writes (TestYearBounds checks them).
const (
	minYearSec = -62167219200
	maxYearSec = 253402300800
)

type errYear int

func (e errYear) Error() string { return "year outside [0,9999]" }

// canonValue is v as the codec reads it back.
func canonValue(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	switch t := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return v, nil // v, not t: no new interface value to allocate
	case string:
		if validString(t) {
			return v, nil
		}
	case int:
		return int64(t), nil
	case int64:
		return v, nil
	case int32:
		return int64(t), nil
	case int16:
		return int64(t), nil
	case int8:
		return int64(t), nil
	case uint8:
		return int64(t), nil
	case uint16:
		return int64(t), nil
	case uint32:
		return int64(t), nil
	case uint:
		if uint64(t) <= math.MaxInt64 {
			return int64(t), nil
		}
	case uint64:
		if t <= math.MaxInt64 {
			return int64(t), nil
		}
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			_, err := appendFloat(nil, t, 64)
			return nil, err
		}
		if t == math.Trunc(t) {
			if math.Abs(t) < 1<<53 {
				return int64(t), nil // the codec writes an integer literal
			}
			break // large: let the codec decide between int64 and float64
		}
		return v, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			ce, err := canonValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = ce
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if !validString(k) {
				return nil, errKey
			}
			ce, err := canonValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = ce
		}
		return out, nil
	case []string:
		if t == nil {
			return nil, nil
		}
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = canonString(s)
		}
		return out, nil
	case map[string]string:
		if t == nil {
			return nil, nil
		}
		out := make(map[string]any, len(t))
		for k, s := range t {
			if !validString(k) {
				return nil, errKey
			}
			out[k] = canonString(s)
		}
		return out, nil
	}
	return viaCodec(v, depth)
}

// viaCodec encodes and decodes v.
func viaCodec(v any, depth int) (any, error) {
	b, err := appendValue(nil, v, depth)
	if err != nil {
		return nil, err
	}
	d := decoder{data: b}
	return d.value(depth)
}
