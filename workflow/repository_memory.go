package workflow

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/flowteam/flowteam/session"
)

// MemoryRepository keeps instances in this process, with the same version check and
// the same id rule (session.ValidateID) as the stores. It copies instances in and
// out instead of encoding them, which makes it the fastest repository; a
// StoreRepository on a session.MemoryStore behaves the same, through the snapshot
// codec.
type MemoryRepository struct {
	mu    sync.Mutex
	insts map[string]*Instance
	now   func() time.Time
}

// NewMemoryRepository returns an empty MemoryRepository.
func NewMemoryRepository() *MemoryRepository {
	return &MemoryRepository{insts: map[string]*Instance{}, now: time.Now}
}

// Load returns a copy of the stored instance.
func (r *MemoryRepository) Load(_ context.Context, id string) (*Instance, error) {
	r.mu.Lock()
	inst := r.insts[id]
	r.mu.Unlock()
	if inst == nil {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return cloneInstance(inst), nil
}

// Save stores a copy of inst if the stored version is inst.Version.
func (r *MemoryRepository) Save(_ context.Context, inst *Instance) error {
	if err := session.ValidateID(inst.ID); err != nil {
		return err
	}
	c := cloneInstance(inst)
	r.mu.Lock()
	defer r.mu.Unlock()
	var stored int64
	if old := r.insts[inst.ID]; old != nil {
		stored = old.Version
	}
	if stored != inst.Version {
		return fmt.Errorf("%w: instance %q: expected version %d, stored version is %d", ErrConflict, inst.ID, inst.Version, stored)
	}
	c.Version, c.Updated = inst.Version+1, r.now().UTC()
	if c.Created.IsZero() {
		c.Created = c.Updated
	}
	r.insts[inst.ID] = c
	inst.Version, inst.Created, inst.Updated = c.Version, c.Created, c.Updated
	return nil
}

// cloneInstance copies what a caller may change: the states, the variables (deeply)
// and the history slice. History entries are never changed once appended, so they
// are shared.
func cloneInstance(inst *Instance) *Instance {
	c := *inst
	c.States = maps.Clone(inst.States)
	if c.States == nil {
		c.States = map[string]TaskState{}
	}
	c.Vars = make(map[string]any, len(inst.Vars))
	for k, v := range inst.Vars {
		c.Vars[k] = cloneValue(v)
	}
	c.History = inst.History[:len(inst.History):len(inst.History)]
	return &c
}

// cloneValue copies the maps and slices of JSON-like data; integers become int64
// and float32 float64, as the stores read numbers back.
func cloneValue(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneValue(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneValue(e)
		}
		return s
	}
	return v
}
