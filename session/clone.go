package session

import (
	"slices"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// canonicalClone returns exactly what Decode(Encode(s)) returns, without writing JSON:
// the MemoryStore keeps and returns snapshots this way, so it costs a copy instead of
// an encode per save and a decode per load, and still behaves like the other stores
// (numbers become int64 or float64, values that cannot be serialized are errors
// naming them, nothing is shared with the caller). Plain values (nil, bool, integers,
// float64, valid UTF-8 strings, []any, map[string]any, []string, map[string]string)
// are converted here; anything else goes through the codec. FuzzCloneMatchesCodec
// (whose seeds run with go test) and TestValueRoundTrips hold the two to the same
// result.
func canonicalClone(s *Snapshot) (*Snapshot, error) { return canonicalize(s, false, nil, false) }

// canonicalOwned is canonicalClone for a snapshot that is handed over with its Vars
// map, Frontier and Trace.Last map (made for this save and never touched again by
// the caller): s itself is overwritten with the result, and those parts are converted
// in place and kept instead of copied. Values inside
// the variables and the loop items of the frontier are still copied (they may be
// shared with a running flow). On error the handed-over parts may have been partly
// converted: to what the codec would read back, so they still mean the same.
//
// hint (optional) is a canonical snapshot that nothing modifies, such as the one the
// previous save stored: a variable whose canonical form equals hint's value of the
// same name gets hint's value, which saves copying values that did not change, and
// strings equal to hint's in the same place need no check.
func canonicalOwned(s *Snapshot, hint *Snapshot) (*Snapshot, error) {
	return canonicalize(s, true, hint, false)
}

// noHint is the hint of a canonicalization without one.
var (
	noHint  = &Snapshot{Frontier: &flow.FrontierState{}}
	noFrame flow.FrameState
	noToken flow.TokenState
)

// canonicalize is canonicalClone or, with owned, canonicalOwned; with varsDone
// (owned only) the Vars map is canonical already and kept as it is.
func canonicalize(orig *Snapshot, owned bool, hint *Snapshot, varsDone bool) (*Snapshot, error) {
	c := orig
	if !owned {
		c = new(Snapshot)
	}
	if err := canonInto(c, orig, owned, hint, varsDone); err != nil {
		return nil, err
	}
	return c, nil
}

// canonInto is canonicalize writing the result to dst, which may be s itself (owned),
// a new Snapshot, or one that holds an earlier snapshot of the same instance (the
// MemoryStore's spare): the result is built on the stack and dst gets only the fields
// that differ (see assign), so refilling a spare writes few pointers. On error dst is
// unchanged (but owned parts of s may have been converted, see canonicalOwned).
func canonInto(dst, s *Snapshot, owned bool, hint *Snapshot, varsDone bool) error {
	var out Snapshot
	c := &out
	h := hint
	if h == nil {
		h = noHint
	}
	prev := h.Vars
	hf := h.Frontier
	if hf == nil {
		hf = noHint.Frontier
	}
	sources := h.Sources
	if !slices.Equal(s.Sources, sources) {
		sources = canonStrings(s.Sources)
	}
	var bad *UnserializableError
	fail := func(name string, err error) {
		if bad == nil {
			bad = &UnserializableError{Errs: map[string]error{}}
		}
		if _, dup := bad.Errs[name]; !dup { // named once, as the encoder does
			bad.Names = append(bad.Names, name)
		}
		bad.Errs[name] = err
	}
	*c = Snapshot{Format: s.Format, Instance: cs(s.Instance, h.Instance), Graph: cs(s.Graph, h.Graph), Hash: cs(s.Hash, h.Hash),
		Status: Status(cs(string(s.Status), string(h.Status))), Version: s.Version, Sources: sources,
		RunID: cs(s.RunID, h.RunID), Reason: cs(s.Reason, h.Reason), Dropped: canonStrings(s.Dropped), Redacted: canonStrings(s.Redacted),
		Meta: canonStrings(s.Meta)}
	var err error
	if c.Created, err = canonTime(s.Created); err != nil {
		return err
	}
	if c.Updated, err = canonTime(s.Updated); err != nil {
		return err
	}
	if !s.Expires.IsZero() {
		if c.Expires, err = canonTime(s.Expires); err != nil {
			return err
		}
	}
	if len(s.Vars) > 0 {
		if owned && varsDone {
			c.Vars = s.Vars
		} else if owned {
			c.Vars = s.Vars
			for k, v := range s.Vars {
				if !validString(k) {
					fail(k, errKey)
					continue
				}
				if canonical(v) {
					continue
				}
				if pv, ok := prev[k]; ok && sameCanon(v, pv) {
					s.Vars[k] = pv
					continue
				}
				cv, err := canonValue(v, 0)
				if err != nil {
					fail(k, err)
					continue
				}
				s.Vars[k] = cv // an existing key: allowed while ranging
			}
		} else {
			c.Vars = make(map[string]any, len(s.Vars))
			for k, v := range s.Vars {
				if !validString(k) {
					fail(k, errKey)
					continue
				}
				cv, err := canonValue(v, 0)
				if err != nil {
					fail(k, err)
					continue
				}
				c.Vars[k] = cv
			}
		}
	}
	if f := s.Frontier; f != nil {
		if owned {
			c.Frontier = f
			setString(&f.Graph, cs(f.Graph, hf.Graph))
		} else {
			c.Frontier = &flow.FrontierState{Graph: canonString(f.Graph)}
		}
		if f.Frames != nil {
			frames := f.Frames
			if !owned {
				frames = make([]flow.FrameState, len(f.Frames))
			}
			for i := range f.Frames {
				fr := &f.Frames[i] // not a copy: owned, most of it is not read
				hr := &noFrame
				if i < len(hf.Frames) {
					hr = &hf.Frames[i]
				}
				if owned {
					if err := canonFrameOwned(&frames[i], hr); err != nil {
						fail("frontier", err)
					}
					continue
				}
				cf := flow.FrameState{Kind: cs(fr.Kind, hr.Kind), Parent: fr.Parent, Call: fr.Call, Pending: fr.Pending,
					Branch: cs(fr.Branch, hr.Branch), Split: cs(fr.Split, hr.Split), Join: cs(fr.Join, hr.Join), Arrived: fr.Arrived,
					Policy: cs(fr.Policy, hr.Policy), Loop: cs(fr.Loop, hr.Loop), Index: fr.Index, Closing: cs(fr.Closing, hr.Closing),
					Graph: cs(fr.Graph, hr.Graph), Path: cs(fr.Path, hr.Path), Node: cs(fr.Node, hr.Node), Caller: fr.Caller,
					Failed: canonFailed(fr.Failed)}
				if len(fr.Items) > 0 {
					items, err := canonValue(fr.Items, 0)
					if err != nil {
						fail("frontier", err)
					} else {
						cf.Items = items.([]any)
					}
				}
				frames[i] = cf
			}
			setSlice(&c.Frontier.Frames, frames)
		}
		if f.Tokens != nil {
			tokens := f.Tokens
			if !owned {
				tokens = make([]flow.TokenState, len(f.Tokens))
			}
			for i, t := range f.Tokens {
				ht := &noToken
				if i < len(hf.Tokens) {
					ht = &hf.Tokens[i]
				}
				if owned { // in place, mostly without a write
					ct := &tokens[i]
					canonIn(&ct.Node, ht.Node)
					canonIn(&ct.Mode, ht.Mode)
					canonIn(&ct.Branch, ht.Branch)
				} else {
					tokens[i] = flow.TokenState{Node: cs(t.Node, ht.Node), Mode: cs(t.Mode, ht.Mode), Frame: t.Frame, Branch: cs(t.Branch, ht.Branch),
						Arrivals: t.Arrivals}
				}
				if t.Error != nil { // copied: the engine may still hold it
					se := canonStructured(*t.Error)
					tokens[i].Error = &se
				}
			}
			setSlice(&c.Frontier.Tokens, tokens)
		}
	}
	if s.Trace.Last != nil {
		// Owned, the map is kept and its records converted in place, unless a path
		// needs converting: then the records converted so far are converted again
		// (to themselves) into a new map.
		kept := owned
		if owned {
			var errs []error // reported once the map is known to be kept
			c.Trace.Last = s.Trace.Last
			for p, r := range s.Trace.Last {
				if !validString(p) {
					kept = false
					break
				}
				t, err := canonTime(r.Time)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				cr := trace.NodeRecord{Path: canonString(r.Path), GraphID: canonString(r.GraphID),
					NodeID: canonString(r.NodeID), NodeType: canonString(r.NodeType), Title: canonString(r.Title), Time: t}
				if cr != r { // a time with a monotonic reading, mostly: no write otherwise
					s.Trace.Last[p] = cr
				}
			}
			for _, err := range errs {
				if kept {
					fail("trace", err)
				}
			}
		}
		if !kept {
			c.Trace.Last = make(map[string]trace.NodeRecord, len(s.Trace.Last))
			for p, r := range s.Trace.Last {
				t, err := canonTime(r.Time)
				if err != nil {
					fail("trace", err)
					continue
				}
				cp := canonString(p)
				if _, dup := c.Trace.Last[cp]; dup {
					fail("trace", errTraceKeys)
				}
				c.Trace.Last[cp] = trace.NodeRecord{Path: canonString(r.Path), GraphID: canonString(r.GraphID),
					NodeID: canonString(r.NodeID), NodeType: canonString(r.NodeType), Title: canonString(r.Title), Time: t}
			}
		}
	}
	if len(s.Errors) > 0 {
		c.Errors = make([]ErrorRecord, len(s.Errors))
		for i, r := range s.Errors {
			c.Errors[i] = ErrorRecord{Code: canonString(r.Code), Node: canonString(r.Node), Graph: canonString(r.Graph),
				Path: canonString(r.Path), Branch: canonString(r.Branch), Step: r.Step, Message: canonString(r.Message),
				Type: canonString(r.Type), Severity: canonString(r.Severity)}
		}
	}
	if s.Sealed != nil {
		c.Sealed = slices.Clone(s.Sealed)
	}
	if bad != nil {
		slices.Sort(bad.Names)
		return bad
	}
	dst.assign(c)
	return nil
}

// canonFrameOwned converts an owned frame in place as canonInto converts a copy
// (hr is the hint's frame in the same place), writing only what changes: the
// engine's frames mostly hold the same strings from one checkpoint to the next.
func canonFrameOwned(fr, hr *flow.FrameState) error {
	canonIn(&fr.Kind, hr.Kind)
	canonIn(&fr.Branch, hr.Branch)
	canonIn(&fr.Split, hr.Split)
	canonIn(&fr.Join, hr.Join)
	canonIn(&fr.Policy, hr.Policy)
	canonIn(&fr.Loop, hr.Loop)
	canonIn(&fr.Closing, hr.Closing)
	canonIn(&fr.Graph, hr.Graph)
	canonIn(&fr.Path, hr.Path)
	canonIn(&fr.Node, hr.Node)
	if fr.Failed != nil {
		fr.Failed = canonFailed(fr.Failed)
	}
	if len(fr.Items) == 0 {
		if fr.Items != nil {
			fr.Items = nil // as the codec reads an empty list back (omitempty)
		}
		return nil
	}
	items, err := canonValue(fr.Items, 0) // copied: the engine's loop may still hold them
	if err != nil {
		return err
	}
	fr.Items = items.([]any)
	return nil
}

// canonFailed returns a canonical copy of a split frame's failed branches (nil for
// none, as the codec reads an omitted list back). It copies even when owned: the
// failures are rare, and a copy shares nothing with whoever built the state.
func canonFailed(l []flow.FailedBranch) []flow.FailedBranch {
	if len(l) == 0 {
		return nil
	}
	c := make([]flow.FailedBranch, len(l))
	for i, b := range l {
		c[i] = flow.FailedBranch{Node: canonString(b.Node), Branch: canonString(b.Branch), Error: canonStructured(b.Error)}
	}
	return c
}

// canonStructured returns se with its strings canonical.
func canonStructured(se flow.StructuredError) flow.StructuredError {
	return flow.StructuredError{Type: canonString(se.Type), Code: canonString(se.Code), Message: canonString(se.Message)}
}
