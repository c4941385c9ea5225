package interceptor_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// stressGraph: parallel branches, each calling a sub-graph, one branch retrying, one
// failing recoverably, plus a loop; nothing fails the run.
func stressGraph(t *testing.T, e *flow.Engine) *flow.Graph {
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("w1")
	child.Activity("w1").DoFunc(noop).LinkTo("w2")
	child.Activity("w2").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		trace.Count(ctx, trace.CountFallback, 1)
		return nil
	}).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))

	s := flow.NewSpec("stress")
	s.Start("s").LinkTo("p")
	p := s.Parallel("p")
	for i := range 6 {
		b := fmt.Sprintf("call%d", i)
		p.LinkTo(b)
		s.Activity(b).SetTask("#child").LinkTo("j")
	}
	p.LinkTo("flaky").LinkTo("soft")
	s.Activity("flaky").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		n := 0
		c.Update("attempts", func(old any, _ bool) any { n, _ = old.(int); n++; return n })
		if n%2 == 1 {
			return &flow.Error{Code: "BUSY", Message: "busy", Retry: true}
		}
		return nil
	}).SetMeta(flow.MetaRetry, flow.RetryPolicy{Max: 3, Backoff: time.Millisecond}).SetMeta(flow.MetaIdempotent, true).LinkTo("j")
	s.Activity("soft").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		trace.Count(ctx, trace.CountRejection, 2)
		return flow.NewRecoverableError("soft")
	}).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	return build(t, s)
}

// Runs per stressGraph: node executions are s, p, 6 calls and 6*4 child nodes,
// flaky twice, soft, j, e.
const stressNodes = 1 + 1 + 6 + 6*4 + 2 + 1 + 1 + 1

