package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
)

// auditCmd runs cmdAudit (see call).
func auditCmd(t *testing.T, args ...string) (int, string, string) { return call(t, cmdAudit, args...) }

// writeAuditFile runs a graph with a parallel split and a sub-graph call three times
// into a JSON Lines audit file: completed, failed in the sub-graph, suspended.
func writeAuditFile(t *testing.T) (path string, runIDs []string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "audit.jsonl")
	sink, err := interceptor.OpenJSONL(path)
	require.NoError(t, err)
	defer sink.Close()
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(sink)), 0))

	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("check")
	child.Activity("check").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("bad") == true {
			return errors.New("check failed: password=hunter2")
		}
		return nil
	}).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(auditGraph(t, child)))

	noop := func(context.Context, *flow.Context, *flow.Node) error { return nil }
	s := flow.NewSpec("order")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").SetTitle("Check stock").DoFunc(noop).LinkTo("j")
	s.Activity("b").DoFunc(noop).LinkTo("j")
	s.Parallel("j").LinkTo("verify")
	s.Activity("verify").SetTask("#child").LinkTo("approve")
	s.Activity("approve").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("wait") == true {
			c.Suspend("approval")
		}
		return nil
	}).LinkTo("e")
	s.End("e")
	g := auditGraph(t, s)

	for i, vars := range []map[string]any{{}, {"bad": true, "password": "hunter2"}, {"wait": true}} {
		res, _ := e.EvalGraph(context.Background(), g, flow.NewContextWith([]string{"i-ok", "i-bad", "i-wait"}[i], vars))
		runIDs = append(runIDs, res.RunID())
	}
	return path, runIDs
}

func auditGraph(t *testing.T, s *flow.GraphSpec) *flow.Graph {
	t.Helper()
	g, err := s.Build()
	require.NoError(t, err)
	return g
}

func TestAuditTimeline(t *testing.T) {
	path, ids := writeAuditFile(t)
	code, out, errOut := auditCmd(t, path)
	require.Equal(t, exitOK, code, errOut)
	assert.Empty(t, errOut)
	blocks := strings.Split(strings.TrimSpace(out), "\n\n")
	require.Len(t, blocks, 3, out)

	ok := strings.Split(blocks[0], "\n")
	assert.Regexp(t, `^run `+ids[0]+`  instance i-ok  graph order  started \S+  -> COMPLETED in \S+$`, ok[0])
	assert.Len(t, ok, 1+2*11) // s p a b j verify approve e + cs check ce, STARTED and ended
	assert.Contains(t, blocks[0], `#2  STARTED      s (start)  [main]`)
	assert.Regexp(t, `COMPLETED    a \(activity\) "Check stock"  \[main/p:a\]  \S+`, blocks[0])
	assert.Contains(t, blocks[0], "STARTED      verify (activity)  [main]\n")
	assert.Regexp(t, `COMPLETED        check \(activity in child\)  \[main/verify/child\]  \S+`, blocks[0], "sub-graph nodes are indented")
	assert.Regexp(t, `COMPLETED    j \(parallel\)  \[main\]  \S+  arrivals=2`, blocks[0])

	assert.Contains(t, blocks[1], "-> FAILED in")
	assert.Contains(t, blocks[1], "check failed: password=***")
	assert.NotContains(t, out, "hunter2")
	assert.Contains(t, blocks[2], "-> SUSPENDED in")
	assert.Regexp(t, `SUSPENDED    approve \(activity\)  \[main\]  \S+  reason: approval`, blocks[2])
}

func TestAuditFilters(t *testing.T) {
	path, ids := writeAuditFile(t)

	code, out, _ := auditCmd(t, "--instance", "i-bad", path)
	require.Equal(t, exitOK, code)
	assert.Equal(t, 1, strings.Count(out, "\nrun ")+strings.Count(out[:4], "run "))
	assert.Contains(t, out, ids[1])

	code, out, _ = auditCmd(t, path, "--run", ids[2])
	require.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, "run "+ids[2]))
	assert.NotContains(t, out, ids[0])

	code, out, _ = auditCmd(t, "--status", "failed", path)
	require.Equal(t, exitOK, code)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "run ") {
			assert.Contains(t, l, "FAILED", l)
		}
	}
	assert.Contains(t, out, "check (activity in child)")
	assert.Contains(t, out, "verify (activity)", "the calling node fails too")
	assert.NotContains(t, out, ids[0], "runs without a match are left out")

	code, out, _ = auditCmd(t, "--node", "order/verify/child:check", path)
	require.Equal(t, exitOK, code)
	assert.Equal(t, 6, strings.Count(out, "check (activity in child)"), out)
	assert.Equal(t, 3, strings.Count(out, "\nrun ")+1)

	code, _, errOut := auditCmd(t, "--node", "nope", path)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, errOut, "no matching records")
}

