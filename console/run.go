package console

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/trace"
	"github.com/flowteam/flowteam/workflow"
)

// Run is what one instance did, gathered from its audit records, its snapshot and
// its workflow task states: what a run picture colours. Build one with NewRun and
// the Add methods; the zero value of every field means "nothing seen".
type Run struct {
	// Instance is the instance id.
	Instance string
	// Graph is the root graph's id.
	Graph string
	// Status is the snapshot's status (running, suspended, failed...), or the last
	// run record's outcome when there is no snapshot.
	Status string
	calls  map[string]*Call
}

// Call is what happened in one call of a graph: the root call, or a sub-graph
// call, keyed by its call path (see trace.Record.Path).
type Call struct {
	Path  string // the call path: the root graph's id, then "/node/graph" per call
	Graph string // the called graph's id
	// Visits counts the executions of each node that ended (any terminal record).
	Visits map[string]int
	// Failed holds the error of each node whose last execution failed without
	// being recovered.
	Failed map[string]trace.ErrorInfo
	// Waiting holds, for each node suspended or waiting for a person, why.
	Waiting map[string]string
	// Frontier is the set of nodes the stored run continues from.
	Frontier map[string]bool
	// Calls maps a calling node to the call path of the sub-graph it called.
	Calls map[string]string
	taken map[[2]string]bool
}

// NewRun returns an empty Run of the instance of graph.
func NewRun(instance, graph string) *Run {
	return &Run{Instance: instance, Graph: graph, calls: map[string]*Call{}}
}

// Call returns the call at path, creating it empty.
func (r *Run) Call(path string) *Call {
	c := r.calls[path]
	if c == nil {
		graph := path
		if i := strings.LastIndexByte(path, '/'); i >= 0 {
			graph = path[i+1:]
		}
		c = &Call{Path: path, Graph: graph, Visits: map[string]int{}, Failed: map[string]trace.ErrorInfo{},
			Waiting: map[string]string{}, Frontier: map[string]bool{}, Calls: map[string]string{},
			taken: map[[2]string]bool{}}
		r.calls[path] = c
		if i := strings.LastIndexByte(path, '/'); i > 0 {
			// path is PARENT/node/graph: the parent's node called it.
			parent := path[:i]
			j := strings.LastIndexByte(parent, '/')
			r.Call(parent[:j]).Calls[parent[j+1:]] = path
		}
	}
	return c
}

