package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"
)

// Default lease timing of a Runner (see WithLease).
const (
	DefaultLeaseRenew = 5 * time.Second
	DefaultLeaseTTL   = 30 * time.Second
)

// ErrLeaseLost is the cause of the cancellation of a run whose owner could not renew
// its lease because another process took the instance over (its lease had expired,
// as when the owner was paused or cut off from the store for longer than the lease).
var ErrLeaseLost = errors.New("lease lost: another process took the instance over")

// Lease says which process runs an instance and until when it is known to be alive.
// The Runner that claims an instance (Run, Resume) records its lease in the snapshot
// and renews it while the run goes on; Resume with Recover is refused while the lease
// is fresh, so a live run is never run twice. A process that dies stops renewing, and
// once Expiry has passed Recover takes the instance over.
//
// Expiry is compared with the clock of the process that reads it: the clocks of the
// hosts sharing a store must agree to well within the lease's time to live.
type Lease struct {
	// Host and PID name the owner's process (os.Hostname, os.Getpid).
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Token is random, one per claim: it tells apart two owners with the same host
	// name and pid (two containers' pid 1).
	Token string `json:"token"`
	// Renewed is when the owner last renewed the lease; Expiry is when it ends
	// unless renewed again.
	Renewed time.Time `json:"renewed"`
	Expiry  time.Time `json:"expiry"`
}

// Fresh reports whether the lease is held at now: l is not nil and now is before
// its Expiry.
func (l *Lease) Fresh(now time.Time) bool { return l != nil && now.Before(l.Expiry) }

// Owner names the owner's process: "pid PID on HOST".
func (l *Lease) Owner() string { return fmt.Sprintf("pid %d on %s", l.PID, l.Host) }

// check validates a decoded lease (nil is none).
func (l *Lease) check() error {
	switch {
	case l == nil:
		return nil
	case l.Token == "":
		return errors.New("no token")
	case l.Expiry.IsZero():
		return errors.New("no expiry")
	}
	return nil
}

// LeaseHeldError is the error of a Resume of an instance whose owner's lease is
// fresh: its process is alive (Recover or not). It is an ErrConflict and an
// ErrRunning.
type LeaseHeldError struct {
	Instance string
	Lease    Lease
}

// Error names the owner and when its lease expires.
func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("instance %q is running: %s (token %s) holds its lease until %s",
		e.Instance, e.Lease.Owner(), e.Lease.Token, e.Lease.Expiry.UTC().Format(time.RFC3339Nano))
}

// Unwrap returns ErrConflict and ErrRunning.
func (e *LeaseHeldError) Unwrap() []error { return []error{ErrConflict, ErrRunning} }

// WithLease sets how often the owner of a running instance renews its lease (renew)
// and how long each renewal lasts (ttl); the defaults are DefaultLeaseRenew and
// DefaultLeaseTTL. A renew or ttl of 0 or less is the default, and a ttl not above
// renew is three times renew. A ttl of a few renewals lets a renewal fail (a slow store)
// without the lease lapsing; a shorter ttl lets Recover take over a dead process's
// instance sooner.
func WithLease(renew, ttl time.Duration) Option {
	return func(r *Runner) {
		if renew <= 0 {
			renew = DefaultLeaseRenew
		}
		if ttl <= 0 {
			ttl = DefaultLeaseTTL
		}
		if ttl <= renew {
			ttl = 3 * renew
		}
		r.leaseRenew, r.leaseTTL = renew, ttl
	}
}

// newLease returns a lease for a claim made now by this process.
func (r *Runner) newLease() *Lease {
	var tok [8]byte
	rand.Read(tok[:]) // never fails (crypto/rand)
	now := time.Now()
	return &Lease{Host: r.host, PID: os.Getpid(), Token: hex.EncodeToString(tok[:]), Renewed: now,
		Expiry: now.Add(r.leaseTTL)}
}

// hostname returns the host name leases record ("unknown" if it cannot be read).
func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

// holdLease renews in's lease once it is leaseRenew old until stop is called; stop
// waits for the renewing goroutine to end. A checkpoint renews the lease as it saves
// (see instance.checkpoint), so a run whose nodes complete more often than leaseRenew
// needs no save of its own for the lease. The run runs under runCtx: a renewal that
// conflicts (another process took the instance over) cancels it with ErrLeaseLost.
// Other failures are retried leaseRenew later; renewals go on while a cancelled run
// winds down, so that its lease stays fresh until its outcome is saved.
func (in *instance) holdLease(ctx context.Context) (runCtx context.Context, stop func()) {
	runCtx, cancel := context.WithCancelCause(ctx)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(in.r.leaseRenew)
		defer t.Stop()
		saveCtx := context.WithoutCancel(ctx)
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			next, err := in.renew(saveCtx)
			if errors.Is(err, ErrConflict) {
				cancel(fmt.Errorf("%w: %w", ErrLeaseLost, err))
				return
			}
			t.Reset(next)
		}
	}()
	return runCtx, func() {
		close(quit)
		<-done
		cancel(nil)
	}
}

// renew saves in's last saved snapshot with its lease extended, unless a checkpoint
// renewed it less than leaseRenew ago; it returns when to renew next.
func (in *instance) renew(ctx context.Context) (next time.Duration, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.snap.Lease == nil {
		return in.r.leaseRenew, nil
	}
	if age := time.Since(in.snap.Lease.Renewed); age < in.r.leaseRenew {
		return in.r.leaseRenew - age, nil
	}
	undo := in.extendLease(&in.snap)
	err = in.saveLocked(ctx, &in.snap, in.version, nil)
	if err != nil && !errors.Is(err, ErrNotDurable) {
		undo()
	}
	return in.r.leaseRenew, err
}

// extendLease renews s's lease as of now (for a save about to be made) and returns a
// function that puts the previous one back, for a save that failed. The lease is
// replaced, not changed: a Store other than this package's may keep the one it saved.
func (in *instance) extendLease(s *Snapshot) (undo func()) {
	prev := s.Lease
	if prev == nil {
		return func() {}
	}
	l := *prev
	now := time.Now()
	l.Renewed, l.Expiry = now, now.Add(in.r.leaseTTL)
	s.Lease = &l
	return func() { s.Lease = prev }
}
