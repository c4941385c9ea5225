//go:build unix

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/testkit"
)

// With $FLOWTEAM_SESSION_KEY, submit seals the queued snapshot: no value of a variable
// is in Redis in clear, and a worker with the key runs the instance to completion.
func TestSubmitSealsWithTheSessionKey(t *testing.T) {
	bin := buildFlowteam(t)
	t.Setenv(keyEnv, strings.Repeat("ab", 32))
	rdb, prefix, dsn := queueRedis(t)
	def := filepath.Join("testdata", "worker", "job.yml")
	const secret = "clear-value-7731"
	var out, errb bytes.Buffer
	code := dispatch([]string{"submit", def, "--store", dsn, "--instance", "k1", "--set", "ok=true",
		"--set", "card=" + secret}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())

	ctx := context.Background()
	vals := testkit.RedisValues(t, rdb, prefix)
	require.NotEmpty(t, vals)
	for _, v := range vals {
		assert.NotContains(t, v, secret)
	}

	var logs bytes.Buffer
	w := exec.Command(bin, "worker", def, "--store", dsn, "--name", "ks", "--lease-renew", "50ms", "--lease-ttl", "500ms")
	w.Stderr = &logs
	require.NoError(t, w.Start()) // the key is in its environment
	t.Cleanup(func() { w.Process.Kill(); w.Wait() })
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	require.Eventually(t, func() bool {
		snap, err := store.Load(ctx, "k1")
		return err == nil && snap.Status == session.StatusCompleted
	}, 20*time.Second, 20*time.Millisecond, "worker logs:\n%s", &logs)
	snap, err := store.Load(ctx, "k1")
	require.NoError(t, err)
	assert.NotNil(t, snap.Sealed, "the worker sealed it too")
	c, err := cipherFromEnv()
	require.NoError(t, err)
	opened, err := c.Open(snap)
	require.NoError(t, err)
	assert.Equal(t, secret, opened.Vars["card"])
	assert.EqualValues(t, 3, opened.Vars["sum"])
}

// submit --redact masks the queued snapshot and records the rule; a worker process
// applies it to every save of the run, also once a queued resume supplies the masked
// variable again, and applies its own --redact-pattern to every instance: the secret
// is in no Redis key or value at any point, nor in any command's output or the
// worker's log. With $FLOWTEAM_SESSION_KEY the queued resume's updates are sealed, so
// the value is not in Redis while they wait either; without it they wait in clear.
func TestSubmitRedactWorkerMasks(t *testing.T) {
	bin := buildFlowteam(t)
	for name, key := range map[string]string{"without a key": "", "with a key": strings.Repeat("cd", 32)} {
		t.Run(name, func(t *testing.T) { testRedactWorkerMasks(t, bin, key) })
	}
}

func testRedactWorkerMasks(t *testing.T, bin, key string) {
	t.Setenv(keyEnv, key)
	c, err := cipherFromEnv()
	require.NoError(t, err)
	rdb, prefix, dsn := queueRedis(t)
	def := filepath.Join("testdata", "worker", "pay.yml")
	const secret, token = "4111-2222-3333-4444", "tok-918273"
	var outputs strings.Builder
	run := func(args ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := dispatch(args, &out, &errb)
		outputs.WriteString(out.String() + errb.String())
		require.Equal(t, exitOK, code, "%v: %s", args, errb.String())
	}
	holding := func() (found []string) {
		for _, v := range testkit.RedisValues(t, rdb, prefix) {
			if strings.Contains(v, secret) {
				found = append(found, v)
			}
		}
		return found
	}

	run("submit", def, "--store", dsn, "--instance", "p1", "--redact", "card",
		"--set", "card="+secret, "--set", "memo=pay with "+secret)
	run("submit", def, "--store", dsn, "--instance", "p2", "--set", "note="+token)
	require.Empty(t, holding(), "after submit")
	store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
	load := func(id string) *session.Snapshot {
		snap, err := store.Load(context.Background(), id)
		require.NoError(t, err)
		if c != nil {
			snap, err = c.Open(snap)
			require.NoError(t, err)
		}
		return snap
	}
	assert.Equal(t, []string{"redact=card"}, load("p1").Meta)
	assert.Equal(t, token, load("p2").Vars["note"], "submit without rules saves the instance whole")

	var logs bytes.Buffer // one worker writes at a time, read once it has ended
	startWorker := func(name string) *exec.Cmd {
		w := exec.Command(bin, "worker", def, "--store", dsn, "--name", name, "--lease-renew", "50ms",
			"--lease-ttl", "500ms", "--redact-pattern", "tok-[0-9]+")
		w.Stderr = &logs
		require.NoError(t, w.Start()) // the key, if any, is in its environment
		t.Cleanup(func() { w.Process.Kill(); w.Wait() })
		return w
	}
	stopWorker := func(w *exec.Cmd) {
		require.NoError(t, w.Process.Signal(syscall.SIGTERM))
		require.NoError(t, w.Wait(), "worker logs:\n%s", &logs)
	}
	w := startWorker("rw1")
	waiting := func(id string) bool {
		s := load(id)
		return s.Status == session.StatusSuspended && s.Reason != "queued"
	}
	require.Eventually(t, func() bool { return waiting("p1") && waiting("p2") }, 20*time.Second, 20*time.Millisecond)
	require.Empty(t, holding(), "waiting for the card")
	_, hasCard := load("p1").Vars["card"]
	assert.False(t, hasCard, "a masked variable is not given back")
	assert.Equal(t, "***", load("p2").Vars["note"], "the worker's own pattern")
	stopWorker(w)

	// Queued while no worker runs, the resumes' updates wait in the stream.
	run("resume", "p1", "--store", dsn, "--queue", "default", "--set", "card="+secret)
	run("resume", "p2", "--store", dsn, "--queue", "default", "--set", "card=5500-0000-0000-0004")
	if c != nil {
		assert.Empty(t, holding(), "queued resumes, sealed")
	} else {
		assert.Len(t, holding(), 1, "the queued resume of p1 holds the card in clear")
	}
	w = startWorker("rw2")
	done := func(id string) bool { return load(id).Status == session.StatusCompleted }
	require.Eventually(t, func() bool { return done("p1") && done("p2") }, 20*time.Second, 20*time.Millisecond)
	// The queued resumes' entries are deleted once acknowledged, just after the
	// outcome is saved.
	require.Eventually(t, func() bool { return rdb.XLen(context.Background(), prefix+"worker:{default}:queue").Val() == 0 },
		10*time.Second, 10*time.Millisecond)
	require.Empty(t, holding(), "after the runs")
	p1 := load("p1")
	assert.Equal(t, "***", p1.Vars["card"])
	assert.Equal(t, "charged ***", p1.Vars["receipt"])
	assert.Equal(t, "pay with ***", p1.Vars["memo"])
	assert.Equal(t, "charged 5500-0000-0000-0004", load("p2").Vars["receipt"], "p2 records no rule for card")
	run("sessions", "show", "p1", "--store", dsn)
	run("sessions", "list", "--store", dsn)

	stopWorker(w)
	for _, text := range []string{outputs.String(), logs.String()} {
		assert.NotContains(t, text, secret)
		assert.NotContains(t, text, token)
	}
	assert.Contains(t, outputs.String(), "queued p1 graph pay on queue default")
}
