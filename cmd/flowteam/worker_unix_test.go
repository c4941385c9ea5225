//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/testkit"
)

// submit queues instances, a worker process runs them (waking them after their wait),
// resume --queue hands one its decision, workers lists the worker and the queue, and
// SIGTERM stops the worker, which leaves the registry.
func TestSubmitWorkerResumeQueue(t *testing.T) {
	bin := buildFlowteam(t)
	rdb, prefix, dsn := queueRedis(t)
	def := filepath.Join("testdata", "worker", "job.yml")
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := dispatch(args, &out, &errb)
		return out.String(), errb.String(), code
	}

	for _, id := range []string{"j1", "j2"} {
		out, errs, code := run("submit", def, "--store", dsn, "--instance", id, "--set", "ok=true")
		require.Equal(t, exitOK, code, errs)
		assert.Equal(t, "queued "+id+" graph job on queue default\n", out)
	}
	_, errs, code := run("submit", def, "--store", dsn, "--instance", "j3")
	require.Equal(t, exitOK, code, errs)
	_, _, code = run("submit", def, "--store", dsn, "--instance", "j1")
	assert.Equal(t, exitConflict, code, "an instance that exists")

	out, _, code := run("workers", "--store", dsn, "--output", "json")
	require.Equal(t, exitOK, code)
	var ls struct {
		Depth   int64             `json:"depth"`
		Workers []json.RawMessage `json:"workers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ls))
	assert.Equal(t, int64(3), ls.Depth)
	assert.Empty(t, ls.Workers)

	var logs bytes.Buffer
	w := exec.Command(bin, "worker", def, "--store", dsn, "--name", "w1", "--concurrency", "2",
		"--lease-renew", "50ms", "--lease-ttl", "500ms")
	w.Stderr = &logs
	require.NoError(t, w.Start())
	t.Cleanup(func() { w.Process.Kill(); w.Wait() })

	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	load := func(id string) *session.Snapshot {
		snap, err := store.Load(context.Background(), id)
		require.NoError(t, err)
		return snap
	}
	status := func(id string) session.Status { return load(id).Status }
	// j3 suspends in nap, is woken after 300ms, and suspends in approve.
	require.Eventually(t, func() bool {
		return status("j1") == session.StatusCompleted && status("j2") == session.StatusCompleted &&
			load("j3").Reason == "need ok"
	}, 20*time.Second, 20*time.Millisecond, "worker logs:\n%s", &logs)

	out, errs, code = run("resume", "j3", "--store", dsn, "--queue", "default", "--set", "ok=true")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "queued j3 on queue default\n", out)
	require.Eventually(t, func() bool { return status("j3") == session.StatusCompleted },
		20*time.Second, 20*time.Millisecond, "worker logs:\n%s", &logs)
	assert.EqualValues(t, 3, load("j3").Vars["sum"])

	// The entry is acknowledged just after the outcome is saved.
	require.Eventually(t, func() bool {
		out, _, code = run("workers", "--store", dsn)
		return code == exitOK && strings.Contains(out, "queue default: depth 0, pending 0")
	}, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, out, "w1 ")

	require.NoError(t, w.Process.Signal(syscall.SIGTERM))
	require.NoError(t, w.Wait(), "worker logs:\n%s", &logs)
	out, _, _ = run("workers", "--store", dsn, "--output", "json")
	require.NoError(t, json.Unmarshal([]byte(out), &ls))
	assert.Empty(t, ls.Workers, "a stopped worker leaves the registry")

	_, errs, code = run("resume", "j3", "--store", dsn, "--queue", "default")
	assert.Equal(t, exitConflict, code, "a completed instance is not queued: %s", errs)
	_, _, code = run("submit", def, "--store", "memory:")
	assert.Equal(t, exitUsage, code, "workers share a Redis store")
}

// queueRedis returns a client of the test's Redis (testkit.RedisStore: $REDIS_ADDR's,
// or a miniredis), a key prefix no other test uses, whose keys are deleted when the
// test ends, and the --store DSN of that prefix.
func queueRedis(t *testing.T) (*redis.Client, string, string) {
	store := testkit.RedisStore(t)
	rdb := store.Client().(*redis.Client)
	return rdb, store.Prefix(), "redis://" + rdb.Options().Addr + "/0?prefix=" + url.QueryEscape(store.Prefix())
}
