package flow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// countTask counts its node's executions in the context.
func countTask(_ context.Context, c *flow.Context, n *flow.Node) error {
	c.Update("ran."+n.ID, func(old any, _ bool) any {
		v, _ := old.(int)
		return v + 1
	})
	return nil
}

// durableGraph mixes an inclusive split and join, a loop and a sub-graph call, all
// sequential, so that every checkpoint is exact.
func durableGraph(t *testing.T, e *flow.Engine) *flow.Graph {
	c := flow.NewSpec("sub")
	c.Start("cs").DoFunc(countTask).LinkTo("c1")
	c.Activity("c1").DoFunc(countTask).LinkTo("ce")
	c.End("ce")
	require.NoError(t, e.Register(build(t, c)))
	s := flow.NewSpec("durable")
	s.Start("s").DoFunc(countTask).LinkTo("g")
	s.Inclusive("g").LinkTo("a", flow.LinkWhen("true")).LinkTo("b", flow.LinkWhen("true"))
	s.Activity("a").DoFunc(countTask).LinkTo("j")
	s.Activity("b").DoFunc(countTask).LinkTo("j")
	s.Inclusive("j").DoFunc(countTask).LinkTo("l")
	s.Loop("l", "i", "0:3").LinkTo("body")
	s.Activity("body").DoFunc(countTask).LinkTo("lc")
	s.Loop("lc", "", nil).LinkTo("call")
	s.Activity("call").SetTask("#sub").LinkTo("e")
	s.End("e").DoFunc(countTask)
	return build(t, s)
}

// TestCheckpointResumeRunsEveryNodeOnce kills the run after every checkpoint in turn
// (by resuming from that checkpoint's state as a new process would) and checks that
// every node ran exactly as often as in an uninterrupted run.
func TestCheckpointResumeRunsEveryNodeOnce(t *testing.T) {
	e := flow.NewEngine()
	g := durableGraph(t, e)
	var cps []flow.Checkpoint
	full := flow.NewContext("d")
	res, err := e.EvalGraph(context.Background(), g, full, flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
		cps = append(cps, cp)
		return nil
	}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	want := full.Vars()
	assert.Equal(t, 3, want["ran.body"])
	require.Equal(t, res.Steps, len(cps), "one checkpoint per completed node")

	for i, cp := range cps[:len(cps)-1] {
		t.Run(fmt.Sprintf("after %d %s", cp.Seq, cp.Node), func(t *testing.T) {
			// Round-trip through JSON, as a store would.
			data, err := json.Marshal(cp.Frontier)
			require.NoError(t, err)
			var st flow.FrontierState
			require.NoError(t, json.Unmarshal(data, &st))
			fr, err := e.RestoreFrontier(g, st)
			require.NoError(t, err, "checkpoint %d", i)
			fc := flow.NewContextWith("d", cp.Vars)
			res, err := e.Resume(context.Background(), fr, fc)
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			got := fc.Vars()
			for k, v := range want {
				assert.Equal(t, v, got[k], k)
			}
		})
	}
}

func TestRestoreFrontierRejectsCorruptState(t *testing.T) {
	e := flow.NewEngine()
	g := durableGraph(t, e)
	var cps []flow.Checkpoint
	_, err := e.EvalGraph(context.Background(), g, flow.NewContext("d"), flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
		cps = append(cps, cp)
		return nil
	}))
	require.NoError(t, err)
	base := cps[len(cps)/2].Frontier
	mutate := []func(st *flow.FrontierState){
		func(st *flow.FrontierState) { st.Graph = "other" },
		func(st *flow.FrontierState) { st.Tokens[0].Node = "nope" },
		func(st *flow.FrontierState) { st.Tokens[0].Mode = "fly" },
		func(st *flow.FrontierState) { st.Tokens[0].Frame = 99 },
		func(st *flow.FrontierState) { st.Frames[0].Kind = "weird" },
		func(st *flow.FrontierState) { st.Frames[0].Parent = 3 },
		func(st *flow.FrontierState) { st.Tokens = nil },
		func(st *flow.FrontierState) { st.Frames = nil },
		func(st *flow.FrontierState) { st.Frames[0].Failed = []flow.FailedBranch{{Node: st.Tokens[0].Node}} }, // not a split frame
	}
	for i, m := range mutate {
		data, _ := json.Marshal(base)
		var st flow.FrontierState
		require.NoError(t, json.Unmarshal(data, &st))
		m(&st)
		_, err := e.RestoreFrontier(g, st)
		assert.ErrorIs(t, err, flow.ErrBadFrontier, "mutation %d", i)
	}
}

// TestCheckpointRecycle takes the checkpoints of a run whose receiver recycles every
// checkpoint's maps and slices at the next one, and checks that they are those of a
// run that recycles nothing.
func TestCheckpointRecycle(t *testing.T) {
	type seen struct {
		node     string
		vars     map[string]any
		trace    map[string]string
		frontier []string
	}
	collect := func(recycle bool) []seen {
		e := flow.NewEngine()
		g := durableGraph(t, e)
		var out []seen
		var prev *flow.Checkpoint
		_, err := e.EvalGraph(context.Background(), g, flow.NewContext("d"), flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
			s := seen{node: cp.Node, vars: maps.Clone(cp.Vars), trace: map[string]string{}, frontier: describeFrontier(cp.Frontier)}
			for p, r := range cp.Trace.Last {
				s.trace[p] = r.NodeID
			}
			out = append(out, s)
			if recycle {
				if prev != nil {
					cp.Recycle(prev.Vars, prev.Trace, &prev.Frontier)
				}
				prev = &cp
			}
			return nil
		}))
		require.NoError(t, err)
		return out
	}
	want, got := collect(false), collect(true)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i], got[i], "checkpoint %d", i+1)
	}
	flow.Checkpoint{}.Recycle(map[string]any{}, trace.FlowTrace{}, nil) // not from a run: ignored
}

// describeFrontier lists the tokens of a frontier with their frames, in an order that
// does not depend on the order of the tokens.
func describeFrontier(st flow.FrontierState) []string {
	var out []string
	for _, tk := range st.Tokens {
		d := fmt.Sprintf("%s %s %s", tk.Node, tk.Mode, tk.Branch)
		for f := tk.Frame; f >= 0; f = st.Frames[f].Parent {
			fs := st.Frames[f]
			d += fmt.Sprintf(" < %s %s%s%s p%d a%d i%d", fs.Kind, fs.Split, fs.Loop, fs.Path, fs.Pending, fs.Arrived, fs.Index)
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}
