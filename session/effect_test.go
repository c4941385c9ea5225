package session_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// outbox is an EffectStore over a MemoryStore: it makes a save's effects (strings)
// under one lock with the save, recording each with the save's version, as a store
// that makes them in the save's transaction would.
type outbox struct {
	*session.MemoryStore
	mu    sync.Mutex
	saves []effectSave // the saves that made effects, in order
	// fail, when set, decides the error of a save with effects: errNotMade fails it
	// before anything is written, session.ErrNotDurable after it took effect.
	fail func(effects []any) error
	dead bool // every save fails, writing nothing: the process died
}

// effectSave is one save that made effects.
type effectSave struct {
	version int64
	ttl     time.Duration
	last    map[string]string // the snapshot's last node per call path
	effects []any
}

var errNotMade = errors.New("connection reset")

func (o *outbox) Save(ctx context.Context, s *session.Snapshot, expected int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dead {
		return errors.New("process died")
	}
	return o.MemoryStore.Save(ctx, s, expected)
}

func (o *outbox) SaveEffects(ctx context.Context, s *session.Snapshot, expected int64, ttl time.Duration, effects []any) error {
	for _, e := range effects {
		if _, ok := e.(string); !ok {
			return fmt.Errorf("effect of unknown type %T", e)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var fail error
	if o.fail != nil {
		fail = o.fail(effects)
	}
	if o.dead || errors.Is(fail, errNotMade) {
		return errors.Join(errors.New("nothing written"), fail)
	}
	// A save that began goes through even when the run's ctx was cancelled since (a
	// failing branch cancels the others), as with a store whose write is under way.
	ctx = context.WithoutCancel(ctx)
	var err error
	if ttl > 0 {
		err = o.MemoryStore.SaveTTL(ctx, s, expected, ttl)
	} else {
		err = o.MemoryStore.Save(ctx, s, expected)
	}
	if err != nil {
		return err
	}
	last := map[string]string{}
	for p, rec := range s.Trace.Last {
		last[p] = rec.NodeID
	}
	o.saves = append(o.saves, effectSave{version: s.Version, ttl: ttl, last: last, effects: effects})
	return fail
}

// made counts each effect made.
func (o *outbox) made() map[any]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[any]int{}
	for _, s := range o.saves {
		for _, e := range s.effects {
			out[e]++
		}
	}
	return out
}

// effectsOf returns the effects a node queues, as queueTask queues them.
func effectsOf(nodes ...string) map[any]int {
	out := map[any]int{}
	for _, n := range nodes {
		out[n+".1"], out[n+".2"] = 1, 1
	}
	return out
}

// queueTask counts its node's runs and queues two effects named for the node.
func queueTask(cnt *counter) flow.TaskFunc {
	return func(_ context.Context, c *flow.Context, n *flow.Node) error {
		cnt.add(n.ID)
		return errors.Join(c.Effect(n.ID+".1"), c.Effect(n.ID+".2"))
	}
}

// register builds the graphs of specs and registers them in eng.
func register(t *testing.T, eng *flow.Engine, specs ...*flow.GraphSpec) {
	t.Helper()
	for _, spec := range specs {
		g, err := spec.Build()
		require.NoError(t, err)
		require.NoError(t, eng.Register(g))
	}
}

// abGraph registers graph id: s, a, b, e, with the tasks of a and b.
func abGraph(t *testing.T, eng *flow.Engine, id string, a, b flow.TaskFunc) {
	t.Helper()
	s := flow.NewSpec(id)
	s.Start("s").LinkTo("a")
	s.Activity("a").DoFunc(a).LinkTo("b")
	s.Activity("b").DoFunc(b).LinkTo("e")
	s.End("e")
	register(t, eng, s)
}

// effectGraph registers "fx": s, a, a parallel split into b and c, the join j, a
// sub-graph call running cx, and e. Every node but s, p, call and e queues effects.
func effectGraph(t *testing.T, eng *flow.Engine, cnt *counter) {
	t.Helper()
	q := queueTask(cnt)
	c := flow.NewSpec("child")
	c.Start("cs").LinkTo("cx")
	c.Activity("cx").DoFunc(q).LinkTo("ce")
	c.End("ce")
	s := flow.NewSpec("fx")
	s.Start("s").LinkTo("a")
	s.Activity("a").DoFunc(q).LinkTo("p")
	s.Parallel("p").LinkTo("b").LinkTo("c")
	s.Activity("b").DoFunc(q).LinkTo("j")
	s.Activity("c").DoFunc(q).LinkTo("j")
	s.Parallel("j").DoFunc(q).LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("e")
	s.End("e")
	register(t, eng, c, s)
}

func TestEffectsMadeOnceWithTheirCheckpoint(t *testing.T) {
	eng, cnt := flow.NewEngine(), newCounter()
	effectGraph(t, eng, cnt)
	store := &outbox{MemoryStore: session.NewMemoryStore()}
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode), session.WithExpiry(time.Hour))
	res, err := r.Run(t.Context(), "fx", flow.NewContext("fx-1"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, effectsOf("a", "b", "c", "j", "cx"), store.made())

	// One save per node that queued effects, carrying that node's only: claims,
	// outcomes and the checkpoints of the other nodes are plain saves.
	require.Len(t, store.saves, 5)
	byNode := map[string]effectSave{}
	prev := int64(0)
	for _, s := range store.saves {
		node := s.effects[0].(string)[:len(s.effects[0].(string))-2]
		assert.Equal(t, []any{node + ".1", node + ".2"}, s.effects)
		assert.Equal(t, time.Hour, s.ttl, "the Runner's time to live")
		assert.Greater(t, s.version, prev, "a save of its own")
		prev = s.version
		byNode[node] = s
	}
	// The sequential nodes' checkpoints are the ones that record them as the last
	// node of their graph.
	assert.Equal(t, "a", byNode["a"].last["fx"])
	assert.Equal(t, "j", byNode["j"].last["fx"])
	assert.Equal(t, "cx", byNode["cx"].last["fx/call/child"])
	snap, err := store.Load(t.Context(), "fx-1")
	require.NoError(t, err)
	assert.Greater(t, snap.Version, prev, "the outcome is saved after the last checkpoint")
}

