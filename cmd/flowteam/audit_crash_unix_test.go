//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/trace"
)

// A run saved per node and killed with SIGKILL leaves an audit that agrees with its
// last snapshot: every node the snapshot counts done has its STARTED and COMPLETED
// records (the audit may be one node ahead, never behind), and the node that was
// running has its STARTED record; the resume writes that node's end. slowspin.yml
// counts its body's completions in n, so the snapshot says how many body nodes it
// counts done; its slow node is running when the process is killed.
func TestAuditAgreesWithTheSnapshotAfterAKill(t *testing.T) {
	bin := buildFlowteam(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	dsn := "file:" + dir
	auditPath := filepath.Join(tmp, "audit.jsonl")
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	count := func(snap *session.Snapshot) int64 { n, _ := snap.Vars["n"].(int64); return n }

	run := exec.Command(bin, "run", "testdata/misc/slowspin.yml", "--store", dsn, "--instance", "k", "--steps=1000000000",
		"--durability", "per-node", "--audit", auditPath, "--lease-renew", "100ms", "--lease-ttl", "1s")
	// The kill comes when the snapshot is saved after "again", within 50ms (a node of
	// work takes over 100ms): as soon as the audit shows work started, or at the end of
	// those 50ms. Waiting on the snapshot alone leaves the audit no time to catch up.
	var saved time.Time
	sawStart := false // the kill came once the audit showed work started
	killWhen(t, run, func() bool {
		if saved.IsZero() {
			snap, err := store.Load(context.Background(), "k")
			if err == nil && snap.Status == session.StatusRunning && count(snap) >= 2 && snap.Trace.Last["slowspin"].NodeID == "again" {
				saved = time.Now()
			}
			return false
		}
		sawStart = lastRecordStarts(auditPath, "work")
		return sawStart || time.Since(saved) > 50*time.Millisecond
	})
	snap := loadSnap(t, dir, "k")
	require.Equal(t, session.StatusRunning, snap.Status, "killed: nothing saved the outcome")
	done := count(snap)

	recs := readAuditClean(t, auditPath)
	runs, _ := auditRuns(recs)
	require.Len(t, runs, 1)
	crashed := runs[0]
	open := openExecutions(t, crashed)
	completed := int64(len(crashed.ByNode("slowspin:body").ByStatus(trace.Completed)))
	assert.GreaterOrEqual(t, completed, done, "every body the snapshot counts has its record")
	assert.LessOrEqual(t, completed, done+1, "the audit is at most the node being saved ahead")
	for path, last := range snap.Trace.Last {
		assert.NotEmpty(t, crashed.ByNode(path+":"+last.NodeID).ByStatus(trace.Completed), "last node %s:%s", path, last.NodeID)
	}
	if sawStart {
		require.Len(t, open, 1, "the slow node was running")
		assert.Equal(t, "work", open[0].NodeID)
	} else { // a busy machine had not started work 50ms after the save
		t.Logf("killed before the audit showed work started: %d open", len(open))
		require.LessOrEqual(t, len(open), 1)
	}
	for _, o := range open {
		assert.True(t, inFrontier(snap, o.NodeID), "the running node %s is where the snapshot resumes", o.NodeID)
	}

	// The killed process's lease must expire before --recover may take the instance.
	waitFor(t, "the lease to expire", func() (*session.Snapshot, bool) {
		return nil, snap.Lease == nil || !snap.Lease.Fresh(time.Now())
	})
	resume := exec.Command(bin, "resume", "k", "--store", dsn, "--recover", "--set", "stop=true", "--audit", auditPath)
	out, err := resume.CombinedOutput()
	require.NoError(t, err, "%s", out)
	final := loadSnap(t, dir, "k")
	require.Equal(t, session.StatusCompleted, final.Status)

	runs, _ = auditRuns(readAuditClean(t, auditPath))
	require.Len(t, runs, 2)
	resumed := runs[0]
	if resumed[0].RunID == crashed[0].RunID {
		resumed = runs[1]
	}
	require.NoError(t, resumed.Verify(), "the resumed run's audit is whole")
	again := int64(len(resumed.ByNode("slowspin:body").ByStatus(trace.Completed)))
	assert.Equal(t, count(final), done+again, "the resume continued from the snapshot, as its audit says")
	for _, o := range open {
		assert.NotEmpty(t, resumed.ByNode(o.Qualified()).Terminal(), "the resume ends the node %s the kill cut", o.NodeID)
	}
}

// killWhen starts cmd, waits until ready says the run got far enough, and kills the
// process with SIGKILL.
func killWhen(t *testing.T, cmd *exec.Cmd, ready func() bool) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(time.Minute)
	for !ready() {
		select {
		case err := <-exited:
			t.Fatalf("exited before the kill: %v\nstderr: %s", err, &stderr)
		case <-deadline:
			t.Fatalf("the run did not get far enough within a minute: stderr: %s", &stderr)
		case <-time.After(2 * time.Millisecond):
		}
	}
	require.NoError(t, cmd.Process.Kill())
	err := <-exited
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "exit: %v", err)
}

