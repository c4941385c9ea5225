package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/flowteam/flowteam/session"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The subcommand of "sessions" is its first positional argument: flags may come
// before it, as they may come before the files of run or the id of resume.
func TestSessionsFlagsBeforeSubcommand(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "a-1")
	require.Equal(t, exitOK, code, stderr)

	code, stdout, stderr := call(t, cmdSessions, "--store", dsn, "list")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "a-1")
	code, stdout, stderr = call(t, cmdSessions, "--store="+dsn, "--status", "suspended", "list", "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"instance": "a-1"`)
	code, stdout, stderr = call(t, cmdSessions, "--store", dsn, "show", "a-1")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"instance": "a-1"`)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", dsn}, "no command"},
		{[]string{"--store", dsn, "frob"}, `unknown command "frob"`},
		{[]string{"--store", dsn, "--status", "suspended", "show", "a-1"}, "--status"},
		{[]string{"show", "a-1", "--store", dsn, "--output", "json"}, "--output"},
	} {
		code, _, stderr := call(t, cmdSessions, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
	code, stdout, _ = call(t, cmdSessions, "--store", dsn, "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "flowteam sessions list")
}

// "sessions list --status" reads the status in any case, as "audit --status" does.
func TestSessionsStatusAnyCase(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "a-1")
	require.Equal(t, exitOK, code, stderr)
	for _, status := range []string{"suspended", "Suspended", "SUSPENDED"} {
		code, stdout, stderr := call(t, cmdSessions, "list", "--store", dsn, "--status", status)
		require.Equal(t, exitOK, code, "%s: %s", status, stderr)
		assert.Contains(t, stdout, "a-1", status)
	}
	code, stdout, stderr := call(t, cmdSessions, "list", "--store", dsn, "--status", "Running")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "no instances\n", stdout)
	code, _, stderr = call(t, cmdSessions, "list", "--store", dsn, "--status", "Paused")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--status "Paused"`)
}

// An empty filter (an unset shell variable: "--status $S") is refused, as run refuses
// an empty --store: taken for no filter, it would list every instance or record.
func TestEmptyFilterFlags(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "a-1")
	require.Equal(t, exitOK, code, stderr)
	auditFile, _ := writeAuditFile(t)
	for _, tc := range []struct {
		cmd  func([]string, io.Writer, io.Writer) int
		args []string
		want string
	}{
		{cmdSessions, []string{"list", "--store", dsn, "--status", ""}, "--status must not be empty"},
		{cmdSessions, []string{"list", "--store", dsn, "--status", " "}, "--status must not be empty"},
		{cmdSessions, []string{"list", "--store", dsn, "--output="}, "--output must not be empty"},
		{cmdSessions, []string{"list", "--store="}, "--store must not be empty"},
		{cmdAudit, []string{auditFile, "--status", ""}, "--status must not be empty"},
	} {
		code, stdout, stderr := call(t, tc.cmd, tc.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stdout)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
}

func TestSessionsCommands(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	for _, id := range []string{"b-2", "a-1", "c-3"} {
		code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", id, "--set", "token=s3cr3t", "--redact", "token")
		require.Equal(t, exitOK, code, stderr)
	}
	code, _, stderr := call(t, cmdResume, "c-3", "--store", dsn, "--set", "approved=true", "--set", "token=again", "--redact", "token")
	require.Equal(t, exitOK, code, stderr)

	code, stdout, stderr := call(t, cmdSessions, "list", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	assert.True(t, strings.HasPrefix(lines[1], "a-1 "), stdout)
	assert.Contains(t, lines[3], "completed")

	code, stdout, _ = call(t, cmdSessions, "list", "--store", dsn, "--status", "suspended", "--output", "json")
	require.Equal(t, exitOK, code)
	var entries []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &entries))
	require.Len(t, entries, 2)
	assert.Equal(t, "a-1", entries[0]["instance"])
	assert.Equal(t, "waiting for the manager", entries[0]["reason"])

	code, stdout, stderr = call(t, cmdSessions, "show", "a-1", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	var snap map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &snap))
	assert.Equal(t, "suspended", snap["status"])
	assert.Equal(t, session.DefaultMask, snap["vars"].(map[string]any)["token"], "redacted in the store")
	assert.NotContains(t, stdout, "s3cr3t")
	abs, _ := filepath.Abs(approvalYML)
	assert.Equal(t, []any{abs}, snap["sources"])

	code, stdout, _ = call(t, cmdSessions, "delete", "b-2", "--store", dsn)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "deleted b-2")
	code, _, stderr = call(t, cmdSessions, "show", "b-2", "--store", dsn)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "not found")

	for _, args := range [][]string{{}, {"frob", "--store", dsn}, {"list"}, {"show", "--store", dsn}, {"list", "--store", dsn, "--status", "odd"}} {
		code, _, _ := call(t, cmdSessions, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
	}
}

