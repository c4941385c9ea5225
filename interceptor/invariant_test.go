package interceptor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/interceptor/otelflow"
	"github.com/flowteam/flowteam/trace"
)

// The audit invariant (every STARTED record is followed by exactly one terminal record
// of the same node execution, whatever happens) is checked on randomly built graphs:
// chains, exclusive gateways (with and without a default), parallel and inclusive
// split/join pairs (fail-fast and continue policies), loops, nested sub-graph calls by
// id and by value, whose tasks stop, interrupt, suspend, panic, fail (fatal,
// recoverable, retryable), cancel the run's context, or spin until cancelled, under
// random step limits and concurrency bounds; suspended, stopped and failed runs are
// resumed. Every run is checked three ways: the audit's records (Records.Verify), an
// independent interceptor pairing OnNodeStart/OnNodeEnd by (view, node), and the spans
// and metrics of the Tracing and Metrics interceptors in the same chain.
//
// FLOWTEAM_SEED sets the first seed, FLOWTEAM_GRAPHS the number of graphs.

// pairChecker pairs OnNodeStart and OnNodeEnd by (view, node), independently of the
// audit.
type pairChecker struct {
	flow.NopInterceptor
	mu   sync.Mutex
	open map[[2]any]string
	errs []string
}

func (p *pairChecker) OnNodeStart(_ context.Context, c *flow.Context, n *flow.Node) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := [2]any{c, n}
	if _, ok := p.open[k]; ok {
		p.errs = append(p.errs, fmt.Sprintf("%s started twice on one view", n.ID))
	}
	p.open[k] = c.CallPath() + ":" + n.ID + "@" + c.BranchID()
}

func (p *pairChecker) OnNodeEnd(_ context.Context, c *flow.Context, n *flow.Node, end flow.NodeEnd) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := [2]any{c, n}
	if _, ok := p.open[k]; !ok {
		p.errs = append(p.errs, fmt.Sprintf("%s ended %s without a start", n.ID, end.Status))
	}
	delete(p.open, k)
}

// leftOpen returns and forgets the executions started and never ended.
func (p *pairChecker) leftOpen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, v := range p.open {
		out = append(out, v)
	}
	clear(p.open)
	out = append(out, p.errs...)
	p.errs = nil
	return out
}

type instantClock struct{}

