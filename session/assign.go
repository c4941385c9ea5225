package session

import (
	"time"

	"github.com/flowteam/flowteam/flow"
)

// Conditional assignment. The Runner and the MemoryStore keep a few Snapshot and
// FrontierState structs per instance and fill them again at every save of a run, at
// per-node durability after every node, mostly with what they already hold: the same
// header strings, the same recycled maps and slices. While the garbage collector
// marks, every pointer written to the heap goes through a write barrier, and copying
// a whole Snapshot writes its twenty-odd pointers (a bulk barrier, then flushing the
// barrier buffer). Writing only the fields that differ leaves a save with a handful of
// pointer writes. Equal contents count as the same: a string is not replaced by an
// equal one held elsewhere.

// assign makes d equal to s field by field, writing only the fields that differ.
// TestAssignCopiesEveryField holds it to *d = *s.
func (d *Snapshot) assign(s *Snapshot) {
	d.Format, d.Version = s.Format, s.Version
	setString(&d.Instance, s.Instance)
	setString(&d.Graph, s.Graph)
	setString(&d.Hash, s.Hash)
	setString((*string)(&d.Status), string(s.Status))
	setTime(&d.Created, s.Created)
	setTime(&d.Updated, s.Updated)
	setTime(&d.Expires, s.Expires)
	setSlice(&d.Sources, s.Sources)
	setString(&d.RunID, s.RunID)
	// Maps cannot be compared without reflection, which costs more than the write.
	d.Vars, d.Trace = s.Vars, s.Trace
	if d.Frontier != s.Frontier {
		d.Frontier = s.Frontier
	}
	setString(&d.Reason, s.Reason)
	setSlice(&d.Errors, s.Errors)
	setSlice(&d.Dropped, s.Dropped)
	setSlice(&d.Redacted, s.Redacted)
	setSlice(&d.Meta, s.Meta)
	setSlice(&d.Sealed, s.Sealed)
}

// assignFrontier makes d equal to s, writing only the fields that differ.
func assignFrontier(d *flow.FrontierState, s *flow.FrontierState) {
	setString(&d.Graph, s.Graph)
	setSlice(&d.Frames, s.Frames)
	setSlice(&d.Tokens, s.Tokens)
}

func setString(dst *string, s string) {
	if *dst != s {
		*dst = s
	}
}

// setTime compares the representation (==), not the instant (Equal): the location
// and the monotonic reading are kept exactly.
func setTime(dst *time.Time, t time.Time) {
	if *dst != t {
		*dst = t
	}
}

func setSlice[E any](dst *[]E, s []E) {
	if !sameSlice(*dst, s) {
		*dst = s
	}
}

// sameSlice reports whether a and b are the same slice: same array, length and
// capacity, and both nil or both not.
func sameSlice[E any](a, b []E) bool {
	if len(a) != len(b) || cap(a) != cap(b) || (a == nil) != (b == nil) {
		return false
	}
	return cap(a) == 0 || &a[:1][0] == &b[:1][0]
}