// One unreadable instance does not hide the others from "sessions list": it is named
// on stderr and the command exits 2 after listing the rest.
func TestSessionsListSkipsCorruptInstance(t *testing.T) {
	noLeaks(t)
	mr := miniredis.RunT(t)
	dsn := "redis://" + mr.Addr() + "/0"
	for _, id := range []string{"good", "torn"} {
		code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", id)
		require.Equal(t, exitOK, code, stderr)
	}
	// Tear the snapshot body of "torn", wherever the store keeps it.
	torn := 0
	for _, key := range mr.Keys() {
		if !strings.HasSuffix(key, ":{torn}") || mr.Type(key) != "hash" {
			continue
		}
		fields, err := mr.HKeys(key)
		require.NoError(t, err)
		for _, field := range fields {
			if v := mr.HGet(key, field); strings.HasPrefix(v, "{") {
				mr.HSet(key, field, v[:len(v)/2])
				torn++
			}
		}
	}
	require.Equal(t, 1, torn, "the snapshot of torn: %v", mr.Keys())

	code, stdout, stderr := call(t, cmdSessions, "list", "--store", dsn)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stdout, "good ")
	assert.NotContains(t, stdout, "torn")
	assert.Contains(t, stderr, `"torn"`)
	assert.Contains(t, stderr, "corrupt snapshot")

	code, stdout, stderr = call(t, cmdSessions, "list", "--store", dsn, "--output", "json")
	assert.Equal(t, exitUsage, code)
	var entries []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &entries), stderr)
	require.Len(t, entries, 1)
	assert.Equal(t, "good", entries[0]["instance"])
}

// The same with a file store, where the damaged file's header cannot even say the
// instance's status.
func TestSessionsListSkipsCorruptFile(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"good", "torn"} {
		code, _, stderr := call(t, cmdRun, approvalYML, "--store", "file:"+dir, "--instance", id)
		require.Equal(t, exitOK, code, stderr)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "torn.json"), []byte("garbage"), 0o600))
	for _, status := range []string{"", "suspended"} {
		args := []string{"list", "--store", "file:" + dir}
		if status != "" {
			args = append(args, "--status", status)
		}
		code, stdout, stderr := call(t, cmdSessions, args...)
		assert.Equal(t, exitUsage, code, status)
		assert.Contains(t, stdout, "good ", status)
		assert.NotContains(t, stdout, "torn", status)
		assert.Contains(t, stderr, "torn.json", status)
		assert.Contains(t, stderr, "corrupt snapshot", status)
	}
}

// An instance whose process is alive (running, with a fresh lease) is listed with its
// owner and lease, and deleted only with --force; one whose lease expired is deleted
// as any other.
func TestSessionsLeases(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	dsn := "file:" + dir
	for _, id := range []string{"live", "dead"} {
		code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", id)
		require.Equal(t, exitOK, code, stderr)
	}
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	now := time.Now()
	for id, expiry := range map[string]time.Time{"live": now.Add(time.Hour), "dead": now.Add(-time.Minute)} {
		snap := loadSnap(t, dir, id)
		snap.Status = session.StatusRunning
		snap.Lease = &session.Lease{Host: "node-7", PID: 4242, Token: "feedc0de", Renewed: expiry.Add(-30 * time.Second),
			Expiry: expiry}
		require.NoError(t, store.Save(t.Context(), snap, snap.Version))
	}

	code, stdout, stderr := call(t, cmdSessions, "list", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `INSTANCE\s+STATUS\s+VERSION\s+GRAPH\s+UPDATED\s+OWNER\s+LEASE\s+REASON`, stdout)
	assert.Regexp(t, `live\s+running\s+3\s+approval\s+\S+\s+4242@node-7\s+until `+
		regexp.QuoteMeta(now.Add(time.Hour).UTC().Format(time.RFC3339)), stdout)
	assert.Regexp(t, `dead\s+running\s+3\s+approval\s+\S+\s+4242@node-7\s+expired `, stdout)
	code, stdout, stderr = call(t, cmdSessions, "list", "--store", dsn, "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	var entries []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &entries))
	require.Len(t, entries, 2)
	assert.Equal(t, "dead", entries[0]["instance"])
	assert.Nil(t, entries[0]["leaseFresh"])
	assert.Equal(t, true, entries[1]["leaseFresh"])
	assert.Equal(t, "node-7", entries[1]["lease"].(map[string]any)["host"])
	code, stdout, stderr = call(t, cmdSessions, "show", "live", "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"token": "feedc0de"`)

	code, _, stderr = call(t, cmdSessions, "delete", "live", "--store", dsn)
	assert.Equal(t, exitConflict, code)
	assert.Contains(t, stderr, `instance "live" is running: pid 4242 on node-7 (token feedc0de) holds its lease until `)
	code, _, stderr = call(t, cmdSessions, "delete", "dead", "--store", dsn)
	assert.Equal(t, exitOK, code, stderr)
	code, stdout, stderr = call(t, cmdSessions, "delete", "live", "--store", dsn, "--force")
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "deleted live\n", stdout)

	code, _, stderr = call(t, cmdSessions, "list", "--store", dsn, "--force")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--force applies to delete only")
}

// The lease flags of run and resume must make a lease that outlives a renewal.
func TestLeaseFlags(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lease-renew", "0s"}, "--lease-renew must be positive"},
		{[]string{"--lease-renew", "10s", "--lease-ttl", "10s"}, "--lease-ttl (10s) must be longer than --lease-renew (10s)"},
		{[]string{"--lease-ttl", "1s"}, "--lease-ttl (1s) must be longer than --lease-renew (5s)"},
	} {
		code, _, stderr := call(t, cmdRun, append([]string{approvalYML, "--store", dsn, "--instance", "f"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Contains(t, stderr, tc.want)
	}
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", dsn, "--instance", "f")
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = call(t, cmdResume, "f", "--store", dsn, "--lease-renew", "-1s")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--lease-renew must be positive")
}
