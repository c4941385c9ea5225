package session

import "unsafe"

// Boxing: a variable is an any, and putting a string, an int64 or a float64 (or a
// []any) into an any allocates a copy of it on the heap, one allocation per value,
// which is most of a snapshot's. The decoder boxes them into slabs instead: the
// values are written into a slice that holds many of them, and the any points to its
// element. Such an any is exactly what the compiler makes (the type of its dynamic
// value and a pointer to an immutable copy of it); only the copy lives in a shared
// block, like the arena's strings. A kept value keeps its slab alive.

// eface is the layout of an any (internal/abi.EmptyInterface).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	stringType = typeOf("")
	int64Type  = typeOf(int64(0))
	floatType  = typeOf(float64(0))
	sliceType  = typeOf([]any(nil))
)

// box returns the any of dynamic type typ whose value is at p. p must point to a
// value of that type that is never modified.
func box(typ, p unsafe.Pointer) any {
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, p
	return v
}

// A slab holds firstSlab values, each next one of a kind twice as many as the one
// before, up to maxSlab, and never more than the input left can hold.
const (
	firstSlab = 8
	maxSlab   = 64
)

// boxes holds the decoder's slabs.
type boxes struct {
	strings []string
	ints    []int64
	floats  []float64
	slices  [][]any
	elems   []any // backing arrays of []any values
}

// slabCap is the capacity of the next slab after one of capacity prev, when left
// bytes of input remain and a value takes at least size bytes of it.
func slabCap(prev, left, size int) int {
	return max(1, min(max(firstSlab, 2*prev), maxSlab, left/size+1))
}

func (d *decoder) boxString(s string) any {
	if len(s) == 0 {
		return "" // the compiler's boxed "" does not allocate
	}
	b := &d.boxes
	if len(b.strings) == cap(b.strings) {
		b.strings = make([]string, 0, slabCap(cap(b.strings), len(d.data)-d.pos, 3))
	}
	b.strings = append(b.strings, s)
	return box(stringType, unsafe.Pointer(&b.strings[len(b.strings)-1]))
}

func (d *decoder) boxInt(n int64) any {
	if 0 <= n && n < 256 {
		return n // boxed without allocating by the runtime
	}
	b := &d.boxes
	if len(b.ints) == cap(b.ints) {
		b.ints = make([]int64, 0, slabCap(cap(b.ints), len(d.data)-d.pos, 4))
	}
	b.ints = append(b.ints, n)
	return box(int64Type, unsafe.Pointer(&b.ints[len(b.ints)-1]))
}

func (d *decoder) boxFloat(f float64) any {
	b := &d.boxes
	if len(b.floats) == cap(b.floats) {
		b.floats = make([]float64, 0, slabCap(cap(b.floats), len(d.data)-d.pos, 4))
	}
	b.floats = append(b.floats, f)
	return box(floatType, unsafe.Pointer(&b.floats[len(b.floats)-1]))
}

// boxSlice returns a []any holding elems (copied), boxed. Its capacity is its length,
// so appending to it never writes into the slab.
func (d *decoder) boxSlice(elems []any) any {
	b := &d.boxes
	n := len(elems)
	var a []any
	if n > 0 {
		if cap(b.elems)-len(b.elems) < n {
			if n > maxSlab {
				a = make([]any, n)
			} else {
				b.elems = make([]any, 0, max(n, slabCap(cap(b.elems), len(d.data)-d.pos, 2)))
			}
		}
		if a == nil {
			start := len(b.elems)
			b.elems = append(b.elems, elems...)
			a = b.elems[start:len(b.elems):len(b.elems)]
		} else {
			copy(a, elems)
		}
	} else {
		a = []any{}
	}
	if len(b.slices) == cap(b.slices) {
		b.slices = make([][]any, 0, slabCap(cap(b.slices), len(d.data)-d.pos, 4))
	}
	b.slices = append(b.slices, a)
	return box(sliceType, unsafe.Pointer(&b.slices[len(b.slices)-1]))
}
