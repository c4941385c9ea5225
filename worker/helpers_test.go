package worker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/worker"
)

// Environment of a worker process the tests start (see TestMain).
const (
	envChild  = "WORKER_TEST_CHILD" // the Redis address
	envPrefix = "WORKER_TEST_PREFIX"
	envName   = "WORKER_TEST_NAME"
	envConc   = "WORKER_TEST_CONCURRENCY"
)

// Lease timing of the tests' workers.
const (
	testRenew = 50 * time.Millisecond
	testTTL   = 400 * time.Millisecond
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(envChild); addr != "" {
		os.Exit(childWorker(addr))
	}
	goleak.VerifyTestMain(m)
}

// childWorker runs a worker until SIGTERM (or SIGKILL) in a process of its own.
func childWorker(addr string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	prefix := os.Getenv(envPrefix)
	conc, _ := strconv.Atoi(os.Getenv(envConc))
	q := worker.NewQueue(session.NewRedisStore(rdb, session.WithPrefix(prefix)))
	w, err := worker.New(q, jobEngine(rdb, prefix, time.Millisecond, 100*time.Millisecond),
		worker.WithWorkerName(os.Getenv(envName)), worker.WithConcurrency(conc),
		worker.WithLease(testRenew, testTTL), worker.WithGrace(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testClient returns a client of the test's Redis (testkit.RedisStore: REDIS_ADDR's,
// or a miniredis), a key prefix no other test uses, whose keys are deleted when the
// test ends, and the Redis address, for worker processes.
func testClient(t testing.TB) (*redis.Client, string, string) {
	store := testkit.RedisStore(t)
	rdb := store.Client().(*redis.Client)
	return rdb, store.Prefix(), rdb.Options().Addr
}

// counterKey is the key of the counter of a node's runs of an instance, which tasks
// increment as they run (at least once).
func counterKey(prefix, inst, node string) string { return prefix + "ctr:" + inst + ":" + node }

// effectKey is the key of the side-effect counter of a node of an instance, which
// tasks increment with an effect (flow.Context.Effect: exactly once). It carries the
// instance's hash tag, as an effect's key must on Redis Cluster.
func effectKey(prefix, inst, node string) string {
	return prefix + "fx:" + session.NewRedisStore(nil, session.WithPrefix(prefix)).Tag(inst) + ":" + node
}

// jobNodes are the nodes of the job graph that count their runs.
var jobNodes = []string{"s", "a", "b", "c", "wait", "d"}

// jobEngine registers graph "job": a parallel split into a, b and c, a join, a node
// that suspends until wait after its first run, and d. Every task counts its runs in
// Redis (counterKey), queues its side effect (an INCR of effectKey, made with the
// checkpoint of its completion) and sleeps for sleep.
func jobEngine(rdb *redis.Client, prefix string, sleep, wait time.Duration) *flow.Engine {
	count := func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if err := rdb.Incr(ctx, counterKey(prefix, c.InstanceID(), n.ID)).Err(); err != nil {
			return err
		}
		err := c.Effect(session.RedisEffect{Name: "INCR", Key: effectKey(prefix, c.InstanceID(), n.ID)})
		if err != nil {
			return err
		}
		time.Sleep(sleep)
		return nil
	}
	spec := flow.NewSpec("job")
	spec.Start("s").DoFunc(count).LinkTo("fork")
	spec.Parallel("fork").LinkTo("a").LinkTo("b").LinkTo("c")
	for _, id := range []string{"a", "b", "c"} {
		spec.Activity(id).DoFunc(count).LinkTo("join")
	}
	spec.Parallel("join").LinkTo("wait")
	spec.Activity("wait").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if !worker.SuspendUntil(c, n, time.Now().Add(wait)) {
			return nil
		}
		return count(ctx, c, n)
	}).LinkTo("d")
	spec.Activity("d").DoFunc(count).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		panic(err)
	}
	eng := flow.NewEngine()
	if err := eng.Register(g); err != nil {
		panic(err)
	}
	if err := eng.Register(hangGraph(rdb, prefix)); err != nil {
		panic(err)
	}
	return eng
}

// hangGraph is graph "hang": node h counts its runs (counterKey) and, in its first
// run, blocks until its run is cancelled (the process is killed meanwhile); node d
// counts its runs.
func hangGraph(rdb *redis.Client, prefix string) *flow.Graph {
	spec := flow.NewSpec("hang")
	spec.Start("s").LinkTo("h")
	spec.Activity("h").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		runs, err := rdb.Incr(ctx, counterKey(prefix, c.InstanceID(), n.ID)).Result()
		if err != nil || runs > 1 {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	}).LinkTo("d")
	spec.Activity("d").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		return rdb.Incr(ctx, counterKey(prefix, c.InstanceID(), n.ID)).Err()
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// startChild starts a worker process (see childWorker) named name.
func startChild(t *testing.T, addr, prefix, name string, conc int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+addr, envPrefix+"="+prefix,
		envName+"="+name, fmt.Sprintf("%s=%d", envConc, conc))
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	return cmd
}

// waitCompleted waits until n instances of the store are completed.
func waitCompleted(t *testing.T, store *session.RedisStore, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ids, err := store.List(context.Background(), session.StatusCompleted)
		require.NoError(t, err)
		if len(ids) >= n {
			return
		}
		if time.Now().After(deadline) {
			for _, st := range []session.Status{session.StatusRunning, session.StatusSuspended, session.StatusFailed, session.StatusStopped} {
				ids, _ := store.List(context.Background(), st)
				for _, id := range ids {
					snap, _ := store.Load(context.Background(), id)
					t.Logf("%s: %s %q lease %+v vars %v errors %v", id, snap.Status, snap.Reason, snap.Lease, snap.Vars, snap.Errors)
				}
			}
			t.Fatalf("%d of %d instances completed after %v", len(ids), n, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// counters returns how many nodes of the instances counted one with key (counterKey
// for runs, effectKey for side effects), and the keys of those that counted another
// number with that number.
func counters(t *testing.T, rdb *redis.Client, prefix string, insts []string,
	key func(prefix, inst, node string) string) (once int, other map[string]int64) {
	t.Helper()
	other = map[string]int64{}
	for _, inst := range insts {
		for _, node := range jobNodes {
			k := key(prefix, inst, node)
			v, err := rdb.Get(context.Background(), k).Int64()
			if err == redis.Nil {
				v, err = 0, nil
			}
			require.NoError(t, err)
			if v == 1 {
				once++
			} else {
				other[k] = v
			}
		}
	}
	return once, other
}
