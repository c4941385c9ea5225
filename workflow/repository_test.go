package workflow_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/workflow"
)

// A StoreRepository with a Redactor saves the secret variables masked and named in
// Snapshot.Redacted, masks their values in the other variables and in the history's
// variables, comments and actors, records the meta it is given, and leaves the
// instance it saved as it was.
func TestStoreRepositoryWithRedactor(t *testing.T) {
	ctx := context.Background()
	store := session.NewMemoryStore()
	red := redact.New(redact.Secrets("employee"), redact.Patterns(regexp.MustCompile(`card-\d+`)))
	repo := workflow.NewStoreRepository(store).WithRedactor(red).WithMeta("redact=employee")
	inst := &workflow.Instance{ID: "req-1", Graph: "leave", Hash: strings.Repeat("ab", 32), Status: workflow.Running, States: map[string]workflow.TaskState{},
		Vars: map[string]any{"employee": "Ada Lovelace", "apiKey": "k-123456", "note": "for Ada Lovelace, card-42", "days": 8},
		History: []workflow.Entry{{Node: "file", Action: workflow.Forward, Actor: workflow.As("actor", "Ada Lovelace"),
			Vars: map[string]any{"employee": "Ada Byron"}, Comment: "filed by Ada Byron, k-123456"}}}
	before, err := json.Marshal([]any{inst.Vars, inst.History})
	require.NoError(t, err)
	require.NoError(t, repo.Save(ctx, inst))
	after, err := json.Marshal([]any{inst.Vars, inst.History})
	require.NoError(t, err)
	assert.JSONEq(t, string(before), string(after), "the saved instance is left as it was")

	snap, err := store.Load(ctx, "req-1")
	require.NoError(t, err)
	assert.Equal(t, []string{"apiKey", "employee"}, snap.Redacted)
	assert.Equal(t, []string{"redact=employee"}, snap.Meta)
	raw, err := json.Marshal(snap)
	require.NoError(t, err)
	for _, secret := range []string{"Ada", "k-123456", "card-42"} {
		assert.NotContains(t, string(raw), secret)
	}
	got, err := workflow.FromSnapshot(snap)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"employee": "***", "apiKey": "***", "note": "for ***, ***", "days": int64(8)}, got.Vars)
	require.Len(t, got.History, 1)
	assert.Equal(t, workflow.Entry{Node: "file", Action: workflow.Forward, Actor: workflow.As("actor", "***"),
		Vars: map[string]any{"employee": "***"}, Comment: "filed by ***, ***", Time: got.History[0].Time}, got.History[0])

	plain := workflow.NewStoreRepository(store)
	inst.ID = "req-2"
	inst.Version = 0
	require.NoError(t, plain.Save(ctx, inst))
	snap, err = store.Load(ctx, "req-2")
	require.NoError(t, err)
	assert.Nil(t, snap.Redacted, "without a Redactor an instance is saved whole")
	assert.Equal(t, "Ada Lovelace", snap.Vars["employee"])
}
