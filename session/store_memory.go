package session

import (
	"context"
	"slices"
	"sync"
	"time"
)

// MemoryStore is a Store in the process's memory, for tests and single-process use:
// nothing survives the process. It keeps each snapshot as Decode(Encode(snapshot))
// would return it, computed without the JSON, so it accepts and rejects exactly the
// snapshots the other stores do, numbers come back as int64 or float64 as from them,
// and a loaded snapshot shares nothing with the saved one or the store.
type MemoryStore struct {
	// mu guards entries. Load copies a snapshot under the read lock: a stored
	// snapshot's maps may be recycled by the Runner once a later save replaced it.
	mu      sync.RWMutex
	entries map[string]*memEntry // updated in place by a save: one lookup, few writes
	now     func() time.Time
	ttl     time.Duration
}

type memEntry struct {
	snap    *Snapshot // canonical: as Decode(Encode(s)) would return it
	version int64
	status  Status
	expires time.Time
}

// StoreOption configures a MemoryStore or a FileStore.
type StoreOption func(*storeConfig)

type storeConfig struct {
	now func() time.Time
	ttl time.Duration
}

// WithClock sets the clock a store uses for timestamps and expiry (default time.Now).
func WithClock(now func() time.Time) StoreOption { return func(c *storeConfig) { c.now = now } }

// WithDefaultTTL sets the time to live of every Save (default 0: never expire).
func WithDefaultTTL(ttl time.Duration) StoreOption { return func(c *storeConfig) { c.ttl = ttl } }

func newStoreConfig(opts []StoreOption) storeConfig {
	c := storeConfig{now: time.Now}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(opts ...StoreOption) *MemoryStore {
	c := newStoreConfig(opts)
	return &MemoryStore{entries: make(map[string]*memEntry), now: c.now, ttl: c.ttl}
}

// live returns the entry of id, nil if there is none or it expired (then it goes).
func (m *MemoryStore) live(id string, now time.Time) *memEntry {
	e := m.entries[id]
	if e != nil && !e.expires.IsZero() && !now.Before(e.expires) {
		delete(m.entries, id)
		return nil
	}
	return e
}

// Load implements Store.
func (m *MemoryStore) Load(ctx context.Context, id string) (*Snapshot, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := m.now()
	m.mu.RLock()
	defer m.mu.RUnlock()
	e := m.entries[id]
	if e == nil || !e.expires.IsZero() && !now.Before(e.expires) { // an expired entry goes at the next write
		return nil, notFound(id)
	}
	return canonicalClone(e.snap)
}

// Save implements Store.
func (m *MemoryStore) Save(ctx context.Context, snap *Snapshot, expectedVersion int64) error {
	return m.SaveTTL(ctx, snap, expectedVersion, m.ttl)
}

// SaveTTL implements TTLStore.
func (m *MemoryStore) SaveTTL(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration) error {
	_, _, err := m.save(ctx, snap, expectedVersion, ttl, false, nil, nil, false)
	return err
}

// saveOwned is SaveTTL for a snapshot whose Vars map, Frontier and Trace.Last map the
// caller made for this save and hands over: the store keeps them (converted in place,
// see canonicalOwned) instead of copying them. The caller must not modify them, nor
// hand them over again, after the call, whatever its outcome; reading them is fine.
// What Load returns is still a copy, independent of the save and of later ones.
//
// spare, if not nil, is a Snapshot struct the store may fill and keep (one that
// saveOwned returned earlier); on success saveOwned returns the struct of the
// snapshot the save replaced, which nothing refers to any more, for the next call.
//
// hint, if not nil, is a snapshot this store kept (stored, below) and nothing modifies
// (see canonicalOwned): values and strings equal to its are stored as its, not
// copied or checked again. It must not be the spare.
//
// varsDone says that snap.Vars is canonical already (keys valid UTF-8, values as
// canonicalOwned would leave them), so it is kept without a look.
//
// On success saveOwned returns the struct it replaced and the one it stored.
func (m *MemoryStore) saveOwned(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration, spare, hint *Snapshot, varsDone bool) (replaced, stored *Snapshot, err error) {
	return m.save(ctx, snap, expectedVersion, ttl, true, spare, hint, varsDone)
}

func (m *MemoryStore) save(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration, owned bool, spare, hint *Snapshot, varsDone bool) (replaced, stored *Snapshot, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	now := m.now()
	// The stamped copy is on the stack, and the result goes to the spare (which
	// holds an older snapshot of the instance) field by field where they differ:
	// at per-node durability a save writes few pointers to the heap (see assign).
	var st Snapshot
	stamped, err := stampInto(&st, snap, expectedVersion, now, ttl, hint)
	if err != nil {
		return nil, nil, err
	}
	c := spare
	if c == nil || !owned {
		c = new(Snapshot)
	}
	if err := canonInto(c, stamped, owned, hint, varsDone); err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.live(snap.Instance, now)
	if v := e.currentVersion(); v != expectedVersion {
		return nil, nil, conflict(snap.Instance, expectedVersion, v)
	}
	if e != nil {
		if err := recreated(snap, expectedVersion, e.snap.Created); err != nil {
			return nil, nil, err
		}
	}
	if e == nil {
		e = new(memEntry)
		m.entries[snap.Instance] = e
	}
	replaced = e.snap
	e.snap, e.version = c, c.Version
	setString((*string)(&e.status), string(c.Status))
	setTime(&e.expires, c.Expires)
	done(snap, c)
	// Load copies under the read lock, so no one reads the replaced snapshot now.
	return replaced, c, nil
}

// currentVersion is the version of e, 0 when e is nil (nothing stored).
func (e *memEntry) currentVersion() int64 {
	if e == nil {
		return 0
	}
	return e.version
}

// Delete implements Store.
func (m *MemoryStore) Delete(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live(id, m.now()) == nil {
		return notFound(id)
	}
	delete(m.entries, id)
	return nil
}

// List implements Store.
func (m *MemoryStore) List(ctx context.Context, status Status) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	now := m.now()
	ids := []string{}
	for id := range m.entries {
		if e := m.live(id, now); e != nil && (status == "" || e.status == status) {
			ids = append(ids, id)
		}
	}
	m.mu.Unlock()
	slices.Sort(ids)
	return ids, nil
}
