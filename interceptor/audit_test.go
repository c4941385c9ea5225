package interceptor_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/interceptor/otelflow"
	"github.com/flowteam/flowteam/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func build(t testing.TB, s *flow.GraphSpec) *flow.Graph {
	t.Helper()
	g, err := s.Build()
	require.NoError(t, err)
	return g
}

// attrs returns a span's attributes by key.
func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

func statuses(rs trace.Records) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		id := r.NodeID
		if r.IsRun() {
			id = "<run>"
		}
		out[i] = id + ":" + string(r.Status)
	}
	return out
}

func TestAuditChain(t *testing.T) {
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem))
	e := flow.NewEngine(flow.WithInterceptor(a, 0))
	s := flow.NewSpec("leave")
	s.Start("s").LinkTo("review")
	s.Activity("review").SetTitle("Review").SetMeta("agent", "reviewer").DoFunc(noop).LinkTo("e")
	s.End("e")
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("inst-1"))
	require.NoError(t, err)

	recs := mem.Records()
	require.NoError(t, recs.Verify())
	assert.Equal(t, []string{"<run>:STARTED", "s:STARTED", "s:COMPLETED", "review:STARTED", "review:COMPLETED",
		"e:STARTED", "e:COMPLETED", "<run>:COMPLETED"}, statuses(recs))
	for i, r := range recs {
		assert.Equal(t, int64(i+1), r.Seq)
		assert.Equal(t, res.RunID(), r.RunID)
		assert.Equal(t, "inst-1", r.InstanceID)
		assert.Equal(t, "leave", r.GraphID)
		assert.Equal(t, "leave", r.Path)
		assert.False(t, r.Time.IsZero())
		if i > 0 {
			assert.False(t, r.Time.Before(recs[i-1].Time), "times follow seq")
		}
	}
	review := mem.ByNode("review")
	require.Len(t, review, 2)
	assert.Equal(t, "Review", review[1].Title)
	assert.Equal(t, "activity", review[1].NodeType)
	assert.Equal(t, "reviewer", review[1].Agent)
	assert.Equal(t, "main", review[1].BranchID)
	assert.Equal(t, 2, review[1].Step)
	assert.Positive(t, review[1].Duration)
	assert.Zero(t, review[0].Duration, "no duration on STARTED")
	last := recs[len(recs)-1]
	assert.Positive(t, last.Duration)
	assert.Nil(t, last.Error)

	m := mem.Metrics(res.RunID())
	assert.Equal(t, trace.Metrics{RunID: res.RunID(), InstanceID: "inst-1", GraphID: "leave", Status: trace.Completed,
		Started: 3, Completed: 3, Duration: last.Duration}, m)
}

func TestAuditParallelSubgraphAndJoin(t *testing.T) {
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem))
	e := flow.NewEngine(flow.WithInterceptor(a, 0))

	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("work")
	child.Activity("work").DoFunc(noop).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))

	s := flow.NewSpec("root")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").SetTask("#child").LinkTo("j")
	s.Activity("b").DoFunc(noop).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.NoError(t, err)
	recs := mem.ByRun(res.RunID())
	require.NoError(t, recs.Verify())

	work := recs.ByNode("root/a/child:work")
	require.Len(t, work, 2)
	assert.Equal(t, "child", work[0].GraphID)
	assert.Equal(t, "root/a/child", work[0].Path)
	assert.Equal(t, "main/p:a/a/child", work[0].BranchID)
	assert.Equal(t, 1, work[0].Depth())

	assert.Len(t, recs.ByBranch("main/p:b"), 2)
	join := recs.ByNode("j").Terminal()
	require.Len(t, join, 1)
	assert.Equal(t, 2, join[0].Arrivals)
	assert.Equal(t, "main", join[0].BranchID)
	assert.Len(t, recs.Runs(), 2, "sub-graph calls have no run records")
}

