package worker_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/worker"
)

// payEngine registers graph "pay": node need suspends until variable card is set,
// then node use copies its last four digits into last4, counting its runs in used.
func payEngine(t *testing.T, used *atomic.Int32) *flow.Engine {
	t.Helper()
	spec := flow.NewSpec("pay")
	spec.Start("s").LinkTo("need")
	spec.Activity("need").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if _, ok := c.Get("card"); !ok {
			c.Suspend("waiting for the card")
		}
		return nil
	}).LinkTo("use")
	spec.Activity("use").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		used.Add(1)
		card, _ := c.Get("card")
		s, _ := card.(string)
		c.Set("last4", s[max(len(s)-4, 0):])
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine()
	require.NoError(t, eng.Register(g))
	return eng
}

// A queued resume whose updates are sealed (WithSealedUpdates) holds the value it
// supplies in no Redis key or value. A worker with the key (WithCipher) runs the
// instance with the updates applied; one without a key, or with another, runs
// nothing: it logs why and moves the entry to the dead letters at once, its updates
// still sealed, and records the instance as failed with the reason.
func TestSealedUpdates(t *testing.T) {
	key, err := session.NewCipher([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	other, err := session.NewCipher([]byte("fedcba9876543210fedcba9876543210"))
	require.NoError(t, err)
	for name, opts := range map[string][]worker.Option{
		"with the key":     {worker.WithCipher(key)},
		"without a key":    nil,
		"with another key": {worker.WithCipher(other)},
	} {
		t.Run(name, func(t *testing.T) {
			rdb, prefix, _ := testClient(t)
			store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
			q := worker.NewQueue(store)
			var used atomic.Int32
			eng := payEngine(t, &used)
			ctx := context.Background()
			require.NoError(t, q.Submit(ctx, eng, "pay", "pay-1", nil))
			_, stop := startWorker(t, q, eng)
			require.Eventually(t, func() bool {
				snap, err := store.Load(ctx, "pay-1")
				return err == nil && snap.Reason == "waiting for the card"
			}, 10*time.Second, 10*time.Millisecond)
			require.NoError(t, stop())

			require.NoError(t, q.Enqueue(ctx, "pay-1", map[string]any{"card": secretValue},
				worker.WithSealedUpdates(key)))
			require.Empty(t, holding(t, rdb, prefix), "queued")
			entries, err := rdb.XRange(ctx, streamKey(store), "-", "+").Result()
			require.NoError(t, err)
			require.Len(t, entries, 1)
			assert.NotContains(t, entries[0].Values, "updates")
			assert.Contains(t, entries[0].Values, "sealed-updates")

			var logs syncBuffer
			opts = append(opts, worker.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			_, stop = startWorker(t, q, eng, opts...)
			if name == "with the key" {
				waitCompleted(t, store, 1, 10*time.Second)
				require.NoError(t, stop())
				done, err := session.NewRunner(eng, store, session.WithCipher(key)).Load(ctx, "pay-1")
				require.NoError(t, err)
				assert.Equal(t, "1111", done.Vars["last4"])
				assert.Empty(t, holding(t, rdb, prefix), "after the run")
				return
			}
			require.Eventually(t, func() bool {
				st, err := q.Stats(ctx)
				return err == nil && st.DeadLetters == 1 && st.Depth == 0
			}, 10*time.Second, 10*time.Millisecond, "logs:\n%s", &logs)
			require.NoError(t, stop())
			assert.Zero(t, used.Load(), "nothing ran")
			assert.Contains(t, logs.String(), "updates cannot be opened")
			assert.NotContains(t, logs.String(), secretValue)
			assert.Empty(t, holding(t, rdb, prefix), "dead-lettered")

			dead, err := q.DeadLetters(ctx, 0)
			require.NoError(t, err)
			require.Len(t, dead, 1)
			assert.Equal(t, "pay-1", dead[0].Instance)
			assert.Contains(t, dead[0].Reason, "updates could not be opened")
			assert.True(t, dead[0].Sealed)
			assert.Empty(t, dead[0].Updates)
			// The key still opens what the dead letter keeps.
			raw, err := rdb.XRange(ctx, store.Prefix()+"worker:{default}:dead", "-", "+").Result()
			require.NoError(t, err)
			require.Len(t, raw, 1)
			sealed, _ := raw[0].Values["sealed-updates"].(string)
			plain, err := key.OpenData([]byte(sealed), "pay-1")
			require.NoError(t, err)
			assert.JSONEq(t, `{"card":"`+secretValue+`"}`, string(plain))

			snap, err := session.NewRunner(eng, store, session.WithCipher(key)).Load(ctx, "pay-1")
			if name == "with another key" {
				// Recorded as failed, sealed with the worker's key.
				snap, err = session.NewRunner(eng, store, session.WithCipher(other)).Load(ctx, "pay-1")
			}
			require.NoError(t, err)
			assert.Equal(t, session.StatusFailed, snap.Status)
			require.NotEmpty(t, snap.Errors)
			last := snap.Errors[len(snap.Errors)-1]
			assert.Equal(t, worker.DeadLetterCode, last.Code)
			assert.True(t, strings.Contains(last.Message, "updates could not be opened"), last.Message)
			_, hasCard := snap.Vars["card"]
			assert.False(t, hasCard)
		})
	}
}
