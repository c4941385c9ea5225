package interceptor_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

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
	benchChainThen(b, e, g, nodes, nil)
}

// benchChainThen is benchChain calling after, if not nil, after every run.
func benchChainThen(b *testing.B, e *flow.Engine, g *flow.Graph, nodes int, after func()) {
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
		if after != nil {
			after()
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
	// Written every second (what a run saved on exit gets from the command line): a
	// goroutine per run, and a write per run as fast runs never see a tick.
	b.Run("audit-jsonl-interval", func(b *testing.B) {
		sink, err := interceptor.OpenJSONL(filepath.Join(b.TempDir(), "audit.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		defer sink.Close()
		a := interceptor.NewAudit(interceptor.WithSink(sink), interceptor.WithFlushInterval(time.Second))
		benchChain(b, flow.NewEngine(flow.WithInterceptor(a, 0)), g, n+2)
	})
	// Written node by node and synced after every node (per-node durability): the
	// cost is the disk's fsync.
	b.Run("audit-jsonl-durable", func(b *testing.B) {
		sink, err := interceptor.OpenJSONL(filepath.Join(b.TempDir(), "audit.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		defer sink.Close()
		a := interceptor.NewAudit(interceptor.WithSink(sink), interceptor.WithDurableNodes())
		benchChain(b, flow.NewEngine(flow.WithInterceptor(a, 0)), g, n+2)
	})
	// The floor of any audit that appends these records to a file once per run: the
	// engine without interceptors, then one append of the bytes the audit writes for
	// a run. audit-jsonl minus this is what the audit itself costs.
	b.Run("file-append-floor", func(b *testing.B) {
		var lines bytes.Buffer
		a := interceptor.NewAudit(interceptor.WithSink(interceptor.NewJSONL(&lines)))
		if _, err := flow.NewEngine(flow.WithInterceptor(a, 0)).EvalGraph(context.Background(), g, flow.NewContext("bench")); err != nil {
			b.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(b.TempDir(), "audit.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		e := flow.NewEngine()
		benchChainThen(b, e, g, n+2, func() {
			if _, err := f.Write(lines.Bytes()); err != nil {
				b.Fatal(err)
			}
		})
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
