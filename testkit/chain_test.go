package testkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/testkit"
)

// A chain of n activities runs s, n0 … n<n-1>, e; with none, s then e.
func TestChain(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []string
	}{
		{0, []string{"s", "e"}},
		{1, []string{"s", "n0", "e"}},
		{3, []string{"s", "n0", "n1", "n2", "e"}},
	} {
		g := testkit.Chain(t, "chain", tc.n, nil)
		rec := testkit.NewPathRecorder()
		res, err := flow.NewEngine().EvalGraph(context.Background(), g, flow.NewContext("c"), flow.WithEvalInterceptor(rec, 0))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		testkit.AssertPath(t, rec, tc.want...)
	}
}
