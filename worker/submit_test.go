package worker_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/worker"
)

// secretValue is a variable's value that must never be in Redis in clear.
const secretValue = "4111-1111-1111-1111"

// cardEngine registers graph "card": node use copies the last four digits of
// variable card into last4.
func cardEngine(t *testing.T) *flow.Engine {
	t.Helper()
	spec := flow.NewSpec("card")
	spec.Start("s").LinkTo("use")
	spec.Activity("use").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		card, _ := c.Get("card")
		s, _ := card.(string)
		c.Set("last4", s[len(s)-4:])
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine()
	require.NoError(t, eng.Register(g))
	return eng
}

// Submit seals the queued snapshot with the cipher the workers use: its variables
// are not in Redis in clear, and a worker with the key runs it.
func TestSubmitSealsWithTheWorkersCipher(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	eng := cardEngine(t)
	c, err := session.NewCipher(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, q.Submit(ctx, eng, "card", "pay-1", map[string]any{"card": secretValue},
		worker.WithSessionOptions(session.WithCipher(c)), worker.WithSources("card.yml")))

	raw := testkit.RedisValues(t, rdb, prefix)
	require.NotEmpty(t, raw)
	for _, v := range raw {
		assert.NotContains(t, v, secretValue)
	}
	snap, err := store.Load(ctx, "pay-1")
	require.NoError(t, err)
	assert.NotNil(t, snap.Sealed)
	assert.Equal(t, []string{"card.yml"}, snap.Sources)

	_, stop := startWorker(t, q, eng, worker.WithRunnerOptions(session.WithCipher(c)))
	waitCompleted(t, store, 1, 10*time.Second)
	require.NoError(t, stop())
	done, err := session.NewRunner(eng, store, session.WithCipher(c)).Load(ctx, "pay-1")
	require.NoError(t, err)
	assert.Equal(t, "1111", done.Vars["last4"])
}

// Submit masks the variables declared secret, as the workers' runs do.
func TestSubmitRedactsDeclaredSecrets(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	ctx := context.Background()
	require.NoError(t, q.Submit(ctx, cardEngine(t), "card", "pay-2", map[string]any{"card": secretValue, "n": 1},
		worker.WithSessionOptions(session.WithRedaction("card"))))
	for _, v := range testkit.RedisValues(t, rdb, prefix) {
		assert.NotContains(t, v, secretValue)
	}
	snap, err := store.Load(ctx, "pay-2")
	require.NoError(t, err)
	assert.Equal(t, []string{"card"}, snap.Redacted)
	assert.Equal(t, int64(1), snap.Vars["n"])
	assert.Equal(t, worker.QueuedReason, snap.Reason)
}
