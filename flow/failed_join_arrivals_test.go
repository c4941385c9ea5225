package flow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// A join whose node fails the run is parked to run again on resume, as a suspended
// one is: its NodeEnd must then say how many branches it waited for, whether the
// node's own task failed or its sub-graph call did (a checkpoint taken while the
// failed call's node was live again already said so).
func TestFailedJoinKeepsItsArrivals(t *testing.T) {
	e := flow.NewEngine()
	for _, def := range []string{`
id: sub
layout:
  - {id: s, type: start}
  - {id: w, task: 'approved == true || raise("E1", "not yet")'}
  - {id: e, type: end}
`, threeBranchJoin("own", `approved == true || raise("E1", "not yet")`), threeBranchJoin("call", "#sub")} {
		g, err := flow.LoadGraph("g.yml", []byte(def))
		require.NoError(t, err)
		require.NoError(t, e.Register(g))
	}
	for _, id := range []string{"own", "call"} {
		g, _ := e.Graph(id)
		for _, restored := range []bool{false, true} {
			rec := newJoinRec()
			fc := flow.NewContext("i")
			res := evalRec(t, e, g, fc, rec)
			require.Equal(t, flow.StatusFailed, res.Status)
			fr := res.Frontier
			require.NotNil(t, fr)
			if restored {
				fr = throughJSON(t, e, g, fr)
			}
			fc.Set("approved", true)
			res, err := e.Resume(context.Background(), fr, fc, flow.WithEvalInterceptor(rec, 0))
			require.NoError(t, err)
			require.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, []int{3, 3}, rec.arrivals["join"], "%s, restored %v: the failed run and the resumed one", id, restored)
		}
	}
}
