package session

// Boxing: a variable is an any, and a string, int64, float64 or []any put into an any
// is copied to the heap, one allocation per value. That is left to the compiler. (An
// earlier version wrote interface values by hand to point into shared slabs of
// strings, integers and slice headers: it saved a few allocations per snapshot but
// depended on the runtime's private layout of interfaces, which no compatibility
// promise covers.)
//
// What is shared here is plain Go: the backing arrays of the []any values of one
// Decode are cut from larger arrays, each with its capacity equal to its length, so
// that appending to one reallocates it rather than writing into the next.

// An elems slab holds firstSlab elements, each next one twice as many as the one
// before, up to maxSlab, and never more than the input left can hold.
const (
	firstSlab = 8
	maxSlab   = 64
)

// boxes holds the decoder's slab of []any elements.
type boxes struct {
	elems []any
}

// slabCap is the capacity of the next slab after one of capacity prev, when left
// bytes of input remain and a value takes at least size bytes of it.
func slabCap(prev, left, size int) int {
	return max(1, min(max(firstSlab, 2*prev), maxSlab, left/size+1))
}

// boxSlice returns a []any holding elems (copied), boxed. Its capacity is its length,
// so appending to it never writes into the slab.
func (d *decoder) boxSlice(elems []any) any {
	n := len(elems)
	if n == 0 {
		return []any{}
	}
	if n > maxSlab {
		return append([]any(nil), elems...)[:n:n]
	}
	b := &d.boxes
	if cap(b.elems)-len(b.elems) < n {
		b.elems = make([]any, 0, max(n, slabCap(cap(b.elems), len(d.data)-d.pos, 2)))
	}
	start := len(b.elems)
	b.elems = append(b.elems, elems...)
	return b.elems[start:len(b.elems):len(b.elems)]
}
