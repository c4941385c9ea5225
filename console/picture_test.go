package console_test

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/console"
	"github.com/flowteam/flowteam/export/svg"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// orderEngine loads testdata/order.yml and payment.yml.
func orderEngine(t testing.TB, opts ...flow.Option) *flow.Engine {
	eng := flow.NewEngine(opts...)
	_, err := eng.LoadFiles("testdata/order.yml", "testdata/payment.yml")
	require.NoError(t, err)
	return eng
}

// runOrder runs the order graph as instance id and returns its audit records.
func runOrder(t testing.TB, id string, amount int) trace.Records {
	mem := interceptor.NewMemory()
	eng := orderEngine(t, flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 0))
	_, _ = eng.Eval(context.Background(), "order", flow.NewContextWith(id, map[string]any{"amount": amount}))
	return mem.Records()
}

func TestRunFromAuditFollowsThePath(t *testing.T) {
	run := console.NewRun("o-1", "order")
	run.AddAudit(runOrder(t, "o-1", 500))
	root := run.Call("order")
	assert.Equal(t, "failed", run.Status)
	assert.Equal(t, 1, root.Visits["check"])
	assert.Zero(t, root.Visits["review"])
	assert.True(t, root.Taken("check", "big"))
	assert.True(t, root.Taken("big", "split"))
	assert.False(t, root.Taken("big", "review"))
	assert.True(t, root.Taken("split", "pack"), "a branch's first node comes from the split")
	assert.True(t, root.Taken("split", "label"))
	assert.True(t, root.Taken("pack", "join") || root.Taken("label", "join"), "a branch's last node leads to the join")
	assert.True(t, root.Taken("join", "bill"))
	assert.False(t, root.Taken("bill", "ship"))
	assert.Equal(t, "order/bill/payment", root.Calls["bill"])
	child := run.Call("order/bill/payment")
	assert.Equal(t, "payment", child.Graph)
	assert.Equal(t, "card_declined", child.Failed["charge"].Code)
	assert.True(t, child.Taken("start", "charge"))
}

func TestRunFromAuditJoinsBranches(t *testing.T) {
	run := console.NewRun("o-2", "order")
	run.AddAudit(runOrder(t, "o-2", 50))
	root := run.Call("order")
	assert.Equal(t, "completed", run.Status)
	assert.True(t, root.Taken("pack", "join") || root.Taken("label", "join"))
	assert.True(t, root.Taken("join", "bill"))
	assert.True(t, root.Taken("bill", "ship"))
	assert.Empty(t, root.Failed)
}

func TestPictureColoursTheRun(t *testing.T) {
	run := console.NewRun("o-1", "order")
	run.AddAudit(runOrder(t, "o-1", 500))
	eng := orderEngine(t)
	var rd svg.Renderer
	defer rd.Close()
	g, _ := eng.Graph("order")
	link := func(p string) string { return "/pictures/" + p }
	out, err := console.Picture(context.Background(), &rd, g, run, "order", link)
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, `class="node visited"`)
	assert.Contains(t, s, `xlink:href="/pictures/order/bill/payment"`)
	assert.Contains(t, s, `class="edge skipped"`)

	child, _ := eng.Graph("payment")
	out, err = console.Picture(context.Background(), &rd, child, run, "order/bill/payment", link)
	require.NoError(t, err)
	s = string(out)
	i := strings.Index(s, `id="node_charge" class="node failed"`)
	require.GreaterOrEqual(t, i, 0, s)
	assert.Contains(t, s[i:], "card_declined: the card was declined")
	assert.Contains(t, s[i:], `fill="#ef9a9a"`)
}

var update = flag.Bool("update", false, "rewrite testdata/order-run.svg")

// TestRunPictureFile draws the failed order run into testdata/order-run.svg, the
// picture the README shows; -update rewrites it.
func TestRunPictureFile(t *testing.T) {
	run := console.NewRun("o-1", "order")
	run.AddAudit(runOrder(t, "o-1", 500))
	eng := orderEngine(t)
	var rd svg.Renderer
	defer rd.Close()
	g, _ := eng.Graph("order")
	out, err := console.Picture(context.Background(), &rd, g, run, "order", nil)
	require.NoError(t, err)
	const golden = "testdata/order-run.svg"
	if *update {
		require.NoError(t, os.WriteFile(golden, out, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(out), "run with -update to rewrite %s", golden)
}