func TestAuditSuspendResumeFailStop(t *testing.T) {
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem))
	e := flow.NewEngine(flow.WithInterceptor(a, 0))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("ask")
	s.Activity("ask").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if _, ok := c.Get("answer"); !ok {
			c.Suspend("waiting for approval, token=abc123")
		}
		return nil
	}).LinkTo("boom")
	s.Activity("boom").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("fail") == true {
			return &flow.Error{Code: "E42", Type: "business", Message: `login failed: password=hunter2 {"api_key": "key_Q7zw"}`}
		}
		return nil
	}).LinkTo("e")
	s.End("e")
	g := build(t, s)
	// The secrets the tasks quote are the values of variables a key rule masks.
	fc := flow.NewContextWith("i", map[string]any{"token": "abc123", "password": "hunter2", "apiKey": "key_Q7zw"})
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)

	run1 := mem.ByRun(res.RunID())
	require.NoError(t, run1.Verify())
	assert.Equal(t, []string{"<run>:STARTED", "s:STARTED", "s:COMPLETED", "ask:STARTED", "ask:SUSPENDED", "<run>:SUSPENDED"}, statuses(run1))
	assert.Equal(t, "waiting for approval, token=***", run1[4].Reason)
	assert.Equal(t, "waiting for approval, token=***", run1[5].Reason)

	fc.Set("answer", "yes")
	fc.Set("fail", true)
	res2, err := e.Resume(context.Background(), res.Frontier, fc)
	require.Error(t, err)
	run2 := mem.ByRun(res2.RunID())
	require.NoError(t, run2.Verify())
	assert.True(t, run2[0].Resumed)
	assert.Equal(t, []string{"<run>:STARTED", "ask:STARTED", "ask:COMPLETED", "boom:STARTED", "boom:FAILED", "<run>:FAILED"}, statuses(run2))
	failed := run2[4]
	require.NotNil(t, failed.Error)
	assert.Equal(t, trace.ErrorInfo{Type: "business", Code: "E42", Message: `login failed: password=*** {"api_key": "***"}`}, *failed.Error)
	assert.Equal(t, failed.Error, run2[5].Error, "the run record names the failure")
	var buf bytes.Buffer
	for _, r := range mem.Records() {
		buf.Write(r.AppendJSON(nil))
	}
	assert.NotContains(t, buf.String(), "hunter2")
	assert.NotContains(t, buf.String(), "abc123")
	assert.NotContains(t, buf.String(), "key_Q7zw")

	// Stop: the engine reports the stopped run, which the audit writes as INTERRUPTED.
	stop := flow.NewSpec("stop")
	stop.Start("s").LinkTo("x")
	stop.Activity("x").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error { c.Stop(); return nil }).LinkTo("e")
	stop.End("e")
	res3, err := e.EvalGraph(context.Background(), build(t, stop), flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusStopped, res3.Status)
	run3 := mem.ByRun(res3.RunID())
	require.NoError(t, run3.Verify())
	assert.Equal(t, []string{"<run>:STARTED", "s:STARTED", "s:COMPLETED", "x:STARTED", "x:COMPLETED", "<run>:INTERRUPTED"}, statuses(run3))
	assert.Equal(t, "stopped", run3[len(run3)-1].Reason)
}

func TestAuditStepLimitAndCancel(t *testing.T) {
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 0))
	g := chain(t, 10)
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"), flow.WithSteps(3))
	require.ErrorIs(t, err, flow.ErrStepLimit)
	recs := mem.ByRun(res.RunID())
	require.NoError(t, recs.Verify())
	last := recs[len(recs)-1]
	assert.Equal(t, trace.Failed, last.Status)
	require.NotNil(t, last.Error)
	assert.Equal(t, flow.CodeStepLimit, last.Error.Code, "the engine reports the run's error")

	ctx, cancel := context.WithCancel(context.Background())
	s := flow.NewSpec("c")
	s.Start("s").LinkTo("w")
	s.Activity("w").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}).LinkTo("e")
	s.End("e")
	res, err = e.EvalGraph(ctx, build(t, s), flow.NewContext("i"))
	require.ErrorIs(t, err, context.Canceled)
	recs = mem.ByRun(res.RunID())
	require.NoError(t, recs.Verify())
	assert.Equal(t, trace.Failed, recs[len(recs)-1].Status)
}

