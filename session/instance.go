package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/flowteam/flowteam/flow"
)

// instance is the state of one Run or Resume: the snapshot it last saved and its
// version. Saves are serialized by mu (checkpoints arrive in order, but the final save
// may race a late checkpoint's error path).
type instance struct {
	r       *Runner
	mu      sync.Mutex
	snap    Snapshot // the clear snapshot last saved, header included
	version int64
	dropped []string
	// recyclable: snap's Vars, Trace.Last and Frontier were made for the save that
	// stored them (by a checkpoint, or by Run for its claim) and handed to the store,
	// so they may be recycled once a later save replaced them.
	recyclable bool
	// clear is the snapshot a save redacts, seals or drops variables from, reused
	// (guarded by mu), made by the first such save: a save with none of these saves
	// its argument (saveOwned), and an instance is smaller without it.
	clear *Snapshot
	// spareSnap is a Snapshot struct for a MemoryStore to fill and keep (the one
	// its last save replaced); spareFrontier is the frontier struct of a checkpoint
	// no one refers to any more.
	spareSnap     *Snapshot
	spareFrontier *flow.FrontierState
	// stored is the snapshot a MemoryStore kept at the last save that handed its
	// parts over: canonical, never modified; its maps are not recycled, nor is the
	// struct reused, until a later save replaced it.
	stored *Snapshot
	// varsDone: the variables of the checkpoint being saved were made canonical as
	// they were copied (copyVars), so the store need not look at them again.
	varsDone bool
}

// checkpoint returns the per-node checkpoint function: it saves the instance with the
// checkpoint's frontier and variables, status running. A failed save fails the run.
func (in *instance) checkpoint(fc *flow.Context) func(context.Context, flow.Checkpoint) error {
	return func(ctx context.Context, cp flow.Checkpoint) error {
		in.mu.Lock()
		defer in.mu.Unlock()
		// in.snap itself is saved, its body swapped for the checkpoint's and swapped
		// back if the save fails: copying the whole Snapshot to a scratch struct and
		// back would write all its pointers to the heap (see assign). A successful
		// save writes only the stamped header into it.
		s := &in.snap
		prevVars, prevTrace, prevFrontier := s.Vars, s.Trace, s.Frontier
		var f *flow.FrontierState
		if len(cp.Frontier.Tokens) > 0 { // else every branch has ended; the outcome follows
			f = in.spareFrontier
			if f == nil {
				f = new(flow.FrontierState)
			}
			in.spareFrontier = nil
			assignFrontier(f, &cp.Frontier) // the spare mostly holds the recycled slices
		}
		s.Frontier, s.Vars, s.Trace = f, cp.Vars, cp.Trace
		// The checkpoint's frontier, variables and trace were made for it (the
		// receiver owns them): the store may keep them instead of copying them.
		if err := in.saveOwned(ctx, s, in.version, true); err != nil {
			s.Vars, s.Trace, s.Frontier = prevVars, prevTrace, prevFrontier
			return err
		}
		recycle := in.recyclable && in.r.recycles()
		in.recyclable = true
		if recycle {
			// The previous checkpoint's maps were referred to by in.snap and by
			// the stored snapshot this save replaced, and by nothing else: the
			// engine may fill them at the next checkpoint.
			cp.Recycle(prevVars, prevTrace, prevFrontier)
			in.spareFrontier = prevFrontier
		}
		return nil
	}
}

// fusedVars reports whether checkpoints hand their variables to the store as they
// are copied (a MemoryStore, which keeps them, and no redaction, encryption or
// dropping, which would store other maps).
func (r *Runner) fusedVars() bool {
	_, memory := r.store.(*MemoryStore)
	return memory && r.redactor == nil && r.cipher == nil && !r.drop
}

