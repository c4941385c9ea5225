package loop_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/testkit"
)

func line(sku string, qty, price int) map[string]any {
	return map[string]any{"sku": sku, "qty": qty, "price": price}
}

func TestOrderTotal(t *testing.T) {
	eng := flow.NewEngine()
	_, err := eng.LoadFile("loop.yml")
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		lines []any
		total int
		skus  []any
		path  []string
	}{
		{
			name:  "three lines",
			lines: []any{line("pen", 3, 150), line("pad", 2, 425), line("ink", 1, 990)},
			total: 3*150 + 2*425 + 990, skus: []any{"pen", "pad", "ink"},
			path: []string{"s", "each", "add", "add", "add", "next", "summary", "e"},
		},
		{
			name:  "one line",
			lines: []any{line("pen", 10, 150)},
			total: 1500, skus: []any{"pen"},
			path: []string{"s", "each", "add", "next", "summary", "e"},
		},
		{
			// No items: the flow still passes the closing loop node once.
			name:  "empty order",
			lines: []any{},
			total: 0, skus: []any{},
			path: []string{"s", "each", "next", "summary", "e"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := testkit.NewPathRecorder()
			fc := flow.NewContextWith("order", map[string]any{"lines": tc.lines})
			res, err := eng.Eval(context.Background(), "order-total", fc, flow.WithEvalInterceptor(rec, 0))
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, tc.total, fc.Value("total"))
			assert.Equal(t, tc.skus, fc.Value("skus"), "lines are visited in order")
			assert.Equal(t, len(tc.skus), fc.Value("count"))
			assert.Equal(t, tc.path, rec.Path())
			_, ok := fc.Get("line")
			assert.False(t, ok, "the loop item is scoped to its branch, not left in the variables")
		})
	}
}

func TestOrderTotalFromJSON(t *testing.T) {
	// order.json is what the README passes with --vars.
	data, err := os.ReadFile("order.json")
	require.NoError(t, err)
	var vars map[string]any
	require.NoError(t, json.Unmarshal(data, &vars))

	eng := flow.NewEngine()
	_, err = eng.LoadFile("loop.yml")
	require.NoError(t, err)
	fc := flow.NewContextWith("order", vars)
	_, err = eng.Eval(context.Background(), "order-total", fc)
	require.NoError(t, err)
	assert.EqualValues(t, 3*150+2*425+990, fc.Value("total"))
}

func TestOrderWithoutLines(t *testing.T) {
	eng := flow.NewEngine()
	_, err := eng.LoadFile("loop.yml")
	require.NoError(t, err)
	res, err := eng.Eval(context.Background(), "order-total", flow.NewContext("order"))
	require.ErrorIs(t, err, flow.ErrLoopItems)
	assert.Equal(t, flow.StatusFailed, res.Status)
	var ne *flow.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "each", ne.Node)
	assert.Equal(t, flow.CodeLoopItems, ne.Code)
}
