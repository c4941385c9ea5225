package interceptor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// syncedSink keeps the records written and how many of them a Sync covered.
type syncedSink struct {
	mu     sync.Mutex
	recs   trace.Records
	synced int
	syncs  int // Sync calls
	idle   int // Sync calls with no record written since the previous one
}

func (s *syncedSink) Write(_ context.Context, recs []trace.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, recs...)
	return nil
}

func (s *syncedSink) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncs++
	if s.synced == len(s.recs) {
		s.idle++
	}
	s.synced = len(s.recs)
	return nil
}

// has reports whether a record of node with status is written, and whether synced.
func (s *syncedSink) has(node string, st trace.Status) (written, synced bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.recs {
		if r.Qualified() == node && r.Status == st {
			return true, i < s.synced
		}
	}
	return false, false
}

// With WithDurableNodes a node's STARTED record is written before its task runs, and
// its terminal record written and synced before the checkpoint that counts it done:
// the audit is never behind a per-node snapshot. Without the option the records wait
// for the run's end.
func TestDurableNodesPrecedeCheckpoints(t *testing.T) {
	for _, durable := range []bool{true, false} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			sink := &syncedSink{}
			opts := []interceptor.Option{interceptor.WithSink(sink)}
			if durable {
				opts = append(opts, interceptor.WithDurableNodes())
			}
			e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(opts...), 0))
			var mu sync.Mutex
			var missing []string
			miss := func(what string) {
				mu.Lock()
				missing = append(missing, what)
				mu.Unlock()
			}
			task := func(_ context.Context, c *flow.Context, n *flow.Node) error {
				if w, _ := sink.has(c.CallPath()+":"+n.ID, trace.Started); !w {
					miss("STARTED of " + n.ID + " while it runs")
				}
				return nil
			}
			s := flow.NewSpec("root")
			s.Start("s").LinkTo("p")
			s.Parallel("p").LinkTo("a").LinkTo("b").LinkTo("c")
			for _, id := range []string{"a", "b", "c"} {
				s.Activity(id).DoFunc(task).LinkTo("j")
			}
			s.Parallel("j").LinkTo("e")
			s.End("e")
			checkpoints := 0
			ckpt := flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
				checkpoints++
				node := cp.Path + ":" + cp.Node
				if _, synced := sink.has(node, trace.Started); !synced {
					miss("STARTED of " + node + " at its checkpoint")
				}
				if _, synced := sink.has(node, trace.Completed); !synced {
					miss("COMPLETED of " + node + " at its checkpoint")
				}
				return nil
			})
			_, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"), ckpt)
			require.NoError(t, err)
			assert.Equal(t, 7, checkpoints)
			if durable {
				assert.Empty(t, missing)
			} else {
				assert.Len(t, missing, 3+2*7, "nothing is written before the run ends")
			}
			require.NoError(t, sink.recs.Verify())
			assert.Len(t, sink.recs, 16)
		})
	}
}

// With WithDurableNodes, branches that end together share a sync: a node whose
// terminal record another branch's flush has written and synced does not sync again.
// Each sync covers new records, and there are no more syncs than node ends plus the
// run's end.
func TestDurableNodesSyncOnlyNewRecords(t *testing.T) {
	const branches = 16
	sink := &syncedSink{}
	e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(sink), interceptor.WithDurableNodes()), 0))
	s := flow.NewSpec("root")
	s.Start("s").LinkTo("p")
	p := s.Parallel("p")
	var ready sync.WaitGroup
	ready.Add(branches)
	for i := range branches {
		id := fmt.Sprintf("b%d", i)
		p.LinkTo(id)
		s.Activity(id).DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
			ready.Done()
			ready.Wait() // the branches end together
			return nil
		}).LinkTo("j")
	}
	s.Parallel("j").LinkTo("e")
	s.End("e")
	for range 5 {
		ready = sync.WaitGroup{}
		ready.Add(branches)
		_, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
		require.NoError(t, err)
	}
	assert.Zero(t, sink.idle, "a sync with nothing new written (%d syncs)", sink.syncs)
	assert.LessOrEqual(t, sink.syncs, 5*(branches+4+1))
	require.NoError(t, sink.recs.Verify())
}

// WithFlushInterval writes the records of a run that goes on: a task waiting for its
// own STARTED record to be written gets it without the run ending. The goroutine that
// writes them ends with the run (goleak, TestMain).
func TestFlushIntervalWritesDuringTheRun(t *testing.T) {
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithFlushInterval(5*time.Millisecond))
	e := flow.NewEngine(flow.WithInterceptor(a, 0))
	s := flow.NewSpec("wait")
	s.Start("s").LinkTo("w")
	s.Activity("w").DoFunc(func(ctx context.Context, _ *flow.Context, _ *flow.Node) error {
		deadline := time.After(10 * time.Second)
		for len(mem.ByNode("w")) == 0 {
			select {
			case <-deadline:
				return fmt.Errorf("the STARTED record of w was not written while w ran")
			case <-time.After(time.Millisecond):
			}
		}
		return nil
	}).LinkTo("e")
	s.End("e")
	res, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.NoError(t, err)
	require.NoError(t, res.Err)
	recs := mem.ByRun(res.RunID())
	require.NoError(t, recs.Verify())
	assert.Equal(t, []string{"<run>:STARTED", "s:STARTED", "s:COMPLETED", "w:STARTED", "w:COMPLETED",
		"e:STARTED", "e:COMPLETED", "<run>:COMPLETED"}, statuses(recs))
}

// JSONL.Sync syncs a file, does nothing for a pipe (which has nothing to flush), and
// fails once the sink is closed.
func TestJSONLSync(t *testing.T) {
	s, err := interceptor.OpenJSONL(filepath.Join(t.TempDir(), "audit.jsonl"))
	require.NoError(t, err)
	require.NoError(t, s.Write(context.Background(), []trace.Record{{Seq: 1, Status: trace.Started, GraphID: "g", RunID: "r"}}))
	require.NoError(t, s.Sync())
	require.NoError(t, s.Close())
	assert.ErrorIs(t, s.Sync(), os.ErrClosed)

	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.NoError(t, interceptor.NewJSONL(w).Sync())
}
