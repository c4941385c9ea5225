package trace

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Records is a list of audit records with query helpers. The helpers return new lists
// in the original order and never modify the receiver.
type Records []Record

// Filter returns the records for which keep returns true.
func (rs Records) Filter(keep func(*Record) bool) Records {
	var out Records
	for i := range rs {
		if keep(&rs[i]) {
			out = append(out, rs[i])
		}
	}
	return out
}

// ByRun returns the records of one run.
func (rs Records) ByRun(runID string) Records {
	return rs.Filter(func(r *Record) bool { return r.RunID == runID })
}

// ByInstance returns the records of one flow instance (every run of it).
func (rs Records) ByInstance(instanceID string) Records {
	return rs.Filter(func(r *Record) bool { return r.InstanceID == instanceID })
}

// ByNode returns the records of a node: id is a plain node id ("approve"), which
// matches that node in any graph, or a qualified one ("leave/call/child:approve").
func (rs Records) ByNode(id string) Records {
	return rs.Filter(func(r *Record) bool { return !r.IsRun() && (r.NodeID == id || r.Qualified() == id) })
}

// ByStatus returns the records with the given status.
func (rs Records) ByStatus(s Status) Records {
	return rs.Filter(func(r *Record) bool { return r.Status == s })
}

// ByBranch returns the node records of one branch.
func (rs Records) ByBranch(branchID string) Records {
	return rs.Filter(func(r *Record) bool { return r.BranchID == branchID })
}

// ByGraph returns the node records of the nodes of one graph.
func (rs Records) ByGraph(graphID string) Records {
	return rs.Filter(func(r *Record) bool { return !r.IsRun() && r.GraphID == graphID })
}

// Nodes returns the node records (without the run records).
func (rs Records) Nodes() Records {
	return rs.Filter(func(r *Record) bool { return !r.IsRun() })
}

// Runs returns the run records.
func (rs Records) Runs() Records {
	return rs.Filter(func(r *Record) bool { return r.IsRun() })
}

// Terminal returns the terminal records (everything but STARTED).
func (rs Records) Terminal() Records {
	return rs.Filter(func(r *Record) bool { return r.Status.Terminal() })
}

// RunIDs returns the distinct run ids in order of first appearance.
func (rs Records) RunIDs() []string {
	var ids []string
	seen := map[string]bool{}
	for i := range rs {
		if id := rs[i].RunID; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// NodeIDs returns the node ids of the STARTED records, one per execution, in order.
func (rs Records) NodeIDs() []string {
	var ids []string
	for i := range rs {
		if r := &rs[i]; !r.IsRun() && r.Status == Started {
			ids = append(ids, r.NodeID)
		}
	}
	return ids
}

// Sorted returns a copy ordered by run (in order of first appearance) and, within a
// run, by sequence number: a run's orphan records (Seq 0) come first, in the order
// they came.
func (rs Records) Sorted() Records {
	order := map[string]int{}
	for i, id := range rs.RunIDs() {
		order[id] = i
	}
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b Record) int {
		if c := cmp.Compare(order[a.RunID], order[b.RunID]); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return out
}

// Verify checks the audit invariants over complete runs and returns every violation
// found (joined), or nil:
//
//   - within a run, sequence numbers are 1, 2, 3, ... with no gap or duplicate;
//   - a run starts with a run STARTED record and ends with one terminal run record;
//   - every node STARTED record is followed by exactly one terminal record of the same
//     node in the same branch, before that branch starts another node (a branch runs
//     one node at a time), and nothing is left open when the run ends.
//
// The records may come in any order; they are grouped by run and sorted by Seq.
// Orphan records (see Record.Seq) are outside the numbering of any run and are not
// checked against one: Verify only requires them to be node records with a known
// status, so an audit that wrote one, as documented, still verifies.
func (rs Records) Verify() error {
	var errs []error
	byRun := map[string]Records{}
	for _, r := range rs {
		if r.Seq == 0 {
			switch {
			case r.IsRun():
				errs = append(errs, fmt.Errorf("run %s: %s run record without a sequence number", r.RunID, r.Status))
			case r.Status != Started && !r.Status.Terminal():
				errs = append(errs, fmt.Errorf("run %s: orphan %s: unknown status %q", r.RunID, r.Qualified(), r.Status))
			}
			continue
		}
		byRun[r.RunID] = append(byRun[r.RunID], r)
	}
	for _, id := range rs.RunIDs() {
		run, ok := byRun[id]
		if !ok {
			continue // only orphans: a run the audit did not see
		}
		slices.SortStableFunc(run, func(a, b Record) int { return cmp.Compare(a.Seq, b.Seq) })
		errs = append(errs, verifyRun(id, run)...)
	}
	return errors.Join(errs...)
}

func verifyRun(id string, run Records) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("run %s: "+format, append([]any{id}, args...)...))
	}
	for i := range run {
		if run[i].Seq != int64(i+1) {
			bad("record %d has seq %d", i+1, run[i].Seq)
			break
		}
	}
	if len(run) < 2 || !run[0].IsRun() || run[0].Status != Started {
		bad("does not start with a run STARTED record")
	}
	if last := &run[len(run)-1]; !last.IsRun() || !last.Status.Terminal() {
		bad("does not end with a terminal run record")
	}
	runRecs := 0
	open := map[string]*Record{} // branch -> its STARTED record without an end yet
	for i := range run {
		r := &run[i]
		if r.IsRun() {
			runRecs++
			continue
		}
		o := open[r.BranchID]
		switch {
		case r.Status == Started && o != nil:
			bad("seq %d: %s started in branch %q while %s (seq %d) had not ended", r.Seq, r.Qualified(), r.BranchID, o.Qualified(), o.Seq)
			open[r.BranchID] = r
		case r.Status == Started:
			open[r.BranchID] = r
		case !r.Status.Terminal():
			bad("seq %d: unknown status %q", r.Seq, r.Status)
		case o == nil:
			bad("seq %d: %s ended %s in branch %q without a STARTED record", r.Seq, r.Qualified(), r.Status, r.BranchID)
		case o.NodeID != r.NodeID || o.Path != r.Path:
			bad("seq %d: %s ended %s in branch %q, but %s (seq %d) was the node running there", r.Seq, r.Qualified(), r.Status, r.BranchID, o.Qualified(), o.Seq)
			delete(open, r.BranchID)
		default:
			delete(open, r.BranchID)
			if r.Status == Failed && r.Error == nil {
				bad("seq %d: %s FAILED without an error", r.Seq, r.Qualified())
			}
		}
	}
	if runRecs != 2 {
		bad("has %d run records, want 2", runRecs)
	}
	for _, b := range sortedKeys(open) {
		o := open[b]
		bad("%s (seq %d) started in branch %q and never ended", o.Qualified(), o.Seq, b)
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
