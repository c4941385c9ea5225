package flow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// An activity with two true links opens a (sequential) split inside a parallel
// branch, and all the branches meet at the same parallel join: the join has three
// incoming links and runs once, with three arrivals.
func TestNestedFanOutsMeetingAtOneJoin(t *testing.T) {
	for _, xTask := range []string{`context.incr("n")`, `context.interrupt()`} {
		res, fc, rec := meetAtOneJoin(t, xTask)
		require.NoError(t, res.Err)
		want := 3
		if xTask == `context.interrupt()` {
			want = 2 // x withdrawn: y and b arrive
		}
		assert.Equal(t, int64(want), fc.Value("n"))
		assert.Equal(t, int64(1), fc.Value("joined"), "the join waits for all its incoming links")
		assert.Equal(t, []int{want}, rec.arrivals["j"])
		assert.Equal(t, 1, rec.starts["e"])
	}
}

func meetAtOneJoin(t *testing.T, xTask string) (*flow.Result, *flow.Context, *joinRec) {
	s := flow.NewSpec("meet")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").LinkTo("x").LinkTo("y")
	s.Activity("x").SetTask(xTask).LinkTo("j")
	s.Activity("y").SetTask(`context.incr("n")`).LinkTo("j")
	s.Activity("b").SetTask(`context.incr("n")`).LinkTo("j")
	s.Parallel("j").SetTask(`context.incr("joined")`).LinkTo("e")
	s.End("e")
	rec := newJoinRec()
	fc := flow.NewContext("i")
	return evalRec(t, flow.NewEngine(), build(t, s), fc, rec), fc, rec
}

// A branch of the nested fan-out suspends; the frontier goes through its plain-data
// form and back, and is resumed twice (a Frontier is not consumed): each time the
// suspended node runs again and the join fires once with all three arrivals.
func TestNestedFanOutResumedFromRestoredFrontier(t *testing.T) {
	s := flow.NewSpec("meet")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").LinkTo("x").LinkTo("y")
	s.Activity("x").SetTask(`context.incr("x"); ok == true || context.suspend("x waits")`).LinkTo("j")
	s.Activity("y").SetTask(`context.incr("y")`).LinkTo("j")
	s.Activity("b").SetTask(`context.incr("b")`).LinkTo("j")
	s.Parallel("j").SetTask(`context.incr("joined")`).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	fc := flow.NewContext("i")
	res := evalRec(t, e, g, fc, newJoinRec())
	require.NoError(t, res.Err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	fr, err := e.RestoreFrontier(g, res.Frontier.State())
	require.NoError(t, err)
	for range 2 {
		vars := fc.Vars()
		vars["ok"] = true
		again := flow.NewContextWith("i", vars)
		rec := newJoinRec()
		res := resumeRec(t, e, fr, again, rec)
		require.NoError(t, res.Err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, int64(2), again.Value("x"), "the suspended node runs again")
		assert.Equal(t, int64(1), again.Value("y"))
		assert.Equal(t, int64(1), again.Value("b"))
		assert.Equal(t, int64(1), again.Value("joined"))
		assert.Equal(t, []int{3}, rec.arrivals["j"])
	}
}

// The nested fan-out meeting at one join, all sequential (an inclusive outer split),
// checkpointed after every node: resuming from any checkpoint's state, as a new
// process would, runs every node exactly as often as the uninterrupted run.
func TestNestedFanOutCheckpointsAreExact(t *testing.T) {
	s := flow.NewSpec("meetc")
	s.Start("s").DoFunc(countTask).LinkTo("p")
	s.Inclusive("p").LinkTo("a", flow.LinkWhen("true")).LinkTo("b", flow.LinkWhen("true"))
	s.Activity("a").DoFunc(countTask).LinkTo("x").LinkTo("y")
	s.Activity("x").DoFunc(countTask).LinkTo("j")
	s.Activity("y").DoFunc(countTask).LinkTo("j")
	s.Activity("b").DoFunc(countTask).LinkTo("j")
	s.Inclusive("j").DoFunc(countTask).LinkTo("e")
	s.End("e").DoFunc(countTask)
	g := build(t, s)
	e := flow.NewEngine()
	var cps []flow.Checkpoint
	full := flow.NewContext("d")
	res, err := e.EvalGraph(context.Background(), g, full, flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
		cps = append(cps, cp)
		return nil
	}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	want := full.Vars()
	for _, id := range []string{"s", "a", "x", "y", "b", "j", "e"} {
		require.Equal(t, 1, want["ran."+id], id)
	}
	for _, cp := range cps[:len(cps)-1] {
		fr, err := e.RestoreFrontier(g, cp.Frontier)
		require.NoError(t, err, "after %s", cp.Node)
		fc := flow.NewContextWith("d", cp.Vars)
		res, err := e.Resume(context.Background(), fr, fc)
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, want, fc.Vars(), "resumed after %s", cp.Node)
	}
}
