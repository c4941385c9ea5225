package session

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// DefinitionChangedError is the error of a resume whose snapshot was saved under
// other definitions than those loaded now: of the root graph (Snapshot.Hash) or of a
// graph it calls (Snapshot.Called). It wraps ErrDefinitionChanged.
type DefinitionChangedError struct {
	// Root is the id of the instance's root graph.
	Root string
	// Graph is the id of the graph whose definition changed: Root, or a graph the
	// root reaches through sub-graph calls. When several changed, it is the root if
	// it did, else the first id in sorted order, and Others counts the rest.
	Graph string
	// Saved and Loaded are its definition hashes, as saved and as loaded now;
	// Loaded is "" when the graph is no longer loaded.
	Saved, Loaded string
	// Others is the number of other called graphs whose definitions changed.
	Others int
}

// Error names the graph that changed and both hashes.
func (e *DefinitionChangedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: graph %q", ErrDefinitionChanged, e.Graph)
	if e.Graph != e.Root {
		fmt.Fprintf(&b, " (called by %q)", e.Root)
	}
	if e.Loaded == "" {
		fmt.Fprintf(&b, " was saved with definition hash %s and is no longer loaded", e.Saved)
	} else {
		fmt.Fprintf(&b, " was saved with definition hash %s, the loaded definition has hash %s", e.Saved, e.Loaded)
	}
	if e.Others > 0 {
		fmt.Fprintf(&b, "; %d more called graph(s) changed too", e.Others)
	}
	return b.String()
}

// Unwrap returns ErrDefinitionChanged.
func (e *DefinitionChangedError) Unwrap() error { return ErrDefinitionChanged }

// callee is a graph a graph calls: a registered one by id ("#id"), or the graph of a
// flow.Call task, which need not be registered.
type callee struct {
	id string
	g  *flow.Graph // nil: look id up in the engine
}

// calleesOf returns the graphs g's nodes call.
func calleesOf(g *flow.Graph) []callee {
	var out []callee
	for _, n := range g.Nodes() {
		if sub, ok := flow.CalledGraph(n.Component); ok {
			out = append(out, callee{id: sub.ID, g: sub})
		} else if id, ok := strings.CutPrefix(strings.TrimSpace(n.Task), "#"); ok && n.Component == nil {
			out = append(out, callee{id: strings.TrimSpace(id)})
		}
	}
	return out
}

// definition returns the definition hash of g and those of every graph g reaches
// through sub-graph calls, transitively, by graph id (nil when it calls none). A call
// cycle is followed once; g's own id is left out of called (its hash is hash); a
// called graph the engine does not have is left out too (a call of it fails, so
// nothing of it ever ran).
func (r *Runner) definition(g *flow.Graph) (hash string, called map[string]string) {
	e := r.hashed(g)
	if len(e.calls) == 0 {
		return e.hash, nil
	}
	called = map[string]string{}
	queue := slices.Clone(e.calls)
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if _, seen := called[c.id]; seen || c.id == g.ID {
			continue
		}
		sub := c.g
		if sub == nil {
			var ok bool
			if sub, ok = r.eng.Graph(c.id); !ok {
				continue
			}
		}
		se := r.hashed(sub)
		called[c.id] = se.hash
		queue = append(queue, se.calls...)
	}
	if len(called) == 0 {
		return e.hash, nil
	}
	return e.hash, called
}

// CheckDefinition reports whether snap, an instance's snapshot, may be resumed on the
// definitions the Runner's engine holds now, as Resume checks before it claims the
// instance: nil if the root graph's definition hash equals Snapshot.Hash and every
// graph in Snapshot.Called still has its saved hash, a *DefinitionChangedError if
// not, and an error wrapping flow.ErrGraphNotFound if the root graph is not loaded.
//
// A snapshot without Called (saved before the called graphs were recorded, or of a
// graph that calls none) is checked on its root graph alone. A graph called now but
// not named in Called was not loaded when the snapshot was saved (its call could only
// fail), so it is no change. The header suffices: a sealed snapshot need not be opened.
func (r *Runner) CheckDefinition(snap *Snapshot) error {
	g, ok := r.eng.Graph(snap.Graph)
	if !ok {
		return fmt.Errorf("graph %q: %w", snap.Graph, flow.ErrGraphNotFound)
	}
	hash, called := r.definition(g)
	return compareDefinition(snap, hash, called)
}

// compareDefinition compares the definition hashes saved in snap with hash and
// called, those of the graphs loaded now (see CheckDefinition).
func compareDefinition(snap *Snapshot, hash string, called map[string]string) error {
	var err *DefinitionChangedError
	if snap.Hash != hash {
		err = &DefinitionChangedError{Root: snap.Graph, Graph: snap.Graph, Saved: snap.Hash, Loaded: hash}
	}
	for _, id := range slices.Sorted(maps.Keys(snap.Called)) {
		if saved, now := snap.Called[id], called[id]; saved != now {
			if err != nil {
				err.Others++
				continue
			}
			err = &DefinitionChangedError{Root: snap.Graph, Graph: id, Saved: saved, Loaded: now}
		}
	}
	if err == nil {
		return nil
	}
	return err
}