// Many concurrent runs, two audits with small batches (one of them strict) and two
// JSONL sinks on one file: every line is a whole record, each run's records are
// numbered 1..n without gap or duplicate, the file holds exactly what the memory sink
// got (decoded through trace.Record.UnmarshalJSON), and the metrics agree with the
// records.
func TestConcurrentRunsOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s1, err := interceptor.OpenJSONL(path)
	require.NoError(t, err)
	s2, err := interceptor.OpenJSONL(path, interceptor.WithFsync())
	require.NoError(t, err)
	mem, mem2 := interceptor.NewMemory(), interceptor.NewMemory()
	m, err := interceptor.NewMetrics()
	require.NoError(t, err)
	a1 := interceptor.NewAudit(interceptor.WithSink(s1), interceptor.WithSink(mem), interceptor.WithBatchSize(2))
	// The second audit marks its records, to tell its lines from the first's.
	a2 := interceptor.NewAudit(interceptor.WithSink(s2), interceptor.WithSink(mem2), interceptor.WithBatchSize(5), interceptor.WithStrict(),
		interceptor.WithAttrs(func(*flow.Context, *flow.Node, *flow.NodeEnd) map[string]any { return map[string]any{"a": "2"} }))
	e := flow.NewEngine(flow.WithInterceptor(a1, 0), flow.WithInterceptor(a2, 1), flow.WithInterceptor(m, 2), flow.WithMaxConcurrency(4))
	g := stressGraph(t, e)

	const runs = 30
	ids := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			res, err := e.EvalGraph(context.Background(), g, flow.NewContext(fmt.Sprintf("i%d", i)))
			if assert.NoError(t, err) {
				assert.Equal(t, flow.StatusCompleted, res.Status)
				ids[i] = res.RunID()
			}
		})
	}
	wg.Wait()
	require.NoError(t, s1.Close())
	require.NoError(t, s2.Close())
	assert.Zero(t, a1.Failures()+a2.Failures())

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var fromFile trace.Records
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r trace.Record
		require.NoError(t, r.UnmarshalJSON(sc.Bytes()), "line %q", sc.Text())
		fromFile = append(fromFile, r)
	}
	require.NoError(t, sc.Err())
	perRun := 2 + 2*stressNodes
	require.Len(t, fromFile, 2*runs*perRun, "both audits wrote every record")
	recs := mem.Records()
	require.Len(t, recs, runs*perRun)
	require.NoError(t, recs.Verify())

	// Each audit numbers its records itself: the file holds each audit's records as
	// its memory sink got them.
	var lines1, lines2 trace.Records
	for _, r := range fromFile {
		if r.Attrs != nil {
			lines2 = append(lines2, r)
		} else {
			lines1 = append(lines1, r)
		}
	}
	for i, want := range []trace.Records{mem.Records(), mem2.Records()} {
		want := want.Nodes()
		got := []trace.Records{lines1, lines2}[i].Nodes()
		require.Len(t, got, len(want))
		byKey := map[string]trace.Record{}
		for _, r := range got {
			k := fmt.Sprintf("%s#%d", r.RunID, r.Seq)
			_, dup := byKey[k]
			require.False(t, dup, "audit %d: %s written twice", i+1, k)
			byKey[k] = r
		}
		for _, w := range want {
			r, ok := byKey[fmt.Sprintf("%s#%d", w.RunID, w.Seq)]
			require.True(t, ok)
			assert.True(t, r.Time.Equal(w.Time))
			r.Time = w.Time
			assert.True(t, reflect.DeepEqual(w, r), "audit %d:\n%+v\n%+v", i+1, w, r)
		}
	}
	require.NoError(t, mem2.Verify())
	// Run records carry no attributes: the file has four per run, two per audit.
	fileRuns := fromFile.Runs()
	for _, id := range ids {
		assert.Len(t, fileRuns.ByRun(id), 4, id)
	}
	// With its run records, each audit's node lines make complete runs: seqs 1..n.
	require.NoError(t, append(lines1.Nodes(), mem.Records().Runs()...).Verify())
	require.NoError(t, append(lines2.Nodes(), mem2.Records().Runs()...).Verify())
	for _, id := range ids {
		run := recs.ByRun(id)
		wantM := run.Metrics(id)
		wantM.Fallbacks, wantM.Rejections = 6, 2 // reported with trace.Count, not in records
		got, ok := m.Run(id)
		require.True(t, ok)
		assert.Equal(t, wantM.Status, got.Status)
		got.Duration, wantM.Duration = 0, 0
		assert.Equal(t, wantM, got)
		assert.Equal(t, trace.Metrics{RunID: id, InstanceID: got.InstanceID, GraphID: "stress", Status: trace.Completed,
			Started: stressNodes, Completed: stressNodes - 2, Failed: 2, Retries: 1, Recovered: 1, Fallbacks: 6, Rejections: 2}, got)
	}
}

// A sink that blocks holds up only the runs it writes for, and once it returns they
// complete with every record, in order; records keep being added meanwhile.
func TestAuditBlockingSink(t *testing.T) {
	release := make(chan struct{})
	var blocked atomic.Bool
	var mu sync.Mutex
	var got trace.Records
	sink := interceptor.SinkFunc(func(_ context.Context, recs []trace.Record) error {
		if blocked.CompareAndSwap(false, true) {
			<-release
		}
		mu.Lock()
		got = append(got, recs...)
		mu.Unlock()
		return nil
	})
	a := interceptor.NewAudit(interceptor.WithSink(sink), interceptor.WithBatchSize(3))
	e := flow.NewEngine(flow.WithInterceptor(a, 0))
	g := parGraph(t, "g", 8, noop)
	done := make(chan *flow.Result)
	go func() {
		res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
		assert.NoError(t, err)
		done <- res
	}()
	// Another audit on another engine is not held up.
	mem := interceptor.NewMemory()
	_, err := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 0)).EvalGraph(context.Background(), g, flow.NewContext("j"))
	require.NoError(t, err)
	require.NoError(t, mem.Verify())
	close(release)
	res := <-done
	require.Equal(t, flow.StatusCompleted, res.Status)
	require.NoError(t, got.Verify())
	for i, r := range got {
		assert.Equal(t, int64(i+1), r.Seq, "batches arrive in order")
	}
	assert.Len(t, got, 2+2*12)
}
