package session

import (
	"context"
	"slices"
	"sync"
	"time"
)

// MemoryStore is a Store in the process's memory, for tests and single-process use:
// nothing survives the process. It keeps each snapshot encoded, as the other stores
// do, so it accepts and rejects exactly the snapshots they do, numbers come back as
// int64 or float64 as from them, and a loaded snapshot shares nothing with the saved
// one or the store.
type MemoryStore struct {
	mu      sync.RWMutex // guards entries
	entries map[string]*memEntry
	now     func() time.Time
	ttl     time.Duration
}

type memEntry struct {
	data    []byte // the encoded snapshot
	version int64
	status  Status
	created time.Time
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
	e := m.entries[id]
	m.mu.RUnlock()
	if e == nil || !e.expires.IsZero() && !now.Before(e.expires) { // an expired entry goes at the next write
		return nil, notFound(id)
	}
	return Decode(e.data) // e is never modified: a save replaces it
}

// Save implements Store.
func (m *MemoryStore) Save(ctx context.Context, snap *Snapshot, expectedVersion int64) error {
	return m.SaveTTL(ctx, snap, expectedVersion, m.ttl)
}

// SaveTTL implements TTLStore.
func (m *MemoryStore) SaveTTL(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := m.now()
	p, err := prepare(snap, expectedVersion, now, ttl, encodeConfig{})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.live(snap.Instance, now)
	if v := e.currentVersion(); v != expectedVersion {
		return conflict(snap.Instance, expectedVersion, v)
	}
	if e != nil {
		if err := recreated(snap, expectedVersion, e.created); err != nil {
			return err
		}
	}
	c := p.snap
	m.entries[snap.Instance] = &memEntry{data: p.data, version: c.Version, status: c.Status, created: c.Created, expires: c.Expires}
	p.done(snap)
	return nil
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
