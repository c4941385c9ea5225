package interceptor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/trace"
	"github.com/flowteam/flowteam/workflow"
)

// Task records sit beside a run's records in one log: the run's records are those an
// audit without task events writes, and the whole log verifies.
func TestAuditTaskRecords(t *testing.T) {
	mem := interceptor.NewMemory()
	var lines bytes.Buffer
	jsonl := interceptor.NewJSONL(&lines)
	red := redact.New(redact.Patterns(regexp.MustCompile(`PIN-\d+`)))
	a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithSink(jsonl), interceptor.WithRedactor(red))
	e := flow.NewEngine(flow.WithInterceptor(a, 0))
	s := flow.NewSpec("leave")
	s.Start("s").LinkTo("e")
	s.End("e")
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("req-1"))
	require.NoError(t, err)

	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	ctx := context.Background()
	require.NoError(t, a.Task(ctx, interceptor.TaskEvent{Kind: "claim", Time: at, Graph: "leave", Instance: "req-1",
		Node: "lead", Actor: "actor=lead", Status: "running"}))
	require.NoError(t, a.Task(ctx, interceptor.TaskEvent{Kind: "submit", Time: at.Add(time.Minute), Graph: "leave",
		Instance: "req-1", Node: "lead", Action: "back", Actor: "actor=lead", Comment: "which dates? PIN-4411",
		Status: "running"}))
	err = a.Task(ctx, interceptor.TaskEvent{Kind: "approve", Graph: "leave", Instance: "req-1", Node: "lead"})
	require.ErrorContains(t, err, `task event kind "approve"`)
	jsonl.Close()

	recs := mem.Records()
	require.NoError(t, recs.Verify())
	assert.Equal(t, []string{"<run>:STARTED", "s:STARTED", "s:COMPLETED", "e:STARTED", "e:COMPLETED", "<run>:COMPLETED"},
		statuses(mem.ByRun(res.RunID())))
	tasks := mem.ByRun(interceptor.TaskRunPrefix + "req-1")
	require.Len(t, tasks, 2)
	assert.Equal(t, trace.Record{Time: at, Status: trace.Started, GraphID: "leave", Path: "leave", NodeID: "lead",
		InstanceID: "req-1", RunID: "task:req-1",
		Attrs: map[string]any{"task": "claim", "actor": "actor=lead", "status": "running"}}, tasks[0])
	assert.Equal(t, trace.Completed, tasks[1].Status)
	assert.Zero(t, tasks[1].Seq)
	assert.Equal(t, map[string]any{"task": "submit", "action": "back", "actor": "actor=lead",
		"comment": "which dates? ***", "status": "running"}, tasks[1].Attrs)

	// The JSON Lines file holds the same records, the task ones last.
	var got trace.Records
	for line := range strings.Lines(lines.String()) {
		var r trace.Record
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		got = append(got, r)
	}
	require.Len(t, got, 8)
	assert.Equal(t, tasks[1], got[7])
	assert.NotContains(t, lines.String(), "PIN-4411")
}

// Wired to an executor with workflow.WithObserver, the audit records every claim
// and submit of an approval instance.
func ExampleAudit_Task() {
	spec := flow.NewSpec("leave")
	spec.Start("start").LinkTo("file")
	spec.Activity("file").SetMeta("actor", "employee").LinkTo("approve")
	spec.Activity("approve").SetMeta("actor", "lead").LinkTo("end")
	spec.End("end")
	g, _ := spec.Build()
	eng := flow.NewEngine()
	_ = eng.Register(g)

	mem := interceptor.NewMemory()
	audit := interceptor.NewAudit(interceptor.WithSink(mem))
	toAudit := workflow.WithObserver(func(ctx context.Context, ev workflow.Event) {
		_ = audit.Task(ctx, interceptor.TaskEvent{Kind: ev.Kind, Time: ev.Time, Graph: ev.Graph, Instance: ev.Instance,
			Node: ev.Node, Action: string(ev.Action), Actor: ev.Actor.String(), Comment: ev.Comment, Status: string(ev.Status)})
	})
	x := workflow.NewExecutor(eng, workflow.NewActorController(), workflow.NewMemoryRepository(), toAudit)

	ctx := context.Background()
	lead := workflow.As("actor", "lead")
	_, _ = x.SubmitTask(ctx, "leave", "req-1", workflow.Submit{Node: "file", Action: workflow.Forward, Actor: workflow.As("actor", "employee")})
	_, _ = x.ClaimTask(ctx, "leave", "req-1", lead, nil)
	_, _ = x.SubmitTask(ctx, "leave", "req-1", workflow.Submit{Node: "approve", Action: workflow.Forward, Actor: lead, Comment: "enjoy"})
	for _, r := range mem.Records() {
		fmt.Println(r.RunID, r.NodeID, r.Status, r.Attrs["task"], r.Attrs["action"], r.Attrs["actor"], r.Attrs["comment"], r.Attrs["status"])
	}
	// Output:
	// task:req-1 file COMPLETED submit forward actor=employee <nil> running
	// task:req-1 approve STARTED claim <nil> actor=lead <nil> running
	// task:req-1 approve COMPLETED submit forward actor=lead enjoy completed
}