// lastRecordStarts reports whether the last line of the audit file is the STARTED
// record of node.
func lastRecordStarts(path, node string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	var rec trace.Record
	return json.Unmarshal(lines[len(lines)-1], &rec) == nil && rec.NodeID == node && rec.Status == trace.Started
}

// readAuditClean reads an audit file that must have no damaged line.
func readAuditClean(t *testing.T, path string) trace.Records {
	t.Helper()
	var warnings bytes.Buffer
	recs, err := readAudit(path, &warnings)
	require.NoError(t, err)
	require.Empty(t, warnings.String())
	return recs
}

// openExecutions returns the STARTED records of a run's node executions that have no
// terminal record, checking that every terminal record follows a STARTED one.
func openExecutions(t *testing.T, run trace.Records) []trace.Record {
	t.Helper()
	type exec struct{ branch, node string }
	started := map[exec]trace.Record{}
	for _, r := range run {
		if r.IsRun() {
			continue
		}
		k := exec{r.BranchID, r.Qualified()}
		if r.Status == trace.Started {
			started[k] = r
			continue
		}
		_, ok := started[k]
		require.True(t, ok, "terminal record #%d of %s without its STARTED record", r.Seq, k.node)
		delete(started, k)
	}
	var open []trace.Record
	for _, r := range started {
		open = append(open, r)
	}
	return open
}

// inFrontier reports whether a token of snap's frontier stands at node.
func inFrontier(snap *session.Snapshot, node string) bool {
	if snap.Frontier == nil {
		return false
	}
	for _, tok := range snap.Frontier.Tokens {
		if tok.Node == node {
			return true
		}
	}
	return false
}

// Saved on exit, a run's audit is written at least every second while it runs: a
// process killed with SIGKILL leaves the records of all but its last second, and
// "flowteam audit" reads them (the run without an end record).
func TestAuditWrittenEverySecondWhenSavedOnExit(t *testing.T) {
	bin := buildFlowteam(t)
	tmp := t.TempDir()
	auditPath := filepath.Join(tmp, "audit.jsonl")
	run := exec.Command(bin, "run", "testdata/misc/slowspin.yml", "--store", "file:"+filepath.Join(tmp, "sessions"),
		"--steps=1000000000", "--audit", auditPath)
	started := time.Now()
	killWhen(t, run, func() bool {
		data, _ := os.ReadFile(auditPath)
		return bytes.Contains(data, []byte(`"status":"COMPLETED","graph":"slowspin","node":"body"`))
	})
	assert.Less(t, time.Since(started), 30*time.Second)
	recs := readAuditClean(t, auditPath)
	assert.NotEmpty(t, recs.ByNode("slowspin:body").ByStatus(trace.Completed))
	openExecutions(t, recs) // every end has its start

	code, stdout, stderr := call(t, dispatch, "audit", auditPath)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "(no end record: still running, or the writer stopped)")
}
