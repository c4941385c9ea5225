package session

import (
	"reflect"
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
	if !sameMap(d.Vars, s.Vars) {
		d.Vars = s.Vars
	}
	if d.Frontier != s.Frontier {
		d.Frontier = s.Frontier
	}
	if !sameMap(d.Trace.Last, s.Trace.Last) {
		d.Trace = s.Trace
	}
	setString(&d.Reason, s.Reason)
	setSlice(&d.Errors, s.Errors)
	setSlice(&d.Dropped, s.Dropped)
	setSlice(&d.Redacted, s.Redacted)
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

// sameMap reports whether a and b are the same map (or both nil).
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

// assignFrame makes d equal to s, writing only the fields that differ.
// TestAssignCopiesEveryField holds it to *d = *s.
func assignFrame(d, s *flow.FrameState) {
	d.Parent, d.Call, d.Pending, d.Arrived, d.Index, d.Caller = s.Parent, s.Call, s.Pending, s.Arrived, s.Index, s.Caller
	setString(&d.Kind, s.Kind)
	setString(&d.Branch, s.Branch)
	setString(&d.Split, s.Split)
	setString(&d.Join, s.Join)
	setString(&d.Policy, s.Policy)
	setString(&d.Loop, s.Loop)
	setSlice(&d.Items, s.Items)
	setString(&d.Closing, s.Closing)
	setString(&d.Graph, s.Graph)
	setString(&d.Path, s.Path)
	setString(&d.Node, s.Node)
}
