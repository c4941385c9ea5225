package trace

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rec(seq int64, st Status, node, branch string) Record {
	return Record{Seq: seq, Status: st, NodeID: node, BranchID: branch, RunID: "r", Path: "g", GraphID: "g", InstanceID: "i"}
}

func goodRun() Records {
	return Records{
		rec(1, Started, "", ""),
		rec(2, Started, "s", "main"),
		rec(3, Completed, "s", "main"),
		rec(4, Started, "a", "main/p:a"),
		rec(5, Started, "b", "main/p:b"),
		rec(6, Interrupted, "b", "main/p:b"),
		{Seq: 7, Status: Failed, NodeID: "a", BranchID: "main/p:a", RunID: "r", Path: "g", Error: &ErrorInfo{Code: "x"}},
		rec(8, Failed, "", ""),
	}
}

func TestVerify(t *testing.T) {
	require.NoError(t, goodRun().Verify())
	// Order does not matter, several runs may interleave.
	other := goodRun()
	for i := range other {
		other[i].RunID = "r2"
	}
	mixed := append(Records{}, other[4:]...)
	mixed = append(mixed, goodRun()...)
	mixed = append(mixed, other[:4]...)
	require.NoError(t, mixed.Verify())

	for name, c := range map[string]struct {
		edit func(Records) Records
		want string
	}{
		"missing end":      {func(r Records) Records { return append(r[:5:5], r[6:]...) }, `g:b (seq 5) started in branch "main/p:b" and never ended`},
		"gap in seq":       {func(r Records) Records { r[3].Seq = 40; return r }, "record 4 has seq 5"},
		"two ends":         {func(r Records) Records { x := r[2]; x.Seq = 9; return append(r, x) }, "ended COMPLETED in branch \"main\" without a STARTED record"},
		"wrong node ends":  {func(r Records) Records { r[5].NodeID = "zz"; return r }, "g:zz ended INTERRUPTED"},
		"overlap":          {func(r Records) Records { r[4].BranchID = "main/p:a"; r[5].BranchID = "main/p:a"; return r }, "started in branch \"main/p:a\" while"},
		"no run start":     {func(r Records) Records { r[0].NodeID = "x"; return r }, "does not start with a run STARTED record"},
		"no run end":       {func(r Records) Records { return r[:7] }, "does not end with a terminal run record"},
		"failed, no error": {func(r Records) Records { r[6].Error = nil; return r }, "FAILED without an error"},
	} {
		t.Run(name, func(t *testing.T) {
			err := c.edit(goodRun()).Verify()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestRecordsQueries(t *testing.T) {
	rs := goodRun()
	rs = append(rs, Record{Seq: 1, RunID: "r2", InstanceID: "j", Status: Started, NodeID: "a", Path: "g/c/h", GraphID: "h", BranchID: "main/c/h"})
	assert.Equal(t, []string{"r", "r2"}, rs.RunIDs())
	assert.Len(t, rs.ByRun("r"), 8)
	assert.Len(t, rs.ByInstance("j"), 1)
	assert.Len(t, rs.ByNode("a"), 3)
	assert.Len(t, rs.ByNode("g/c/h:a"), 1)
	assert.Len(t, rs.ByStatus(Failed), 2)
	assert.Len(t, rs.ByBranch("main/p:b"), 2)
	assert.Len(t, rs.ByGraph("h"), 1)
	assert.Len(t, rs.Runs(), 2)
	assert.Len(t, rs.Nodes(), 7)
	assert.Len(t, rs.Terminal(), 4)
	assert.Equal(t, []string{"s", "a", "b", "a"}, rs.NodeIDs())
	sorted := Records{rs[8], rs[3], rs[0]}.Sorted()
	assert.Equal(t, []int64{1, 1, 4}, []int64{sorted[0].Seq, sorted[1].Seq, sorted[2].Seq})
	assert.Equal(t, "r2", sorted[0].RunID, "runs keep their order of first appearance")

	m := rs.Metrics("r")
	assert.Equal(t, Metrics{RunID: "r", InstanceID: "i", GraphID: "g", Status: Failed, Started: 3, Completed: 1, Failed: 1, Interrupted: 1}, m)
	assert.Equal(t, 3, m.Ended())
}

type counter map[Counter]int

func (c counter) Count(k Counter, n int) { c[k] += n }

func TestCount(t *testing.T) {
	Count(context.Background(), CountFallback, 1) // no sink: nothing happens
	a, b := counter{}, counter{}
	ctx := WithCounterSink(WithCounterSink(context.Background(), a), b)
	Count(ctx, CountRejection, 2)
	Count(ctx, CountFallback, 1)
	assert.Equal(t, counter{CountRejection: 2, CountFallback: 1}, a)
	assert.Equal(t, a, b)
}

// Count reaches the run sinks of the innermost run that has any (all of them, when
// two interceptors keep metrics for it) and every sink of WithCounterSink, wherever
// it was added.
func TestCountRunSinks(t *testing.T) {
	app, outer, inner1, inner2, mid := counter{}, counter{}, counter{}, counter{}, counter{}
	ctx := WithCounterSink(context.Background(), app)
	ctx = WithRunCounterSink(ctx, "a", outer)
	Count(ctx, CountFallback, 1)
	ctx = WithCounterSink(ctx, mid)
	ctx = WithRunCounterSink(ctx, "b", inner1)
	ctx = WithRunCounterSink(ctx, "b", inner2)
	Count(ctx, CountRejection, 2)
	assert.Equal(t, counter{CountFallback: 1}, outer, "not the nested run's events")
	assert.Equal(t, counter{CountRejection: 2}, inner1)
	assert.Equal(t, inner1, inner2)
	assert.Equal(t, counter{CountRejection: 2}, mid)
	assert.Equal(t, counter{CountFallback: 1, CountRejection: 2}, app)
}

// Orphan records (Seq 0: a node event the audit got after its run was written, or
// outside any run it saw) are outside every run's numbering: Verify accepts them, and
// checks the runs around them as if they were not there. A run record without a
// number is not an orphan.
func TestVerifyOrphans(t *testing.T) {
	orphan := rec(0, Completed, "x", "main")
	withOrphans := append(goodRun(), orphan, rec(0, Started, "y", "main/p:a"))
	require.NoError(t, withOrphans.Verify())

	alone := Records{orphan}
	alone[0].RunID = "unseen"
	require.NoError(t, alone.Verify(), "a run the audit never saw has only orphans")

	err := append(goodRun(), rec(0, Failed, "", "")).Verify()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run record without a sequence number")

	err = append(goodRun(), rec(0, "", "x", "main")).Verify()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown status ""`)
}

// The metrics of a run do not count its orphan records, which repeat an execution the
// run already ended (its node_end_missing record); a run the audit never saw, which
// has orphans only, is counted from them.
func TestMetricsOrphans(t *testing.T) {
	rs := append(goodRun(), rec(0, Completed, "b", "main/p:b"))
	m := rs.Metrics("r")
	assert.Equal(t, 3, m.Started)
	assert.Equal(t, m.Started, m.Ended())

	alone := Records{rec(0, Started, "x", "main"), rec(0, Completed, "x", "main")}
	m = alone.Metrics("r")
	assert.Equal(t, 1, m.Started)
	assert.Equal(t, 1, m.Completed)
	assert.Equal(t, "i", m.InstanceID)
}

// Sorted keeps a run's orphan records (Seq 0) first, in the order they came: the
// order its doc gives, which "flowteam audit" relies on for a run's last record.
func TestSortedOrphansFirst(t *testing.T) {
	o1, o2 := rec(0, Started, "y", "main"), rec(0, Completed, "x", "main")
	rs := append(Records{o1}, goodRun()...)
	rs = append(rs, o2)
	got := rs.Sorted()
	require.Len(t, got, len(rs))
	assert.Equal(t, []Record{o1, o2}, []Record(got[:2]))
	assert.Equal(t, int64(8), got[len(got)-1].Seq)
}
