package session_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
)

// savesStore is a MemoryStore that keeps the encoding of every snapshot saved.
type savesStore struct {
	*session.MemoryStore
	mu    sync.Mutex
	saves []string
}

func (s *savesStore) Save(ctx context.Context, snap *session.Snapshot, expected int64) error {
	if err := s.MemoryStore.Save(ctx, snap, expected); err != nil {
		return err
	}
	b, err := session.Encode(snap) // as stamped by the save
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.saves = append(s.saves, string(b))
	s.mu.Unlock()
	return nil
}

// metaSecrets is a RedactorFor function: the variables the instance's Meta names
// ("secret=NAME") are secret.
func metaSecrets(snap *session.Snapshot) (*redact.Redactor, error) {
	var names []string
	for _, e := range snap.Meta {
		if name, ok := strings.CutPrefix(e, "secret="); ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	return redact.New(redact.Secrets(names...)), nil
}

// A resume with RedactorFor masks, in its claim, every checkpoint and its outcome,
// the secrets the instance's own rules name, though the Runner has no Redactor.
func TestResumeRedactorFor(t *testing.T) {
	const card = "4111-1111-1111-1111"
	ctx := t.Context()
	eng := flow.NewEngine()
	s := flow.NewSpec("pay")
	s.Start("s").LinkTo("charge")
	s.Activity("charge").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		v, ok := c.Get("card")
		if !ok {
			c.Suspend("waiting for the card")
			return nil
		}
		c.Set("receipt", "charged "+v.(string))
		return nil
	}).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
	store := &savesStore{MemoryStore: session.NewMemoryStore()}

	_, err = session.NewRunner(eng, store, session.WithMeta("secret=card")).Run(ctx, "pay", flow.NewContext("p-1"))
	require.NoError(t, err)
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))
	res, err := r.Resume(ctx, "p-1", map[string]any{"card": card}, session.RedactorFor(metaSecrets))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "charged "+card, res.Context.Vars()["receipt"], "the run has the value")
	require.GreaterOrEqual(t, len(store.saves), 4, "run, claim, checkpoints, outcome")
	for i, saved := range store.saves {
		assert.NotContains(t, saved, card, "save %d", i)
	}
	snap, err := store.Load(ctx, "p-1")
	require.NoError(t, err)
	assert.Equal(t, "***", snap.Vars["card"])
	assert.Equal(t, "charged ***", snap.Vars["receipt"])
	assert.Equal(t, []string{"card"}, snap.Redacted)

	// Without it, the same Runner saves the value: the rules are the instance's.
	_, err = session.NewRunner(eng, store, session.WithMeta("secret=card")).Run(ctx, "pay", flow.NewContext("p-2"))
	require.NoError(t, err)
	_, err = r.Resume(ctx, "p-2", map[string]any{"card": card})
	require.NoError(t, err)
	snap, err = store.Load(ctx, "p-2")
	require.NoError(t, err)
	assert.Equal(t, card, snap.Vars["card"])
}

// A RedactorFor function that fails fails the Resume before anything is saved or
// run; one that returns nil keeps the Runner's Redactor.
func TestResumeRedactorForErrorAndNil(t *testing.T) {
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	store := session.NewMemoryStore()
	r := session.NewRunner(eng, store, session.WithRedaction("approver"))
	res, err := r.Run(ctx, "leave", flow.NewContext("l-1"))
	require.NoError(t, err)
	before := cnt.snapshot()

	bad := errors.New("bad rule")
	_, err = r.Resume(ctx, "l-1", map[string]any{"approved": true},
		session.RedactorFor(func(*session.Snapshot) (*redact.Redactor, error) { return nil, bad }))
	require.ErrorIs(t, err, bad)
	snap, err := store.Load(ctx, "l-1")
	require.NoError(t, err)
	assert.Equal(t, res.Version, snap.Version, "nothing saved")
	assert.Equal(t, session.StatusSuspended, snap.Status)
	assert.Equal(t, before, cnt.snapshot(), "nothing ran")

	_, err = r.Resume(ctx, "l-1", map[string]any{"approved": true, "approver": "Grace Hopper"},
		session.RedactorFor(func(*session.Snapshot) (*redact.Redactor, error) { return nil, nil }))
	require.NoError(t, err)
	snap, err = store.Load(ctx, "l-1")
	require.NoError(t, err)
	assert.Equal(t, "***", snap.Vars["approver"], "the Runner's Redactor")
}

// Recover of a run that ended every branch before its process died records it as
// completed with the Redactor RedactorFor gives.
func TestResumeRedactorForCompletesEndedRun(t *testing.T) {
	const card = "4111-1111-1111-1111"
	ctx := t.Context()
	eng, cnt := flow.NewEngine(), newCounter()
	g := approvalGraph(t, eng, cnt, "Manager")
	store := session.NewMemoryStore()
	snap := &session.Snapshot{Instance: "e-1", Graph: g.ID, Hash: g.Hash(), Status: session.StatusRunning,
		Meta: []string{"secret=card"}, Vars: map[string]any{"card": card, "note": "paid with " + card}}
	require.NoError(t, store.Save(ctx, snap, 0))
	res, err := session.NewRunner(eng, store).Resume(ctx, "e-1", nil, session.Recover(), session.RedactorFor(metaSecrets))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	got, err := store.Load(ctx, "e-1")
	require.NoError(t, err)
	assert.Equal(t, session.StatusCompleted, got.Status)
	assert.Equal(t, map[string]any{"card": "***", "note": "paid with ***"}, got.Vars)
}
