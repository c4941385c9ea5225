package testkit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// Step is one recorded node execution.
type Step struct {
	// Seq is the execution's position in the recorder's start order, from 0.
	Seq int
	// RunID is the id of the run the node belonged to.
	RunID string
	// Graph is the id of the graph the node belongs to.
	Graph string
	// Path is the call path of that graph: the root graph id, then "/node/graph" for
	// each sub-graph call.
	Path string
	// Node is the node id.
	Node string
	// Type is the node type.
	Type flow.NodeType
	// Branch is the id of the branch that ran the node ("main" for the root branch).
	Branch string
	// Status is trace.Started while the node runs, then how it ended: COMPLETED,
	// FAILED, INTERRUPTED or SUSPENDED.
	Status flow.NodeStatus
	// Err is the node's error when Status is FAILED.
	Err error
	// Reason is the suspend reason when Status is SUSPENDED.
	Reason string
	// RunStep is the run's step number of this execution (0 until the node ended).
	RunStep int
	// Duration is how long the node took (0 until the node ended).
	Duration time.Duration
}

// Qualified returns the step's node id qualified by its call path, "callpath:node",
// the form flow.Frontier.Pending uses.
func (s Step) Qualified() string { return s.Path + ":" + s.Node }

// matches reports whether id names the step: either its plain node id, which matches
// the node in any graph, or its qualified "callpath:node" form.
func (s Step) matches(id string) bool {
	return s.Node == id || s.Qualified() == id
}

// shown returns the step's id in the form of id, the id it is compared with: qualified
// when id is, so that a step differing only in its call path does not read as a match.
func (s Step) shown(id string) string {
	if strings.Contains(id, ":") {
		return s.Qualified()
	}
	return s.Node
}

// PathRecorder is a flow.Interceptor that records every node execution of the runs it
// observes, in the order the nodes started. Use it per evaluation with
// flow.WithEvalInterceptor(rec, 0) or for every run of an engine with
// flow.WithInterceptor(rec, 0). It is safe for concurrent use: parallel branches
// record concurrently, and a recorder may observe several runs (Reset clears it).
//
// Methods that take a node id accept a plain id ("approve"), which matches that node
// in any graph, or a qualified id ("leave/call/child:approve"), which matches only in
// that call path. The zero value is ready to use.
type PathRecorder struct {
	flow.NopInterceptor

	mu    sync.Mutex
	steps []Step
	open  map[openKey]int // node executions that started and have not ended
	// graphs are the graphs whose nodes ran, so that an id asserted not visited can be
	// checked to name a node at all.
	graphs []*flow.Graph
}

// openKey identifies a running node execution: a branch view runs one node at a time,
// and OnNodeEnd receives the same view and node as the OnNodeStart it ends.
type openKey struct {
	c *flow.Context
	n *flow.Node
}

var _ flow.Interceptor = (*PathRecorder)(nil)

// NewPathRecorder returns an empty recorder.
func NewPathRecorder() *PathRecorder {
	return &PathRecorder{open: make(map[openKey]int)}
}

type runIDKey struct{}

// InterceptFlow passes the run id down to the node hooks, which do not receive it.
func (r *PathRecorder) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	return inv.Invoke(context.WithValue(ctx, runIDKey{}, inv.RunID))
}

