package session

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"reflect"
	"slices"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/flowteam/flowteam/flow"
)

// The encoder's buffer is sized from an estimate of the encoding: grown by append
// from a small start, a large snapshot is copied at every growth (by 1.25x once it
// is large), and a save of 1 MB allocated about 5 MB. The estimate walks what the
// encoder will write without writing it. It counts strings as written, escapes
// included (escapedSize): counted a byte each, a string of quotes (two bytes each)
// or control characters (six) fell short several times over, and a 1 MB string of
// quotes allocated 6 MB. Values encoding/json marshals are counted at a guess (those
// of the types it knows exactly, such as json.RawMessage and []byte, excepted), so
// the estimate may fall short, and the buffer then grows (see growFor).

// sizeSlack is the estimate's margin over the counted bytes (1/sizeSlack of them),
// for the numbers longer than guessed.
const sizeSlack = 16

// sizeHintDepth bounds the nesting sizeHint walks into; deeper values are counted
// at a guess.
const sizeHintDepth = 32

// sizePath holds the lists and maps valueSize is inside of, by identity, so that it
// stops at a cycle (the encoding fails there anyway). The depth bound alone does not
// do: a map that holds itself under three keys has 3^32 paths that deep, and the
// estimate walked them all before Encode could fail.
type sizePath [sizeHintDepth + 1]container

// container identifies a list or a map: its data and, for a list, its length (a
// list may hold a shorter slice of itself, which is not a cycle).
type container struct {
	p unsafe.Pointer
	n int
}

// enter puts c on the path at depth and reports whether it was not on it already.
func (path *sizePath) enter(depth int, c container) bool {
	if slices.Contains(path[:depth], c) {
		return false
	}
	path[depth] = c
	return true
}

// sizeHint returns about how many bytes encoding s takes.
func sizeHint(s *Snapshot) int {
	n := 320 + len(s.Instance) + len(s.Graph) + len(s.Hash) + len(s.Status) + len(s.RunID) + escapedSize(s.Reason)
	n += stringsSize(s.Sources) + stringsSize(s.Dropped) + stringsSize(s.Redacted) + stringsSize(s.Meta)
	var path sizePath
	for k, v := range s.Vars {
		n += escapedSize(k) + 2 + valueSize(v, &path, 0)
	}
	if f := s.Frontier; f != nil {
		n += frontierSize(f, &path)
	}
	for k, r := range s.Trace.Last {
		n += 2*len(k) + len(r.GraphID) + len(r.NodeID) + len(r.NodeType) + len(r.Title) + 100
	}
	for i := range s.Errors {
		r := &s.Errors[i]
		n += len(r.Code) + len(r.Node) + len(r.Graph) + len(r.Path) + len(r.Branch) + escapedSize(r.Message) + len(r.Type) + len(r.Severity) + 120
	}
	n += (len(s.Sealed)+2)/3*4 + 12
	return n + n/sizeSlack
}

func frontierSize(f *flow.FrontierState, path *sizePath) int {
	n := 40 + len(f.Graph)
	for i := range f.Frames {
		fr := &f.Frames[i]
		n += 200 + len(fr.Kind) + len(fr.Branch) + len(fr.Split) + len(fr.Join) + len(fr.Policy) +
			len(fr.Loop) + len(fr.Closing) + len(fr.Graph) + len(fr.Path) + len(fr.Node)
		for j := range fr.Failed {
			b := &fr.Failed[j]
			n += 80 + len(b.Node) + len(b.Branch) + structuredSize(&b.Error)
		}
		if len(fr.Items) > 0 {
			n += valueSize(fr.Items, path, 0)
		}
	}
	for _, t := range f.Tokens {
		n += 70 + len(t.Node) + len(t.Mode) + len(t.Branch)
		if t.Error != nil {
			n += 10 + structuredSize(t.Error)
		}
	}
	return n
}

func structuredSize(se *flow.StructuredError) int {
	return 32 + len(se.Type) + len(se.Code) + len(se.Message)
}

func stringsSize(ss []string) int {
	n := 16
	for _, s := range ss {
		n += escapedSize(s) + 1
	}
	return n
}

