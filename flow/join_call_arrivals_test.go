package flow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// A join whose task is a sub-graph call that suspends is resumed by re-entering the
// call: its NodeEnd must still say how many branches the join waited for, as when the
// join's own task suspends (TestSuspendedJoinKeepsItsArrivals).
func TestSuspendedJoinCallKeepsItsArrivals(t *testing.T) {
	t.Skip("known defect: the resume token groupSeeds makes for the call has no arrivals, and a call frame's state has no field for them (a frontier format decision)")
	e := flow.NewEngine()
	for _, def := range []string{`
id: sub
layout:
  - {id: s, type: start}
  - {id: w, task: 'approved == true || context.suspend("wait")'}
  - {id: e, type: end}
`, threeBranchJoin("j", "#sub")} {
		g, err := flow.LoadGraph("g.yml", []byte(def))
		require.NoError(t, err)
		require.NoError(t, e.Register(g))
	}
	g, _ := e.Graph("j")
	for _, restored := range []bool{false, true} {
		rec := newJoinRec()
		fc := flow.NewContext("i")
		res := evalRec(t, e, g, fc, rec)
		require.Equal(t, flow.StatusSuspended, res.Status)
		fr := res.Frontier
		if restored {
			fr = throughJSON(t, e, g, fr)
		}
		fc.Set("approved", true)
		res, err := e.Resume(context.Background(), fr, fc, flow.WithEvalInterceptor(rec, 0))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, []int{3, 3}, rec.arrivals["join"], "restored %v: the suspended run and the resumed one", restored)
	}
}