type failingSink struct {
	mu    sync.Mutex
	calls int
}

func (f *failingSink) Write(context.Context, []trace.Record) error {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	return errors.New("disk full")
}

func TestAuditSinkFailure(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	mem := interceptor.NewMemory()
	bad := &failingSink{}
	a := interceptor.NewAudit(interceptor.WithSink(bad), interceptor.WithSink(mem), interceptor.WithLogger(logger))
	e := flow.NewEngine(flow.WithInterceptor(a, 0))
	g := chain(t, 2)
	for range 3 {
		res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
	}
	assert.Equal(t, int64(3), a.Failures())
	assert.Equal(t, 1, strings.Count(logs.String(), "disk full"), "reported once: %s", logs.String())
	assert.Equal(t, 3, len(mem.RunIDs()), "the other sink still gets everything")

	strict := interceptor.NewAudit(interceptor.WithSink(bad), interceptor.WithStrict(), interceptor.WithLogger(logger))
	res, err := flow.NewEngine(flow.WithInterceptor(strict, 0)).EvalGraph(context.Background(), g, flow.NewContext("i"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk full")
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.Equal(t, int64(1), strict.Failures())
}

func TestAuditBatches(t *testing.T) {
	var (
		mu      sync.Mutex
		batches []int
		all     trace.Records
	)
	sink := interceptor.SinkFunc(func(_ context.Context, recs []trace.Record) error {
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, len(recs))
		all = append(all, recs...)
		return nil
	})
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(sink), interceptor.WithBatchSize(5)), 0))
	_, err := e.EvalGraph(context.Background(), chain(t, 10), flow.NewContext("i"))
	require.NoError(t, err)
	assert.Equal(t, []int{5, 5, 5, 5, 5, 1}, batches) // 2 run + 2*12 node records
	require.NoError(t, all.Verify())
	for i, r := range all {
		assert.Equal(t, int64(i+1), r.Seq)
	}
}

func TestAuditAttrsAndAgent(t *testing.T) {
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithRedactKeys("ssn"),
		interceptor.WithAttrs(func(c *flow.Context, n *flow.Node, end *flow.NodeEnd) map[string]any {
			if end == nil {
				return nil
			}
			return map[string]any{"order": c.Value("order"), "customer": map[string]any{"SSN": "123-45", "Password": "pw", "name": "Ann"}}
		}),
		interceptor.WithAgentName(func(_ *flow.Context, n *flow.Node) string { return "agent-" + n.ID }))
	e := flow.NewEngine(flow.WithInterceptor(a, 0))
	_, err := e.EvalGraph(context.Background(), chain(t, 1), flow.NewContextWith("i", map[string]any{"order": "o-7"}))
	require.NoError(t, err)
	rec := mem.ByNode("n0").Terminal()[0]
	assert.Equal(t, "agent-n0", rec.Agent)
	assert.Equal(t, map[string]any{"order": "o-7", "customer": map[string]any{"SSN": "***", "Password": "***", "name": "Ann"}}, rec.Attrs)
	assert.Nil(t, mem.ByNode("n0")[0].Attrs)
}

type agentTask struct{}

func (agentTask) Run(context.Context, *flow.Context, *flow.Node) error { return nil }
func (agentTask) AgentName() string                                    { return "analyst" }

func TestAuditAgentFromTask(t *testing.T) {
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 0))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("x")
	s.Activity("x").Do(agentTask{}).LinkTo("e")
	s.End("e")
	_, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.NoError(t, err)
	assert.Equal(t, "analyst", mem.ByNode("x")[0].Agent)
	assert.Empty(t, mem.ByNode("s")[0].Agent)
}

