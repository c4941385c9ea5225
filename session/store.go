package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Store keeps one snapshot per instance id. Implementations must be safe for
// concurrent use, also across processes where the backing store is shared, and must
// pass the conformance suite in session/storetest.
type Store interface {
	// Load returns the snapshot of the instance (its Instance is id), or an error
	// wrapping ErrNotFound. A stored snapshot that does not decode, or that is of
	// another instance, is an error wrapping ErrCorrupt.
	Load(ctx context.Context, id string) (*Snapshot, error)
	// Save stores snap under snap.Instance if the stored version is expectedVersion (0:
	// no snapshot stored), atomically; otherwise it returns an error wrapping
	// ErrConflict and stores nothing. On success snap.Version is expectedVersion+1,
	// snap.Updated is the save time, snap.Created is set if it was zero and
	// snap.Expires follows the store's expiry (zero: never). A save expecting a
	// version whose snap.Created is set also requires the stored snapshot to have been
	// created then (else ErrConflict): an instance deleted or expired and created
	// again restarts its versions, and a save meant for the old one must not land on
	// the new one.
	Save(ctx context.Context, snap *Snapshot, expectedVersion int64) error
	// Delete removes the instance; an unknown id is an error wrapping ErrNotFound.
	Delete(ctx context.Context, id string) error
	// List returns the ids of the stored instances with the given status (all when
	// status is ""), sorted.
	List(ctx context.Context, status Status) ([]string, error)
}

// TTLStore is a Store that can expire snapshots. SaveTTL is Save with a time to live
// for this save (0: never expire); once it has passed, the instance is not found. A
// later save sets the expiry afresh.
type TTLStore interface {
	Store
	SaveTTL(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration) error
}

// Errors callers can branch on with errors.Is.
var (
	// ErrNotFound: no snapshot is stored under the instance id.
	ErrNotFound = errors.New("instance not found")
	// ErrConflict: the stored version is not the expected one (another process saved
	// or resumed the instance first), or the instance is running or completed.
	ErrConflict = errors.New("version conflict")
	// ErrInvalidID: the instance id is not allowed (see ValidateID).
	ErrInvalidID = errors.New("invalid instance id")
	// ErrNotDurable: a Save or Delete took effect (Load sees it; a save stamped the
	// snapshot as on success, so its Version is the stored one) but the store could not
	// make sure it survives a crash, as when FileStore's directory sync fails. It is
	// not ErrConflict and must not be retried as a failed save: a retry expecting the
	// previous version would conflict with the save that happened.
	ErrNotDurable = errors.New("saved, but durability not assured")
)

// MaxIDLen is the longest instance id in bytes (a file name is at most 255 bytes).
const MaxIDLen = 200

// ValidateID checks an instance id. Every store applies the same rule, so an id that
// works with one store works with all: an id is valid UTF-8 (any script, any
// language), 1 to MaxIDLen bytes, has no control characters (NUL, newline, ...), no
// path separator ('/' or '\'), does not start with '.' (which also rules out "." and
// ".."), and is not padded with spaces. An error wraps ErrInvalidID.
func ValidateID(id string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidID, id, why)
	}
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidID)
	case len(id) > MaxIDLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxIDLen))
	case !utf8.ValidString(id):
		return bad("not valid UTF-8")
	case id[0] == '.':
		return bad("starts with '.'")
	case strings.TrimSpace(id) != id:
		return bad("leading or trailing space")
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return bad("control character")
		}
		if r == '/' || r == '\\' {
			return bad("path separator")
		}
	}
	return nil
}

// prepared is a snapshot stamped and encoded for one save.
type prepared struct {
	snap *Snapshot // a stamped shallow copy of the caller's snapshot
	data []byte
}

// prepare checks the arguments of a save, stamps a copy of snap with what Save
// promises and encodes it with cfg. Nothing of the caller's snapshot changes until
// done.
func prepare(snap *Snapshot, expectedVersion int64, now time.Time, ttl time.Duration, cfg encodeConfig) (*prepared, error) {
	c, err := stamp(snap, expectedVersion, now, ttl)
	if err != nil {
		return nil, err
	}
	data, err := encodeChecked(c, cfg) // stamp checked it
	if err != nil {
		return nil, err
	}
	return &prepared{snap: c, data: data}, nil
}

// stamp checks the arguments of a save and returns a shallow copy of snap stamped
// with the new version, the save time and the expiry.
func stamp(snap *Snapshot, expectedVersion int64, now time.Time, ttl time.Duration) (*Snapshot, error) {
	if snap == nil {
		return nil, errors.New("session: save of a nil snapshot")
	}
	if err := ValidateID(snap.Instance); err != nil {
		return nil, err
	}
	if expectedVersion < 0 {
		return nil, fmt.Errorf("session: save of %q: negative expected version %d", snap.Instance, expectedVersion)
	}
	if ttl < 0 {
		return nil, fmt.Errorf("session: save of %q: negative ttl %v", snap.Instance, ttl)
	}
	c := *snap
	c.Format = FormatVersion
	c.Version = expectedVersion + 1
	c.Updated = now.UTC()
	if c.Created.IsZero() {
		c.Created = c.Updated
	}
	c.Expires = time.Time{}
	if ttl > 0 {
		c.Expires = c.Updated.Add(ttl)
	}
	// What is saved must load: check it as Decode will (the id is checked above).
	if err := c.checkAfterID(); err != nil {
		return nil, fmt.Errorf("session: save of %q: invalid snapshot: %w", snap.Instance, err)
	}
	return &c, nil
}

// done copies the stamped header back into the caller's snapshot after a save.
func (p *prepared) done(snap *Snapshot) { done(snap, p.snap) }

// done copies the stamped header of c into snap.
func done(snap, c *Snapshot) {
	snap.Format, snap.Version = c.Format, c.Version
	snap.Created, snap.Updated, snap.Expires = c.Created, c.Updated, c.Expires
}

func conflict(id string, expected, stored int64) error {
	if stored == 0 {
		return fmt.Errorf("%w: instance %q: expected version %d, but it is not stored", ErrConflict, id, expected)
	}
	return fmt.Errorf("%w: instance %q: expected version %d, stored version is %d", ErrConflict, id, expected, stored)
}

// recreated returns an ErrConflict if a save of snap expecting version expected (a
// version is stored) must not replace the stored snapshot created at stored: an
// instance deleted or expired and created again restarts its versions, so a save
// meant for the instance created at snap.Created (a resume that loaded it before)
// would land on the new one. A zero time on either side is not checked.
func recreated(snap *Snapshot, expected int64, stored time.Time) error {
	if expected == 0 || snap.Created.IsZero() || stored.IsZero() || snap.Created.Equal(stored) {
		return nil
	}
	return fmt.Errorf("%w: instance %q: expected version %d of the instance created at %s, the stored one was created at %s",
		ErrConflict, snap.Instance, expected, snap.Created.UTC().Format(time.RFC3339Nano), stored.UTC().Format(time.RFC3339Nano))
}

// belongsTo checks that a snapshot loaded for id is the snapshot of id: a file copied
// or renamed by hand, or a key written by something else, must not make a resume of
// one instance save over another.
func belongsTo(s *Snapshot, id string) error {
	if s.Instance != id {
		return fmt.Errorf("%w: stored under %q, the snapshot is of instance %q", ErrCorrupt, id, s.Instance)
	}
	return nil
}

func notFound(id string) error { return fmt.Errorf("%w: %q", ErrNotFound, id) }
