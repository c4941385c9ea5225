package session

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The decoder's scanning of JSON strings, numbers and UTC times (codec_decode.go reads
// the snapshot's structure with them).

// stringBytes parses a string; the caller has seen its opening quote at d.pos.
// Without escapes the result aliases the input: copy it (string(...)) before keeping
// it. Bytes that are not valid UTF-8 are an error.
func (d *decoder) stringBytes() ([]byte, error) {
	b, _, err := d.scanString()
	return b, err
}

// scanString is stringBytes, also reporting whether the bytes are a buffer of their
// own (the string has escapes) rather than the input.
func (d *decoder) scanString() ([]byte, bool, error) {
	d.pos++
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
			return d.data[start:i], false, nil
		case c == '\\' || c < 0x20:
			b, err := d.stringSlow(start)
			return b, true, err
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && size == 1 {
				b, err := d.stringSlow(start)
				return b, true, err
			}
			i += size
		}
	}
	d.pos = len(d.data)
	return nil, false, errTruncated
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
	// Room for the string as written, which unescaped takes no more: grown from a
	// short start, a long string was copied at every growth. Not room for the rest
	// of the input, which made a snapshot of many escaped strings cost time and
	// memory quadratic in its size. (Without its end in sight the string is truncated
	// or invalid, and the loop below says which.)
	n := 64
	if end := rawStringEnd(d.data, start); end >= 0 {
		n = end - start
	}
	out := make([]byte, 0, min(len(d.data)-start, n))
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
			r, size := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && size == 1 {
				// The encoder writes valid UTF-8 only: this is damage, not text.
				d.pos = i
				return nil, d.errorf("invalid UTF-8 in string")
			}
			out = append(out, d.data[i:i+size]...)
			i += size
		}
	}
	d.pos = len(d.data)
	return nil, errTruncated
}

// rawStringEnd returns the index of the quote that ends the string starting at start
// (after its opening quote) in data, or -1: the first quote not escaped by an odd
// number of backslashes.
func rawStringEnd(data []byte, start int) int {
	for i := start; ; {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return -1
		}
		i += q
		n := 0
		for i-1-n >= start && data[i-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return i
		}
		i++
	}
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
	b, owned, err := d.scanString()
	if err != nil {
		return "", err
	}
	if owned && len(b) > arenaMax && cap(b)-len(b) <= len(b)/8 {
		// The unescaped bytes are a buffer of their own, sized for the string as
		// written: kept as the string, a long text is not copied a second time, unless
		// its escapes were so many that most of the buffer would be kept for nothing.
		return unsafe.String(unsafe.SliceData(b), len(b)), nil
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
		return n, nil
	}
	return f, nil
}

// num parses a number: n when it is an integer literal that fits an int64 (isInt),
// else f.
func (d *decoder) num() (n int64, f float64, isInt bool, err error) {
	data := d.data
	start := d.pos
	i := start
	if i < len(data) && data[i] == '-' {
		i++
	}
	if i >= len(data) {
		d.pos = i
		return 0, 0, false, errTruncated
	}
	if data[i] == '0' {
		i++
	} else if j := digits(data, i); j == i {
		d.pos = i
		return 0, 0, false, d.errorf("invalid number")
	} else {
		i = j
	}
	intEnd := i // the end of the integral part, and of the mantissa's digits
	fracEnd := i
	if i < len(data) && data[i] == '.' {
		fracEnd = digits(data, i+1)
		if fracEnd == i+1 {
			d.pos = fracEnd
			if fracEnd >= len(data) {
				return 0, 0, false, errTruncated
			}
			return 0, 0, false, d.errorf("invalid number")
		}
		i = fracEnd
	}
	exp := false
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		exp = true
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		e := digits(data, i)
		if e == i {
			d.pos = i
			if i >= len(data) {
				return 0, 0, false, errTruncated
			}
			return 0, 0, false, d.errorf("invalid number")
		}
		i = e
	}
	d.pos = i
	tok := data[start:i]
	if fracEnd == intEnd && !exp {
		if n, ok := smallInt(tok); ok {
			return n, 0, true, nil
		}
		if n, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
			return n, 0, true, nil
		}
	} else if !exp {
		if f, ok := smallDecimal(tok, intEnd-start); ok {
			return 0, f, false, nil
		}
	}
	f, err = strconv.ParseFloat(string(tok), 64)
	if err != nil || math.IsInf(f, 0) {
		d.pos = start
		return 0, 0, false, d.errorf("number %s out of range", tok)
	}
	return 0, f, false, nil
}

// digits returns the index of the first byte at or after i that is not a digit.
func digits(data []byte, i int) int {
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		i++
	}
	return i
}

// pow10 are the powers of ten up to the most digits of a smallDecimal.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// smallDecimal converts a valid literal with a fraction and no exponent ("-12.5"),
// whose integral part is the first dot bytes, when it has at most 15 digits in all:
// the digits as an integer and the power of ten are then exact float64s, and one
// division rounds correctly, so the result is strconv.ParseFloat's (Clinger's fast
// path). Otherwise it is not ok.
func smallDecimal(tok []byte, dot int) (float64, bool) {
	neg := tok[0] == '-'
	frac := len(tok) - dot - 1
	if len(tok)-1-b2i(neg) > 15 {
		return 0, false
	}
	var m uint64
	for _, c := range tok {
		if c >= '0' {
			m = m*10 + uint64(c-'0')
		}
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
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