func TestEffectsOfConflictingCheckpointAreNotMade(t *testing.T) {
	eng, cnt := flow.NewEngine(), newCounter()
	mem := session.NewMemoryStore()
	store := &outbox{MemoryStore: mem}
	q := queueTask(cnt)
	abGraph(t, eng, "taken", q, func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		// Another process saves the instance while b runs.
		snap, err := mem.Load(ctx, c.InstanceID())
		if err != nil {
			return err
		}
		if err := mem.Save(ctx, snap, snap.Version); err != nil {
			return err
		}
		return q(ctx, c, n)
	})
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))
	_, err := r.Run(t.Context(), "taken", flow.NewContext("t-1"))
	require.ErrorIs(t, err, session.ErrConflict)
	assert.Equal(t, effectsOf("a"), store.made(), "b's checkpoint conflicted: none of its effects")
}

func TestEffectsNeedAnEffectStore(t *testing.T) {
	eng, cnt := flow.NewEngine(), newCounter()
	effectGraph(t, eng, cnt)
	mem := session.NewMemoryStore()
	_, err := session.NewRunner(eng, mem, session.WithDurability(session.PerNode)).Run(t.Context(), "fx", flow.NewContext("n-1"))
	require.ErrorIs(t, err, session.ErrNoEffectStore)
	assert.ErrorContains(t, err, "*session.MemoryStore")
	assert.ErrorContains(t, err, "EffectStore such as RedisStore")
	assert.Zero(t, cnt.get("b"), "the run failed at a's checkpoint")

	// The outcome keeps a to run again: resumed with an EffectStore, its effects are
	// made.
	snap, err := mem.Load(t.Context(), "n-1")
	require.NoError(t, err)
	assert.Equal(t, session.StatusFailed, snap.Status)
	require.NotNil(t, snap.Frontier)
	require.Len(t, snap.Frontier.Tokens, 1)
	assert.Equal(t, "a", snap.Frontier.Tokens[0].Node)
	store := &outbox{MemoryStore: mem}
	res, err := session.NewRunner(eng, store, session.WithDurability(session.PerNode)).Resume(t.Context(), "n-1", nil)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, effectsOf("a", "b", "c", "j", "cx"), store.made())
	assert.Equal(t, 2, cnt.get("a"))

	// Saving on exit only, no checkpoint carries effects: the task is told.
	_, err = session.NewRunner(eng, store).Run(t.Context(), "fx", flow.NewContext("n-2"))
	require.ErrorIs(t, err, flow.ErrNoCheckpoint)
}

func TestEffectOfUnknownTypeFailsTheCheckpoint(t *testing.T) {
	eng := flow.NewEngine()
	s := flow.NewSpec("odd")
	s.Start("s").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		return errors.Join(c.Effect("s.1"), c.Effect(42))
	}).LinkTo("e")
	s.End("e")
	register(t, eng, s)
	store := &outbox{MemoryStore: session.NewMemoryStore()}
	_, err := session.NewRunner(eng, store, session.WithDurability(session.PerNode)).Run(t.Context(), "odd", flow.NewContext("o-1"))
	require.ErrorContains(t, err, "effect of unknown type int")
	assert.Empty(t, store.made())
}

