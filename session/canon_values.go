// The canonical forms of single values and strings: what the codec would read back,
// worked out without writing JSON (clone.go uses them for whole snapshots).

package session

import (
	"math"
	"time"
	"unicode/utf8"
)

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
