package session

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// chain registers graph id with n activities in a row.
func chain(t *testing.T, eng *flow.Engine, id string, n int) {
	t.Helper()
	s := flow.NewSpec(id)
	s.Start("s").LinkTo("n0")
	for i := range n {
		next := fmt.Sprintf("n%d", i+1)
		if i == n-1 {
			next = "e"
		}
		s.Activity(fmt.Sprintf("n%d", i)).DoFunc(func(context.Context, *flow.Context, *flow.Node) error { return nil }).LinkTo(next)
	}
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
}

// TestRunnerHashCacheStaysBounded: a long-running Runner whose engine gets new
// versions of its graphs (unregistered and registered again) or new graphs that come
// and go keeps the definition hashes of about the graphs registered now, not of every
// graph it ever ran.
func TestRunnerHashCacheStaysBounded(t *testing.T) {
	ctx := t.Context()
	eng := flow.NewEngine()
	r := NewRunner(eng, NewMemoryStore())
	entries := func() int {
		n := 0
		r.hashes.Range(func(any, any) bool { n++; return true })
		return n
	}
	const versions = 200
	for v := range versions {
		chain(t, eng, "versioned", 1+v%7)
		_, err := r.Run(ctx, "versioned", flow.NewContext(fmt.Sprintf("v-%d", v)))
		require.NoError(t, err)
		eng.Unregister("versioned")
	}
	assert.LessOrEqual(t, entries(), 1, "one graph id, one entry")

	for i := range versions {
		id := fmt.Sprintf("g-%d", i)
		chain(t, eng, id, 1)
		_, err := r.Run(ctx, id, flow.NewContext("i-"+id))
		require.NoError(t, err)
		eng.Unregister(id)
	}
	assert.LessOrEqual(t, entries(), 2*minHashSweep, "graphs unregistered are dropped")

	// The hash of the graph registered now is the one a run uses.
	chain(t, eng, "versioned", 3)
	res, err := r.Run(ctx, "versioned", flow.NewContext("v-last"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	snap, err := r.store.Load(ctx, "v-last")
	require.NoError(t, err)
	g, _ := eng.Graph("versioned")
	assert.Equal(t, g.Hash(), snap.Hash)
}
