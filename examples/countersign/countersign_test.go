package countersign_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// visits counts how many times each node started.
type visits struct {
	flow.NopInterceptor
	mu sync.Mutex
	n  map[string]int
}

func (v *visits) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	v.mu.Lock()
	if v.n == nil {
		v.n = make(map[string]int)
	}
	v.n[n.ID]++
	v.mu.Unlock()
}

var thresholdRE = regexp.MustCompile(`^amount >= (\d+)$`)

// signersFromGraph works out who must sign an amount by reading the split's links: a
// link without condition is always taken, "amount >= N" when amount reaches N.
func signersFromGraph(t *testing.T, g *flow.Graph, amount int) []string {
	t.Helper()
	var out []string
	for _, l := range g.Node("split").Links() {
		if l.When == "" {
			out = append(out, l.To)
			continue
		}
		m := thresholdRE.FindStringSubmatch(l.When)
		require.NotNil(t, m, "unexpected condition %q", l.When)
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		if amount >= n {
			out = append(out, l.To)
		}
	}
	return out
}

func TestCountersign(t *testing.T) {
	eng := flow.NewEngine()
	g, err := eng.LoadFile("countersign.yml")
	require.NoError(t, err)
	all := []string{"manager", "finance", "director"}

	// The expected signers, by hand from the header of countersign.yml; the test also
	// checks that the graph's conditions say the same.
	for _, tc := range []struct {
		amount int
		want   []string
	}{
		{0, []string{"manager"}},
		{999, []string{"manager"}},
		{1000, []string{"manager", "finance"}},
		{9999, []string{"manager", "finance"}},
		{10000, []string{"manager", "finance", "director"}},
		{250000, []string{"manager", "finance", "director"}},
	} {
		require.ElementsMatch(t, tc.want, signersFromGraph(t, g, tc.amount), "amount %d", tc.amount)

		rec := &visits{}
		fc := flow.NewContextWith("expense", map[string]any{"amount": tc.amount})
		res, err := eng.Eval(context.Background(), "countersign", fc, flow.WithEvalInterceptor(rec, 0))
		require.NoError(t, err, "amount %d", tc.amount)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.ElementsMatch(t, tc.want, fc.Value("signers"), "amount %d", tc.amount)
		for _, who := range all {
			want := 0
			if slices.Contains(tc.want, who) {
				want = 1
			}
			assert.Equal(t, want, rec.n[who], "amount %d: %s signed", tc.amount, who)
		}
		// The join let the flow through once, after exactly the branches the split took.
		assert.Equal(t, 1, rec.n["join"], "amount %d", tc.amount)
		assert.Equal(t, 1, rec.n["done"], "amount %d", tc.amount)
		assert.Equal(t, len(tc.want), fc.Value("signedAtJoin"), "amount %d", tc.amount)
		// s, submit, split, the signers, join, done, e.
		assert.Equal(t, 6+len(tc.want), res.Steps, "amount %d", tc.amount)
	}
}