// OnNodeStart records the start of a node execution.
func (r *PathRecorder) OnNodeStart(ctx context.Context, c *flow.Context, n *flow.Node) {
	runID, _ := ctx.Value(runIDKey{}).(string)
	s := Step{RunID: runID, Node: n.ID, Type: n.Type, Path: c.CallPath(), Branch: c.BranchID(), Status: trace.Started}
	g := n.Graph()
	if g != nil {
		s.Graph = g.ID
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open == nil {
		r.open = make(map[openKey]int)
	}
	if _, dup := r.open[openKey{c, n}]; dup {
		// The recorder is registered twice (on the engine and for the evaluation): the
		// second call for an execution already open records nothing, and OnNodeEnd's
		// second call finds it closed.
		return
	}
	if g != nil && !slices.Contains(r.graphs, g) {
		r.graphs = append(r.graphs, g)
	}
	s.Seq = len(r.steps)
	r.open[openKey{c, n}] = s.Seq
	r.steps = append(r.steps, s)
}

// OnNodeEnd records how the node execution ended.
func (r *PathRecorder) OnNodeEnd(_ context.Context, c *flow.Context, n *flow.Node, end flow.NodeEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := openKey{c, n}
	i, ok := r.open[k]
	if !ok {
		return // started before the last Reset
	}
	delete(r.open, k)
	s := &r.steps[i]
	s.Status, s.Err, s.Reason, s.RunStep, s.Duration = end.Status, end.Err, end.Reason, end.Step, end.Duration
}

// Reset forgets everything recorded so far.
func (r *PathRecorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = nil
	r.graphs = nil
	clear(r.open)
}

// Steps returns a copy of the recorded executions in start order.
func (r *PathRecorder) Steps() []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.steps)
}

// recorded returns the steps and the graphs that ran, read together.
func (r *PathRecorder) recorded() ([]Step, []*flow.Graph) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.steps), slices.Clone(r.graphs)
}

// Path returns the ids of the executed nodes in start order, one per execution.
func (r *PathRecorder) Path() []string { return nodeIDs(r.Steps()) }

// QualifiedPath returns the executed nodes as "callpath:node" in start order, which
// tells a sub-graph's nodes from the caller's.
func (r *PathRecorder) QualifiedPath() []string {
	steps := r.Steps()
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Qualified()
	}
	return out
}

// Count returns how many times the node ran.
func (r *PathRecorder) Count(nodeID string) int { return count(r.Steps(), nodeID) }

// ByBranch returns the node ids each branch executed, in start order, keyed by branch
// id (flow.Context.BranchID: "main", "main/p:a", ...). Within one branch the order is
// causal, whatever the scheduling of the others. A sub-graph's nodes are listed under
// a branch named after the call ("main/call/child"), so ids never collide in a run.
func (r *PathRecorder) ByBranch() map[string][]string { return byBranch(r.Steps()) }

// String formats the recorded path for messages: "s -> g -> e", with qualified ids
// when a sub-graph ran.
func (r *PathRecorder) String() string { return formatPath(r.Steps()) }

func nodeIDs(steps []Step) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Node
	}
	return out
}

func count(steps []Step, id string) int {
	n := 0
	for _, s := range steps {
		if s.matches(id) {
			n++
		}
	}
	return n
}

func byBranch(steps []Step) map[string][]string {
	out := make(map[string][]string)
	for _, s := range steps {
		out[s.Branch] = append(out[s.Branch], s.Node)
	}
	return out
}

// formatPath joins the steps with arrows, qualifying ids when any step ran in a
// sub-graph and marking executions that did not complete.
func formatPath(steps []Step) string {
	if len(steps) == 0 {
		return "(no node ran)"
	}
	qualify := slices.ContainsFunc(steps, func(s Step) bool { return strings.Contains(s.Path, "/") })
	parts := make([]string, len(steps))
	for i, s := range steps {
		p := s.Node
		if qualify {
			p = s.Qualified()
		}
		if s.Status != trace.Completed && s.Status != trace.Started {
			p += " [" + string(s.Status) + "]"
		}
		parts[i] = p
	}
	return strings.Join(parts, " -> ")
}

// describe is the part of every failure message that shows what happened: the whole
// path and, when branches ran, each branch's nodes.
func describe(steps []Step) string {
	var b strings.Builder
	b.WriteString("\n\tpath: ")
	b.WriteString(formatPath(steps))
	branches := byBranch(steps)
	if len(branches) > 1 {
		b.WriteString("\n\tbranches:")
		for _, id := range slices.Sorted(maps.Keys(branches)) {
			fmt.Fprintf(&b, "\n\t\t%s: %s", id, strings.Join(branches[id], " -> "))
		}
	}
	return b.String()
}

