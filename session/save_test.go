package session_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// Runner.Save protects a snapshot a program builds as the Runner's runs are: sealed
// with its Cipher, masked with its Redactor, under the version check.
func TestRunnerSaveProtectsAsRuns(t *testing.T) {
	ctx := t.Context()
	eng := flow.NewEngine()
	g := approvalGraph(t, eng, newCounter(), "Manager")
	store := session.NewMemoryStore()
	c, err := session.NewCipher(bytes.Repeat([]byte{1}, 32))
	require.NoError(t, err)
	r := session.NewRunner(eng, store, session.WithCipher(c), session.WithRedaction("pin"))
	start, err := eng.StartFrontier(g)
	require.NoError(t, err)
	st := start.State()
	snap := &session.Snapshot{Instance: "o-1", Graph: g.ID, Hash: g.Hash(), Status: session.StatusSuspended,
		Reason: "queued", Vars: map[string]any{"pin": "1234", "n": int64(1)}, Frontier: &st}

	require.NoError(t, r.Save(ctx, snap, 0))
	assert.Equal(t, int64(1), snap.Version, "the stored header")
	assert.Equal(t, "1234", snap.Vars["pin"], "the caller's body is not changed")
	raw, err := store.Load(ctx, "o-1")
	require.NoError(t, err)
	assert.NotNil(t, raw.Sealed)
	assert.Nil(t, raw.Vars)
	assert.ErrorIs(t, r.Save(ctx, snap, 0), session.ErrConflict, "the version is checked")

	// A loaded snapshot saved again: the masked variable stays out, the rest is kept.
	got, err := r.Load(ctx, "o-1")
	require.NoError(t, err)
	assert.Equal(t, []string{"pin"}, got.Redacted)
	assert.Equal(t, session.DefaultMask, got.Vars["pin"])
	got.Status = session.StatusFailed
	require.NoError(t, session.NewRunner(eng, store, session.WithCipher(c)).Save(ctx, got, got.Version))
	again, err := r.Load(ctx, "o-1")
	require.NoError(t, err)
	assert.Equal(t, session.StatusFailed, again.Status)
	assert.NotContains(t, again.Vars, "pin", "a mask is not saved as a value")
	assert.Equal(t, int64(1), again.Vars["n"])

	_, err = session.NewRunner(eng, store).Load(ctx, "o-1")
	assert.ErrorIs(t, err, session.ErrSealed)
	assert.Error(t, r.Save(ctx, raw, raw.Version), "a sealed snapshot is refused")
}
