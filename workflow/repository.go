package workflow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
)

// Instance is the stored state of one approval instance.
type Instance struct {
	ID    string
	Graph string
	// Hash is the definition hash of the graph (flow.Graph.Hash) at the last save.
	Hash   string
	Status Status
	// Controller is the name of the controller the instance was created with
	// (Named), if it has one.
	Controller string
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
	red   *redact.Redactor
	meta  []string
}

// NewStoreRepository returns a Repository on store.
func NewStoreRepository(store session.Store) *StoreRepository { return &StoreRepository{store: store} }

// WithRedactor returns a repository on r's store that saves every instance redacted
// with red, as session.WithRedactor saves a run: the variables under a sensitive key
// or declared secret are saved as redact.Mask and named in Snapshot.Redacted, and the
// secret values and pattern matches are masked in the other variables and in the
// history (RedactHistory). A masked variable loads back as the mask: a submit that
// needs its value for a script or a condition sets it again.
func (r *StoreRepository) WithRedactor(red *redact.Redactor) *StoreRepository {
	c := *r
	c.red = red
	return &c
}

// WithMeta returns a repository on r's store that saves meta as the Snapshot.Meta of
// every instance (the settings a program records for its next calls, such as the
// redaction rules); by default a save records none.
func (r *StoreRepository) WithMeta(meta ...string) *StoreRepository {
	c := *r
	c.meta = slices.Clone(meta)
	return &c
}

// RedactHistory returns a copy of h with each entry's variables masked by red
// (redact.Redactor.Map), and its comment and actor values as text.
func RedactHistory(red *redact.Redactor, h []Entry) []Entry {
	out := make([]Entry, len(h))
	for i, e := range h {
		e.Vars = red.Map(e.Vars)
		e.Comment = red.String(e.Comment)
		if e.Actor != nil {
			actor := make(Actor, len(e.Actor))
			for k, v := range e.Actor {
				actor[k] = red.String(v)
			}
			e.Actor = actor
		}
		out[i] = e
	}
	return out
}

// stateVar is the snapshot variable that holds the task states and the history.
const stateVar = "$workflow"

// HoldsInstance reports whether snap is an approval instance a StoreRepository
// saved (rather than a suspended run of the engine).
func HoldsInstance(snap *session.Snapshot) bool {
	_, ok := snap.Vars[stateVar]
	return ok
}

// Load reads the instance from its snapshot.
func (r *StoreRepository) Load(ctx context.Context, id string) (*Instance, error) {
	snap, err := r.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	return FromSnapshot(snap)
}

// FromSnapshot reads the instance a StoreRepository saved as snap (see
// HoldsInstance), for a caller that has loaded the snapshot already.
func FromSnapshot(snap *session.Snapshot) (*Instance, error) {
	inst := &Instance{ID: snap.Instance, Graph: snap.Graph, Hash: snap.Hash, Version: snap.Version,
		Created: snap.Created, Updated: snap.Updated, Vars: make(map[string]any, len(snap.Vars)),
		States: map[string]TaskState{}}
	switch snap.Status {
	case session.StatusCompleted:
		inst.Status = Done
	case session.StatusStopped:
		inst.Status = Stopped
	default:
		inst.Status = Running
	}
	for k, v := range snap.Vars {
		if k != stateVar {
			inst.Vars[k] = v
			continue
		}
		if err := readDocument(v, inst); err != nil {
			return nil, fmt.Errorf("%w: instance %q: variable %s: %v", session.ErrCorrupt, snap.Instance, stateVar, err)
		}
	}
	return inst, nil
}

// Save writes the instance as a snapshot, expecting inst.Version.
func (r *StoreRepository) Save(ctx context.Context, inst *Instance) error {
	vars, history, masked := r.redacted(inst)
	vars[stateVar] = document{Controller: inst.Controller, States: inst.States, History: history}
	status := session.StatusSuspended
	switch inst.Status {
	case Done:
		status = session.StatusCompleted
	case Stopped:
		status = session.StatusStopped
	}
	snap := &session.Snapshot{Instance: inst.ID, Graph: inst.Graph, Hash: inst.Hash, Status: status,
		Vars: vars, Created: inst.Created, Reason: "workflow", Redacted: masked, Meta: r.meta}
	err := r.store.Save(ctx, snap, inst.Version)
	if err != nil && !errors.Is(err, session.ErrNotDurable) {
		return err
	}
	inst.Version, inst.Created, inst.Updated = snap.Version, snap.Created, snap.Updated
	return err
}

// redacted returns the variables (in a new map, with room for stateVar) and the
// history to save of inst, masked with r's Redactor if it has one, and the names of
// the variables masked whole, sorted.
func (r *StoreRepository) redacted(inst *Instance) (vars map[string]any, history []Entry, masked []string) {
	vars = make(map[string]any, len(inst.Vars)+1)
	if r.red == nil {
		maps.Copy(vars, inst.Vars)
		return vars, inst.History, nil
	}
	red := r.red.ForVars(inst.Vars)
	for _, e := range inst.History {
		red = red.ForVars(e.Vars) // an earlier value of a secret variable
	}
	for k, v := range inst.Vars {
		if red.Sensitive(k) {
			vars[k] = redact.Mask
			masked = append(masked, k)
		} else {
			vars[k] = red.Value(v)
		}
	}
	slices.Sort(masked)
	return vars, RedactHistory(red, inst.History), masked
}

// document is the stateVar value of an instance, which the session codec writes as
// JSON like every variable. readDocument reads it back from the plain data a loaded
// snapshot holds (by hand: a JSON round trip per load cost more than the rest of a
// submit).
type document struct {
	Controller string               `json:"controller,omitempty"`
	States     map[string]TaskState `json:"states"`
	History    []Entry              `json:"history"`
}

// readDocument reads a stateVar value into inst.
func readDocument(v any, inst *Instance) error {
	doc, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("not an object but %T", v)
	}
	inst.Controller, _ = doc["controller"].(string)
	states, _ := doc["states"].(map[string]any)
	for k, s := range states {
		str, _ := s.(string)
		inst.States[k] = TaskState(str)
	}
	history, _ := doc["history"].([]any)
	inst.History = make([]Entry, 0, len(history))
	for _, h := range history {
		m, ok := h.(map[string]any)
		if !ok {
			return fmt.Errorf("history entry is %T, not an object", h)
		}
		e := Entry{}
		e.Node, _ = m["node"].(string)
		action, _ := m["action"].(string)
		e.Action = Action(action)
		e.Comment, _ = m["comment"].(string)
		e.Vars, _ = m["vars"].(map[string]any)
		if t, _ := m["time"].(string); t != "" {
			var err error
			if e.Time, err = time.Parse(time.RFC3339Nano, t); err != nil {
				return fmt.Errorf("history entry time: %v", err)
			}
		}
		if a, ok := m["actor"].(map[string]any); ok {
			e.Actor = make(Actor, len(a))
			for k, v := range a {
				e.Actor[k], _ = v.(string)
			}
		}
		inst.History = append(inst.History, e)
	}
	return nil
}
