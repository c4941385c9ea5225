package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// decoder is a strict JSON parser for snapshots: it accepts exactly the JSON grammar
// (RFC 8259), rejects unknown and duplicate fields, and turns numbers into int64 (an
// integer literal that fits) or float64. Unlike encoding/json it rejects bytes that
// are not valid UTF-8 (the encoder never writes them: they are damage); a lone
// surrogate escape ("\ud800", valid JSON that another tool may write) becomes U+FFFD,
// as with encoding/json.
type decoder struct {
	data []byte
	pos  int

	// arena backs the short strings the decoder returns, so that a snapshot's many
	// small strings (ids, keys, values) cost one allocation instead of one each. A
	// byte of it is written once, before the string that points to it is made, and
	// never again; a new chunk is started when it is full (the old one stays with the
	// strings that use it). A kept string keeps at most arenaChunk bytes alive.
	arena []byte
	// pairs and elems are stacks of the members and elements of the objects and
	// arrays being parsed: a map or slice is made once its size is known, at its
	// final size.
	pairs []pair
	elems []any
	// sigs is the stack of the keys of the objects being parsed that reject a
	// repeated key (see keySig).
	sigs []keySig
	sc   *scratch // where pairs, elems and sigs came from (Decode)
	// keys is the stack of the keys of the objects readable is checking.
	keys []string
	// boxes is the slab the elements of arrays are kept in (codec_box.go).
	boxes boxes
}

type pair struct {
	key string
	val any
}

// scratch is the pairs, elems and sigs stacks of a decoder, reused across Decode
// calls.
type scratch struct {
	pairs []pair
	elems []any
	sigs  []keySig
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxScratch is the most entries a pooled stack keeps; bigger ones are let go.
const maxScratch = 4096

func (d *decoder) getScratch() {
	d.sc = scratchPool.Get().(*scratch)
	d.pairs, d.elems, d.sigs = d.sc.pairs[:0], d.sc.elems[:0], d.sc.sigs[:0]
}

// putScratch returns the stacks to the pool, emptied. The decoder pops what it
// pushes and clears it, also on errors, so they hold no values: clearing them whole
// again would cost a write barrier per slot while the GC marks.
func (d *decoder) putScratch() {
	sc := d.sc
	d.sc = nil
	if sc == nil || cap(d.pairs) > maxScratch || cap(d.elems) > maxScratch || cap(d.sigs) > maxScratch {
		return
	}
	clear(d.pairs) // empty, unless a bug left something: then it is not kept
	clear(d.elems)
	sc.pairs, sc.elems, sc.sigs = d.pairs[:0], d.elems[:0], d.sigs[:0]
	scratchPool.Put(sc)
}

const (
	arenaChunk = 1024 // bytes per arena chunk
	arenaMax   = 128  // longer strings get their own allocation
)

// makeString returns b as a string that does not alias the input.
func (d *decoder) makeString(b []byte) string {
	n := len(b)
	if n <= 1 || n > arenaMax {
		return string(b) // "" and one-byte strings do not allocate
	}
	if cap(d.arena)-len(d.arena) < n {
		// The strings still to come fit in the input that is left, and they are
		// rarely more than half of it: the rest is names, punctuation and numbers.
		d.arena = make([]byte, 0, min(arenaChunk, n+(len(d.data)-d.pos)/2))
	}
	start := len(d.arena)
	d.arena = append(d.arena, b...)
	return unsafe.String(&d.arena[start], n)
}

var errTruncated = errors.New("truncated")

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *decoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// next skips whitespace and returns the next byte without consuming it.
func (d *decoder) next() (byte, error) {
	if d.pos < len(d.data) && d.data[d.pos] > ' ' { // the usual case: no whitespace
		return d.data[d.pos], nil
	}
	d.ws()
	if d.pos >= len(d.data) {
		return 0, errTruncated
	}
	return d.data[d.pos], nil
}

// expect consumes c, the next byte after whitespace; expectSlow is all but the usual
// case, c right there, which the hottest callers write out themselves.
func (d *decoder) expect(c byte) error {
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return nil
	}
	return d.expectSlow(c)
}

