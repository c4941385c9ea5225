package session

import (
	"slices"
	"unsafe"
)

// readable returns the error Decode would give for data, what encoding/json wrote
// for a value at depth (valid JSON, compacted, its UTF-8 repaired): a repeated key
// (also two keys that are one once decoded, such as two lone surrogates), a number
// beyond float64's range, or nesting deeper than maxDepth. It is d.value without
// building the value: decoding a megabyte of a struct's JSON only to check it made
// a save allocate thirteen times the struct's encoding, one map, slice and string at
// a time. Strings that are not keys are skipped, not decoded: encoding/json checked
// their syntax, and their UTF-8 is repaired. Keys are kept on d.keys while their
// object is read.
func (d *decoder) readable(depth int) error {
	if depth > maxDepth {
		return d.errorf("values nested more than %d levels deep", maxDepth)
	}
	b, err := d.next()
	if err != nil {
		return err
	}
	switch {
	case b == '"':
		return d.skipString()
	case b == '{':
		base := len(d.keys)
		err := d.object(false, func(key []byte) error {
			if len(d.keys) == cap(d.keys) {
				// Doubled: grown a quarter at a time, the keys of a map of 50,000
				// entries allocated seven times its JSON.
				d.keys = slices.Grow(d.keys, max(len(d.keys), 16))
			}
			// The key aliases data (or its unescaped copy), which outlives the check.
			d.keys = append(d.keys, unsafe.String(unsafe.SliceData(key), len(key)))
			return d.readable(depth + 1)
		})
		if err == nil {
			err = d.uniqueKeys(d.keys[base:])
		}
		d.keys = d.keys[:base]
		return err
	case b == '[':
		return d.array(func() error { return d.readable(depth + 1) })
	case b == 't':
		return d.literal("true")
	case b == 'f':
		return d.literal("false")
	case b == 'n':
		return d.literal("null")
	case b == '-' || '0' <= b && b <= '9':
		return d.numberInRange()
	}
	return d.errorf("unexpected %q", b)
}

// uniqueKeys returns the error for an object whose keys repeat one. encoding/json
// writes a map's keys sorted, so that case costs one pass; others (a struct's
// fields, a MarshalJSON's output) are sorted in place.
func (d *decoder) uniqueKeys(keys []string) error {
	if !slices.IsSorted(keys) {
		slices.Sort(keys)
	}
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			return d.errorf("duplicate key %q", keys[i])
		}
	}
	return nil
}

// skipString moves past a string whose opening quote is at d.pos; encoding/json
// checked its escapes.
func (d *decoder) skipString() error {
	end := rawStringEnd(d.data, d.pos+1)
	if end < 0 {
		d.pos = len(d.data)
		return errTruncated
	}
	d.pos = end + 1
	return nil
}

// numberInRange moves past a number, an error if Decode would find it beyond
// float64's range. Only a number with an exponent or of more than 308 characters
// can be: others are parsed as Decode does only then, as most numbers of a large
// value would otherwise cost a conversion each.
func (d *decoder) numberInRange() error {
	start := d.pos
	i := start
	for i < len(d.data) && (d.data[i] == '-' || d.data[i] == '.' || '0' <= d.data[i] && d.data[i] <= '9') {
		i++
	}
	if i-start <= 308 && (i == len(d.data) || d.data[i] != 'e' && d.data[i] != 'E') {
		d.pos = i
		return nil
	}
	_, _, _, err := d.num()
	return err
}