func quoteAll(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}

// usable reports, failing t if not, whether an assertion has something to check: a
// recorder and, when the assertion takes a list, at least one id. An assertion with
// neither would pass whatever ran.
func usable(t testing.TB, name string, rec *PathRecorder, list bool, ids []string) bool {
	t.Helper()
	switch {
	case rec == nil:
		t.Errorf("testkit: %s: nil PathRecorder", name)
		return false
	case list && len(ids) == 0:
		t.Errorf("testkit: %s: no node ids given: the assertion would check nothing", name)
		return false
	}
	return true
}

// nameable reports, failing t if not, whether every id asserted absent could have run.
// Otherwise the assertion passes whatever the graph did: when the recorder saw no node
// (it is not installed), or for a misspelt id. A plain id must be a node of a graph
// that ran, or a graph that ran must call a sub-graph that did not (the node may be
// that sub-graph's); a qualified id is taken as written.
func nameable(t testing.TB, steps []Step, graphs []*flow.Graph, ids ...string) bool {
	t.Helper()
	if len(steps) == 0 {
		t.Errorf("testkit: %s: the recorder saw no node run: is it installed on the engine or the evaluation?", quoteAll(ids))
		return false
	}
	ran := make(map[string]bool, len(graphs))
	names := make([]string, len(graphs))
	for i, g := range graphs {
		ran[g.ID] = true
		names[i] = g.ID
	}
	for _, g := range graphs {
		for _, sub := range g.Calls() {
			if !ran[sub] {
				return true
			}
		}
	}
	var unknown []string
	for _, id := range ids {
		if !strings.Contains(id, ":") && !slices.ContainsFunc(graphs, func(g *flow.Graph) bool { return g.Node(id) != nil }) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		t.Errorf("testkit: no graph that ran has a node %s (graphs: %s): a misspelt id?%s", quoteAll(unknown),
			strings.Join(names, ", "), describe(steps))
		return false
	}
	return true
}

