package session_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// callingGraphs registers main, which waits for "approved" and then calls child,
// which calls grand, which sets "v" to grandValue.
func callingGraphs(t *testing.T, eng *flow.Engine, grandValue string) (main, child, grand *flow.Graph) {
	t.Helper()
	build := func(s *flow.GraphSpec) *flow.Graph {
		g, err := s.Build()
		require.NoError(t, err)
		require.NoError(t, eng.Register(g))
		return g
	}
	s := flow.NewSpec("main")
	s.Start("s").LinkTo("wait")
	s.Activity("wait").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if _, ok := c.Get("approved"); !ok {
			c.Suspend("waiting")
		}
		return nil
	}).LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("e")
	s.End("e")
	main = build(s)
	s = flow.NewSpec("child")
	s.Start("cs").LinkTo("c")
	s.Activity("c").SetTask("#grand").LinkTo("ce")
	s.End("ce")
	child = build(s)
	s = flow.NewSpec("grand")
	s.Start("gs").LinkTo("g")
	s.Activity("g").SetTask(`context.put("v", ` + grandValue + `)`).LinkTo("ge")
	s.End("ge")
	grand = build(s)
	return main, child, grand
}

// The snapshot records the hashes of every graph the root reaches through calls; a
// resume after a called graph changed is refused naming it and both hashes, and
// claims nothing. WithMigration accepts the change, and the claim records the new
// hashes.
func TestResumeRefusesChangedCalledGraph(t *testing.T) {
	ctx := t.Context()
	store := session.NewMemoryStore()
	eng1 := flow.NewEngine()
	_, child, grand1 := callingGraphs(t, eng1, "1")
	res, err := session.NewRunner(eng1, store).Run(ctx, "main", flow.NewContext("calls-1"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	before, err := store.Load(ctx, "calls-1")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"child": child.Hash(), "grand": grand1.Hash()}, before.Called)

	eng2 := flow.NewEngine()
	_, _, grand2 := callingGraphs(t, eng2, "2")
	r2 := session.NewRunner(eng2, store)
	_, err = r2.Resume(ctx, "calls-1", map[string]any{"approved": true})
	require.ErrorIs(t, err, session.ErrDefinitionChanged)
	var changed *session.DefinitionChangedError
	require.ErrorAs(t, err, &changed)
	assert.Equal(t, session.DefinitionChangedError{Root: "main", Graph: "grand", Saved: grand1.Hash(), Loaded: grand2.Hash()},
		*changed)
	assert.ErrorContains(t, err, `graph "grand" (called by "main") was saved with definition hash `+grand1.Hash())
	assert.ErrorContains(t, err, grand2.Hash())
	assert.Equal(t, changed, errorsAs(t, r2.CheckDefinition(before)), "CheckDefinition says the same")
	after, err := store.Load(ctx, "calls-1")
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing was claimed")

	keep := func(context.Context, *session.Snapshot, *flow.Graph) error { return nil }
	res, err = session.NewRunner(eng2, store, session.WithMigration(keep)).Resume(ctx, "calls-1",
		map[string]any{"approved": true})
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.EqualValues(t, 2, res.Context.Value("v"), "the new definition ran")
	after, err = store.Load(ctx, "calls-1")
	require.NoError(t, err)
	assert.Equal(t, grand2.Hash(), after.Called["grand"], "the new hashes are recorded")
	assert.NoError(t, r2.CheckDefinition(after))
}

func errorsAs(t *testing.T, err error) *session.DefinitionChangedError {
	t.Helper()
	var changed *session.DefinitionChangedError
	require.ErrorAs(t, err, &changed)
	return changed
}

