package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// decoder is a strict JSON parser for snapshots: it accepts exactly the JSON grammar
// (RFC 8259), rejects unknown and duplicate fields, and turns numbers into int64 (an
// integer literal that fits) or float64. Invalid UTF-8 and lone surrogates in strings
// become U+FFFD, as with encoding/json.
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
	sc    *scratch // where pairs and elems came from (Decode)
	// boxes are the slabs the values of variables are boxed in (codec_box.go).
	boxes boxes
}

type pair struct {
	key string
	val any
}

// scratch is the pairs and elems stacks of a decoder, reused across Decode calls.
type scratch struct {
	pairs []pair
	elems []any
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxScratch is the most entries a pooled stack keeps; bigger ones are let go.
const maxScratch = 4096

func (d *decoder) getScratch() {
	d.sc = scratchPool.Get().(*scratch)
	d.pairs, d.elems = d.sc.pairs[:0], d.sc.elems[:0]
}

// putScratch returns the stacks to the pool, emptied: the decoder pops what it pushes
// and clears it, also on errors, so they hold no values.
func (d *decoder) putScratch() {
	sc := d.sc
	d.sc = nil
	if sc == nil || cap(d.pairs) > maxScratch || cap(d.elems) > maxScratch {
		return
	}
	clear(d.pairs[:cap(d.pairs)])
	clear(d.elems[:cap(d.elems)])
	sc.pairs, sc.elems = d.pairs[:0], d.elems[:0]
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

func (d *decoder) expect(c byte) error {
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return nil
	}
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
	if err := d.expect('{'); err != nil {
		return err
	}
	if b, err := d.next(); err != nil {
		return err
	} else if b == '}' {
		d.pos++
		return nil
	}
	// The keys seen so far, and a set of their lengths and last bytes: a key that is
	// not in the set is new without comparing it with every key before it.
	var seenBuf [16][]byte
	seen := seenBuf[:0]
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
			if seenSet&bit != 0 {
				for _, k := range seen {
					if string(k) == string(key) {
						return d.errorf("duplicate field %q", key)
					}
				}
			}
			seenSet |= bit
			seen = append(seen, key)
		}
		if err := d.expect(':'); err != nil {
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

// stringBytes parses a string. Without escapes or invalid UTF-8 the result aliases
// the input: copy it (string(...)) before keeping it.
func (d *decoder) stringBytes() ([]byte, error) {
	if err := d.expect('"'); err != nil {
		return nil, err
	}
	start := d.pos
	i := start
	// Eight bytes at a time up to the first quote, backslash, control character or
	// byte that is not ASCII; the loop below looks at that byte.
	for i+8 <= len(d.data) {
		if m := specialBytes(binary.LittleEndian.Uint64(d.data[i:])); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			break
		}
		i += 8
	}
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return d.data[start:i], nil
		case c == '\\' || c < 0x20:
			return d.stringSlow(start)
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && size == 1 {
				return d.stringSlow(start)
			}
			i += size
		}
	}
	d.pos = len(d.data)
	return nil, errTruncated
}

const (
	loBits = 0x0101010101010101
	hiBits = 0x8080808080808080
)

// specialBytes returns a mask whose lowest set bit is the high bit of the first byte
// (in little-endian order) of w that a string's fast path stops at: '"', '\\', a
// control character or a byte that is not ASCII; 0 if there is none. (Bits above the
// lowest may be set wrongly, by borrows: only the lowest counts.)
func specialBytes(w uint64) uint64 {
	q, b := w^(loBits*'"'), w^(loBits*'\\')
	return ((q-loBits)&^q | (b-loBits)&^b | (w-loBits*0x20)&^w | w) & hiBits
}

func (d *decoder) stringSlow(start int) ([]byte, error) {
	out := make([]byte, 0, len(d.data)-start)
	i := start
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return out, nil
		case c < 0x20:
			d.pos = i
			return nil, d.errorf("control character %#x in string", c)
		case c == '\\':
			if i+1 >= len(d.data) {
				d.pos = len(d.data)
				return nil, errTruncated
			}
			i++
			switch e := d.data[i]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, n, err := d.hex4(i + 1)
				if err != nil {
					return nil, err
				}
				i += n
				if utf16.IsSurrogate(r) {
					r2, n2, err := rune(-1), 0, error(nil)
					if i+2 < len(d.data) && d.data[i+1] == '\\' && d.data[i+2] == 'u' {
						if r2, n2, err = d.hex4(i + 3); err != nil {
							return nil, err
						}
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r, i = dec, i+2+n2
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				d.pos = i
				return nil, d.errorf("invalid escape \\%c", e)
			}
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(d.data[i:]) // invalid UTF-8 is U+FFFD
			out = utf8.AppendRune(out, r)
			i += size
		}
	}
	d.pos = len(d.data)
	return nil, errTruncated
}

