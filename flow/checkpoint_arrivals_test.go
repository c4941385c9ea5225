package flow_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// A checkpoint taken while a join's node runs (another branch of an enclosing split
// completed a node meanwhile) keeps the join's token as it is: at the join's node,
// with the arrivals the join waited for, as a suspended join's frontier does. A
// process that resumes from that checkpoint runs the join's node once, and its
// NodeEnd (the audit's record of the join) says how many branches it waited for.
func TestCheckpointWhileAJoinRunsKeepsItsArrivals(t *testing.T) {
	joinRunning, xDone := make(chan struct{}), make(chan struct{})
	e := flow.NewEngine()
	s := flow.NewSpec("j")
	s.Start("s").LinkTo("outer")
	s.Parallel("outer").LinkTo("x").LinkTo("p")
	s.Activity("x").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		select {
		case <-joinRunning:
		case <-ctx.Done():
		}
		return nil
	}).LinkTo("outerJoin")
	s.Parallel("p").LinkTo("a").LinkTo("b").LinkTo("c")
	for _, id := range []string{"a", "b", "c"} {
		s.Activity(id).LinkTo("join")
	}
	first := true
	s.Parallel("join").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		if first { // the first run only: the resumed one goes straight on
			first = false
			close(joinRunning)
			select {
			case <-xDone:
			case <-ctx.Done():
			}
		}
		return nil
	}).LinkTo("outerJoin")
	s.Parallel("outerJoin").LinkTo("e")
	s.End("e")
	g := build(t, s)

	var st flow.FrontierState
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"), flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
		if cp.Node == "x" {
			data, err := json.Marshal(cp.Frontier)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &st))
			close(xDone)
		}
		return nil
	}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)

	var joinTok *flow.TokenState
	for i := range st.Tokens {
		if st.Tokens[i].Node == "join" {
			joinTok = &st.Tokens[i]
		}
	}
	require.NotNil(t, joinTok, "the join's token is in the checkpoint: %+v", st.Tokens)
	assert.Equal(t, 3, joinTok.Arrivals, "%+v", *joinTok)

	fr, err := e.RestoreFrontier(g, st)
	require.NoError(t, err)
	rec := newJoinRec()
	res, err = e.Resume(context.Background(), fr, flow.NewContext("i"), flow.WithEvalInterceptor(rec, 0))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, rec.starts["join"], "the join's node runs once")
	assert.Equal(t, []int{3}, rec.arrivals["join"])
}
