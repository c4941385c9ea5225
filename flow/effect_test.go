package flow_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
)

// effectLog collects the effects of every checkpoint of a run, by node and call path.
type effectLog struct {
	mu  sync.Mutex
	cps []flow.Checkpoint
}

func (l *effectLog) option() flow.EvalOption {
	return flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
		l.mu.Lock()
		l.cps = append(l.cps, cp)
		l.mu.Unlock()
		return nil
	})
}

// byNode returns the effects of each checkpoint that carried some, keyed by
// "path:node"; a node checkpointed twice with effects fails the test.
func (l *effectLog) byNode(t *testing.T) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	for _, cp := range l.cps {
		if cp.Effects == nil {
			continue
		}
		k := cp.Path + ":" + cp.Node
		require.NotContains(t, out, k, "two checkpoints carried effects of %s", k)
		out[k] = cp.Effects
	}
	return out
}

// queue is a task that queues two effects named for its node.
func queue(_ context.Context, c *flow.Context, n *flow.Node) error {
	for _, e := range []any{n.ID + ".1", n.ID + ".2"} {
		if err := c.Effect(e); err != nil {
			return err
		}
	}
	return nil
}

func TestEffectTravelsWithItsNodesCheckpoint(t *testing.T) {
	s := flow.NewSpec("fx")
	s.Start("s").LinkTo("a")
	s.Activity("a").DoFunc(queue).LinkTo("b")
	s.Activity("b").DoFunc(noop).LinkTo("e")
	s.End("e")
	var log effectLog
	res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), flow.NewContext("fx"), log.option())
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, map[string][]any{"fx:a": {"a.1", "a.2"}}, log.byNode(t))
	require.Len(t, log.cps, 4)
	for _, cp := range log.cps {
		if cp.Node != "a" {
			assert.Nil(t, cp.Effects, "checkpoint of %s", cp.Node)
		}
	}
}

func TestEffectOfParallelBranchesStaysWithEachNode(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := flow.NewSpec("par")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b").LinkTo("c")
	// Each branch queues its effects in two nodes, waiting for the others between,
	// so the branches' node executions overlap.
	var started sync.WaitGroup
	started.Add(3)
	meet := func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if err := queue(ctx, c, n); err != nil {
			return err
		}
		started.Done()
		started.Wait()
		return nil
	}
	for _, id := range []string{"a", "b", "c"} {
		s.Activity(id).DoFunc(meet).LinkTo(id + "2")
		s.Activity(id + "2").DoFunc(queue).LinkTo("j")
	}
	s.Parallel("j").DoFunc(queue).LinkTo("e")
	s.End("e")
	var log effectLog
	_, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), flow.NewContext("par"), log.option())
	require.NoError(t, err)
	want := map[string][]any{}
	for _, id := range []string{"a", "b", "c", "a2", "b2", "c2", "j"} {
		want["par:"+id] = []any{id + ".1", id + ".2"}
	}
	assert.Equal(t, want, log.byNode(t))
}

func TestEffectOfSubgraphNodeHasItsOwnCheckpoint(t *testing.T) {
	e := flow.NewEngine()
	c := flow.NewSpec("child")
	c.Start("cs").LinkTo("cx")
	c.Activity("cx").DoFunc(queue).LinkTo("ce")
	c.End("ce")
	require.NoError(t, e.Register(build(t, c)))
	s := flow.NewSpec("parent")
	s.Start("s").DoFunc(queue).LinkTo("call")
	s.Activity("call").SetTask("#child").LinkTo("e")
	s.End("e")
	var log effectLog
	_, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("sub"), log.option())
	require.NoError(t, err)
	assert.Equal(t, map[string][]any{
		"parent:s":             {"s.1", "s.2"},
		"parent/call/child:cx": {"cx.1", "cx.2"},
	}, log.byNode(t))
}

func TestEffectOfFailedAttemptIsDropped(t *testing.T) {
	var attempts atomic.Int32
	flaky := func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		n := attempts.Add(1)
		if err := c.Effect(int(n)); err != nil {
			return err
		}
		if n < 3 {
			return flow.MarkRetryable(errors.New("busy"))
		}
		return nil
	}
	s := flow.NewSpec("retry")
	s.Start("s").LinkTo("r")
	s.Activity("r").DoFunc(flaky).SetRetry(flow.RetryPolicy{Max: 3}).LinkTo("e")
	s.End("e")
	var log effectLog
	res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), flow.NewContext("r"), log.option())
	require.NoError(t, err)
	assert.Equal(t, 2, res.Retries)
	assert.Equal(t, map[string][]any{"retry:r": {3}}, log.byNode(t), "only the attempt that completed")
}

