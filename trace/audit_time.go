// Record times and numbers as the audit's JSON encoding writes them.

package trace

import (
	"strconv"
	"time"
)

// PutTime writes t into b[:TimeLen] as Append writes a record time, and reports
// whether it could: a time before 1970 or after 9999 has another length and is not
// written.
func (e *Encoder) PutTime(b []byte, t time.Time) bool {
	return e.PutUnix(b, t.Unix(), int64(t.Nanosecond()))
}

// PutUnix is PutTime for the time sec seconds plus nsec nanoseconds after the Unix
// epoch; nsec may be any value, so a caller can add an offset to a base time without
// going through time.Time.
func (e *Encoder) PutUnix(b []byte, sec, nsec int64) bool {
	if nsec < 0 || nsec >= 1e9 {
		q := nsec / 1e9
		if nsec%1e9 < 0 {
			q--
		}
		sec, nsec = sec+q, nsec-q*1e9
	}
	if sec < 0 || sec > maxSecs || len(b) < TimeLen {
		return false
	}
	e.putTime((*[TimeLen]byte)(b), sec, uint32(nsec))
	return true
}

const maxSecs = 253402300799 // 9999-12-31T23:59:59Z

// appendTime writes t in UTC as "2006-01-02T15:04:05.000000000Z" (RFC 3339 with a
// fixed nine-digit fraction, which time.Parse and encoding/json read back).
func (e *Encoder) appendTime(dst []byte, t time.Time) []byte {
	secs := t.Unix()
	if secs < 0 || secs > maxSecs {
		return t.UTC().AppendFormat(dst, time.RFC3339Nano)
	}
	var b [TimeLen]byte
	e.putTime(&b, secs, uint32(t.Nanosecond()))
	return append(dst, b[:]...)
}

// putTime writes the time secs (in [0, maxSecs]) plus ns into b.
func (e *Encoder) putTime(b *[TimeLen]byte, secs int64, ns uint32) {
	if secs+1 != e.secs {
		e.secs = secs + 1
		days, rem := secs/86400, int(secs%86400)
		y, mo, d := civil(days)
		b := &e.date
		put4(b[0:], y)
		b[4] = '-'
		put2(b[5:], mo)
		b[7] = '-'
		put2(b[8:], d)
		b[10] = 'T'
		put2(b[11:], rem/3600)
		b[13] = ':'
		put2(b[14:], rem/60%60)
		b[16] = ':'
		put2(b[17:], rem%60)
	}
	*(*[19]byte)(b[:19]) = e.date // a fixed-size copy: no memmove call
	b[19] = '.'
	b[20] = byte('0' + ns/1e8)
	ns %= 1e8
	put2(b[21:], int(ns/1e6))
	ns %= 1e6
	put2(b[23:], int(ns/1e4))
	ns %= 1e4
	put2(b[25:], int(ns/100))
	put2(b[27:], int(ns%100))
	b[29] = 'Z'
}

// civil converts days since 1970-01-01 (non-negative) to a proleptic Gregorian date
// (Howard Hinnant's days_from_civil inverse), without the time package's general
// calendar code.
func civil(days int64) (year, month, day int) {
	z := days + 719468
	era := z / 146097
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100) // [0, 365]
	mp := (5*doy + 2) / 153                  // [0, 11]
	d := doy - (153*mp+2)/5 + 1              // [1, 31]
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return int(y), int(m), int(d)
}

const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

func put2(b []byte, v int) { b[0], b[1] = pairs[2*v], pairs[2*v+1] }

func put4(b []byte, v int) {
	b[0], b[1], b[2], b[3] = byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10)
}

// appendInt appends v in decimal, as strconv.AppendInt(dst, v, 10) does, with less
// overhead for the small numbers records carry (sequence numbers, steps, durations).
func appendInt(dst []byte, v int64) []byte {
	switch {
	case v < 0:
		return strconv.AppendInt(dst, v, 10)
	case v < 10:
		return append(dst, byte('0'+v))
	case v < 100:
		return append(dst, pairs[2*v], pairs[2*v+1])
	}
	var b [20]byte
	i := putUint(&b, uint64(v))
	return append(dst, b[i:]...)
}

// putUint writes u in decimal at the end of b and returns the index of its first
// digit.
func putUint(b *[20]byte, u uint64) int {
	i := len(b)
	for u >= 100 {
		q := u / 100
		r := u - q*100
		i -= 2
		b[i], b[i+1] = pairs[2*r], pairs[2*r+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		b[i], b[i+1] = pairs[2*u], pairs[2*u+1]
	} else {
		i--
		b[i] = byte('0' + u)
	}
	return i
}
