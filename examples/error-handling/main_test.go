package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSoftTimeoutRecovers(t *testing.T) {
	res, fc, err := Run(context.Background(), "soft-timeout")
	require.NoError(t, err)
	require.NoError(t, res.Err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "estimated", fc.Value("inventory_status"))
	assert.Equal(t, true, fc.Value("done"))
	require.Len(t, res.ExecutionErrors, 1, "the recovered error is kept")
	rec := res.ExecutionErrors[0]
	assert.Equal(t, flow.Recoverable, rec.Severity)
	assert.Equal(t, CodeInventorySoftTimeout, rec.Error.Code)
	assert.Equal(t, "inventory_error", rec.Error.Type)
	assert.Equal(t, "lookup_inventory", rec.NodeID)
	assert.Equal(t, "fallback_lookup", rec.Goto)
}

func TestUnavailableIsFatalWithFallbackState(t *testing.T) {
	res, fc, err := Run(context.Background(), "unavailable")
	require.NoError(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	require.Error(t, res.Err)
	assert.Equal(t, CodeInventoryUnavailable, flow.ToStructured(res.Err).Code)
	assert.Equal(t, "fallback", fc.Value("inventory_status"), "the fallback business state is in the final state")
	assert.Equal(t, map[string]any{"inventory_status": "fallback"}, res.Fallback)
	assert.Nil(t, fc.Value("done"))
	require.Len(t, res.ExecutionErrors, 1)
	assert.Equal(t, flow.Fatal, res.ExecutionErrors[0].Severity)
}

func TestLegacyIntegerCode(t *testing.T) {
	res, _, err := Run(context.Background(), "legacy")
	require.NoError(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	require.Len(t, res.ExecutionErrors, 1)
	assert.Equal(t, "40401", res.ExecutionErrors[0].Error.Code)
}

func TestYAMLVersion(t *testing.T) {
	eng := flow.NewEngine()
	g, err := eng.LoadFile("order.yml")
	require.NoError(t, err)
	for scenario, want := range map[string]struct {
		status flow.Status
		stock  string
		code   string
	}{
		"soft-timeout": {flow.StatusCompleted, "estimated", "ORDER_INVENTORY_SOFT_TIMEOUT"},
		"unavailable":  {flow.StatusFailed, "fallback", "ORDER_INVENTORY_UNAVAILABLE"},
		"ok":           {flow.StatusCompleted, "in_stock", ""},
	} {
		rec := testkit.NewPathRecorder()
		fc := flow.NewContextWith(scenario, map[string]any{"scenario": scenario})
		res, _ := eng.EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(rec, 0))
		require.NotNil(t, res)
		assert.Equal(t, want.status, res.Status, scenario)
		assert.Equal(t, want.stock, fc.Value("inventory_status"), scenario)
		if want.code == "" {
			assert.Empty(t, res.ExecutionErrors)
			testkit.AssertNotVisited(t, rec, "fallback_lookup")
			continue
		}
		require.Len(t, res.ExecutionErrors, 1, scenario)
		assert.Equal(t, want.code, res.ExecutionErrors[0].Error.Code)
	}
}
