package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/trace"

	"github.com/flowteam/flowteam/examples/team-supervisor/desk"
)

var update = flag.Bool("update", false, "rewrite desk.puml")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, auditPath, ""))
	assert.Equal(t, `▶ team desk started: "Write a brief on the European e-bike market for our investors."
  ↳ desk decides: researcher (tool) find the market size and the rules
  ▷ researcher
    · lookup {"topic":"e-bike market"} → success
    · lookup {"topic":"e-bike regulation"} → success
  □ researcher completed: Market: about 20bn EUR in 2024, +9% a year. Rules: 25 km/h and 250 W,...
  ↳ desk decides: writer (tool) write the brief for investors
  ▷ writer
  □ writer completed: Europe's e-bike market reached about 20bn EUR in 2024 and grows 9% a ...
  ↳ desk decides: reviewer (text)
  ▷ reviewer
  □ reviewer completed: APPROVED
  ↳ desk decides: finish (text, finish_marker)
■ team desk completed

answer: Europe's e-bike market reached about 20bn EUR in 2024 and grows 9% a year. EU rules (25 km/h, 250 W) keep e-bikes out of moped regulation, which keeps buying simple.
route: researcher → writer → reviewer (3 turns)
tokens: prompt 2370, completion 203 (think 59), cached 640, total 2573; model calls 8 (supervisor 4), tool calls 2
audit: `+auditPath+"\n", out.String())

	// The audit holds the team's run: every node execution paired, agent names on the
	// member nodes, the supervisor asked four times.
	recs := readAudit(t, auditPath)
	require.NoError(t, recs.Verify())
	runs := recs.Filter(func(r *trace.Record) bool { return r.IsRun() })
	require.Len(t, runs, 2)
	assert.Equal(t, trace.Completed, runs[1].Status)
	assert.Len(t, recs.ByNode("supervisor").ByStatus(trace.Started), 4)
	for _, m := range []string{"researcher", "writer", "reviewer"} {
		done := recs.ByNode(m).ByStatus(trace.Completed)
		require.Len(t, done, 1, m)
		assert.Equal(t, m, done[0].Agent)
	}
	assert.Equal(t, []string{"start", "supervisor", "route", "researcher", "supervisor", "route", "writer",
		"supervisor", "route", "reviewer", "supervisor", "route", "end"}, recs.Nodes().NodeIDs())
}

func readAudit(t *testing.T, path string) trace.Records {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var recs trace.Records
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r trace.Record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		recs = append(recs, r)
	}
	require.NoError(t, sc.Err())
	return recs
}

// desk.puml, the picture of the team's graph committed beside this file, is what the
// export package writes for it (go test -update rewrites it).
func TestPlantUMLUpToDate(t *testing.T) {
	tm, err := desk.New(ScriptedModels())
	require.NoError(t, err)
	if *update {
		require.NoError(t, WritePlantUML(tm, "desk.puml"))
	}
	want, err := export.PlantUML(tm.Graph(), export.WithTaskNamer(tm.TaskNamer))
	require.NoError(t, err)
	got, err := os.ReadFile("desk.puml")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "desk.puml is stale: go test ./examples/team-supervisor -update")
}

// The desk's graph: a supervisor routing to three members and back.
func TestDeskGraph(t *testing.T) {
	tm, err := desk.New(ScriptedModels())
	require.NoError(t, err)
	g := tm.Graph()
	assert.Equal(t, "team.desk", g.ID)
	var ids []string
	for _, n := range g.Nodes() {
		ids = append(ids, n.ID)
	}
	assert.Equal(t, []string{team.TeamNodeStart, team.TeamNodeSupervisor, team.TeamNodeRoute, "researcher", "writer", "reviewer", team.TeamNodeEnd}, ids)
}
