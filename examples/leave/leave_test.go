package leave_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/testkit"
)

func TestLeave(t *testing.T) {
	eng := flow.NewEngine()
	g, err := eng.LoadFile("leave.yml")
	require.NoError(t, err)
	require.Equal(t, "leave", g.ID)

	// Expected paths read off leave.yml: s, submit, manager, then the gateway g1 sends
	// day >= 3 to director and everything else straight to the end node e.
	short := []string{"s", "submit", "manager", "g1", "e"}
	long := []string{"s", "submit", "manager", "g1", "director", "e"}
	for _, tc := range []struct {
		day        any
		path       []string
		approvedBy []any
	}{
		{day: 1, path: short, approvedBy: []any{"manager"}},
		{day: 2.5, path: short, approvedBy: []any{"manager"}},
		{day: 3, path: long, approvedBy: []any{"manager", "director"}},
		{day: 5, path: long, approvedBy: []any{"manager", "director"}},
	} {
		rec := testkit.NewPathRecorder()
		fc := flow.NewContextWith("leave-1", map[string]any{"day": tc.day})
		res, err := eng.Eval(context.Background(), "leave", fc, flow.WithEvalInterceptor(rec, 0))
		require.NoError(t, err, "day=%v", tc.day)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, tc.path, rec.Path(), "day=%v", tc.day)
		assert.Equal(t, tc.approvedBy, fc.Value("approvedBy"), "day=%v", tc.day)
		assert.Equal(t, "approved", fc.Value("status"))
		assert.Equal(t, true, fc.Value("managerApproved"))
		_, director := fc.Get("directorApproved")
		assert.Equal(t, len(tc.path) == len(long), director, "day=%v", tc.day)
		assert.Equal(t, map[string]string{"leave": "e"}, res.Last())
		assert.Equal(t, len(tc.path), res.Steps)
	}
}

func TestLeaveWithoutDay(t *testing.T) {
	eng := flow.NewEngine()
	_, err := eng.LoadFile("leave.yml")
	require.NoError(t, err)
	// "day >= 3" cannot compare null with a number: the run fails at the gateway.
	res, err := eng.Eval(context.Background(), "leave", flow.NewContext("leave-2"))
	require.Error(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	var ne *flow.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "g1", ne.Node)
	assert.Equal(t, flow.CodeCondition, ne.Code)
}
