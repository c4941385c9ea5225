package flow_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// TestBuildCopiesNestedMeta edits a spec's nested meta (maps and lists inside meta
// values) after Build and after Clone: neither the graph nor the clone may change.
func TestBuildCopiesNestedMeta(t *testing.T) {
	s := flow.NewSpec("g")
	s.Meta = map[string]any{"owners": []any{"ann", map[string]any{"team": "hr"}}}
	s.Start("s").LinkTo("a")
	s.Activity("a").SetMeta("onError", map[string]any{"goto": "fallback", "fallback": map[string]any{"status": "degraded"}}).LinkTo("e")
	s.Activity("fallback").LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	clone := s.Clone()

	onError := s.NodeByID("a").Meta["onError"].(map[string]any)
	onError["goto"] = "elsewhere"
	onError["fallback"].(map[string]any)["status"] = "changed"
	owners := s.Meta["owners"].([]any)
	owners[0] = "bob"
	owners[1].(map[string]any)["team"] = "it"

	for name, got := range map[string]struct{ node, graph map[string]any }{
		"graph": {g.Node("a").Meta, g.Meta},
		"clone": {clone.NodeByID("a").Meta, clone.Meta},
	} {
		assert.Equal(t, map[string]any{"goto": "fallback", "fallback": map[string]any{"status": "degraded"}}, got.node["onError"], name)
		assert.Equal(t, []any{"ann", map[string]any{"team": "hr"}}, got.graph["owners"], name)
	}
}

// A nil node or a type beyond Loop in a spec built in code is a build error, not a
// panic or a node that silently runs as an activity.
func TestBuildRejectsNilNodesAndUnknownTypes(t *testing.T) {
	s := flow.NewSpec("x")
	s.Start("s").LinkTo("e")
	s.End("e")
	s.Nodes = append(s.Nodes, nil)
	_, err := s.Build()
	require.ErrorContains(t, err, "node #3 is nil")
	assert.NotNil(t, s.Clone(), "Clone copes with it too")

	s = flow.NewSpec("y")
	s.Start("s").LinkTo("x")
	s.Node("x", flow.Loop+1).LinkTo("e")
	s.End("e")
	_, err = s.Build()
	require.ErrorContains(t, err, `node "x": unknown node type 7`)
}

// Hash depends on the definition only: two builds of one spec hash alike, a changed
// condition hashes otherwise, and calls from many goroutines agree.
func TestGraphHash(t *testing.T) {
	s := flow.NewSpec("h")
	s.Start("s").LinkTo("e").When = "ok == true"
	s.End("e")
	a, b := build(t, s), build(t, s)
	s.Nodes[0].Links[0].When = "ok == false"
	c := build(t, s)
	hashes := make(chan string, 8)
	for range cap(hashes) {
		go func() { hashes <- a.Hash() }()
	}
	for range cap(hashes) {
		assert.Equal(t, b.Hash(), <-hashes)
	}
	assert.Len(t, a.Hash(), 64)
	assert.NotEqual(t, a.Hash(), c.Hash())
}