// A called graph that is no longer loaded is a change too; the root's own change is
// named first, with the number of called graphs that changed as well.
func TestCheckDefinitionNamesWhatChanged(t *testing.T) {
	ctx := t.Context()
	store := session.NewMemoryStore()
	eng1 := flow.NewEngine()
	main1, _, _ := callingGraphs(t, eng1, "1")
	_, err := session.NewRunner(eng1, store).Run(ctx, "main", flow.NewContext("calls-2"))
	require.NoError(t, err)
	snap, err := store.Load(ctx, "calls-2")
	require.NoError(t, err)

	only := flow.NewEngine()
	require.NoError(t, only.Register(main1))
	err = session.NewRunner(only, store).CheckDefinition(snap)
	assert.Equal(t, session.DefinitionChangedError{Root: "main", Graph: "child", Saved: snap.Called["child"], Others: 1},
		*errorsAs(t, err))
	assert.ErrorContains(t, err, `graph "child" (called by "main") was saved with definition hash `+snap.Called["child"]+
		" and is no longer loaded; 1 more called graph(s) changed too")

	eng2 := flow.NewEngine()
	s := flow.NewSpec("main")
	s.Start("s").LinkTo("e")
	s.End("e")
	main2, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng2.Register(main2))
	err = session.NewRunner(eng2, store).CheckDefinition(snap)
	assert.Equal(t, session.DefinitionChangedError{Root: "main", Graph: "main", Saved: main1.Hash(), Loaded: main2.Hash(),
		Others: 2}, *errorsAs(t, err))

	err = session.NewRunner(flow.NewEngine(), store).CheckDefinition(snap)
	assert.ErrorIs(t, err, flow.ErrGraphNotFound)
}

// A snapshot saved before the called graphs' hashes were recorded (no "called") is
// checked on its root graph alone and resumes; the claim records them.
func TestResumeSnapshotWithoutCalledHashes(t *testing.T) {
	ctx := t.Context()
	store := session.NewMemoryStore()
	eng := flow.NewEngine()
	_, child, grand := callingGraphs(t, eng, "1")
	r := session.NewRunner(eng, store)
	_, err := r.Run(ctx, "main", flow.NewContext("old-1"))
	require.NoError(t, err)
	snap, err := store.Load(ctx, "old-1")
	require.NoError(t, err)
	snap.Called = nil
	require.NoError(t, store.Save(ctx, snap, snap.Version))
	data, err := session.Encode(snap)
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"called"`, "as saved before")

	var saved []map[string]string
	spy := &saveSpy{Store: store, saved: func(s *session.Snapshot) { saved = append(saved, s.Called) }}
	res, err := session.NewRunner(eng, spy).Resume(ctx, "old-1", map[string]any{"approved": true})
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	want := map[string]string{"child": child.Hash(), "grand": grand.Hash()}
	require.NotEmpty(t, saved)
	assert.Equal(t, want, saved[0], "the claim records the called graphs' hashes")
}

// saveSpy calls saved with every snapshot saved.
type saveSpy struct {
	session.Store
	saved func(*session.Snapshot)
}

func (s *saveSpy) Save(ctx context.Context, snap *session.Snapshot, expected int64) error {
	s.saved(snap)
	return s.Store.Save(ctx, snap, expected)
}

// Calls are followed through cycles once, and through graphs used as tasks
// (flow.Call) that are not registered; the root's own hash is Hash, not in Called.
func TestCalledHashesFollowCyclesAndCallTasks(t *testing.T) {
	ctx := t.Context()
	eng := flow.NewEngine()
	s := flow.NewSpec("inner")
	s.Start("is").LinkTo("back")
	s.Activity("back").SetTask("#a").SetWhen("false").LinkTo("ie") // a cycle back to the root, never run
	s.End("ie")
	inner, err := s.Build()
	require.NoError(t, err)
	s = flow.NewSpec("b")
	s.Start("bs").LinkTo("in")
	s.Activity("in").Do(flow.Call(inner)).LinkTo("be")
	s.End("be")
	b, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(b))
	s = flow.NewSpec("a")
	s.Start("as").LinkTo("tob")
	s.Activity("tob").SetTask("#b").LinkTo("ae")
	s.End("ae")
	a, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(a))

	store := session.NewMemoryStore()
	res, err := session.NewRunner(eng, store).Run(ctx, "a", flow.NewContext("cycle-1"))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	snap, err := store.Load(ctx, "cycle-1")
	require.NoError(t, err)
	assert.Equal(t, a.Hash(), snap.Hash)
	assert.Equal(t, map[string]string{"b": b.Hash(), "inner": inner.Hash()}, snap.Called)
}
