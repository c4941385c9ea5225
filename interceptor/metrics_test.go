package interceptor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

type nopClock struct{}

func (nopClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

// sumRecorder is a MetricsRecorder adding up what it is given.
type sumRecorder struct {
	mu                 sync.Mutex
	runs, ended, nodes int
}

func (r *sumRecorder) RecordRun(_ context.Context, m trace.Metrics) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs++
	r.ended += m.Ended()
}

// totals returns the evaluations, the executions they counted and the node ends.
func (r *sumRecorder) totals() [3]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return [3]int{r.runs, r.ended, r.nodes}
}

func (r *sumRecorder) RecordNode(context.Context, *flow.Node, flow.NodeEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nodes++
}

// metricsGraph: a retried node that fails twice then succeeds, a recovered failure, a
// task reporting a fallback and a human rejection.
func metricsGraph(t *testing.T) *flow.Graph {
	attempts := 0
	s := flow.NewSpec("m")
	s.Start("s").LinkTo("flaky")
	s.Activity("flaky").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		attempts++
		if attempts%3 != 0 {
			return &flow.Error{Code: "BUSY", Message: "busy", Retry: true}
		}
		return nil
	}).SetMeta(flow.MetaRetry, flow.RetryPolicy{Max: 3, Backoff: time.Millisecond}).SetMeta(flow.MetaIdempotent, true).LinkTo("soft")
	s.Activity("soft").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		trace.Count(ctx, trace.CountFallback, 1)
		return flow.NewRecoverableError("soft timeout")
	}).LinkTo("review")
	s.Activity("review").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		trace.Count(ctx, trace.CountRejection, 1)
		return nil
	}).LinkTo("e")
	s.End("e")
	return build(t, s)
}

func TestMetricsPerRun(t *testing.T) {
	var ended []trace.Metrics
	m, err := interceptor.NewMetrics(interceptor.WithRunMetrics(func(x trace.Metrics) { ended = append(ended, x) }), interceptor.WithRetention(2))
	require.NoError(t, err)
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(m, 0), flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 1), flow.WithClock(nopClock{}))
	g := metricsGraph(t)
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, 2, res.Retries)

	got, ok := m.Run(res.RunID())
	require.True(t, ok)
	assert.Positive(t, got.Duration)
	got.Duration = 0
	assert.Equal(t, trace.Metrics{RunID: res.RunID(), InstanceID: "i", GraphID: "m", Status: trace.Completed,
		Started: 7, Completed: 4, Failed: 3, Retries: 2, Recovered: 1, Fallbacks: 1, Rejections: 1}, got)
	require.Len(t, ended, 1)
	assert.Equal(t, res.RunID(), ended[0].RunID)

	// The audit's records give the same counts, but for the events the engine does not
	// report.
	fromRecs := mem.Metrics(res.RunID())
	fromRecs.Duration, fromRecs.Fallbacks, fromRecs.Rejections = 0, 1, 1
	assert.Equal(t, got, fromRecs)
	flaky := mem.ByNode("flaky").Terminal()
	require.Len(t, flaky, 3)
	assert.True(t, flaky[0].Retrying)
	assert.Equal(t, 0, flaky[0].Attempt)
	assert.Equal(t, 2, flaky[1].Attempt)
	assert.Equal(t, 3, flaky[2].Attempt)
	assert.True(t, mem.ByNode("soft").Terminal()[0].Recovered)

	// Retention keeps the last two runs.
	var ids []string
	for range 3 {
		res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
		require.NoError(t, err)
		ids = append(ids, res.RunID())
	}
	_, ok = m.Run(ids[0])
	assert.False(t, ok)
	_, ok = m.Run(ids[2])
	assert.True(t, ok)
	_, ok = m.Run("nope")
	assert.False(t, ok)
}

