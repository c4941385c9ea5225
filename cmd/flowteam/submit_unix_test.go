//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// With $FLOWTEAM_SESSION_KEY, submit seals the queued snapshot: no value of a variable
// is in Redis in clear, and a worker with the key runs the instance to completion.
func TestSubmitSealsWithTheSessionKey(t *testing.T) {
	bin := buildFlowteam(t)
	t.Setenv(keyEnv, strings.Repeat("ab", 32))
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		addr = miniredis.RunT(t).Addr()
	}
	prefix := "clis" + time.Now().Format("150405.000000") + ":"
	dsn := "redis://" + addr + "/0?prefix=" + prefix
	def := filepath.Join("testdata", "worker", "job.yml")
	const secret = "clear-value-7731"
	var out, errb bytes.Buffer
	code := dispatch([]string{"submit", def, "--store", dsn, "--instance", "k1", "--set", "ok=true",
		"--set", "card=" + secret}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())

	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, keys)
	for _, k := range keys {
		var vals []string
		switch rdb.Type(ctx, k).Val() {
		case "hash":
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				vals = append(vals, f, v)
			}
		case "string":
			vals = append(vals, rdb.Get(ctx, k).Val())
		}
		for _, v := range vals {
			assert.NotContains(t, v, secret, "key %s", k)
		}
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