func TestAuditSummary(t *testing.T) {
	path, _ := writeAuditFile(t)
	code, out, errOut := auditCmd(t, path, "--summary")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^\s*NODE\s+EXECS\s+COMPLETED\s+FAILED\s+INTERRUPTED\s+SUSPENDED\s+TOTAL TIME\s+MEAN$`, lines[0])
	find := func(prefix string) []string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == prefix {
				return f
			}
		}
		t.Fatalf("no line for %s in\n%s", prefix, out)
		return nil
	}
	// node, executions, completed, failed, interrupted, suspended
	assert.Equal(t, []string{"order/verify/child:check", "3", "2", "1", "0", "0"}, find("order/verify/child:check")[:6])
	assert.Equal(t, []string{"order:verify", "3", "2", "1", "0", "0"}, find("order:verify")[:6])
	assert.Equal(t, []string{"order:approve", "2", "1", "0", "0", "1"}, find("order:approve")[:6])
	assert.Equal(t, []string{"order:b", "3", "3", "0", "0", "0"}, find("order:b")[:6])
	assert.Contains(t, out, "3 runs: 1 completed, 1 failed, 1 suspended; total run time")

	code, out, _ = auditCmd(t, path, "--summary", "--status", "FAILED")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "1 run: 1 failed")
}

func TestAuditBadInput(t *testing.T) {
	code, _, errOut := auditCmd(t)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "no audit file given")

	code, _, errOut = auditCmd(t, "x.jsonl", "--status", "DONE")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--status must be")

	// The summary counts ended executions: none of them is STARTED.
	code, out, errOut := auditCmd(t, "x.jsonl", "--summary", "--status", "started")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "--status STARTED would select none")

	code, _, errOut = auditCmd(t, filepath.Join(t.TempDir(), "missing.jsonl"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "missing.jsonl")

	code, out, _ = auditCmd(t, "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "Usage: flowteam audit")

	// A damaged line (a torn write, a stray log line) is reported and skipped.
	path, _ := writeAuditFile(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	damaged := filepath.Join(t.TempDir(), "damaged.jsonl")
	require.NoError(t, os.WriteFile(damaged, append([]byte("not json\n{\"seq\":1}\n"), data[:len(data)-20]...), 0o600))
	code, out, errOut = auditCmd(t, damaged)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, errOut, "damaged.jsonl:1: skipped")
	assert.Contains(t, errOut, "damaged.jsonl:2: skipped: not an audit record")
	assert.Contains(t, errOut, "skipped", "the torn last line")
	assert.Contains(t, out, "(no end record", "the last run has lost its end record")
}

// The audit file leaves out a path equal to the graph id; files written before, with
// every path, read the same.
func TestAuditPathOmitted(t *testing.T) {
	path, _ := writeAuditFile(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var withPaths bytes.Buffer
	omitted := 0
	for line := range bytes.Lines(data) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m))
		if _, ok := m["path"]; !ok {
			omitted++
			m["path"] = m["graph"]
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		withPaths.Write(append(b, '\n'))
	}
	require.Positive(t, omitted)
	old := filepath.Join(t.TempDir(), "old.jsonl")
	require.NoError(t, os.WriteFile(old, withPaths.Bytes(), 0o600))
	for _, args := range [][]string{nil, {"--summary"}, {"--node", "order/verify/child:check"}} {
		code, want, _ := auditCmd(t, append([]string{old}, args...)...)
		require.Equal(t, exitOK, code)
		code, got, errOut := auditCmd(t, append([]string{path}, args...)...)
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, want, got, "%v", args)
	}
}

// A run's error may span several lines (an expression error shows the expression and a
// caret under it); the run's header keeps its first line, so that every line of the
// timeline is a header or a record.
func TestAuditRunErrorOnOneLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var stdout, stderr bytes.Buffer
	// day is unset, so "day >= 3" fails with a multi-line condition error.
	require.Equal(t, exitFail, cmdRun([]string{leaveYML, "--audit", path}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "day >= 3", "the run's error has several lines")

	code, out, errOut := auditCmd(t, path)
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	assert.Regexp(t, `^run .* -> FAILED in \S+  error condition_error: .* \.\.\.$`, lines[0])
	for _, l := range lines[1:] {
		assert.Regexp(t, `^  \d\d:\d\d:\d\d\.\d{6} +#\d+  [A-Z]+ `, l)
	}
}