// Concurrent runs on one JSONL sink, and on two sinks opened on the same file, write
// whole lines: every line parses and every run verifies.
func TestJSONLConcurrentRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s1, err := interceptor.OpenJSONL(path, interceptor.WithFsync())
	require.NoError(t, err)
	s2, err := interceptor.OpenJSONL(path)
	require.NoError(t, err)
	e1 := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(s1)), 0))
	e2 := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(s2), interceptor.WithBatchSize(7)), 0))

	s := flow.NewSpec("par")
	s.Start("s").LinkTo("p")
	p := s.Parallel("p")
	for i := range 8 {
		id := fmt.Sprintf("b%d", i)
		p.LinkTo(id)
		s.Activity(id).DoFunc(noop).LinkTo("j")
	}
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g := build(t, s)

	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			e := e1
			if i%2 == 1 {
				e = e2
			}
			_, err := e.EvalGraph(context.Background(), g, flow.NewContext(fmt.Sprintf("i%d", i)))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	require.NoError(t, s1.Close())
	require.NoError(t, s2.Close())
	require.ErrorIs(t, s1.Write(context.Background(), []trace.Record{{}}), os.ErrClosed)

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var recs trace.Records
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r trace.Record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "line %q", sc.Text())
		recs = append(recs, r)
	}
	require.NoError(t, sc.Err())
	assert.Len(t, recs.RunIDs(), 40)
	assert.Equal(t, 40*(2+2*12), len(recs)) // 12 nodes per run
	require.NoError(t, recs.Verify())
}

func TestSlogSink(t *testing.T) {
	var out bytes.Buffer
	sink := interceptor.NewSlog(slog.New(slog.NewJSONHandler(&out, nil)))
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(sink), interceptor.WithBatchSize(1)), 0))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("x")
	s.Activity("x").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		return errors.New("call failed: Authorization: Bearer sk-live-1")
	}).LinkTo("e")
	s.End("e")
	fc := flow.NewContextWith("i", map[string]any{"authorization": "Bearer sk-live-1"})
	_, err := e.EvalGraph(context.Background(), build(t, s), fc)
	require.Error(t, err)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 6)
	var failed map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[4]), &failed))
	assert.Equal(t, "ERROR", failed["level"])
	assert.Equal(t, "flow audit", failed["msg"])
	assert.Equal(t, "FAILED", failed["status"])
	assert.Equal(t, "x", failed["node"])
	assert.Equal(t, "main", failed["branch"])
	assert.Equal(t, map[string]any{"type": "flow_error", "code": "task_failed", "message": "call failed: Authorization: ***"}, failed["error"])
	assert.NotContains(t, out.String(), "sk-live-1")
}

// A record's time comes from the configured clock.
func TestAuditClock(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mem := interceptor.NewMemory()
	var lines bytes.Buffer
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithSink(interceptor.NewJSONL(&lines)),
		interceptor.WithClock(func() time.Time { return at })), 0))
	_, err := e.EvalGraph(context.Background(), chain(t, 1), flow.NewContext("i"))
	require.NoError(t, err)
	require.Len(t, mem.Records(), 8)
	for _, r := range mem.Records() {
		assert.Equal(t, at, r.Time)
	}
	assert.Equal(t, 8, strings.Count(lines.String(), `"time":"2026-01-02T03:04:05.000000000Z"`), lines.String())
}

func ExampleAudit() {
	mem := interceptor.NewMemory()
	audit := interceptor.NewAudit(interceptor.WithSink(mem))
	engine := flow.NewEngine(flow.WithInterceptor(audit, 0))

	spec := flow.NewSpec("hello")
	spec.Start("s").LinkTo("greet")
	spec.Activity("greet").SetTask(`context.put("greeting", "hi")`).LinkTo("e")
	spec.End("e")
	g, _ := spec.Build()
	if _, err := engine.EvalGraph(context.Background(), g, flow.NewContext("demo")); err != nil {
		panic(err)
	}
	for _, r := range mem.Records() {
		node := r.NodeID
		if r.IsRun() {
			node = "(run)"
		}
		fmt.Println(strings.TrimSpace(fmt.Sprint(r.Seq, " ", node, " ", r.Status, " ", r.BranchID)))
	}
	// Output:
	// 1 (run) STARTED
	// 2 s STARTED main
	// 3 s COMPLETED main
	// 4 greet STARTED main
	// 5 greet COMPLETED main
	// 6 e STARTED main
	// 7 e COMPLETED main
	// 8 (run) COMPLETED
}