func (d *decoder) expectSlow(c byte) error {
	b, err := d.next()
	if err != nil {
		return err
	}
	if b != c {
		return d.errorf("want %q, found %q", c, b)
	}
	d.pos++
	return nil
}

// null consumes a null literal if one comes next.
func (d *decoder) null() (bool, error) {
	b, err := d.next()
	if err != nil || b != 'n' {
		return false, err
	}
	return true, d.literal("null")
}

func (d *decoder) literal(lit string) error {
	if len(d.data)-d.pos < len(lit) {
		if string(d.data[d.pos:]) == lit[:len(d.data)-d.pos] {
			return errTruncated
		}
		return d.errorf("invalid literal")
	}
	if string(d.data[d.pos:d.pos+len(lit)]) != lit {
		return d.errorf("invalid literal")
	}
	d.pos += len(lit)
	return nil
}

// object parses an object, calling field for each key with the decoder positioned at
// its value; field must consume the value. With unique, a repeated key is an error
// (objects of variables check that themselves, with their map).
func (d *decoder) object(unique bool, field func(key []byte) error) error {
	base := len(d.sigs)
	err := d.members(unique, field)
	d.sigs = d.sigs[:base]
	return err
}

// keySig stands for a key of up to maxSigKey bytes: its first and last eight bytes
// (overlapping, zero-padded when shorter) and its length, which determine it. The
// keys seen in an object are kept as these, not as byte slices: writing a slice
// writes a pointer, which costs a write barrier while the GC marks.
type keySig struct {
	head, tail uint64
	n          int
}

const maxSigKey = 16

func sigOf(k []byte) keySig {
	n := len(k)
	if n >= 8 {
		return keySig{binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[n-8:]), n}
	}
	if cap(k) >= 8 {
		// A key is mostly a slice of the input, with the rest of it beyond its
		// length: one load, the bytes past the key masked off.
		return keySig{binary.LittleEndian.Uint64(k[:8]) & (1<<(8*n) - 1), 0, n}
	}
	var w uint64
	for i, c := range k {
		w |= uint64(c) << (8 * i)
	}
	return keySig{w, 0, n}
}

// members is object without popping the keys it pushed on d.sigs.
func (d *decoder) members(unique bool, field func(key []byte) error) error {
	base := len(d.sigs)
	if err := d.expect('{'); err != nil {
		return err
	}
	if b, err := d.next(); err != nil {
		return err
	} else if b == '}' {
		d.pos++
		return nil
	}
	// The keys seen so far (d.sigs[base:], and long ones in full), and a set of
	// their lengths and last bytes: a key that is not in the set is new without
	// comparing it with every key before it.
	var long [][]byte
	var seenSet uint64
	for {
		if b, err := d.next(); err != nil {
			return err
		} else if b != '"' {
			return d.errorf("want a field name, found %q", b)
		}
		key, err := d.stringBytes()
		if err != nil {
			return err
		}
		if unique {
			bit := uint64(1) << ((uint(len(key))*8 ^ uint(lastByte(key))) & 63)
			if len(key) > maxSigKey { // not a field name: the field will say so
				if seenSet&bit != 0 && slices.ContainsFunc(long, func(k []byte) bool { return string(k) == string(key) }) {
					return d.errorf("duplicate field %q", key)
				}
				long = append(long, key)
			} else {
				sig := sigOf(key)
				if seenSet&bit != 0 && slices.Contains(d.sigs[base:], sig) {
					return d.errorf("duplicate field %q", key)
				}
				d.sigs = append(d.sigs, sig)
			}
			seenSet |= bit
		}
		if d.pos < len(d.data) && d.data[d.pos] == ':' { // expect(':'), inlined
			d.pos++
		} else if err := d.expectSlow(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			if errors.Is(err, errTruncated) || errors.Is(err, ErrFormat) {
				return err
			}
			return fmt.Errorf("%s: %w", key, err) // the path to the problem
		}
		b, err := d.next()
		if err != nil {
			return err
		}
		d.pos++
		switch b {
		case ',':
		case '}':
			return nil
		default:
			d.pos--
			return d.errorf("want ',' or '}', found %q", b)
		}
	}
}