func TestEffectOfRecoveredFailureIsDropped(t *testing.T) {
	fail := func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if err := c.Effect("lost"); err != nil {
			return err
		}
		return errors.New("down")
	}
	s := flow.NewSpec("recover")
	s.Start("s").LinkTo("f")
	s.Activity("f").DoFunc(fail).SetMeta(flow.MetaOnError, map[string]any{"recover": true, "goto": "g"}).LinkTo("e")
	s.Activity("g").DoFunc(queue).LinkTo("e")
	s.End("e")
	var log effectLog
	res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), flow.NewContext("rc"), log.option())
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, map[string][]any{"recover:g": {"g.1", "g.2"}}, log.byNode(t))
}

// TestEffectOfSuspendedNodeIsDropped suspends a node after it queued effects, in one
// branch of a parallel split, and resumes: the effects are in the checkpoint of the
// node's run after the resume, once.
func TestEffectOfSuspendedNodeIsDropped(t *testing.T) {
	defer goleak.VerifyNone(t)
	wait := func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if err := queue(ctx, c, n); err != nil {
			return err
		}
		if !c.Resumed() {
			c.Suspend("approval")
		}
		return nil
	}
	s := flow.NewSpec("hold")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("w").LinkTo("x")
	s.Activity("w").DoFunc(wait).LinkTo("j")
	s.Activity("x").DoFunc(queue).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	var first effectLog
	fc := flow.NewContext("h")
	res, err := e.EvalGraph(context.Background(), g, fc, first.option())
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	before := first.byNode(t)
	assert.NotContains(t, before, "hold:w", "the suspended node's")

	var second effectLog
	res, err = e.Resume(context.Background(), res.Frontier, fc, second.option())
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	after := second.byNode(t)
	assert.Equal(t, []any{"w.1", "w.2"}, after["hold:w"])
	// x completed before the suspension or, parked by it, after the resume: once.
	assert.NotEqual(t, before["hold:x"] == nil, after["hold:x"] == nil, "x's effects in exactly one run")
}

func TestEffectWithoutCheckpoint(t *testing.T) {
	var got []error
	try := func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		got = append(got, c.Effect("x"))
		return nil
	}
	s := flow.NewSpec("plain")
	s.Start("s").DoFunc(try).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	_, err := e.EvalGraph(context.Background(), g, flow.NewContext("p"))
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.ErrorIs(t, got[0], flow.ErrNoCheckpoint, "a run without checkpoints")

	fc := flow.NewContext("p")
	assert.ErrorIs(t, fc.Effect("x"), flow.ErrNoCheckpoint, "the root view")
	require.NoError(t, e.RunTask(context.Background(), g.Node("s"), fc))
	assert.ErrorIs(t, got[1], flow.ErrNoCheckpoint, "a task run outside a run")

	var nilErr error
	s = flow.NewSpec("nil")
	s.Start("s").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		nilErr = c.Effect(nil)
		return nil
	}).LinkTo("e")
	s.End("e")
	var log effectLog
	_, err = e.EvalGraph(context.Background(), build(t, s), flow.NewContext("n"), log.option())
	require.NoError(t, err)
	require.Error(t, nilErr)
	assert.NotErrorIs(t, nilErr, flow.ErrNoCheckpoint)
	assert.Empty(t, log.byNode(t))
}

// TestEffectFromTaskGoroutines queues effects from several goroutines of one task:
// all of them reach the node's checkpoint.
func TestEffectFromTaskGoroutines(t *testing.T) {
	fan := func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() { _ = c.Effect(i) })
		}
		wg.Wait()
		return nil
	}
	s := flow.NewSpec("fan")
	s.Start("s").DoFunc(fan).LinkTo("e")
	s.End("e")
	var log effectLog
	_, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), flow.NewContext("f"), log.option())
	require.NoError(t, err)
	got := log.byNode(t)["fan:s"]
	ints := make([]int, 0, len(got))
	for _, v := range got {
		ints = append(ints, v.(int))
	}
	slices.Sort(ints)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, ints)
}

// TestEffectOfCancelledNodeIsDropped cancels the run while a node that queued
// effects waits: the node does not complete, and no checkpoint carries them.
func TestEffectOfCancelledNodeIsDropped(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	block := func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if err := queue(ctx, c, n); err != nil {
			return err
		}
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	s := flow.NewSpec("cancel")
	s.Start("s").LinkTo("b")
	s.Activity("b").DoFunc(block).LinkTo("e")
	s.End("e")
	var log effectLog
	res, err := flow.NewEngine().EvalGraph(ctx, build(t, s), flow.NewContext("c"), log.option())
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.Empty(t, log.byNode(t))
}