// TestEffectsAfterFailedCheckpointRunAgainOnResume fails b's checkpoint, with
// nothing written, while c still runs: c's checkpoint, which would record b as done,
// fails too, and the outcome keeps both to run again, so their effects are made on
// resume, once.
func TestEffectsAfterFailedCheckpointRunAgainOnResume(t *testing.T) {
	eng, cnt := flow.NewEngine(), newCounter()
	mem := session.NewMemoryStore()
	bFailed := make(chan struct{})
	failB := true
	store := &outbox{MemoryStore: mem, fail: func(effects []any) error {
		if effects[0] == "b.1" && failB {
			failB = false
			close(bFailed)
			return errNotMade
		}
		return nil
	}}
	q := queueTask(cnt)
	s := flow.NewSpec("lost")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("b").LinkTo("c")
	cRuns := make(chan struct{})
	s.Activity("b").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if cnt.get("b") == 0 {
			<-cRuns
		}
		return q(ctx, c, n)
	}).LinkTo("j")
	s.Activity("c").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if cnt.get("c") == 0 {
			close(cRuns)
			<-bFailed
		}
		return q(ctx, c, n)
	}).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	register(t, eng, s)
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))
	_, err := r.Run(t.Context(), "lost", flow.NewContext("l-1"))
	require.ErrorIs(t, err, errNotMade)
	assert.Empty(t, store.made())

	snap, err := mem.Load(t.Context(), "l-1")
	require.NoError(t, err)
	assert.Equal(t, session.StatusFailed, snap.Status)
	require.NotNil(t, snap.Frontier)
	var pending []string
	for _, tok := range snap.Frontier.Tokens {
		pending = append(pending, tok.Node)
	}
	assert.ElementsMatch(t, []string{"b", "c"}, pending, "the frontier of the last saved checkpoint")

	res, err := r.Resume(t.Context(), "l-1", nil)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, effectsOf("b", "c"), store.made())
	assert.Equal(t, 2, cnt.get("b"))
	assert.Equal(t, 2, cnt.get("c"))
}

// TestEffectsOfNodeRunningWhenProcessDied: the process dies while b runs (from then
// on nothing it saves is written). Recover runs b again, and b's effects are made
// once, with its checkpoint.
func TestEffectsOfNodeRunningWhenProcessDied(t *testing.T) {
	eng, cnt := flow.NewEngine(), newCounter()
	mem := session.NewMemoryStore()
	store := &outbox{MemoryStore: mem}
	q := queueTask(cnt)
	abGraph(t, eng, "crash", q, func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		err := q(ctx, c, n)
		if cnt.get("b") == 1 {
			store.mu.Lock()
			store.dead = true
			store.mu.Unlock()
		}
		return err
	})
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))
	_, err := r.Run(t.Context(), "crash", flow.NewContext("c-1"))
	require.Error(t, err)
	assert.Equal(t, effectsOf("a"), store.made())

	snap, err := mem.Load(t.Context(), "c-1")
	require.NoError(t, err)
	assert.Equal(t, session.StatusRunning, snap.Status, "the dead process saved no outcome")
	store.mu.Lock()
	store.dead = false // another process, on the same store
	store.mu.Unlock()
	expireLease(t, mem, "c-1")
	res, err := r.Resume(t.Context(), "c-1", nil, session.Recover())
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, effectsOf("a", "b"), store.made())
	assert.Equal(t, map[string]int{"a": 1, "b": 2}, cnt.snapshot())
}

// TestEffectsOfNotDurableCheckpointAreMadeOnce: a checkpoint saved, its effects made,
// but not durably, fails the run; the outcome records the node as done, and the
// resume does not run it (or make its effects) again.
func TestEffectsOfNotDurableCheckpointAreMadeOnce(t *testing.T) {
	eng, cnt := flow.NewEngine(), newCounter()
	store := &outbox{MemoryStore: session.NewMemoryStore(), fail: func(effects []any) error {
		if effects[0] == "a.1" {
			return session.ErrNotDurable
		}
		return nil
	}}
	q := queueTask(cnt)
	abGraph(t, eng, "shaky", q, q)
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))
	_, err := r.Run(t.Context(), "shaky", flow.NewContext("d-1"))
	require.ErrorIs(t, err, session.ErrNotDurable)
	res, err := r.Resume(t.Context(), "d-1", nil)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, effectsOf("a", "b"), store.made())
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, cnt.snapshot())
}

// TestEffectsWithDroppedVariable: a save that cannot serialize a variable writes
// nothing, and the Runner's retry without it makes the effects, once.
func TestEffectsWithDroppedVariable(t *testing.T) {
	eng, cnt := flow.NewEngine(), newCounter()
	effectGraph(t, eng, cnt)
	store := &outbox{MemoryStore: session.NewMemoryStore()}
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode), session.WithDropUnserializable())
	res, err := r.Run(t.Context(), "fx", flow.NewContextWith("u-1", map[string]any{"callback": func() {}}))
	require.NoError(t, err)
	assert.Equal(t, []string{"callback"}, res.Dropped)
	assert.Equal(t, effectsOf("a", "b", "c", "j", "cx"), store.made())
	for _, s := range store.saves {
		assert.Zero(t, s.ttl, "no expiry")
	}
}
