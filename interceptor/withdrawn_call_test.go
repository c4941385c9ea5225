package interceptor_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// A sub-graph call cut short because its ContinueOnError branch was withdrawn is
// recorded as interrupted, in the audit (the calling node's terminal record) and in
// the traces (the node's span and the sub-graph's evaluation span): it used to say
// COMPLETED, as if the child had run to its end.
func TestWithdrawnCallRecordedInterrupted(t *testing.T) {
	defer goleak.VerifyNone(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	mem := interceptor.NewMemory()
	started := make(chan struct{})
	e := flow.NewEngine(flow.WithMaxConcurrency(4),
		flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(mem)), 0),
		flow.WithInterceptor(interceptor.NewTracing(tp), 1))

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
	assert.Equal(t, "INTERRUPTED", attrs(spans["node call"])[interceptor.AttrStatus].AsString())
	assert.Equal(t, "INTERRUPTED", attrs(spans["flow sub"])[interceptor.AttrStatus].AsString())
}
