package worker_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/worker"
)

// chainEngine registers graph "chain": ten activities in a row, each sleeping 1ms
// (so that the CPU count does not decide the throughput); the last one calls done.
func chainEngine(done func()) *flow.Engine {
	spec := flow.NewSpec("chain")
	spec.Start("s").LinkTo("n0")
	for i := range 10 {
		id, next := fmt.Sprintf("n%d", i), fmt.Sprintf("n%d", i+1)
		if i == 9 {
			next = "e"
		}
		spec.Activity(id).DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
			time.Sleep(time.Millisecond)
			if n.ID == "n9" {
				done()
			}
			return nil
		}).LinkTo(next)
	}
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		panic(err)
	}
	eng := flow.NewEngine()
	if err := eng.Register(g); err != nil {
		panic(err)
	}
	return eng
}

// BenchmarkWorkers measures completed runs per second of a 10-node graph with 1, 2 and
// 4 workers of concurrency 1 (set REDIS_ADDR for a real Redis). Every run is a resume
// with a claim, ten checkpoints, the outcome and the ack.
func BenchmarkWorkers(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			rdb, prefix, _ := testClient(b)
			store := session.NewRedisStore(rdb, session.WithPrefix(prefix))
			q := worker.NewQueue(store)
			var completed atomic.Int64
			all := make(chan struct{})
			eng := chainEngine(func() {
				if completed.Add(1) == int64(b.N) {
					close(all)
				}
			})
			for i := range b.N {
				require.NoError(b, q.Submit(context.Background(), eng, "chain", fmt.Sprintf("c-%d", i), nil))
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{}, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range n {
				w, err := worker.New(q, eng, worker.WithWorkerName(fmt.Sprintf("w%d", i)), worker.WithConcurrency(1),
					worker.WithLease(time.Second, 5*time.Second))
				require.NoError(b, err)
				go func() { w.Run(ctx); done <- struct{}{} }()
			}
			<-all
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
			cancel()
			for range n {
				<-done
			}
		})
	}
}
