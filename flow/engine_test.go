package flow_test

import (
	"context"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunContextEndsWithTheRun(t *testing.T) {
	var kept context.Context
	s := flow.NewSpec("keep")
	s.Start("s").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		kept = ctx
		return nil
	})
	res, _, _ := run(t, flow.NewEngine(), build(t, s), nil)
	require.NoError(t, res.Err)
	select {
	case <-kept.Done():
	default:
		t.Fatal("a task's context must be done once the run is over")
	}
	assert.ErrorIs(t, kept.Err(), context.Canceled)
}

func TestForgetDropsTheCompiledGraph(t *testing.T) {
	// A compiled graph binds the task registered when it was compiled; only after
	// Forget does EvalGraph compile again and see a task registered since.
	e := flow.NewEngine(flow.WithTaskFunc("t", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		c.Set("by", "first")
		return nil
	}))
	s := flow.NewSpec("once")
	s.Start("s").SetTask("@t")
	g := build(t, s)
	fc := flow.NewContext("f")
	_, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	e.RegisterTask("t", flow.TaskFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		c.Set("by", "second")
		return nil
	}))
	_, err = e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, "first", fc.Value("by"), "still the compiled form")
	e.Forget(g)
	_, err = e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, "second", fc.Value("by"), "compiled again after Forget")
}
