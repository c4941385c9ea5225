package session

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestSmallDecimal holds the decoder's fast path for short decimals to
// strconv.ParseFloat, bit for bit (the sign of zero included), and checks that it
// takes every literal of up to 15 digits.
func TestSmallDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	lits := []string{"0.0", "-0.0", "0.1", "-0.5", "2.5", "9007199254740.993", "999999999999999.9", "0.000000000000001",
		"99999999999999.99", "1.7976931348623157", "123456789012345.6", "0.30000000000000004"}
	for range 300000 {
		n := 2 + r.IntN(17)
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteByte('-')
		}
		dot := 1 + r.IntN(n-1)
		for i := range n {
			if i == dot {
				b.WriteByte('.')
			}
			c := byte('0' + r.IntN(10))
			if i == 0 && dot > 1 && c == '0' {
				c = '1' // no leading zeros, as in JSON
			}
			b.WriteByte(c)
		}
		lits = append(lits, b.String())
	}
	for _, lit := range lits {
		dot := strings.IndexByte(lit, '.')
		got, ok := smallDecimal([]byte(lit), dot)
		want, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			t.Fatal(err)
		}
		digits := len(lit) - 1 - strings.Count(lit, "-")
		if ok != (digits <= 15) {
			t.Fatalf("%s: ok %v with %d digits", lit, ok, digits)
		}
		if ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: %v, ParseFloat %v", lit, got, want)
		}
	}
}

// TestNumbers reads literals of every form through the decoder and compares them
// with strconv.
func TestNumbers(t *testing.T) {
	for _, lit := range []string{"0", "-0", "7", "-12", "255", "256", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "0.5", "-0.0", "1e3", "1E+3", "2.5e-3", "-1.25E2", "123456789.123456789", "1e308"} {
		d := decoder{data: []byte(lit)}
		v, err := d.number()
		if err != nil || d.pos != len(lit) {
			t.Fatalf("%s: %v at %d", lit, err, d.pos)
		}
		if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
			if v != any(n) {
				t.Errorf("%s: %#v, want int64 %d", lit, v, n)
			}
			continue
		}
		f, _ := strconv.ParseFloat(lit, 64)
		if g, ok := v.(float64); !ok || math.Float64bits(g) != math.Float64bits(f) {
			t.Errorf("%s: %#v, want %v", lit, v, f)
		}
	}
	for _, lit := range []string{"-", "01x", "1.", "1.e3", "1e", "1e+", "-a", ".5", "1e400"} {
		d := decoder{data: []byte(lit)}
		if _, err := d.number(); err == nil && d.pos == len(lit) {
			t.Errorf("%s: accepted", lit)
		}
	}
}

// TestIntegralFloatsKeepTheirValue: an integral float64 or float32 within int64's
// range is written so that it reads back as the int64 of exactly its value (the
// shortest form of 2^60 is 1152921504606847000, another integer); others read back as
// the same float64, or for a float32 its shortest form.
func TestIntegralFloatsKeepTheirValue(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	read := func(b []byte) any {
		d := decoder{data: b}
		v, err := d.value(0)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return v
	}
	for range 100000 {
		f := math.Ldexp(float64(r.Int64N(1<<53)), r.IntN(75)-20)
		if r.IntN(2) == 0 {
			f = -f
		}
		b, err := appendFloat(nil, f, 64)
		if err != nil {
			t.Fatal(err)
		}
		got := read(b)
		switch {
		case f == math.Trunc(f) && math.Abs(f) < 1<<63:
			if n, ok := got.(int64); !ok || n != int64(f) {
				t.Fatalf("%v written as %s reads back as %#v, want int64 %d", f, b, got, int64(f))
			}
		default:
			if got != f {
				t.Fatalf("%v written as %s reads back as %#v", f, b, got)
			}
		}
		f32 := float32(f)
		if math.IsInf(float64(f32), 0) || float64(f32) != math.Trunc(float64(f32)) || math.Abs(float64(f32)) >= 1<<63 {
			continue
		}
		b, err = appendFloat(nil, float64(f32), 32)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := read(b), int64(f32); got != want {
			t.Fatalf("float32 %v written as %s reads back as %#v, want %d", f32, b, got, want)
		}
	}
}
