package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
)

// instance is the state of one Run or Resume: the snapshot it last saved and its
// version. Saves are serialized by mu (checkpoints arrive in order, but the final save
// may race a late checkpoint's error path).
type instance struct {
	r *Runner
	// red is the Redactor of the instance's saves when it is not the Runner's
	// (RedactorFor).
	red     *redact.Redactor
	mu      sync.Mutex
	snap    Snapshot // the clear snapshot last saved, header included
	version int64
	dropped []string
	// recyclable: snap's Vars, Trace.Last and Frontier were made for the save that
	// stored them (by a checkpoint, or by Run for its claim), so they may be
	// recycled once a later save replaced them.
	recyclable bool
	// clear is the snapshot a save redacts, seals or drops variables from, reused
	// (guarded by mu), made by the first such save: a save with none of these saves
	// its argument, and an instance is smaller without it.
	clear *Snapshot
	// lost is the error of a checkpoint whose effects were not made: no later save
	// may record its node as done (see checkpoint).
	lost error
}

// checkpoint returns the per-node checkpoint function: it saves the instance with the
// checkpoint's frontier and variables, status running, and makes the effects the
// node queued in the same atomic step (EffectStore). A failed save fails the run.
//
// Once a checkpoint carrying effects failed, its node must run again on resume, to
// make them: a later checkpoint (of a branch still running) would record the node
// as done, so it fails too, and the outcome keeps the last saved checkpoint's
// frontier and variables (see finish).
func (in *instance) checkpoint(fc *flow.Context) func(context.Context, flow.Checkpoint) error {
	return func(ctx context.Context, cp flow.Checkpoint) error {
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.lost != nil {
			return fmt.Errorf("session: an earlier checkpoint's effects were not made: %w", in.lost)
		}
		// in.snap itself is saved, its body swapped for the checkpoint's and swapped
		// back if the save fails. A successful save writes the stamped header into it.
		s := &in.snap
		prevVars, prevTrace, prevFrontier := s.Vars, s.Trace, s.Frontier
		var f *flow.FrontierState
		if len(cp.Frontier.Tokens) > 0 { // else every branch has ended; the outcome follows
			st := cp.Frontier
			f = &st
		}
		s.Frontier, s.Vars, s.Trace = f, cp.Vars, cp.Trace
		undoLease := in.extendLease(s) // this save renews it: see holdLease
		if err := in.saveLocked(ctx, s, in.version, cp.Effects); err != nil {
			s.Vars, s.Trace, s.Frontier = prevVars, prevTrace, prevFrontier
			undoLease()
			if len(cp.Effects) > 0 && !errors.Is(err, ErrNotDurable) { // not durable: saved, effects made
				in.lost = err
			}
			return err
		}
		if in.recyclable && in.r.recycles() {
			// The previous checkpoint's maps were referred to by in.snap alone (the
			// store encoded them): the engine may fill them at the next checkpoint.
			cp.Recycle(prevVars, prevTrace, prevFrontier)
		}
		in.recyclable = true
		return nil
	}
}

// recycles reports whether the store keeps nothing of a saved snapshot's maps (so a
// checkpoint's may be recycled): the stores of this package, which encode it;
// another Store might keep them.
func (r *Runner) recycles() bool {
	switch r.store.(type) {
	case *MemoryStore, *FileStore, *RedisStore:
		return true
	}
	return false
}

// finish saves the outcome of a run. After a checkpoint whose effects were not made
// (in.lost), the outcome keeps the frontier, variables and trace of the last saved
// checkpoint (in.snap's), not the run's, which has the node done: a resume runs the
// node again, and its effects with it, as after a crash.
func (in *instance) finish(ctx context.Context, fc *flow.Context, res *flow.Result, runErr error) (*Result, error) {
	if res == nil { // the run did not start
		return nil, errors.Join(runErr, in.markFailed(ctx, runErr))
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	s := in.snap
	s.Status, s.Reason, s.RunID, s.Lease = Status(res.Status), res.Reason, res.RunID(), nil
	if in.lost == nil {
		s.Vars, s.Trace, s.Frontier = fc.Vars(), fc.Trace(), nil
		if res.Frontier != nil {
			st := res.Frontier.State()
			s.Frontier = &st
		}
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
	// ended it.
	err := in.saveLocked(context.WithoutCancel(ctx), &s, in.version, nil)
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
	s.Status, s.Lease = StatusFailed, nil
	if cause != nil {
		s.Errors = append(slices.Clone(s.Errors), ErrorRecord{Code: "run_failed", Message: cause.Error()})
	}
	return in.saveLocked(context.WithoutCancel(ctx), &s, in.version, nil)
}

func (in *instance) save(ctx context.Context, s *Snapshot, expected int64) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.saveLocked(ctx, s, expected, nil)
}

// saveLocked redacts, seals and saves s expecting version expected, making effects
// (a checkpoint's, else nil) in the same step; on success in.version is the new
// version and s carries the stored header.
func (in *instance) saveLocked(ctx context.Context, s *Snapshot, expected int64, effects []any) error {
	r := in.r
	red := r.redactor
	if in.red != nil {
		red = in.red
	}
	if r.cipher == nil && red == nil && !r.drop && s.Redacted == nil && s.Dropped == nil && r.recycles() {
		// Nothing to redact, seal or drop: the copy below would equal s. The stores
		// of this package write the stamped header into s only when the save
		// took effect, and keep no reference to it, so s itself is saved.
		err := in.store(ctx, s, expected, effects)
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
	if red != nil {
		redactSnapshot(clear, red.ForVars(s.Vars))
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
		err = in.store(ctx, out, expected, effects)
		// Retry once without the variables named: a name that is no variable
		// ("frontier", "trace") is a part dropping cannot mend, and a variable may
		// have that name too, so the names alone cannot tell. The retry makes the
		// effects again: a save that cannot serialize its snapshot writes nothing.
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

// store saves s, with effects through the EffectStore (its SaveEffects takes the
// time to live too), else with the time to live through the TTLStore.
func (in *instance) store(ctx context.Context, s *Snapshot, expected int64, effects []any) error {
	r := in.r
	if len(effects) > 0 {
		es, ok := r.store.(EffectStore)
		if !ok {
			return fmt.Errorf("session: store %T is not an EffectStore: %w", r.store, ErrNoEffectStore)
		}
		return es.SaveEffects(ctx, s, expected, r.ttl, effects)
	}
	if r.ttl > 0 {
		ts, ok := r.store.(TTLStore)
		if !ok {
			return fmt.Errorf("session: store %T cannot expire snapshots (WithExpiry needs a TTLStore)", r.store)
		}
		return ts.SaveTTL(ctx, s, expected, r.ttl)
	}
	return r.store.Save(ctx, s, expected)
}
