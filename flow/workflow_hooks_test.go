package flow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// TestLink and RunTask evaluate a graph's compiled conditions and tasks outside a run.
func TestLinkAndRunTaskOutsideARun(t *testing.T) {
	spec := flow.NewSpec("hooks")
	spec.Start("s").LinkTo("calc")
	spec.Activity("calc").SetTask(`context.put("total", a + b);`).SetWhen("a > 0").
		LinkTo("big", flow.LinkWhen("total > 10")).LinkTo("e")
	spec.Activity("big").LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine()
	ctx := context.Background()
	fc := flow.NewContextWith("i", map[string]any{"a": 4, "b": 9})

	calc := g.Node("calc")
	require.NoError(t, eng.RunTask(ctx, calc, fc))
	total, _ := fc.GetInt("total")
	assert.Equal(t, int64(13), total)
	ok, err := eng.TestLink(ctx, calc.Links()[0], fc)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = eng.TestLink(ctx, calc.Links()[1], fc)
	require.NoError(t, err)
	assert.True(t, ok, "a link without a condition holds")

	fc = flow.NewContextWith("i", map[string]any{"a": 0, "b": 1, "total": 1})
	require.NoError(t, eng.RunTask(ctx, calc, fc), "the guard skips the task")
	total, _ = fc.GetInt("total")
	assert.Equal(t, int64(1), total)
	ok, err = eng.TestLink(ctx, calc.Links()[0], fc)
	require.NoError(t, err)
	assert.False(t, ok)

	fc = flow.NewContextWith("i", map[string]any{"a": 1, "b": "x"})
	assert.Error(t, eng.RunTask(ctx, calc, fc), "a script that fails returns its error")
}
