package flow

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// One Result kept across runs of different graphs with different outcomes (and a
// resume into it) always holds exactly what a fresh Result of the same run holds:
// nothing of the run before shows through.
func TestWithResultAcrossGraphsAndOutcomes(t *testing.T) {
	e := NewEngine()
	load := func(src string) *Graph {
		g, err := LoadGraph("g.yml", []byte(src))
		require.NoError(t, err)
		return g
	}
	child := load("id: child\nlayout:\n  - {id: cs, type: start}\n  - {id: c1, task: 'context.incr(\"c\")'}\n  - {id: ce, type: end}\n")
	require.NoError(t, e.Register(child))
	graphs := []*Graph{
		load("id: susp\nlayout:\n  - {id: s, type: start}\n  - {id: ask, task: 'ok == true || context.suspend(\"wait\")'}\n  - {id: e, type: end}\n"),
		load("id: calls\nlayout:\n  - {id: s, type: start}\n  - {id: a, task: '#child'}\n  - {id: b, task: '#child'}\n  - {id: e, type: end}\n"),
		load("id: bad\nlayout:\n  - {id: s, type: start}\n  - {id: x, task: 'raise(\"E1\", \"no\")', meta: {onError: {fallback: {state: f}}}}\n  - {id: e, type: end}\n"),
		load(`
id: cont
meta: {branchPolicy: continue}
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: [ok, ko]}
  - {id: ok, task: 'context.put("ok", 1)', link: j}
  - {id: ko, task: 'raise("E2", "branch")', link: j}
  - {id: j, type: parallel}
  - {id: e, type: end}
`),
		load("id: plain\nlayout:\n  - {id: s, type: start}\n  - {id: n, task: 'context.put(\"n\", 1)'}\n  - {id: e, type: end}\n"),
		load("id: stop\nlayout:\n  - {id: s, type: start}\n  - {id: st, task: 'context.stop()'}\n  - {id: e, type: end}\n"),
	}
	var kept Result
	opt := WithResult(&kept)
	for round := range 3 {
		for _, g := range graphs {
			fresh, freshErr := e.EvalGraph(context.Background(), g, NewContext("i"))
			got, err := e.EvalGraph(context.Background(), g, NewContext("i"), opt)
			require.Same(t, &kept, got)
			require.Equal(t, freshErr, err, "%s round %d", g.ID, round)
			if g.ID == "cont" {
				// Its two branches run concurrently: which one takes step 3 varies.
				fresh, got = withoutSteps(fresh), withoutSteps(got)
			}
			sameOutcome(t, fresh, got)
		}
		// A suspended run resumed into the kept Result, as a fresh resume would be.
		fc := NewContext("i")
		_, err := e.EvalGraph(context.Background(), graphs[0], fc, opt)
		require.NoError(t, err)
		fr := kept.Frontier
		fc.Set("ok", true)
		fc2 := NewContextWith("i", fc.Vars())
		fresh, err := e.Resume(context.Background(), fr, fc2)
		require.NoError(t, err)
		_, err = e.Resume(context.Background(), fr, fc, opt)
		require.NoError(t, err)
		sameOutcome(t, fresh, &kept)
		require.Equal(t, StatusCompleted, kept.Status)
	}
}

// withoutSteps returns a copy of res whose failure records say step 0.
func withoutSteps(res *Result) *Result {
	c := *res
	errs := map[*NodeError]*NodeError{}
	unstep := func(ne *NodeError) *NodeError {
		if ne == nil {
			return nil
		}
		if errs[ne] == nil {
			x := *ne
			x.Step = 0
			errs[ne] = &x
		}
		return errs[ne]
	}
	c.Errors = nil
	for _, ne := range res.Errors {
		c.Errors = append(c.Errors, unstep(ne))
	}
	c.BranchFailures = append([]BranchFailure(nil), res.BranchFailures...)
	for i := range c.BranchFailures {
		c.BranchFailures[i].Err = unstep(c.BranchFailures[i].Err)
	}
	c.ExecutionErrors = append([]ExecutionError(nil), res.ExecutionErrors...)
	for i := range c.ExecutionErrors {
		c.ExecutionErrors[i].Step = 0
	}
	return &c
}