// Paths returns the call paths the run holds, sorted (the root graph's id first).
func (r *Run) Paths() []string {
	out := make([]string, 0, len(r.calls))
	for p := range r.calls {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Has reports whether the run holds anything for the call path.
func (r *Run) Has(path string) bool { return r.calls[path] != nil }

// Taken reports whether the run followed the link from one node to another.
func (c *Call) Taken(from, to string) bool { return c.taken[[2]string{from, to}] }

// AddAudit adds the audit records of the run's instance (others are ignored).
func (r *Run) AddAudit(recs trace.Records) {
	var mine trace.Records
	for i := range recs {
		if recs[i].InstanceID == r.Instance {
			mine = append(mine, recs[i])
		}
	}
	mine = mine.Sorted()
	for i := range mine {
		rec := &mine[i]
		if rec.IsRun() {
			if rec.Status.Terminal() {
				r.Status = strings.ToLower(string(rec.Status))
			} else {
				r.Status = string(session.StatusRunning)
			}
			continue
		}
		r.addNode(rec)
	}
	r.addTaken(mine)
}

func (r *Run) addNode(rec *trace.Record) {
	c := r.Call(rec.Path)
	switch rec.Status {
	case trace.Started:
		return
	case trace.Failed:
		if !rec.Recovered && !rec.Retrying && rec.Error != nil {
			c.Failed[rec.NodeID] = *rec.Error
		}
	case trace.Suspended:
		c.Waiting[rec.NodeID] = rec.Reason
	default:
		delete(c.Failed, rec.NodeID)
		delete(c.Waiting, rec.NodeID)
	}
	c.Visits[rec.NodeID]++
}

// step is a node a branch started, at a position in the run's sorted records.
type step struct {
	node string
	pos  int
}

// addTaken marks the links the records show were followed. A branch runs one node
// after another, so consecutive nodes of a branch were linked; a branch's first node
// came from the node its nearest parent branch ran last before it, and its last node
// led to the next node that parent ran (a join).
func (r *Run) addTaken(recs trace.Records) {
	type key struct{ run, path, branch string }
	steps := map[key][]step{}
	var order []key
	for i := range recs {
		rec := &recs[i]
		if rec.IsRun() || rec.Status != trace.Started {
			continue
		}
		k := key{rec.RunID, rec.Path, rec.BranchID}
		if steps[k] == nil {
			order = append(order, k)
		}
		steps[k] = append(steps[k], step{rec.NodeID, i})
	}
	for _, k := range order {
		c, s := r.Call(k.path), steps[k]
		for i := 1; i < len(s); i++ {
			c.taken[[2]string{s[i-1].node, s[i].node}] = true
		}
		parent := k
		for j := strings.LastIndexByte(parent.branch, '/'); j >= 0; j = strings.LastIndexByte(parent.branch, '/') {
			parent.branch = parent.branch[:j]
			ps := steps[parent]
			if ps == nil {
				continue
			}
			first, last := s[0], s[len(s)-1]
			var before, after *step
			for i := range ps {
				if ps[i].pos < first.pos {
					before = &ps[i]
				}
				if ps[i].pos > last.pos && after == nil {
					after = &ps[i]
				}
			}
			if before != nil {
				c.taken[[2]string{before.node, first.node}] = true
			}
			if after != nil {
				c.taken[[2]string{last.node, after.node}] = true
			}
			break
		}
	}
}

// AddSnapshot adds what the stored snapshot says: its status, the frontier the run
// continues from (waiting nodes when it is suspended), and its execution errors.
func (r *Run) AddSnapshot(s *session.Snapshot) {
	r.Status = string(s.Status)
	for _, e := range s.Errors {
		path := e.Path
		if path == "" {
			path = r.Graph
		}
		if e.Node != "" && e.Severity != "recoverable" {
			r.Call(path).Failed[e.Node] = trace.ErrorInfo{Type: e.Type, Code: e.Code, Message: e.Message}
		}
	}
	f := s.Frontier
	if f == nil {
		return
	}
	for _, t := range f.Tokens {
		c := r.Call(frontierPath(f, t.Frame, r.Graph))
		c.Frontier[t.Node] = true
		if s.Status == session.StatusSuspended {
			c.Waiting[t.Node] = s.Reason
		}
		if t.Error != nil {
			c.Failed[t.Node] = trace.ErrorInfo{Type: t.Error.Type, Code: t.Error.Code, Message: t.Error.Message}
		}
	}
}

// frontierPath is the call path of the innermost call frame around frame i.
func frontierPath(f *flow.FrontierState, i int, root string) string {
	if i < 0 || i >= len(f.Frames) {
		return root
	}
	fr := f.Frames[i]
	if fr.Kind != "call" && fr.Call >= 0 && fr.Call < len(f.Frames) {
		fr = f.Frames[fr.Call]
	}
	if fr.Path == "" {
		return root
	}
	return fr.Path
}

// AddWorkflow adds an approval instance's task states: a completed task is a visit,
// a waiting one, and each of next (the tasks the instance waits for, as
// workflow.Executor.FindNextTasks gives them), waits for a person; the links
// between them were taken.
func (r *Run) AddWorkflow(inst *workflow.Instance, g *flow.Graph, next []workflow.Task) {
	r.Status = string(inst.Status)
	c := r.Call(r.Graph)
	for k, st := range inst.States {
		graph, node, ok := strings.Cut(k, ":")
		if !ok || graph != r.Graph {
			continue
		}
		switch st {
		case workflow.Completed:
			c.Visits[node]++
		case workflow.Waiting:
			c.Waiting[node] = "for a person"
			c.Frontier[node] = true
		}
	}
	for _, t := range next {
		if t.Node.Graph() == g {
			c.Waiting[t.Node.ID] = "for a person"
			c.Frontier[t.Node.ID] = true
		}
	}
	reached := func(id string) bool { return c.Visits[id] > 0 || c.Frontier[id] }
	for _, n := range g.Nodes() {
		if n.Type == flow.Start && len(c.Visits)+len(c.Frontier) > 0 {
			c.Visits[n.ID]++ // the walk always passes the start node
		}
	}
	for _, n := range g.Nodes() {
		if c.Visits[n.ID] == 0 {
			continue
		}
		for _, l := range n.Links() {
			if reached(l.Target().ID) {
				c.taken[[2]string{n.ID, l.Target().ID}] = true
			}
		}
	}
}

// ErrNoRun is returned by LoadRun when neither the store nor the audit records know
// the instance.
var ErrNoRun = errors.New("no such instance in the store or the audit")

// LoadRun gathers what instance did from its audit records and its snapshot in
// store; recs and store may each be nil. The root graph is the snapshot's, else the
// one the records name. An approval instance's task states count as its visits; with
// x (which may be nil) the tasks it waits for are drawn waiting too.
func LoadRun(ctx context.Context, store session.Store, x *workflow.Executor, recs trace.Records, instance string, graph func(id string) (*flow.Graph, bool)) (*Run, error) {
	r, _, err := loadRun(ctx, store, x, recs, instance, graph)
	return r, err
}

// stored is what loadRun read from the store besides the run: the snapshot (nil if
// there is none) and, for an approval instance, the instance and the tasks it waits
// for (nil unless computed).
type stored struct {
	snap *session.Snapshot
	inst *workflow.Instance
	next []workflow.Task
}

// loadRun is LoadRun, also returning what it read from the store so that a caller
// needs not read it again.
func loadRun(ctx context.Context, store session.Store, x *workflow.Executor, recs trace.Records, instance string, graph func(id string) (*flow.Graph, bool)) (*Run, stored, error) {
	var st stored
	if store != nil {
		s, err := store.Load(ctx, instance)
		switch {
		case err == nil:
			st.snap = s
		case !errors.Is(err, session.ErrNotFound):
			return nil, st, err
		}
	}
	snap := st.snap
	root := ""
	if snap != nil {
		root = snap.Graph
	}
	for i := range recs {
		if root != "" {
			break
		}
		if recs[i].InstanceID == instance {
			root = strings.SplitN(recs[i].Path, "/", 2)[0]
		}
	}
	if root == "" {
		return nil, st, fmt.Errorf("instance %q: %w", instance, ErrNoRun)
	}
	r := NewRun(instance, root)
	r.Call(root)
	r.AddAudit(recs)
	if snap == nil {
		return r, st, nil
	}
	if workflow.HoldsInstance(snap) {
		inst, err := workflow.FromSnapshot(snap)
		if err != nil {
			return nil, st, err
		}
		st.inst = inst
		g, ok := graph(root)
		if !ok {
			return r, st, nil
		}
		if x != nil && inst.Status == workflow.Running {
			if st.next, err = x.NextTasksOf(ctx, inst, nil); err != nil {
				return nil, st, err
			}
		}
		r.AddWorkflow(inst, g, st.next)
		return r, st, nil
	}
	r.AddSnapshot(snap)
	return r, st, nil
}

// redact masks the error messages and suspend reasons a picture shows as tooltips.
func (r *Run) redact(red interface{ String(string) string }) {
	if red == nil {
		return
	}
	for _, c := range r.calls {
		for k, e := range c.Failed {
			e.Message = red.String(e.Message)
			c.Failed[k] = e
		}
		for k, why := range c.Waiting {
			c.Waiting[k] = red.String(why)
		}
	}
}
