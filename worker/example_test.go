package worker_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/worker"
)

// One process submits an instance and returns; a worker (in any process sharing the
// Redis) runs it.
func ExampleQueue_Submit() {
	mr, err := miniredis.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	ctx, stop := context.WithCancel(context.Background())
	spec := flow.NewSpec("greet")
	spec.Start("s").LinkTo("hello")
	spec.Activity("hello").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		name, _ := c.GetString("name")
		fmt.Println("hello,", name)
		stop() // the example's worker stops after one run
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, _ := spec.Build()
	eng := flow.NewEngine()
	_ = eng.Register(g)

	store := session.NewRedisStore(rdb)
	q := worker.NewQueue(store)
	if err := q.Submit(ctx, eng, "greet", "greet-1", map[string]any{"name": "Ada"}); err != nil {
		fmt.Println(err)
		return
	}
	w, _ := worker.New(q, eng, worker.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err := w.Run(ctx); err != nil { // returns once ctx is done and the run has ended
		fmt.Println(err)
		return
	}
	snap, _ := store.Load(context.Background(), "greet-1")
	fmt.Println(snap.Status)
	// Output:
	// hello, Ada
	// completed
}
