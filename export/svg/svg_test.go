package svg_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/export/svg"
	"github.com/flowteam/flowteam/flow"
)

// wideGraph is a start, n activities in a binary tree of exclusive-free links, and
// an end: a graph of about n nodes with a label on every link.
func wideGraph(t testing.TB, n int) *flow.Graph {
	spec := flow.NewSpec("wide")
	spec.Start("s").LinkTo("a0")
	for i := range n {
		a := spec.Activity(fmt.Sprintf("a%d", i)).SetTask(fmt.Sprintf(`context.put("x", %d)`, i))
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < n {
				a.LinkTo(fmt.Sprintf("a%d", c), flow.LinkWhen(fmt.Sprintf("x > %d", c)))
			}
		}
		if 2*i+1 >= n {
			a.LinkTo("e")
		}
	}
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	return g
}

func TestGraphDrawsNodesAndStyles(t *testing.T) {
	var r svg.Renderer
	defer r.Close()
	g := wideGraph(t, 5)
	style := export.DOTStyle{Node: func(n *flow.Node) map[string]string {
		if n.ID == "a2" {
			return map[string]string{"fillcolor": "#ff0000", "style": "rounded,filled", "id": "node_a2", "class": "failed", "tooltip": "E42"}
		}
		return nil
	}}
	out, err := r.Graph(context.Background(), g, export.WithDOTStyle(style))
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, "<svg")
	assert.Contains(t, s, `id="node_a2" class="node failed"`)
	assert.Contains(t, s, `fill="#ff0000"`)
	assert.Contains(t, s, "E42")
	assert.Equal(t, 1, strings.Count(s, `fill="#ff0000"`))
}

func TestRenderRejectsBadDOT(t *testing.T) {
	var r svg.Renderer
	defer r.Close()
	_, err := r.Render(context.Background(), []byte("digraph { a -> "))
	assert.Error(t, err)
}

func TestRenderCancelled(t *testing.T) {
	var r svg.Renderer
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Graph(ctx, wideGraph(t, 3))
	assert.ErrorIs(t, err, context.Canceled)
	_, err = r.Graph(context.Background(), wideGraph(t, 3))
	assert.NoError(t, err, "a first call cancelled does not break the Renderer")
}

func TestRenderConcurrently(t *testing.T) {
	var r svg.Renderer
	defer r.Close()
	g := wideGraph(t, 20)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = r.Graph(context.Background(), g) })
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
}

// BenchmarkGraph200 draws a 200-node graph; the target is at most 200 ms a drawing.
func BenchmarkGraph200(b *testing.B) {
	var r svg.Renderer
	defer r.Close()
	g := wideGraph(b, 200)
	ctx := context.Background()
	if _, err := r.Graph(ctx, g); err != nil { // start Graphviz outside the timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Graph(ctx, g); err != nil {
			b.Fatal(err)
		}
	}
}