func quiet() interceptor.Option { return interceptor.WithLogger(slog.New(slog.DiscardHandler)) }

// parGraph is s -> p(parallel) -> b0..b(n-1) -> j(parallel) -> e.
func parGraph(t testing.TB, id string, n int, task flow.TaskFunc) *flow.Graph {
	s := flow.NewSpec(id)
	s.Start("s").LinkTo("p")
	p := s.Parallel("p")
	for i := range n {
		b := fmt.Sprintf("b%d", i)
		p.LinkTo(b)
		s.Activity(b).DoFunc(task).LinkTo("j")
	}
	s.Parallel("j").LinkTo("e")
	s.End("e")
	return build(t, s)
}

// Two different audits on one engine each see the whole run.
func TestTwoAudits(t *testing.T) {
	m1, m2 := interceptor.NewMemory(), interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(m1), interceptor.WithBatchSize(3)), 0),
		flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(m2)), 1))
	res, err := e.EvalGraph(context.Background(), parGraph(t, "g", 6, noop), flow.NewContext("i"))
	require.NoError(t, err)
	for _, m := range []*interceptor.Memory{m1, m2} {
		recs := m.ByRun(res.RunID())
		require.NoError(t, recs.Verify())
		assert.Len(t, recs, 2+2*10)
	}
}

type panicSink struct{ calls int }

func (p *panicSink) Write(context.Context, []trace.Record) error {
	p.calls++
	panic("sink exploded")
}

// A panicking sink is a failing sink: by default the run completes, the failure is
// logged once and counted, and the other sinks get every record; strict fails the run.
func TestAuditPanickingSink(t *testing.T) {
	for _, batch := range []int{1, 3, 4096} {
		t.Run(fmt.Sprint(batch), func(t *testing.T) {
			var logs bytes.Buffer
			mem := interceptor.NewMemory()
			bad := &panicSink{}
			a := interceptor.NewAudit(interceptor.WithSink(bad), interceptor.WithSink(mem), interceptor.WithBatchSize(batch),
				interceptor.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			e := flow.NewEngine(flow.WithInterceptor(a, 0))
			g := parGraph(t, "g", 4, noop)
			for range 2 {
				res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
				require.NoError(t, err)
				require.Equal(t, flow.StatusCompleted, res.Status)
			}
			require.NoError(t, mem.Verify())
			assert.Len(t, mem.RunIDs(), 2)
			assert.Equal(t, int64(bad.calls), a.Failures())
			assert.Equal(t, 1, strings.Count(logs.String(), "sink exploded"), logs.String())

			strict := interceptor.NewAudit(interceptor.WithSink(&panicSink{}), interceptor.WithStrict(), interceptor.WithBatchSize(batch), quiet())
			res, err := flow.NewEngine(flow.WithInterceptor(strict, 0)).EvalGraph(context.Background(), g, flow.NewContext("i"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "sink exploded")
			assert.Equal(t, flow.StatusFailed, res.Status)
		})
	}
}

// Strict mode: a failure in a mid-run batch fails the run too, at its end, as
// WithStrict says: the nodes after it run, the later batches are written, and the
// terminal run record keeps the run's own outcome.
func TestAuditStrictMidRunFailure(t *testing.T) {
	var (
		mu      sync.Mutex
		calls   int
		written trace.Records
	)
	sink := interceptor.SinkFunc(func(_ context.Context, recs []trace.Record) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return errors.New("transient")
		}
		written = append(written, recs...)
		return nil
	})
	a := interceptor.NewAudit(interceptor.WithSink(sink), interceptor.WithStrict(), interceptor.WithBatchSize(2), quiet())
	res, err := flow.NewEngine(flow.WithInterceptor(a, 0)).EvalGraph(context.Background(), chain(t, 5), flow.NewContext("i"))
	require.ErrorContains(t, err, "transient")
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.Equal(t, int64(1), a.Failures())
	assert.Equal(t, 7, res.Steps, "every node ran")
	require.Len(t, written, 2+2*7-2, "all but the failed first batch")
	last := written[len(written)-1]
	assert.True(t, last.IsRun())
	assert.Equal(t, trace.Completed, last.Status)
}