func lastByte(b []byte) byte {
	if len(b) == 0 {
		return 0
	}
	return b[len(b)-1]
}

// array parses an array, calling elem for each element.
func (d *decoder) array(elem func() error) error {
	if err := d.expect('['); err != nil {
		return err
	}
	if b, err := d.next(); err != nil {
		return err
	} else if b == ']' {
		d.pos++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		b, err := d.next()
		if err != nil {
			return err
		}
		d.pos++
		switch b {
		case ',':
		case ']':
			return nil
		default:
			d.pos--
			return d.errorf("want ',' or ']', found %q", b)
		}
	}
}

func (d *decoder) intField(dst *int) error {
	n, err := d.int()
	if err != nil {
		return err
	}
	if n != int64(int(n)) {
		return d.errorf("integer %d out of range", n)
	}
	*dst = int(n)
	return nil
}

// str parses a string field (null is "").
func (d *decoder) str(dst *string) error {
	b, err := d.next()
	switch {
	case err != nil:
		return err
	case b == '"':
		*dst, err = d.string()
		return err
	case b == 'n':
		return d.literal("null")
	}
	return d.errorf("want a string, found %q", b)
}

func (d *decoder) time(dst *time.Time) error {
	if isNull, err := d.null(); isNull || err != nil {
		*dst = time.Time{}
		return err
	}
	b, err := d.next()
	if err != nil {
		return err
	}
	if b != '"' {
		return d.errorf("want a string, found %q", b)
	}
	s, err := d.stringBytes() // parsed in place: UnmarshalText keeps nothing of it
	if err != nil {
		return err
	}
	if len(s) == 0 {
		*dst = time.Time{}
		return nil
	}
	if t, ok := utcTime(s); ok {
		*dst = t
		return nil
	}
	if err := dst.UnmarshalText(s); err != nil {
		return d.errorf("time %q: %v", s, err)
	}
	return nil
}

func (d *decoder) strings(dst *[]string) error {
	if isNull, err := d.null(); isNull || err != nil {
		*dst = nil
		return err
	}
	out := []string{}
	err := d.array(func() error {
		var s string
		if err := d.str(&s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	*dst = out
	return err
}

// value parses any JSON value.
func (d *decoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.errorf("values nested more than %d levels deep", maxDepth)
	}
	b, err := d.next()
	if err != nil {
		return nil, err
	}
	switch {
	case b == '"':
		s, err := d.string()
		if err != nil {
			return nil, err
		}
		return s, nil
	case b == '{':
		base := len(d.pairs)
		err := d.object(false, func(key []byte) error {
			k := d.makeString(key)
			v, err := d.value(depth + 1)
			d.pairs = append(d.pairs, pair{k, v})
			return err
		})
		kv := d.pairs[base:]
		m := make(map[string]any, len(kv))
		for _, p := range kv {
			m[p.key] = p.val
		}
		if err == nil && len(m) != len(kv) {
			err = d.dupKey(kv)
		}
		clear(kv) // drop the references the stack held
		d.pairs = d.pairs[:base]
		return m, err
	case b == '[':
		base := len(d.elems)
		err := d.array(func() error {
			v, err := d.value(depth + 1)
			d.elems = append(d.elems, v)
			return err
		})
		if err != nil {
			clear(d.elems[base:])
			d.elems = d.elems[:base]
			return nil, err
		}
		a := d.boxSlice(d.elems[base:])
		clear(d.elems[base:])
		d.elems = d.elems[:base]
		return a, nil
	case b == 't':
		return true, d.literal("true")
	case b == 'f':
		return false, d.literal("false")
	case b == 'n':
		return nil, d.literal("null")
	case b == '-' || '0' <= b && b <= '9':
		return d.number()
	}
	return nil, d.errorf("unexpected %q", b)
}

// dupKey returns the error for an object with a repeated key.
func (d *decoder) dupKey(kv []pair) error {
	seen := make(map[string]bool, len(kv))
	for _, p := range kv {
		if seen[p.key] {
			return d.errorf("duplicate key %q", p.key)
		}
		seen[p.key] = true
	}
	return d.errorf("duplicate key")
}
