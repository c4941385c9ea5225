package flow

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func runIDSeqOf(t *testing.T, id string) uint64 {
	t.Helper()
	require.True(t, strings.HasPrefix(id, runIDs.prefix), "run id %q", id)
	n, err := strconv.ParseUint(strings.TrimPrefix(id, runIDs.prefix), 10, 64)
	require.NoError(t, err, "run id %q", id)
	return n
}

// Run ids taken concurrently are unique and well formed, and
// those one goroutine takes increase.
func TestRunIDsAreUnique(t *testing.T) {
	const goroutines, each = 8, 800
	ids := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				ids[g] = append(ids[g], NewRunID())
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool, goroutines*each)
	for _, mine := range ids {
		var last uint64
		for _, id := range mine {
			require.False(t, seen[id], "run id %s given twice", id)
			seen[id] = true
			n := runIDSeqOf(t, id)
			require.Greater(t, n, last, "run ids of one goroutine increase")
			last = n
		}
	}
}

// runIDHook records the run id its InterceptFlow is told.
type runIDHook struct {
	NopInterceptor
	id string
}

func (h *runIDHook) InterceptFlow(ctx context.Context, inv *Invocation) error {
	h.id = inv.RunID
	return inv.Invoke(ctx)
}

// A generated run id is formatted only when asked for, and whoever asks, during the
// run or after it, gets the same one: the task through Context.RunID, the caller
// through Result.RunID (twice), the interceptor through Invocation.RunID.
func TestLazyRunIDIsTheSameWhoeverAsks(t *testing.T) {
	var inTask string
	e := NewEngine(WithTaskFunc("ask", func(_ context.Context, c *Context, _ *Node) error {
		inTask = c.RunID()
		return nil
	}))
	load := func(src string) *Graph {
		g, err := LoadGraph("g.yml", []byte(src))
		require.NoError(t, err)
		return g
	}
	asks := load("id: asks\nlayout:\n  - {type: start}\n  - {task: '@ask'}\n  - {type: end}\n")
	sealed := load("id: sealed\nlayout:\n  - {type: start}\n  - {task: 'context.put(\"n\", 1)'}\n  - {type: end}\n")

	res, err := e.EvalGraph(context.Background(), asks, NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, inTask, res.RunID())
	require.Equal(t, res.RunID(), res.RunID())
	runIDSeqOf(t, res.RunID())

	hook := &runIDHook{}
	res2, err := e.EvalGraph(context.Background(), sealed, NewContext("i"), WithEvalInterceptor(hook, 0))
	require.NoError(t, err)
	require.Equal(t, hook.id, res2.RunID())
	require.Greater(t, runIDSeqOf(t, res2.RunID()), runIDSeqOf(t, res.RunID()))

	// A run nobody asked: its id is formatted afterwards, unique and in sequence.
	res3, err := e.EvalGraph(context.Background(), sealed, NewContext("i"))
	require.NoError(t, err)
	require.Greater(t, runIDSeqOf(t, res3.RunID()), runIDSeqOf(t, res2.RunID()))

	var kept Result
	_, err = e.EvalGraph(context.Background(), sealed, NewContext("i"), WithRunID("mine"), WithResult(&kept))
	require.NoError(t, err)
	require.Equal(t, "mine", kept.RunID())
	_, err = e.EvalGraph(context.Background(), sealed, NewContext("i"), WithResult(&kept))
	require.NoError(t, err)
	require.Greater(t, runIDSeqOf(t, kept.RunID()), runIDSeqOf(t, res3.RunID()), "a kept Result forgets the explicit id")
}

// Parallel branches that ask for the run id at the same time, the first asks
// included, all get the one the Result reports (run with -race).
func TestLazyRunIDAskedConcurrently(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	e := NewEngine(WithTaskFunc("ask", func(_ context.Context, c *Context, _ *Node) error {
		id := c.RunID()
		mu.Lock()
		seen[id]++
		mu.Unlock()
		return nil
	}))
	g, err := LoadGraph("p.yml", []byte(`id: p
layout:
  - {type: start}
  - {id: p, type: parallel, link: [b1, b2, b3, b4]}
  - {id: b1, task: '@ask', link: j}
  - {id: b2, task: '@ask', link: j}
  - {id: b3, task: '@ask', link: j}
  - {id: b4, task: '@ask', link: j}
  - {id: j, type: parallel}
  - {type: end}
`))
	require.NoError(t, err)
	for range 20 {
		clear(seen)
		res, err := e.EvalGraph(context.Background(), g, NewContext("i"))
		require.NoError(t, err)
		require.Equal(t, map[string]int{res.RunID(): 4}, seen)
	}
}

// A sub-graph call made while a parallel branch formats the lazy run id does not read
// the id unsynchronized (run with -race). Branch a formats it once c's branch is past
// the channel and before c's call starts; nothing else orders the two, so reading the
// id for the call's Invocation (which only interceptors see, and with them the id is
// formatted before the run) was a data race.
func TestLazyRunIDAskedDuringASubgraphCall(t *testing.T) {
	asked, called := make(chan struct{}), make(chan struct{})
	var id string
	e := NewEngine(
		WithTaskFunc("ask", func(_ context.Context, c *Context, _ *Node) error {
			close(asked)
			id = c.RunID()
			<-called
			return nil
		}),
		WithTaskFunc("wait", func(context.Context, *Context, *Node) error {
			<-asked
			return nil
		}),
		WithTaskFunc("called", func(context.Context, *Context, *Node) error {
			close(called)
			return nil
		}),
	)
	child, err := LoadGraph("child.yml", []byte("id: child\nlayout:\n  - {type: start}\n  - {task: '@called'}\n  - {type: end}\n"))
	require.NoError(t, err)
	require.NoError(t, e.Register(child))
	g, err := LoadGraph("g.yml", []byte(`id: g
layout:
  - {type: start}
  - {id: p, type: parallel, link: [w, a]}
  - {id: w, task: '@wait', link: c}
  - {id: c, task: '#child', link: j}
  - {id: a, task: '@ask', link: j}
  - {id: j, type: parallel}
  - {type: end}
`))
	require.NoError(t, err)
	res, err := e.EvalGraph(context.Background(), g, NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, id, res.RunID())
}

