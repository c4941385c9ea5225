package interceptor_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/trace"
)

func noop(context.Context, *flow.Context, *flow.Node) error { return nil }

// chain is the n-node linear chain of no-op Go tasks the audit is measured on.
func chain(tb testing.TB, n int) *flow.Graph {
	return testkit.Chain(tb, fmt.Sprintf("chain%d", n), n, noop)
}

func benchChain(b *testing.B, e *flow.Engine, g *flow.Graph, nodes int) {
	ctx := context.Background()
	fc := flow.NewContext("bench")
	if _, err := e.EvalGraph(ctx, g, fc); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer testkit.ReportCPU(b, nodes)()
	for b.Loop() {
		if _, err := e.EvalGraph(ctx, g, fc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
}

// BenchmarkAuditChain measures the audit interceptor writing JSON Lines to a temporary
// file on a 100-node chain of no-op Go tasks, against the engine without interceptors.
// Target: at most +300 ns per node.
func BenchmarkAuditChain(b *testing.B) {
	const n = 100
	g := chain(b, n)
	b.Run("none", func(b *testing.B) { benchChain(b, flow.NewEngine(), g, n+2) })
	// The engine times every node once any interceptor is installed: the part of the
	// overhead that is not the audit's.
	b.Run("nop-interceptor", func(b *testing.B) {
		benchChain(b, flow.NewEngine(flow.WithInterceptor(flow.NopInterceptor{}, 0)), g, n+2)
	})
	b.Run("audit-jsonl", func(b *testing.B) {
		sink, err := interceptor.OpenJSONL(filepath.Join(b.TempDir(), "audit.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		defer sink.Close()
		a := interceptor.NewAudit(interceptor.WithSink(sink))
		benchChain(b, flow.NewEngine(flow.WithInterceptor(a, 0)), g, n+2)
		if a.Failures() != 0 {
			b.Fatal("sink failures")
		}
	})
	// The encoding without the file write.
	b.Run("audit-jsonl-nowrite", func(b *testing.B) {
		a := interceptor.NewAudit(interceptor.WithSink(interceptor.NewJSONL(io.Discard)))
		benchChain(b, flow.NewEngine(flow.WithInterceptor(a, 0)), g, n+2)
	})
	b.Run("audit-discard", func(b *testing.B) {
		a := interceptor.NewAudit(interceptor.WithSink(interceptor.SinkFunc(func(context.Context, []trace.Record) error { return nil })))
		benchChain(b, flow.NewEngine(flow.WithInterceptor(a, 0)), g, n+2)
	})
}
