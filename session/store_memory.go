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
	mu      sync.Mutex
	entries map[string]memEntry
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
	return &MemoryStore{entries: make(map[string]memEntry), now: c.now, ttl: c.ttl}
}

func (m *MemoryStore) live(id string, now time.Time) (memEntry, bool) {
	e, ok := m.entries[id]
	if ok && !e.expires.IsZero() && !now.Before(e.expires) {
		delete(m.entries, id)
		return memEntry{}, false
	}
	return e, ok
}

// Load implements Store.
func (m *MemoryStore) Load(ctx context.Context, id string) (*Snapshot, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	e, ok := m.live(id, m.now())
	m.mu.Unlock()
	if !ok {
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
	return m.save(ctx, snap, expectedVersion, ttl, false)
}

// saveOwned is SaveTTL for a snapshot whose Vars map, Frontier and Trace.Last map the
// caller made for this save and hands over: the store keeps them (converted in place,
// see canonicalOwned) instead of copying them. The caller must not modify them, nor
// hand them over again, after the call, whatever its outcome; reading them is fine.
// What Load returns is still a copy, independent of the save and of later ones.
func (m *MemoryStore) saveOwned(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration) error {
	return m.save(ctx, snap, expectedVersion, ttl, true)
}

func (m *MemoryStore) save(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration, owned bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := m.now()
	c, err := stamp(snap, expectedVersion, now, ttl)
	if err != nil {
		return err
	}
	if owned {
		c, err = canonicalOwned(c)
	} else {
		c, err = canonicalClone(c)
	}
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, _ := m.live(snap.Instance, now)
	if e.version != expectedVersion {
		return conflict(snap.Instance, expectedVersion, e.version)
	}
	m.entries[snap.Instance] = memEntry{snap: c, version: c.Version, status: c.Status, expires: c.Expires}
	(&prepared{snap: c}).done(snap)
	return nil
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
	if _, ok := m.live(id, m.now()); !ok {
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
		if e, ok := m.live(id, now); ok && (status == "" || e.status == status) {
			ids = append(ids, id)
		}
	}
	m.mu.Unlock()
	slices.Sort(ids)
	return ids, nil
}
