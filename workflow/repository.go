package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/flowteam/flowteam/session"
)

// Instance is the stored state of one approval instance.
type Instance struct {
	ID    string
	Graph string
	// Hash is the definition hash of the graph (flow.Graph.Hash) at the last save.
	Hash   string
	Status Status
	// States holds the task state of every node that has one, by "graph:node".
	States map[string]TaskState
	// Vars are the instance's business variables, as submits and scripts set them.
	Vars map[string]any
	// History lists every submit, oldest first.
	History []Entry
	// Version is the stored version the instance was loaded at (0: never saved);
	// a save expects it.
	Version int64
	// Created is when the instance was first saved, Updated when it was last saved.
	Created, Updated time.Time
}

// Entry is one submit in an instance's history.
type Entry struct {
	Node    string         `json:"node"`
	Action  Action         `json:"action"`
	Actor   Actor          `json:"actor,omitempty"`
	Time    time.Time      `json:"time"`
	Vars    map[string]any `json:"vars,omitempty"`
	Comment string         `json:"comment,omitempty"`
}

// Repository keeps instances. Save is versioned: it stores inst only if the stored
// version is inst.Version, so of two submits that loaded the same version one wins
// and the other gets an error wrapping ErrConflict.
type Repository interface {
	// Load returns the instance, or an error wrapping ErrNotFound.
	Load(ctx context.Context, id string) (*Instance, error)
	// Save stores inst if the stored version is inst.Version, then sets inst.Version
	// to the new one; otherwise it returns an error wrapping ErrConflict.
	Save(ctx context.Context, inst *Instance) error
}

// StoreRepository keeps instances in a session.Store (memory, file, Redis or any
// other that passes session/storetest), one snapshot per instance, with the store's
// version check. A snapshot holds the business variables as its variables, and the
// task states and history under the variable "$workflow" (a name no expression can
// read). The instance status maps to the snapshot status: running to suspended
// (waiting for people), terminated to stopped, completed to completed.
type StoreRepository struct {
	store session.Store
}

// NewStoreRepository returns a Repository on store.
func NewStoreRepository(store session.Store) *StoreRepository { return &StoreRepository{store: store} }

// NewMemoryRepository returns a Repository on a new session.MemoryStore.
func NewMemoryRepository() *StoreRepository {
	return NewStoreRepository(session.NewMemoryStore())
}

// stateVar is the snapshot variable that holds the workflow document.
const stateVar = "$workflow"

// document is what stateVar holds.
type document struct {
	States  map[string]TaskState `json:"states,omitempty"`
	History []Entry              `json:"history,omitempty"`
}

// Load reads the instance from its snapshot.
func (r *StoreRepository) Load(ctx context.Context, id string) (*Instance, error) {
	snap, err := r.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	inst := &Instance{ID: snap.Instance, Graph: snap.Graph, Hash: snap.Hash, Version: snap.Version,
		Created: snap.Created, Updated: snap.Updated, Vars: make(map[string]any, len(snap.Vars))}
	switch snap.Status {
	case session.StatusCompleted:
		inst.Status = Done
	case session.StatusStopped:
		inst.Status = Stopped
	default:
		inst.Status = Running
	}
	var doc document
	for k, v := range snap.Vars {
		if k != stateVar {
			inst.Vars[k] = v
			continue
		}
		if err := convert(v, &doc); err != nil {
			return nil, fmt.Errorf("%w: instance %q: workflow state: %v", session.ErrCorrupt, id, err)
		}
		for i := range doc.History {
			for k, v := range doc.History[i].Vars {
				doc.History[i].Vars[k] = numbers(v)
			}
		}
	}
	inst.States, inst.History = doc.States, doc.History
	if inst.States == nil {
		inst.States = map[string]TaskState{}
	}
	return inst, nil
}

// Save writes the instance as a snapshot, expecting inst.Version.
func (r *StoreRepository) Save(ctx context.Context, inst *Instance) error {
	var doc any
	if err := convert(document{States: inst.States, History: inst.History}, &doc); err != nil {
		return fmt.Errorf("workflow: save of %q: %w", inst.ID, err)
	}
	vars := make(map[string]any, len(inst.Vars)+1)
	maps.Copy(vars, inst.Vars)
	vars[stateVar] = numbers(doc)
	status := session.StatusSuspended
	switch inst.Status {
	case Done:
		status = session.StatusCompleted
	case Stopped:
		status = session.StatusStopped
	}
	snap := &session.Snapshot{Instance: inst.ID, Graph: inst.Graph, Hash: inst.Hash, Status: status,
		Vars: vars, Created: inst.Created, Reason: "workflow"}
	err := r.store.Save(ctx, snap, inst.Version)
	if err != nil && !errors.Is(err, session.ErrNotDurable) {
		return err
	}
	inst.Version, inst.Created, inst.Updated = snap.Version, snap.Created, snap.Updated
	return err
}

// convert copies v into out through JSON, so the stored form is plain JSON data.
// Numbers in untyped values come out as json.Number (see numbers).
func convert(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(out)
}

// numbers turns the json.Numbers in v into int64 when integral and float64
// otherwise, as session.Decode reads variables, so a history entry's variables
// read as the instance's do.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}