// hex4 reads the four hex digits of a \u escape at i.
func (d *decoder) hex4(i int) (rune, int, error) {
	if i+4 > len(d.data) {
		d.pos = len(d.data)
		return 0, 0, errTruncated
	}
	var r rune
	for _, c := range d.data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			d.pos = i
			return 0, 0, d.errorf("invalid \\u escape")
		}
		r = r<<4 | rune(c)
	}
	return r, 4, nil
}

func (d *decoder) string() (string, error) {
	b, err := d.stringBytes()
	if err != nil {
		return "", err
	}
	return d.makeString(b), nil
}

// number parses a number: an int64 when it is an integer literal that fits, else a
// float64 (out of float64 range is an error).
func (d *decoder) number() (any, error) {
	n, f, isInt, err := d.num()
	switch {
	case err != nil:
		return nil, err
	case isInt:
		return d.boxInt(n), nil
	}
	return d.boxFloat(f), nil
}

// num parses a number: n when it is an integer literal that fits an int64 (isInt),
// else f.
func (d *decoder) num() (n int64, f float64, isInt bool, err error) {
	start := d.pos
	i := d.pos
	digits := func() bool {
		n := i
		for i < len(d.data) && '0' <= d.data[i] && d.data[i] <= '9' {
			i++
		}
		return i > n
	}
	if i < len(d.data) && d.data[i] == '-' {
		i++
	}
	if i >= len(d.data) {
		d.pos = i
		return 0, 0, false, errTruncated
	}
	if d.data[i] == '0' {
		i++
	} else if !digits() {
		d.pos = i
		return 0, 0, false, d.errorf("invalid number")
	}
	integral := true
	if i < len(d.data) && d.data[i] == '.' {
		integral = false
		i++
		if !digits() {
			d.pos = i
			if i >= len(d.data) {
				return 0, 0, false, errTruncated
			}
			return 0, 0, false, d.errorf("invalid number")
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		integral = false
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if !digits() {
			d.pos = i
			if i >= len(d.data) {
				return 0, 0, false, errTruncated
			}
			return 0, 0, false, d.errorf("invalid number")
		}
	}
	d.pos = i
	tok := d.data[start:i]
	if integral {
		if n, ok := smallInt(tok); ok {
			return n, 0, true, nil
		}
		if n, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
			return n, 0, true, nil
		}
	}
	f, err = strconv.ParseFloat(string(tok), 64)
	if err != nil || math.IsInf(f, 0) {
		d.pos = start
		return 0, 0, false, d.errorf("number %s out of range", tok)
	}
	return 0, f, false, nil
}

// smallInt converts an integer literal of at most 18 digits without allocating.
func smallInt(tok []byte) (int64, bool) {
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	if len(tok) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range tok {
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// int parses an integer literal into an int64 (null is 0).
func (d *decoder) int() (int64, error) {
	b, err := d.next()
	if err != nil {
		return 0, err
	}
	if b == 'n' {
		return 0, d.literal("null")
	}
	if b != '-' && (b < '0' || b > '9') {
		return 0, d.errorf("want an integer, found %q", b)
	}
	start := d.pos
	n, _, isInt, err := d.num()
	if err != nil {
		return 0, err
	}
	if !isInt {
		d.pos = start
		return 0, d.errorf("want an integer, found %s", d.data[start:start+min(24, len(d.data)-start)])
	}
	return n, nil
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
		return d.boxString(s), nil
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

// utcTime parses the form the encoder writes, RFC 3339 in UTC with up to nine digits
// of fraction ("2006-01-02T15:04:05.999999999Z"), as time.Time.UnmarshalText does,
// without its generality. Anything else, valid or not, is not ok, and left to
// UnmarshalText.
func utcTime(b []byte) (time.Time, bool) {
	if len(b) < 20 || len(b) == 21 || len(b) > 30 || b[len(b)-1] != 'Z' ||
		b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(s []byte) (int, bool) {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	year, ok1 := num(b[0:4])
	month, ok2 := num(b[5:7])
	day, ok3 := num(b[8:10])
	hour, ok4 := num(b[11:13])
	minute, ok5 := num(b[14:16])
	sec, ok6 := num(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(time.Month(month), year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	if len(b) > 20 { // a fraction: '.' and 1 to 9 digits
		if b[19] != '.' {
			return time.Time{}, false
		}
		frac := b[20 : len(b)-1]
		n, ok := num(frac)
		if !ok {
			return time.Time{}, false
		}
		for range 9 - len(frac) {
			n *= 10
		}
		nsec = n
	} else if b[19] != 'Z' {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

func daysIn(m time.Month, year int) int {
	if m == time.February {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 31 - int((m-1)%7%2)
}