func (instantClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// scenarios tallies what the random runs went through, so the log shows the test
// reaches every case it claims to.
var scenarios sync.Map // string -> *atomic.Int64

func tally(k string) {
	v, _ := scenarios.LoadOrStore(k, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func TestAuditInvariantRandomized(t *testing.T) {
	graphs := envInt("FLOWTEAM_GRAPHS", 2000)
	if testing.Short() {
		graphs = 200
	}
	seed := envInt("FLOWTEAM_SEED", 1)
	var runs, records, events int
	statusSeen := map[trace.Status]int{}
	for i := range graphs {
		s := uint64(seed + i)
		r, n, ev, seen := checkRandomGraph(t, s)
		runs, records, events = runs+r, records+n, events+ev
		for k, v := range seen {
			statusSeen[k] += v
		}
		if t.Failed() {
			t.Fatalf("seed %d failed (rerun with FLOWTEAM_SEED=%d FLOWTEAM_GRAPHS=1)", s, s)
		}
	}
	t.Logf("%d graphs, %d runs, %d audit records, %d runs not completed; terminal node records: %v",
		graphs, runs, records, events, statusSeen)
	var tallies []string
	scenarios.Range(func(k, v any) bool {
		tallies = append(tallies, fmt.Sprintf("%s: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	slices.Sort(tallies)
	t.Logf("scenarios:\n\t%s", strings.Join(tallies, "\n\t"))
	for _, st := range []trace.Status{trace.Completed, trace.Failed, trace.Interrupted, trace.Suspended} {
		require.Positive(t, statusSeen[st], "the generator never produced %s", st)
	}
}

func checkRandomGraph(t *testing.T, seed uint64) (runs, records, notCompleted int, seen map[trace.Status]int) {
	rng := rand.New(rand.NewPCG(seed, seed*7919))
	mem := interceptor.NewMemory()
	var lines bytes.Buffer
	audit := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithSink(interceptor.NewJSONL(&lines)),
		interceptor.WithBatchSize(1+rng.IntN(64)),
		interceptor.WithLogger(slog.New(slog.DiscardHandler)))
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tracing := otelflow.NewTracing(tp)
	metrics, err := interceptor.NewMetrics()
	require.NoError(t, err)
	pairs := &pairChecker{open: map[[2]any]string{}}

	opts := []flow.Option{
		flow.WithInterceptor(audit, rng.IntN(3)), flow.WithInterceptor(pairs, rng.IntN(3)),
		flow.WithInterceptor(tracing, rng.IntN(3)), flow.WithInterceptor(metrics, rng.IntN(3)),
		flow.WithMaxConcurrency(1 + rng.IntN(8)), flow.WithClock(instantClock{}),
	}
	if rng.IntN(4) == 0 {
		opts = append(opts, flow.WithBranchPolicy(flow.ContinueOnError))
	}
	e := flow.NewEngine(opts...)
	gen := &graphGen{rng: rng}
	for k := range rng.IntN(3) {
		sub := gen.graph(t, fmt.Sprintf("sub%d", k), 1+rng.IntN(2))
		if rng.IntN(2) == 0 {
			require.NoError(t, e.Register(sub))
			gen.subIDs = append(gen.subIDs, sub.ID)
		} else {
			gen.subs = append(gen.subs, sub)
		}
	}
	g := gen.graph(t, "root", 2+rng.IntN(3))

	vars := map[string]any{"password": "hunter2", "token": "abc123"} // the secrets tasks quote
	for k := range 4 {
		vars[fmt.Sprintf("v%d", k)] = rng.IntN(10)
	}
	fc := flow.NewContextWith(fmt.Sprintf("inst-%d", seed), vars)
	var results []*flow.Result
	cancelled := map[string]bool{} // runs whose caller context a task cancelled
	eval := func(resume *flow.Frontier) *flow.Result {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var fired atomic.Bool
		ctx = context.WithValue(ctx, cancelKey{}, context.CancelFunc(func() { fired.Store(true); cancel() }))
		var eo []flow.EvalOption
		if rng.IntN(4) == 0 {
			eo = append(eo, flow.WithSteps(3+rng.IntN(60)))
		}
		var res *flow.Result
		func() {
			if resume == nil {
				res, _ = e.EvalGraph(ctx, g, fc, eo...)
			} else {
				res, _ = e.Resume(ctx, resume, fc, eo...)
			}
		}()
		if res == nil {
			return nil
		}
		if open := pairs.leftOpen(); len(open) > 0 {
			t.Errorf("seed %d run %s (%s): OnNodeStart without OnNodeEnd, or unpaired: %v", seed, res.RunID(), res.Status, open)
		}
		results = append(results, res)
		cancelled[res.RunID()] = fired.Load()
		tally("run " + string(res.Status))
		if resume != nil {
			tally("run resumed")
		}
		var ne *flow.NodeError
		if errors.As(res.Err, &ne) {
			tally("failed with " + ne.Code)
		}
		return res
	}
	res := eval(nil)
	for range 4 {
		if res == nil || res.Status == flow.StatusCompleted || res.Frontier == nil {
			break
		}
		res = eval(res.Frontier)
	}

	// All runs, including one the engine panicked out of: the audit closes the
	// executions the engine left open.
	recs := mem.Records()
	if err := recs.Verify(); err != nil {
		t.Errorf("seed %d: audit invariant broken:\n%v\n%s", seed, err, dump(recs))
	}
	checkLines(t, seed, recs, lines.Bytes())
	seen = map[trace.Status]int{}
	started := 0
	for _, r := range recs.Nodes() {
		if r.Status == trace.Started {
			started++
		} else {
			seen[r.Status]++
			if r.Status == trace.Interrupted && r.Title == "spin" {
				tally("spinning sibling interrupted by cancellation")
			}
			if r.Status == trace.Interrupted && strings.Contains(r.Path, "/") {
				tally("node in a sub-graph interrupted")
			}
		}
		if strings.Contains(r.Reason, "hunter2") || (r.Error != nil && strings.Contains(r.Error.Message, "abc123")) {
			t.Errorf("seed %d: secret written: %+v", seed, r)
		}
	}
	for _, res := range results {
		run := recs.ByRun(res.RunID())
		if len(run) == 0 {
			t.Errorf("seed %d: no records for run %s", seed, res.RunID())
			continue
		}
		last := run[len(run)-1]
		// The engine reports the outcome (Invocation.Outcome): a stopped run is
		// INTERRUPTED, and the run record always agrees with the result.
		want := map[flow.Status]trace.Status{flow.StatusCompleted: trace.Completed, flow.StatusStopped: trace.Interrupted,
			flow.StatusSuspended: trace.Suspended, flow.StatusFailed: trace.Failed}[res.Status]
		if last.Status != want {
			t.Errorf("seed %d run %s: run record %s, result %s (err %v)", seed, res.RunID(), last.Status, res.Status, res.Err)
		}
		if res.Status != flow.StatusCompleted {
			notCompleted++
		}
		m, ok := metrics.Run(res.RunID())
		am := recs.Metrics(res.RunID())
		am.Duration, m.Duration = 0, 0
		if !ok || m != am {
			t.Errorf("seed %d run %s: metrics %+v, from records %+v", seed, res.RunID(), m, am)
		}
	}
	// Every node execution had a span, and all of them ended (those a panic out of
	// the engine left open, when the panic passed the Tracing interceptor).
	if n := tracing.OpenSpans(); n != 0 {
		t.Errorf("seed %d: %d node spans left open", seed, n)
	}
	nodeSpans := 0
	for _, sp := range exp.GetSpans() {
		if strings.HasPrefix(sp.Name, "node ") {
			nodeSpans++
		}
	}
	if nodeSpans != started {
		t.Errorf("seed %d: %d node spans, %d STARTED records", seed, nodeSpans, started)
	}
	return len(results), len(recs), notCompleted, seen
}

// checkLines checks that the JSONL sink, which gets records the audit encoded as it
// went, wrote the records the Memory sink got, and that times never go back in a run.
func checkLines(t *testing.T, seed uint64, recs trace.Records, lines []byte) {
	var got trace.Records
	for line := range bytes.Lines(lines) {
		var r trace.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Errorf("seed %d: line %q: %v", seed, line, err)
			return
		}
		got = append(got, r)
	}
	if len(got) != len(recs) {
		t.Errorf("seed %d: %d JSON lines, %d records", seed, len(got), len(recs))
		return
	}
	for i := range recs {
		want := recs[i]
		if !got[i].Time.Equal(want.Time) {
			t.Errorf("seed %d: line %d time %v, record %v", seed, i, got[i].Time, want.Time)
		}
		got[i].Time = want.Time
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("seed %d: line %d\n%+v\nrecord\n%+v", seed, i, got[i], want)
		}
	}
	for _, id := range recs.RunIDs() {
		run := recs.ByRun(id).Sorted()
		for i := 1; i < len(run); i++ {
			if run[i].Time.Before(run[i-1].Time) {
				t.Errorf("seed %d run %s: seq %d at %v before seq %d at %v", seed, id, run[i].Seq, run[i].Time, run[i-1].Seq, run[i-1].Time)
			}
		}
	}
}

func dump(recs trace.Records) string {
	var b strings.Builder
	for _, r := range recs.Sorted() {
		fmt.Fprintf(&b, "  %s #%d %-11s %s:%s branch=%s", r.RunID, r.Seq, r.Status, r.Path, r.NodeID, r.BranchID)
		if r.Error != nil {
			fmt.Fprintf(&b, " err=%s", r.Error.Code)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// A run resumed inside a sub-graph call that halted before it re-entered the call
// keeps its position inside the call, and the audit stays complete across the three
// evaluations.
func TestAuditResumeOfParkedCall(t *testing.T) {
	mem := interceptor.NewMemory()
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithLogger(slog.New(slog.DiscardHandler))), 0))
	child := flow.NewSpec("child")
	child.Start("cs").LinkTo("wait")
	child.Activity("wait").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("ok") == nil {
			c.Suspend("need ok")
		}
		return nil
	}).LinkTo("ce")
	child.End("ce")
	require.NoError(t, e.Register(build(t, child)))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")

	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, []string{"root/call/child:wait"}, res.Frontier.Pending())
	res, err = e.Resume(context.Background(), res.Frontier, fc, flow.WithSteps(0))
	require.ErrorIs(t, err, flow.ErrStepLimit)
	fc.Set("ok", true)
	require.Equal(t, []string{"root/call/child:wait"}, res.Frontier.Pending(), "the position inside the call is kept")
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	require.NoError(t, mem.Records().Verify())
	assert.Len(t, mem.ByRun(res.RunID()).ByNode("root/call/child:wait"), 2, "the suspended node runs again")
}