type panicWriter struct {
	mu    sync.Mutex
	calls int
	buf   bytes.Buffer
}

func (w *panicWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	if w.calls == 1 {
		panic("writer exploded")
	}
	return w.buf.Write(p)
}

// A JSONL over a writer that panics once: that batch fails, the sink stays usable.
func TestJSONLPanickingWriter(t *testing.T) {
	w := &panicWriter{}
	a := interceptor.NewAudit(interceptor.WithSink(interceptor.NewJSONL(w)), quiet())
	e := flow.NewEngine(flow.WithInterceptor(a, 0))
	for range 2 {
		res, err := e.EvalGraph(context.Background(), chain(t, 1), flow.NewContext("i"))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
	}
	assert.Equal(t, int64(1), a.Failures())
	assert.Equal(t, 2+2*3, bytes.Count(w.buf.Bytes(), []byte("\n")), "the second run is written")
}

// A sub-graph call cut short because its ContinueOnError branch was withdrawn is
// recorded as interrupted, in the audit (the calling node's terminal record) and in
// the traces (the node's span and the sub-graph's evaluation span), not COMPLETED as
// if the child had run to its end.
func TestWithdrawnCallRecordedInterrupted(t *testing.T) {
	defer goleak.VerifyNone(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	mem := interceptor.NewMemory()
	started := make(chan struct{})
	e := flow.NewEngine(flow.WithMaxConcurrency(4),
		flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 0),
		flow.WithInterceptor(otelflow.NewTracing(tp), 1))

	child := flow.NewSpec("sub")
	child.Start("cs").LinkTo("n1")
	child.Activity("n1").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		close(started)
		// Until f's failure withdrew the branch.
		for len(flow.BranchFailuresOf(c.Value(flow.KeyBranchFailures))) == 0 {
			runtime.Gosched()
		}
		return nil
	}).LinkTo("n2")
	child.Activity("n2").LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))

	s := flow.NewSpec("main")
	s.Start("s").LinkTo("p")
	s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("x").LinkTo("b")
	s.Inclusive("x").LinkTo("q").LinkTo("f")
	s.Parallel("q").LinkTo("y").LinkTo("call")
	s.Activity("y").LinkTo("qj")
	s.Activity("call").SetTask("#sub").LinkTo("qj")
	s.Parallel("qj").LinkTo("ij")
	s.Activity("f").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		<-started
		return errors.New("f failed")
	}).LinkTo("ij")
	s.Inclusive("ij").LinkTo("j")
	s.Activity("b").LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)

	recs := mem.Records()
	require.NoError(t, recs.Verify())
	call := recs.ByNode("call").Terminal()
	require.Len(t, call, 1)
	assert.Equal(t, trace.Interrupted, call[0].Status)
	assert.Empty(t, recs.ByNode("n2"), "the child's next node did not run")

	spans := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		spans[sp.Name] = sp
	}
	assert.Equal(t, "INTERRUPTED", attrs(spans["node call"])[otelflow.AttrStatus].AsString())
	assert.Equal(t, "INTERRUPTED", attrs(spans["flow sub"])[otelflow.AttrStatus].AsString())
}