// keepViews keeps the view of every node execution it sees start, and the run id its
// InterceptFlow is told.
type keepViews struct {
	NopInterceptor
	mu    sync.Mutex
	id    string
	views map[string]*Context
}

func (k *keepViews) InterceptFlow(ctx context.Context, inv *Invocation) error {
	if inv.Node == nil {
		k.id = inv.RunID
	}
	return inv.Invoke(ctx)
}

func (k *keepViews) OnNodeStart(_ context.Context, c *Context, n *Node) {
	k.mu.Lock()
	k.views[n.ID] = c
	k.mu.Unlock()
}

// explodes panics when the node it names starts.
type explodes struct {
	NopInterceptor
	node string
}

func (h explodes) OnNodeStart(_ context.Context, _ *Context, n *Node) {
	if n.ID == h.node {
		panic("hook start")
	}
}

// A node execution that a panic escaping the run abandoned (its hook panicked, on the
// main branch or in a branch's goroutine) never ends, and the interceptors that end
// it themselves (an audit, a tracer) ask its view for the run id once the engine let
// go of the run: the view still says which run it belongs to, also after the Context
// ran another one. So does the view a task kept, after a run nobody asked for its id.
func TestRunIDOfAViewOnceTheRunIsOver(t *testing.T) {
	g, err := LoadGraph("p.yml", []byte(`
id: p
layout:
  - {id: s, type: start}
  - {id: a, task: "@keep"}
  - {id: p, type: parallel, link: [b0, b1]}
  - {id: b0, link: j}
  - {id: b1, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	var kept *Context
	e := NewEngine(WithMaxConcurrency(4), WithTaskFunc("keep", func(_ context.Context, c *Context, _ *Node) error {
		kept = c
		return nil
	}))
	fc := NewContext("i")
	for _, node := range []string{"a", "b0", "b1"} { // b1 runs in a branch goroutine
		k := &keepViews{views: map[string]*Context{}}
		func() {
			defer func() { require.NotNil(t, recover()) }()
			_, _ = e.EvalGraph(context.Background(), g, fc, WithEvalInterceptor(k, 0), WithEvalInterceptor(explodes{node: node}, 1))
		}()
		require.NotEmpty(t, k.id)
		require.Contains(t, k.views, node)
		require.Equal(t, k.id, k.views[node].RunID(), "abandoned at %s", node)
		res, err := e.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err)
		require.Equal(t, k.id, k.views[node].RunID(), "abandoned at %s, after another run", node)
		require.Equal(t, res.RunID(), kept.RunID(), "a task's view after its run")
		require.Empty(t, fc.RunID(), "the root view outside a run")
	}

	// A resumed run's views, inside a sub-graph call, say the resumed run's id.
	e = NewEngine(WithTaskFunc("keep", func(_ context.Context, c *Context, _ *Node) error {
		kept = c
		if c.Value("ok") != true {
			c.Suspend("wait")
		}
		return nil
	}))
	sub, err := LoadGraph("sub.yml", []byte("id: sub\nlayout:\n  - {type: start}\n  - {task: '@keep'}\n  - {type: end}\n"))
	require.NoError(t, err)
	require.NoError(t, e.Register(sub))
	caller, err := LoadGraph("c.yml", []byte("id: c\nlayout:\n  - {type: start}\n  - {task: '#sub'}\n  - {type: end}\n"))
	require.NoError(t, err)
	res, err := e.EvalGraph(context.Background(), caller, fc)
	require.NoError(t, err)
	require.Equal(t, StatusSuspended, res.Status)
	require.Equal(t, res.RunID(), kept.RunID())
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, StatusCompleted, res.Status)
	require.Equal(t, res.RunID(), kept.RunID())
}

// What a task's view says about its execution (InstanceID, RunID, CallPath) and the
// instance's shared state stay safe to use from a goroutine the task leaves behind,
// while the branch moves on (run with -race; see the Context doc for what does not).
func TestViewUsedFromALeftoverGoroutineKeepsItsSafeMethods(t *testing.T) {
	defer goleak.VerifyNone(t)
	type seen struct{ run, path, inst string }
	out := make(chan seen, 1)
	e := NewEngine(WithMaxConcurrency(2), WithTaskFunc("leak", func(_ context.Context, c *Context, _ *Node) error {
		go func() {
			var s seen
			for range 100 {
				s = seen{c.RunID(), c.CallPath(), c.InstanceID()}
				c.Set("leaked", true)
				_ = c.Vars()
			}
			out <- s
		}()
		return nil
	}))
	g, err := LoadGraph("g.yml", []byte(`
id: g
layout:
  - {id: s, type: start}
  - {id: a, task: "@leak"}
  - {id: p, type: parallel, link: [b, c]}
  - {id: b, link: j}
  - {id: c, link: j}
  - {id: j, type: parallel, link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	res, err := e.EvalGraph(context.Background(), g, NewContext("i"))
	require.NoError(t, err)
	require.Equal(t, seen{res.RunID(), "g", "i"}, <-out)
}
