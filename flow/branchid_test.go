package flow_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// branchIDs runs def and returns the branch id every execution of the @note task saw,
// sorted.
func branchIDs(t *testing.T, def string) []string {
	t.Helper()
	var (
		mu  sync.Mutex
		ids []string
	)
	e := flow.NewEngine(flow.WithTaskFunc("note", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		mu.Lock()
		ids = append(ids, c.BranchID())
		mu.Unlock()
		return nil
	}))
	g, err := flow.LoadGraph("g.yml", []byte(def))
	require.NoError(t, err)
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	slices.Sort(ids)
	return ids
}

// Several links from a split to one node open branches whose ids carry the link's
// position ("#1"); a node whose id is literally such an id does not make two branches
// share it: the repeated link's id takes its suffix once more. Graphs without such a
// node keep the ids they always had.
func TestBranchIDsOfOneSplitAreUnique(t *testing.T) {
	for _, tc := range []struct {
		name, links string
		want        []string
	}{
		{"a node named like a repeated link", `[a, a, "a#1"]`, []string{"main/p:a", "main/p:a#1", "main/p:a#1#1"}},
		{"that node first", `["a#1", a, a]`, []string{"main/p:a", "main/p:a#1", "main/p:a#2"}},
		{"two levels of names", `[a, a, "a#1", "a#1#1"]`, []string{"main/p:a", "main/p:a#1", "main/p:a#1#1", "main/p:a#1#1#1"}},
		{"no collision", `[a, "a#1", a]`, []string{"main/p:a", "main/p:a#1", "main/p:a#2"}},
		{"repeated links only", `[a, a, a]`, []string{"main/p:a", "main/p:a#1", "main/p:a#2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := `
id: g
layout:
  - {id: s, type: start}
  - {id: p, type: parallel, link: ` + tc.links + `}
  - {id: a, task: "@note", link: j}
  - {id: "a#1", task: "@note", link: j}
  - {id: "a#1#1", task: "@note", link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`
			assert.Equal(t, tc.want, branchIDs(t, def))
		})
	}
}
