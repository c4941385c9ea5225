package interceptor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
)

// A Tracing registered twice whose run closes (an interceptor gave up on it with a
// panic) between the two calls of one of node x's hooks, or in x's task: x has one
// span, ended when the run closed, and nothing is left open, whatever reaches the
// Tracing late. (The engine runs nothing after x: the run is over.)
func TestTracingRegisteredTwiceLateEvents(t *testing.T) {
	for _, where := range []string{"task", "start", "end"} {
		for _, twice := range []string{"engine and eval", "engine twice", "once"} {
			t.Run(where+"/"+twice, func(t *testing.T) {
				p := &asyncPanic{started: make(chan struct{}), done: make(chan struct{})}
				h := &holdAt{where: where, p: p, closed: make(chan struct{})}
				sr := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
				defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
				tr := interceptor.NewTracing(tp)
				opts := []flow.Option{flow.WithInterceptor(tr, 0), flow.WithInterceptor(p, 1), flow.WithInterceptor(h, 2)}
				var evalOpts []flow.EvalOption
				switch twice {
				case "engine twice":
					opts = append(opts, flow.WithInterceptor(tr, 3))
				case "engine and eval":
					evalOpts = append(evalOpts, flow.WithEvalInterceptor(tr, 3))
				}
				s := flow.NewSpec("g")
				s.Start("s").LinkTo("x")
				s.Activity("x").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
					h.hold(&flow.Node{ID: "x"}, "task")
					return nil
				}).LinkTo("e")
				s.End("e")
				g := build(t, s)
				assert.Panics(t, func() {
					_, _ = flow.NewEngine(opts...).EvalGraph(context.Background(), g, flow.NewContext("i"), evalOpts...)
				})
				close(h.closed)
				<-p.done
				started := map[string]int{}
				for _, s := range sr.Started() {
					started[s.Name()]++
				}
				assert.Equal(t, map[string]int{"flow g": 1, "node s": 1, "node x": 1}, started)
				assert.Len(t, sr.Ended(), len(sr.Started()), "every span ended")
				assert.Zero(t, interceptor.OpenSpans(tr))
			})
		}
	}
}