// Records repeated across the files (the same file twice, or lines a copying log
// rotation left in both files) are counted once.
func TestAuditDuplicateRecords(t *testing.T) {
	path, _ := writeAuditFile(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	rotated := filepath.Join(t.TempDir(), "audit.jsonl.1")
	require.NoError(t, os.WriteFile(rotated, bytes.Join(lines[:len(lines)/2+3], nil), 0o600))

	for _, args := range [][]string{nil, {"--summary"}} {
		code, want, errOut := auditCmd(t, append([]string{path}, args...)...)
		require.Equal(t, exitOK, code, errOut)
		code, got, errOut := auditCmd(t, append([]string{path, path}, args...)...)
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, want, got, "%v", args)
		assert.Contains(t, errOut, fmt.Sprintf("skipped %d duplicate records", bytes.Count(data, []byte("\n"))), "%v", args)

		code, got, errOut = auditCmd(t, append([]string{rotated, path}, args...)...)
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, want, got, "%v", args)
		assert.Contains(t, errOut, "duplicate records", "%v", args)
	}
}

// The tail of a file (the first records of a run lost) still names the run's graph,
// even when its first remaining record is a sub-graph's.
func TestAuditPartialRunNamesRootGraph(t *testing.T) {
	path, ids := writeAuditFile(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var tail []byte
	cut := false
	for line := range bytes.Lines(data) {
		var r struct{ Run, Graph string }
		require.NoError(t, json.Unmarshal(line, &r))
		if r.Run != ids[0] {
			continue
		}
		cut = cut || r.Graph == "child" // keep from the first sub-graph record on
		if cut {
			tail = append(tail, line...)
		}
	}
	require.NotEmpty(t, tail)
	partial := filepath.Join(t.TempDir(), "tail.jsonl")
	require.NoError(t, os.WriteFile(partial, tail, 0o600))

	code, out, errOut := auditCmd(t, partial)
	require.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, "run "+ids[0]+"  instance i-ok  graph order  -> COMPLETED"), out)
	assert.Contains(t, out, "(start in child)")
}

// A recovered failure the error policy sent to a fallback node names that node.
func TestAuditShowsTheFallbackNode(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "f.yml")
	require.NoError(t, os.WriteFile(def, []byte(`id: f
layout:
  - {id: s, type: start}
  - {id: fail, task: 'raise("E2", "recoverable", true)', meta: {onError: {goto: fb, recover: true}}, link: e}
  - {id: fb, task: 'context.put("fb", 1)', link: e}
  - {id: e, type: end}
`), 0o600))
	path := filepath.Join(dir, "f.audit.jsonl")
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, cmdRun([]string{def, "--audit", path}, &stdout, &stderr), stderr.String())
	code, out, errOut := auditCmd(t, path)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "error E2: recoverable  (recovered, to fb)")
}