// AssertVisited checks that every one of ids ran at least once.
func AssertVisited(t testing.TB, rec *PathRecorder, ids ...string) bool {
	t.Helper()
	if !usable(t, "AssertVisited", rec, true, ids) {
		return false
	}
	steps := rec.Steps()
	var missing []string
	for _, id := range ids {
		if count(steps, id) == 0 {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("testkit: not visited: %s%s", quoteAll(missing), describe(steps))
		return false
	}
	return true
}

// AssertNotVisited checks that none of ids ran. Each plain id must be a node of a graph
// that ran (see the package doc), so that a misspelt id or a recorder that was not
// installed fails instead of passing.
func AssertNotVisited(t testing.TB, rec *PathRecorder, ids ...string) bool {
	t.Helper()
	if !usable(t, "AssertNotVisited", rec, true, ids) {
		return false
	}
	steps, graphs := rec.recorded()
	if !nameable(t, steps, graphs, ids...) {
		return false
	}
	var seen []string
	for _, id := range ids {
		if n := count(steps, id); n > 0 {
			seen = append(seen, fmt.Sprintf("%q (%d times)", id, n))
		}
	}
	if len(seen) > 0 {
		t.Errorf("testkit: visited, but should not have been: %s%s", strings.Join(seen, ", "), describe(steps))
		return false
	}
	return true
}

// AssertVisitedInOrder checks that ids ran in this order, possibly with other nodes in
// between (a subsequence of the start order). Use it only for causally ordered nodes:
// parallel branches complete in no fixed order.
func AssertVisitedInOrder(t testing.TB, rec *PathRecorder, ids ...string) bool {
	t.Helper()
	if !usable(t, "AssertVisitedInOrder", rec, true, ids) {
		return false
	}
	steps := rec.Steps()
	pos := -1
	for k, id := range ids {
		next := slices.IndexFunc(steps[pos+1:], func(s Step) bool { return s.matches(id) })
		if next >= 0 {
			pos += 1 + next
			continue
		}
		var why string
		switch {
		case count(steps, id) == 0:
			why = fmt.Sprintf("%q was not visited", id)
		default:
			why = fmt.Sprintf("%q was not visited after %q (position %d)", id, ids[k-1], pos+1)
		}
		t.Errorf("testkit: not visited in order %s: %s%s", quoteAll(ids), why, describe(steps))
		return false
	}
	return true
}

// AssertVisitedTimes checks that the node ran exactly n times. With n = 0 it is
// AssertNotVisited, and a plain id must name a node the same way.
func AssertVisitedTimes(t testing.TB, rec *PathRecorder, id string, n int) bool {
	t.Helper()
	if !usable(t, "AssertVisitedTimes", rec, false, nil) {
		return false
	}
	steps, graphs := rec.recorded()
	if n == 0 && !nameable(t, steps, graphs, id) {
		return false
	}
	if got := count(steps, id); got != n {
		t.Errorf("testkit: %q visited %d times, want %d%s", id, got, n, describe(steps))
		return false
	}
	return true
}

// AssertPath checks that exactly ids ran, in this order and nothing else. It suits
// sequential graphs; with parallel branches prefer AssertVisitedInOrder and ByBranch.
func AssertPath(t testing.TB, rec *PathRecorder, ids ...string) bool {
	t.Helper()
	if !usable(t, "AssertPath", rec, false, nil) {
		return false
	}
	steps := rec.Steps()
	for i := range max(len(ids), len(steps)) {
		var why string
		switch {
		case i >= len(steps):
			why = fmt.Sprintf("want %q at position %d, the path ends", ids[i], i+1)
		case i >= len(ids):
			why = fmt.Sprintf("want the path to end, got %q at position %d", steps[i].Node, i+1)
		case !steps[i].matches(ids[i]):
			why = fmt.Sprintf("want %q at position %d, got %q", ids[i], i+1, steps[i].shown(ids[i]))
		default:
			continue
		}
		t.Errorf("testkit: path differs: %s\n\twant: %s%s", why, strings.Join(ids, " -> "), describe(steps))
		return false
	}
	return true
}

// Expectation chains path assertions on one recorder:
//
//	testkit.Expect(t, rec).Visited("a", "c").NotVisited("b").InOrder("a", "c")
//
// Every assertion runs, even after one failed; OK reports whether all passed.
type Expectation struct {
	t   testing.TB
	rec *PathRecorder
	ok  bool
}

// Expect starts a chain of assertions on rec.
func Expect(t testing.TB, rec *PathRecorder) *Expectation {
	return &Expectation{t: t, rec: rec, ok: true}
}

// Visited asserts AssertVisited.
func (e *Expectation) Visited(ids ...string) *Expectation {
	e.t.Helper()
	e.ok = AssertVisited(e.t, e.rec, ids...) && e.ok
	return e
}

// NotVisited asserts AssertNotVisited.
func (e *Expectation) NotVisited(ids ...string) *Expectation {
	e.t.Helper()
	e.ok = AssertNotVisited(e.t, e.rec, ids...) && e.ok
	return e
}

// InOrder asserts AssertVisitedInOrder.
func (e *Expectation) InOrder(ids ...string) *Expectation {
	e.t.Helper()
	e.ok = AssertVisitedInOrder(e.t, e.rec, ids...) && e.ok
	return e
}

// Times asserts AssertVisitedTimes.
func (e *Expectation) Times(id string, n int) *Expectation {
	e.t.Helper()
	e.ok = AssertVisitedTimes(e.t, e.rec, id, n) && e.ok
	return e
}

// Path asserts AssertPath.
func (e *Expectation) Path(ids ...string) *Expectation {
	e.t.Helper()
	e.ok = AssertPath(e.t, e.rec, ids...) && e.ok
	return e
}

// OK reports whether every assertion of the chain passed.
func (e *Expectation) OK() bool { return e.ok }
