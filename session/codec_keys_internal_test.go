package session

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestObjectDuplicateKeys holds the duplicate check of objects (key signatures, long
// keys in full) to a map of the decoded keys: for random objects with keys of every
// length around the signature's limits, written plainly or with escapes (so equal
// keys differ in the input), nested objects between them, an object is rejected
// exactly when a decoded key repeats, and the error names it.
func TestObjectDuplicateKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	key := func() string { // mostly 'a', so that keys differ in one byte only
		n := []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 24}[r.IntN(10)]
		b := []byte(strings.Repeat("a", n))
		if n > 0 && r.IntN(4) > 0 {
			b[r.IntN(n)] = 'b'
		}
		if r.IntN(8) == 0 {
			b = append(b, "\u00e9"...)
		}
		return string(b)
	}
	write := func(k string) string { // JSON, escaping some bytes at random
		var b strings.Builder
		b.WriteByte('"')
		for _, c := range k {
			if c < 0x80 && r.IntN(4) == 0 {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteRune(c)
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	for range 20000 {
		keys := make([]string, 1+r.IntN(20))
		pool := make([]string, 1+r.IntN(len(keys)+2))
		for i := range pool {
			pool[i] = key()
		}
		var js strings.Builder
		js.WriteByte('{')
		want, dup := "", false
		seen := map[string]bool{}
		for i := range keys {
			keys[i] = pool[r.IntN(len(pool))]
			if seen[keys[i]] && !dup {
				want, dup = keys[i], true
			}
			seen[keys[i]] = true
			if i > 0 {
				js.WriteByte(',')
			}
			js.WriteString(write(keys[i]) + ":")
			if r.IntN(4) == 0 {
				js.WriteString(`{"a":1,"b":{"a":2}}`) // nested keys must not count
			} else {
				js.WriteString("0")
			}
		}
		js.WriteByte('}')
		d := decoder{data: []byte(js.String())}
		d.getScratch()
		n := 0
		var field func(key []byte) error
		field = func(key []byte) error {
			n++
			if b, _ := d.next(); b == '{' {
				return d.object(true, func([]byte) error {
					if b, _ := d.next(); b == '{' {
						return d.object(true, func([]byte) error { _, err := d.value(0); return err })
					}
					_, err := d.value(0)
					return err
				})
			}
			_, err := d.value(0)
			return err
		}
		err := d.object(true, field)
		if len(d.sigs) != 0 {
			t.Fatalf("%s: %d keys left on the stack", js.String(), len(d.sigs))
		}
		d.putScratch()
		if !dup {
			if err != nil || n != len(keys) {
				t.Fatalf("%s: %v after %d of %d keys", js.String(), err, n, len(keys))
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("duplicate field %q", want)) {
			t.Fatalf("%s: %v, want duplicate %q", js.String(), err, want)
		}
	}
}
