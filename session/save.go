package session

import (
	"context"
	"fmt"
)

// Save saves snap, a clear snapshot (one Load returned, or one a caller built), as the
// Runner saves the snapshots of its runs: redacted with its Redactor, sealed with its
// Cipher, with its expiry, expecting the stored version to be expected (0: the
// instance must not exist). It is for programs that record an instance without
// running it, such as a queue that records instances for workers to run, or a tool
// that marks a dead run failed, so that what they save is protected as the runs are.
//
// The variables snap.Redacted names hold masks, not values: they are left out of the
// save, as Resume leaves them out of its claim. On success snap carries the stored
// header (version, timestamps); its body is not changed. A sealed snapshot is an
// error: open it first (Load does).
func (r *Runner) Save(ctx context.Context, snap *Snapshot, expected int64) error {
	if snap == nil {
		return fmt.Errorf("session: save: nil snapshot")
	}
	if err := ValidateID(snap.Instance); err != nil {
		return fmt.Errorf("session: save: %w", err)
	}
	if snap.Sealed != nil {
		return fmt.Errorf("session: save %q: the snapshot is sealed: open it first", snap.Instance)
	}
	s := *snap
	if len(s.Redacted) > 0 {
		s.Vars, s.Redacted = unmasked(snap), nil
	}
	in := &instance{r: r}
	if err := in.save(ctx, &s, expected); err != nil {
		return fmt.Errorf("session: save %q: %w", snap.Instance, err)
	}
	snap.Format, snap.Version, snap.Created, snap.Updated, snap.Expires = s.Format, s.Version, s.Created, s.Updated, s.Expires
	return nil
}
