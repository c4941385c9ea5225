package interceptor_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

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
