package flow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// outcomeWatch keeps the root invocation's outcome, as an audit interceptor reads it.
type outcomeWatch struct {
	flow.NopInterceptor
	status flow.Status
}

func (w *outcomeWatch) InterceptFlow(ctx context.Context, inv *flow.Invocation) error {
	err := inv.Invoke(ctx)
	if inv.Node == nil {
		w.status, _, _ = inv.Outcome()
	}
	return err
}

// Stop ends the run once the current node finishes and leaves what would run next in
// the frontier. A Stop with nothing left to run (the end node's task, or the last node
// of the last branch) stopped nothing: the run completed. It reported "stopped" with
// no frontier, which Resume refused (ErrNotResumable) and a session could not resume
// (ErrNoFrontier), although Solon's eval of the same context finishes at once.
func TestStopWithNothingLeftCompletes(t *testing.T) {
	cases := []struct {
		name    string
		build   func(s *flow.GraphSpec)
		want    flow.Status
		pending []string
	}{
		{"in the end node", func(s *flow.GraphSpec) {
			s.Start("s").LinkTo("a")
			s.Activity("a").LinkTo("e")
			s.End("e").SetTask(`context.stop()`)
		}, flow.StatusCompleted, nil},
		{"in a last node without links", func(s *flow.GraphSpec) {
			s.Start("s").LinkTo("a")
			s.Activity("a").SetTask(`context.stop()`)
		}, flow.StatusCompleted, nil},
		{"in a last node whose link does not hold", func(s *flow.GraphSpec) {
			s.Start("s").LinkTo("a")
			s.Activity("a").SetTask(`context.stop()`).LinkTo("e", flow.LinkWhen("false"))
			s.End("e")
		}, flow.StatusCompleted, nil},
		{"in the end node of the last branch", func(s *flow.GraphSpec) {
			s.Start("s").LinkTo("p")
			s.Inclusive("p").LinkTo("a").LinkTo("b") // its branches run in order
			s.Activity("a").LinkTo("e1")
			s.End("e1")
			s.Activity("b").LinkTo("e2")
			s.End("e2").SetTask(`context.stop()`)
		}, flow.StatusCompleted, nil},
		{"before the end node", func(s *flow.GraphSpec) {
			s.Start("s").LinkTo("a")
			s.Activity("a").SetTask(`context.stop()`).LinkTo("e")
			s.End("e")
		}, flow.StatusStopped, []string{"g:e"}},
		{"in the end node while a sibling branch waits", func(s *flow.GraphSpec) {
			s.Start("s").LinkTo("x")
			s.Activity("x").LinkTo("e1").LinkTo("b")
			s.End("e1").SetTask(`context.stop()`)
			s.Activity("b").LinkTo("e2")
			s.End("e2")
		}, flow.StatusStopped, []string{"g:b"}},
	}
	e := flow.NewEngine()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := flow.NewSpec("g")
			tc.build(s)
			g := build(t, s)
			watch := &outcomeWatch{}
			res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"), flow.WithEvalInterceptor(watch, 0))
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Status)
			assert.Equal(t, tc.want, watch.status, "the run's outcome, as interceptors see it")
			if tc.pending == nil {
				assert.Nil(t, res.Frontier)
				return
			}
			require.NotNil(t, res.Frontier)
			assert.Equal(t, tc.pending, res.Frontier.Pending())
			res, err = e.Resume(context.Background(), res.Frontier, flow.NewContext("i"))
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
		})
	}
}