// copyVars copies a checkpoint's variables (flow.WithCheckpointVars) as the
// MemoryStore will keep them: canonical (see canonicalOwned), with the values of the
// snapshot stored last where they are equal. It notes in varsDone whether every
// variable came out canonical. The engine calls it before the checkpoint function,
// one checkpoint at a time, which orders it with the saves that set in.stored.
//
// dst is empty or the Vars of an earlier checkpoint of this instance, recycled only
// after the store accepted it: its keys are valid UTF-8 and its values canonical and
// never modified (the store may still share them). So a variable whose value equals
// the one dst already holds needs neither a check nor a write, which is most of them
// from one node to the next; this is where per-node durability spends its time.
func (in *instance) copyVars(dst, src map[string]any) {
	var prev map[string]any
	if in.stored != nil {
		prev = in.stored.Vars
	}
	done := true
	for k, v := range src {
		old, had := dst[k]
		switch {
		case had && sameCanon(v, old):
			// A list or map changed in place since is not equal, and is copied.
			continue
		case !had && !validString(k):
			done = false
		case canonical(v):
		default:
			if pv, ok := prev[k]; ok && sameCanon(v, pv) {
				v = pv
			} else {
				done = false
			}
		}
		dst[k] = v
	}
	if len(dst) != len(src) {
		for k := range dst {
			if _, ok := src[k]; !ok {
				delete(dst, k)
			}
		}
	}
	in.varsDone = done
}

// recycles reports whether the store keeps nothing of a saved snapshot's maps after
// a later save of the instance (so a checkpoint's may be recycled): the stores of
// this package; another Store might keep them.
func (r *Runner) recycles() bool {
	switch r.store.(type) {
	case *MemoryStore, *FileStore, *RedisStore:
		return true
	}
	return false
}

// finish saves the outcome of a run.
func (in *instance) finish(ctx context.Context, fc *flow.Context, res *flow.Result, runErr error) (*Result, error) {
	if res == nil { // the run did not start
		return nil, errors.Join(runErr, in.markFailed(ctx, runErr))
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	s := in.snap
	s.Status, s.Reason, s.RunID = Status(res.Status), res.Reason, res.RunID()
	s.Vars, s.Trace, s.Frontier = fc.Vars(), fc.Trace(), nil
	if res.Frontier != nil {
		st := res.Frontier.State()
		s.Frontier = &st
	}
	s.Errors = slices.Clone(s.Errors)
	for _, ne := range res.Errors {
		rec := NewErrorRecord(ne)
		for _, ee := range res.ExecutionErrors { // the structured record of the same failure
			if ee.NodeID == ne.Node && ee.Path == ne.Path && ee.Step == ne.Step {
				rec.Type, rec.Severity = ee.Error.Type, string(ee.Severity)
				break
			}
		}
		s.Errors = append(s.Errors, rec)
	}
	out := &Result{Result: res, Context: fc}
	// A cancelled run is still saved: its outcome must not depend on the ctx that
	// ended it. The variables, trace and frontier were made for this save.
	err := in.saveOwned(context.WithoutCancel(ctx), &s, in.version, true)
	if err == nil {
		in.snap = s
	} else {
		err = fmt.Errorf("session: save outcome (%s) of instance %q: %w", res.Status, s.Instance, err)
	}
	out.Version, out.Dropped = in.version, in.dropped
	if err == nil {
		return out, runErr // as the engine returned it: Result.Err when the run failed
	}
	return out, errors.Join(runErr, err)
}

// claimNotDurable handles err, the error of a claim: one that was stored but not
// durably (ErrNotDurable) leaves the instance claimed by a run that will not start,
// so it is recorded as failed, with its frontier, as a run that could not start is:
// a later Resume then needs no Recover. Other errors are returned as they are.
func (in *instance) claimNotDurable(ctx context.Context, err error) error {
	if !errors.Is(err, ErrNotDurable) {
		return err
	}
	return errors.Join(err, in.markFailed(ctx, err))
}

// markFailed records a run that could not start as failed, keeping its frontier.
func (in *instance) markFailed(ctx context.Context, cause error) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	s := in.snap
	s.Status = StatusFailed
	if cause != nil {
		s.Errors = append(slices.Clone(s.Errors), ErrorRecord{Code: "run_failed", Message: cause.Error()})
	}
	return in.saveLocked(context.WithoutCancel(ctx), &s, in.version)
}

func (in *instance) save(ctx context.Context, s *Snapshot, expected int64) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.saveLocked(ctx, s, expected)
}

// saveNew is saveOwned with owned: s's Vars, Frontier and Trace.Last were made for
// this save.
func (in *instance) saveNew(ctx context.Context, s *Snapshot, expected int64) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.saveOwned(ctx, s, expected, true)
}

// saveLocked redacts, seals and saves s expecting version expected; on success
// in.version is the new version and s carries the stored header.
func (in *instance) saveLocked(ctx context.Context, s *Snapshot, expected int64) error {
	return in.saveOwned(ctx, s, expected, false)
}