// Records another writer (or a hand) produced are read as the audit writer's: a
// status in another case is the same status, counted in its column and selected by
// --status; a status that is none of the five is no audit record; and an id holding a
// line break is quoted, so that every line of the timeline is a header or a record.
func TestAuditOddRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd.jsonl")
	lines := []string{
		`{"seq":1,"run":"r","status":"STARTED","graph":"g","instance":"i"}`,
		`{"seq":2,"run":"r","status":"started","graph":"g","node":"a","branch":"main"}`,
		`{"seq":3,"run":"r","status":"Completed","graph":"g","node":"a","branch":"main","duration_ns":5}`,
		`{"seq":4,"run":"r","status":"DONE","graph":"g","node":"b","branch":"main","duration_ns":5}`,
		`{"seq":5,"run":"r","status":"FAILED","graph":"g","node":"x\ny","branch":"main\r"}`,
		`{"seq":6,"run":"r","status":"completed","graph":"g","duration_ns":100}`,
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))

	code, out, errOut := auditCmd(t, path)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "flowteam audit: "+path+`:4: skipped: unknown status "DONE"`+"\n", errOut)
	timeline := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, timeline, 4, out)
	assert.Contains(t, timeline[0], "-> COMPLETED in 100ns")
	assert.Contains(t, timeline[1], " STARTED ")
	assert.Contains(t, timeline[2], " COMPLETED ")
	assert.Contains(t, timeline[3], `FAILED       "x\ny"  ["main\r"]`)

	code, out, errOut = auditCmd(t, path, "--summary")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `g:a +1 +1 +0 +0 +0 `, out)
	assert.Contains(t, out, "1 run: 1 completed")

	code, out, errOut = auditCmd(t, path, "--status", "COMPLETED")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, " COMPLETED ")
}

// An orphan record (Seq 0: an event after its run closed, which only a panicking
// interceptor causes) sorts first in its run; the run's header still comes from the
// run's own records: its start time and resumed flag, its end.
func TestAuditHeaderSkipsOrphans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orphan.jsonl")
	lines := []string{
		`{"seq":1,"time":"2026-11-30T10:00:00Z","status":"STARTED","graph":"g","instance":"i-1","run":"r-1","resumed":true}`,
		`{"seq":2,"time":"2026-11-30T10:00:01Z","status":"STARTED","graph":"g","node":"a","type":"activity","instance":"i-1","run":"r-1","branch":"main"}`,
		`{"seq":3,"time":"2026-11-30T10:00:02Z","status":"COMPLETED","graph":"g","node":"a","type":"activity","instance":"i-1","run":"r-1","branch":"main","duration_ns":1000}`,
		`{"seq":4,"time":"2026-11-30T10:00:03Z","status":"COMPLETED","graph":"g","instance":"i-1","run":"r-1","duration_ns":3000000000}`,
		`{"seq":0,"time":"2026-11-30T10:00:04Z","status":"COMPLETED","graph":"g","node":"a","type":"activity","instance":"i-1","run":"r-1","branch":"main","duration_ns":1000}`,
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	code, out, errOut := auditCmd(t, path)
	require.Equal(t, exitOK, code, errOut)
	header, _, _ := strings.Cut(out, "\n")
	assert.Contains(t, header, "started 2026-11-30T10:00:00Z", out)
	assert.Contains(t, header, "(resumed)", out)
	assert.Contains(t, header, "-> COMPLETED in 3s", out)
}

// The summary counts an execution once, not again for its orphan record.
func TestAuditSummarySkipsOrphans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orphan.jsonl")
	lines := []string{
		`{"seq":1,"time":"2026-11-30T10:00:00Z","status":"STARTED","graph":"g","instance":"i-1","run":"r-1"}`,
		`{"seq":2,"time":"2026-11-30T10:00:01Z","status":"STARTED","graph":"g","node":"a","type":"activity","instance":"i-1","run":"r-1","branch":"main"}`,
		`{"seq":3,"time":"2026-11-30T10:00:02Z","status":"COMPLETED","graph":"g","node":"a","type":"activity","instance":"i-1","run":"r-1","branch":"main","duration_ns":1000}`,
		`{"seq":4,"time":"2026-11-30T10:00:03Z","status":"COMPLETED","graph":"g","instance":"i-1","run":"r-1","duration_ns":3000000000}`,
		`{"seq":0,"time":"2026-11-30T10:00:04Z","status":"COMPLETED","graph":"g","node":"a","type":"activity","instance":"i-1","run":"r-1","branch":"main","duration_ns":1000}`,
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	code, out, errOut := auditCmd(t, "--summary", path)
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `(?m)^g:a +1 +1 +0 `, out)
}
