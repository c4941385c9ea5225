package scc_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/internal/scc"
)

func TestComponentsReverseTopological(t *testing.T) {
	// 0 -> 1 <-> 2 -> 3, 0 -> 4, 4 -> 4
	links := [][]int{{1, 4}, {2}, {1, 3}, {}, {4}}
	nodes := []int{0, 1, 2, 3, 4}
	comps := scc.Components(nodes, func(n int) int { return n }, func(n int) []int { return links[n] })
	pos := map[int]int{}
	for i, c := range comps {
		for _, n := range c {
			pos[n] = i
		}
		slices.Sort(c)
	}
	assert.ElementsMatch(t, [][]int{{0}, {1, 2}, {3}, {4}}, comps)
	for from, to := range links {
		for _, n := range to {
			assert.LessOrEqual(t, pos[n], pos[from], "component of %d comes after that of %d", from, n)
		}
	}
}

func TestComponentsDeepChain(t *testing.T) {
	const n = 200_000
	nodes := make([]int, n)
	for i := range nodes {
		nodes[i] = i
	}
	next := func(i int) []int {
		if i+1 < n {
			return []int{i + 1}
		}
		return []int{0} // one cycle through every node
	}
	comps := scc.Components(nodes, func(i int) int { return i }, next)
	assert.Len(t, comps, 1)
	assert.Len(t, comps[0], n)
}