// valueSize returns about how many bytes appendValue writes for v, at depth on path.
func valueSize(v any, path *sizePath, depth int) int {
	if depth > sizeHintDepth {
		return 16
	}
	switch t := v.(type) {
	case nil:
		return 4
	case string:
		return escapedSize(t)
	case bool:
		return 5
	case int:
		return intSize(int64(t))
	case int64:
		return intSize(t)
	case int32:
		return intSize(int64(t))
	case int16:
		return intSize(int64(t))
	case int8:
		return intSize(int64(t))
	case uint:
		return uintSize(uint64(t))
	case uint64:
		return uintSize(t)
	case uint32:
		return uintSize(uint64(t))
	case uint16:
		return uintSize(uint64(t))
	case uint8:
		return uintSize(uint64(t))
	case float64, float32:
		return 20
	case []any:
		if !path.enter(depth, container{unsafe.Pointer(unsafe.SliceData(t)), len(t)}) {
			return 16
		}
		n := 2
		for _, x := range t {
			n += 1 + valueSize(x, path, depth+1)
		}
		return n
	case map[string]any:
		if !path.enter(depth, container{reflect.ValueOf(t).UnsafePointer(), 0}) {
			return 16
		}
		n := 2
		for k, x := range t {
			n += escapedSize(k) + 2 + valueSize(x, path, depth+1)
		}
		return n
	case []string:
		return stringsSize(t)
	case map[string]string:
		n := 2
		for k, x := range t {
			n += escapedSize(k) + escapedSize(x) + 2
		}
		return n
	// Some of encoding/json's business has a size known without marshalling: guessed
	// at 64 bytes, a megabyte of raw JSON or bytes grew the buffer a quarter at a
	// time (six times its size allocated), and many small numbers or times
	// allocated eight times what they take.
	case json.RawMessage:
		return max(len(t), 4) // compacted, so at most as long; nil is null
	case json.Number:
		return len(t) + 1 // "" is 0
	case []byte:
		return base64.StdEncoding.EncodedLen(len(t)) + 2
	case time.Time:
		return len(time.RFC3339Nano) + 2
	}
	return 64 // encoding/json's business: unknown without marshalling
}

// escapedSize returns the length of s written as a JSON string by appendString,
// quotes included. Runs of bytes that need no escaping are skipped eight at a time,
// as the decoder skips them (specialBytes).
func escapedSize(s string) int {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	n := len(s) + 2
	if len(b) < 8 {
		// Counted as it is: a short string (a key, mostly) has escapes seldom, and
		// they add at most 5 bytes a byte to a few bytes, which the estimate's slack
		// takes. Scanned byte by byte, the keys alone cost a tenth of an encoding.
		return n
	}
	for i := 0; ; {
		for i+8 <= len(b) {
			if m := specialBytes(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i > len(b)-8 && i < len(b) {
			// The tail in one word: the last eight bytes, less those already seen.
			seen := i - (len(b) - 8)
			m := specialBytes(binary.LittleEndian.Uint64(b[len(b)-8:])) &^ (1<<(8*seen) - 1)
			if m == 0 {
				return n
			}
			i = len(b) - 8 + bits.TrailingZeros64(m)>>3
		}
		if i >= len(b) {
			return n
		}
		if c := b[i]; c < utf8.RuneSelf {
			n += int(escapeExtra[c])
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			n += 5 // \ufffd for one byte
		} else if r == '\u2028' || r == '\u2029' {
			n += 3 // \u2028 for three bytes
		}
		i += size
	}
}

// escapeExtra is how many bytes more than itself appendString writes for an ASCII
// byte: one for \" \\ \n \r \t \b \f, five for other control characters (\u00XX).
var escapeExtra = func() (t [utf8.RuneSelf]uint8) {
	for c := range 0x20 {
		t[c] = 5
	}
	for _, c := range "\"\\\n\r\t\b\f" {
		t[c] = 1
	}
	return t
}()

// intSize returns the length of i in decimal, or one more.
func intSize(i int64) int {
	if i < 0 {
		return 1 + uintSize(uint64(-i))
	}
	return uintSize(uint64(i))
}

// uintSize returns the length of u in decimal, or one more: bits times log10(2),
// which is about 1233/4096, rounded down, plus one.
func uintSize(u uint64) int {
	return bits.Len64(u)*1233>>12 + 1
}

// growFor returns b with room for n more bytes. A value the estimate guessed at
// (encoding/json's) may be far larger: append would grow a large buffer by a quarter
// at a time, copying it at every step, so the buffer at least doubles instead, and
// a large value costs one copy.
func growFor(b []byte, n int) []byte {
	if n <= cap(b)-len(b) {
		return b
	}
	return slices.Grow(b, n+cap(b))
}
