package worker_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/worker"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// recordedSecrets is a WithRedaction function: the variables the instance records
// as secret ("secret=NAME" in its Meta) and those its last save masked.
func recordedSecrets(snap *session.Snapshot) (*redact.Redactor, error) {
	names := snap.Redacted
	for _, e := range snap.Meta {
		if name, ok := strings.CutPrefix(e, "secret="); ok {
			names = append(names, name)
		}
	}
	return redact.New(redact.Secrets(names...)), nil
}

// holding returns a description of the values under prefix that hold the secret.
func holding(t *testing.T, rdb *redis.Client, prefix string) []string {
	var found []string
	for _, v := range testkit.RedisValues(t, rdb, prefix) {
		if strings.Contains(v, secretValue) {
			found = append(found, v)
		}
	}
	return found
}

// vaultEngine registers graph "vault": node fetch sets card, masked at submit and so
// not restored, again (from a vault, say) and quotes it in receipt; node check, run
// after fetch's checkpoint was saved, calls observe; then the run completes.
func vaultEngine(t *testing.T, observe func()) *flow.Engine {
	t.Helper()
	spec := flow.NewSpec("vault")
	spec.Start("s").LinkTo("fetch")
	spec.Activity("fetch").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if _, ok := c.Get("card"); ok {
			t.Error("a masked variable was restored")
		}
		c.Set("card", secretValue)
		c.Set("receipt", "charged card "+secretValue)
		return nil
	}).LinkTo("check")
	spec.Activity("check").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		observe()
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine()
	require.NoError(t, eng.Register(g))
	return eng
}

// An instance submitted with a secret, its rules recorded with it, is run by a
// worker with WithRedaction: the secret is in no Redis key or value after the
// submit, in the middle of the run (after a checkpoint of a node that set it) or
// after the run completed, nor in the worker's log; the run has the value. Without
// WithRedaction the same run's checkpoints hold it, so the scan does see them.
func TestWorkerRedactsWhatTheInstanceRecords(t *testing.T) {
	for _, withRedaction := range []bool{true, false} {
		name := map[bool]string{true: "with redaction", false: "without"}[withRedaction]
		t.Run(name, func(t *testing.T) {
			rdb, prefix, _ := testClient(t)
			store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
			q := worker.NewQueue(store)
			var midRun []string
			eng := vaultEngine(t, func() { midRun = holding(t, rdb, prefix) })
			ctx := context.Background()
			red := redact.New(redact.Secrets("card"))
			require.NoError(t, q.Submit(ctx, eng, "vault", "pay-1",
				map[string]any{"card": secretValue, "memo": "pay with card " + secretValue},
				worker.WithSessionOptions(session.WithRedactor(red)), worker.WithMeta("secret=card")))
			require.Empty(t, holding(t, rdb, prefix), "after submit")

			var logs syncBuffer
			opts := []worker.Option{worker.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}
			if withRedaction {
				opts = append(opts, worker.WithRedaction(recordedSecrets))
			}
			_, stop := startWorker(t, q, eng, opts...)
			waitCompleted(t, store, 1, 10*time.Second)
			require.NoError(t, stop())
			if !withRedaction {
				assert.NotEmpty(t, midRun, "the checkpoint of fetch holds the value")
				return
			}
			assert.Empty(t, midRun, "in the middle of the run")
			assert.Empty(t, holding(t, rdb, prefix), "after the run")
			assert.NotContains(t, logs.String(), secretValue)
			snap, err := store.Load(ctx, "pay-1")
			require.NoError(t, err)
			assert.Equal(t, []string{"secret=card"}, snap.Meta, "the rules stay recorded")
			assert.Equal(t, "***", snap.Vars["card"])
			assert.Equal(t, "charged card ***", snap.Vars["receipt"])
			assert.Equal(t, "pay with card ***", snap.Vars["memo"])
		})
	}
}

// A WithRedaction function that fails runs nothing: the entry is left pending.
func TestWorkerRedactionErrorRunsNothing(t *testing.T) {
	rdb, prefix, _ := testClient(t)
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	q := worker.NewQueue(store)
	ran := make(chan struct{}, 1)
	eng := vaultEngine(t, func() { ran <- struct{}{} })
	ctx := context.Background()
	require.NoError(t, q.Submit(ctx, eng, "vault", "pay-2", nil))
	var logs syncBuffer
	_, stop := startWorker(t, q, eng, worker.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		worker.WithRedaction(func(*session.Snapshot) (*redact.Redactor, error) {
			return nil, assert.AnError
		}))
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "resume failed") },
		5*time.Second, 10*time.Millisecond)
	require.NoError(t, stop())
	assert.Empty(t, ran)
	snap, err := store.Load(ctx, "pay-2")
	require.NoError(t, err)
	assert.Equal(t, session.StatusSuspended, snap.Status)
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), st.Pending, "left pending for a reclaim")
}