// saveOwned is saveLocked; with owned, s's Vars map, Frontier and Trace.Last map are
// the caller's to give away (made for this save, never modified after): a
// MemoryStore keeps them instead of copying them. in.snap may go on reading them.
func (in *instance) saveOwned(ctx context.Context, s *Snapshot, expected int64, owned bool) error {
	r := in.r
	if r.cipher == nil && r.redactor == nil && !r.drop && s.Redacted == nil && s.Dropped == nil && r.recycles() {
		// Nothing to redact, seal or drop: the copy below would equal s. The stores
		// of this package write the stamped header into s only when the save
		// took effect, and keep no reference to it, so s itself is saved.
		err := in.store(ctx, s, expected, owned)
		if err == nil || errors.Is(err, ErrNotDurable) {
			// A save that is stored but not durable still fails the run, but the
			// next save (its outcome) must expect the version it stored.
			in.version = s.Version
		}
		return err
	}
	if in.clear == nil {
		in.clear = new(Snapshot)
	}
	clear := in.clear
	defer func() { *clear = Snapshot{} }() // keep no references
	*clear = *s
	clear.Redacted = nil
	if r.redactor != nil {
		redactSnapshot(clear, r.redactor.ForVars(s.Vars))
	}
	clear.Dropped = nil // what this save drops
	for attempt := 0; ; attempt++ {
		out := clear
		var err error
		if r.cipher != nil {
			if out, err = r.cipher.Seal(clear); err != nil {
				return err
			}
		}
		err = in.store(ctx, out, expected, owned && out == clear)
		// Retry once without the variables named: a name that is no variable
		// ("frontier", "trace") is a part dropping cannot mend, and a variable may
		// have that name too, so the names alone cannot tell.
		if u := dropped(err); u != nil && r.drop && attempt == 0 && namesVar(u.Names, clear.Vars) {
			vars := make(map[string]any, len(clear.Vars))
			for k, v := range clear.Vars {
				if !slices.Contains(u.Names, k) {
					vars[k] = v
				}
			}
			clear.Vars = vars
			clear.Dropped = append(slices.Clone(clear.Dropped), u.Names...)
			slices.Sort(clear.Dropped)
			clear.Dropped = slices.Compact(clear.Dropped)
			continue
		}
		if err != nil && !errors.Is(err, ErrNotDurable) {
			return err
		}
		// The store stamped out (durably or not: see above); keep the header and
		// the clear body.
		s.Format, s.Version, s.Created, s.Updated, s.Expires = out.Format, out.Version, out.Created, out.Updated, out.Expires
		s.Dropped = clear.Dropped
		for _, n := range clear.Dropped {
			if !slices.Contains(in.dropped, n) {
				in.dropped = append(in.dropped, n)
			}
		}
		in.version = out.Version
		return err
	}
}

// namesVar reports whether one of names is a variable of vars.
func namesVar(names []string, vars map[string]any) bool {
	for _, n := range names {
		if _, ok := vars[n]; ok {
			return true
		}
	}
	return false
}

// dropped returns the *UnserializableError in err, if any.
func dropped(err error) *UnserializableError {
	if err == nil {
		return nil
	}
	var u *UnserializableError
	if errors.As(err, &u) {
		return u
	}
	return nil
}

func (in *instance) store(ctx context.Context, s *Snapshot, expected int64, owned bool) error {
	r := in.r
	ms, memory := r.store.(*MemoryStore)
	if memory && owned {
		// in.stored, what the last save stored, lets the store keep values and
		// strings that did not change instead of copying or checking them again.
		varsDone := in.varsDone
		in.varsDone = false
		ttl := r.ttl
		if ttl == 0 { // no WithExpiry: the store's default, as its Save would apply
			ttl = ms.ttl
		}
		replaced, stored, err := ms.saveOwned(ctx, s, expected, ttl, in.spareSnap, in.stored, varsDone)
		if err == nil {
			in.spareSnap, in.stored = replaced, stored
		}
		return err
	}
	in.stored = nil
	if r.ttl > 0 {
		ts, ok := r.store.(TTLStore)
		if !ok {
			return fmt.Errorf("session: store %T cannot expire snapshots (WithExpiry needs a TTLStore)", r.store)
		}
		return ts.SaveTTL(ctx, s, expected, r.ttl)
	}
	return r.store.Save(ctx, s, expected)
}