// A recovery the error policy sends to a fallback node is a fallback taken: the run's
// metrics count it as flow.Result.Fallbacks does, and its FAILED record names the
// node, so the metrics computed from the records agree.
func TestMetricsCountGotoFallbacks(t *testing.T) {
	g, err := flow.LoadGraph("f.yml", []byte(`
id: f
layout:
  - {id: s, type: start}
  - {id: fail, task: 'raise("E2", "recoverable", true)', meta: {onError: {goto: fb, recover: true}}, link: e}
  - {id: fb, task: 'context.put("fb", 1)', link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	m, err := interceptor.NewMetrics()
	require.NoError(t, err)
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(m, 0), flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 1))
	res, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, 1, res.Fallbacks)
	got, ok := m.Run(res.RunID())
	require.True(t, ok)
	assert.Equal(t, 1, got.Fallbacks)
	assert.Equal(t, 1, got.Recovered)
	failed := mem.ByNode("fail").Terminal()
	require.Len(t, failed, 1)
	assert.Equal(t, "fb", failed[0].Goto)
	fromRecs := mem.Metrics(res.RunID())
	assert.Equal(t, 1, fromRecs.Fallbacks)
}

// A run id that finishes again (an application that sets run ids with WithRunID and
// reuses one, say for a resume) is the newest finished run, not the oldest: the
// retention forgets the runs that finished before it first.
func TestMetricsRetentionRunIDFinishingAgain(t *testing.T) {
	m, err := interceptor.NewMetrics(interceptor.WithRetention(2))
	require.NoError(t, err)
	e := flow.NewEngine(flow.WithInterceptor(m, 0))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("e")
	s.End("e")
	g := build(t, s)
	for _, id := range []string{"a", "b", "a", "c"} {
		_, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"), flow.WithRunID(id))
		require.NoError(t, err)
	}
	for id, kept := range map[string]bool{"a": true, "b": false, "c": true} {
		_, ok := m.Run(id)
		assert.Equal(t, kept, ok, id)
	}
}

// Three evaluations given one run id (WithRunID: a request id reused by a retry) run
// at the same time: none may drop another's counts. The id names one run, as its
// audit records do: Run reports the sum of all, live and finished, and matches
// what the records give once all ended; the recorder gets each evaluation and each
// execution once.
func TestMetricsConcurrentRunsSharingRunID(t *testing.T) {
	rec := &sumRecorder{}
	var (
		mu     sync.Mutex
		handed []trace.Metrics
	)
	m, err := interceptor.NewMetrics(interceptor.WithRecorder(rec), interceptor.WithRunMetrics(func(x trace.Metrics) {
		mu.Lock()
		handed = append(handed, x)
		mu.Unlock()
	}))
	require.NoError(t, err)
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(m, 0), flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 1))

	// Each run blocks in "wait" until its instance's channel is closed.
	entered := make(chan string, 3)
	release := map[string]chan struct{}{"i1": make(chan struct{}), "i2": make(chan struct{}), "i3": make(chan struct{})}
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("wait")
	s.Activity("wait").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		entered <- c.InstanceID()
		<-release[c.InstanceID()]
		return nil
	}).LinkTo("e")
	s.End("e")
	g := build(t, s)

	var wg sync.WaitGroup
	ended := make(chan string, 3)
	for _, inst := range []string{"i1", "i2", "i3"} {
		wg.Go(func() {
			_, err := e.EvalGraph(context.Background(), g, flow.NewContext(inst), flow.WithRunID("same"))
			assert.NoError(t, err)
			ended <- inst
		})
	}
	for range 3 {
		<-entered
	}
	live, ok := m.Run("same")
	require.True(t, ok)
	assert.Equal(t, 6, live.Started, "every run's start and wait executions")
	assert.Equal(t, 3, live.Completed)

	close(release["i1"])
	require.Equal(t, "i1", <-ended)
	got, ok := m.Run("same")
	require.True(t, ok)
	assert.Equal(t, trace.Status(""), got.Status, "a run with that id is still in progress")
	assert.Equal(t, 7, got.Started)
	assert.Equal(t, 5, got.Completed)
	mu.Lock()
	require.Len(t, handed, 1)
	assert.Equal(t, trace.Status(""), handed[0].Status, "WithRunMetrics gets what Run reports")
	assert.Equal(t, 7, handed[0].Started)
	mu.Unlock()

	close(release["i3"])
	require.Equal(t, "i3", <-ended)
	got, ok = m.Run("same")
	require.True(t, ok)
	assert.Equal(t, 8, got.Started)
	assert.Equal(t, 7, got.Completed)

	close(release["i2"])
	wg.Wait()
	got, ok = m.Run("same")
	require.True(t, ok)
	assert.Equal(t, trace.Completed, got.Status)
	assert.Equal(t, 9, got.Started)
	assert.Equal(t, 9, got.Completed)
	fromRecs := mem.Metrics("same")
	got.Duration, fromRecs.Duration = 0, 0
	got.InstanceID, fromRecs.InstanceID = "", ""
	assert.Equal(t, fromRecs, got)

	assert.Equal(t, [3]int{3, 9, 9}, rec.totals(), "each evaluation, execution and node end once")
}

// A run resumed with its own run id (WithRunID) continues its metrics: Run adds the
// resumed evaluation's counts to those of the evaluation that suspended, as the
// audit's records of that id add up, and reports the last evaluation's outcome.
func TestMetricsResumedRunContinues(t *testing.T) {
	var ended []trace.Metrics
	m, err := interceptor.NewMetrics(interceptor.WithRunMetrics(func(x trace.Metrics) { ended = append(ended, x) }))
	require.NoError(t, err)
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(m, 0), flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 1))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("approve")
	s.Activity("approve").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("ok") != true {
			c.Suspend("waiting")
		}
		return nil
	}).LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc, flow.WithRunID("r1"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc, flow.WithRunID("r1"))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)

	got, ok := m.Run("r1")
	require.True(t, ok)
	assert.Equal(t, trace.Completed, got.Status)
	assert.Equal(t, 4, got.Started, "s and approve, then approve again and e")
	assert.Equal(t, 1, got.Suspended)
	assert.Equal(t, 3, got.Completed)
	fromRecs := mem.Metrics("r1")
	got.Duration, fromRecs.Duration = 0, 0
	assert.Equal(t, fromRecs, got)
	require.Len(t, ended, 2)
	ended[1].Duration = 0
	assert.Equal(t, got, ended[1], "WithRunMetrics gets what Run reports")
}
