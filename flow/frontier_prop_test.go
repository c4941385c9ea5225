package flow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
)

// Random graphs for TestEveryFrontierRestores: block-structured graphs of splits
// (parallel, inclusive, an activity with several links), exclusive choices, loops and
// sub-graph calls, whose tasks stop, suspend, interrupt or fail now and then.

type pBehavior int

const (
	pNoop pBehavior = iota
	pSet
	pStop
	pSuspend
	pInterrupt
	pFail
	pRecoverable
	pRetryable
	pPanic
	pCount
)

// pTask returns the task of a behavior. Everything but noop, set and interrupt fires
// once per instance and node, so resuming makes progress.
func pTask(b pBehavior) flow.TaskFunc {
	return func(_ context.Context, c *flow.Context, n *flow.Node) error {
		first := false
		if b > pInterrupt || b == pStop || b == pSuspend {
			c.Update("fired:"+n.Graph().ID+":"+n.ID, func(_ any, ok bool) any { first = !ok; return true })
		}
		switch {
		case b == pSet:
			c.Update("count", func(old any, _ bool) any { v, _ := old.(int); return v + 1 })
		case b == pInterrupt:
			c.Interrupt()
		case !first:
		case b == pStop:
			c.Stop()
		case b == pSuspend:
			c.Suspend("at " + n.ID)
		case b == pFail:
			return fmt.Errorf("fatal at %s", n.ID)
		case b == pRecoverable:
			return flow.NewRecoverableError("soft at " + n.ID)
		case b == pRetryable:
			return &flow.Error{Code: "TRANSIENT", Message: "again", Retry: true}
		case b == pPanic:
			panic("boom at " + n.ID)
		}
		return nil
	}
}

type propGen struct {
	rng   *rand.Rand
	spec  *flow.GraphSpec
	n     int
	subs  []string // registered sub-graphs, called as "#id"
	loops int
}

func (g *propGen) id(prefix string) string {
	g.n++
	return prefix + strconv.Itoa(g.n)
}

func (g *propGen) activity() string {
	id := g.id("a")
	ns := g.spec.Activity(id)
	if g.rng.IntN(8) == 0 {
		ns.SetMeta(flow.MetaOnError, map[string]any{"recover": true})
	}
	if r := g.rng.IntN(100); r < 12 && len(g.subs) > 0 {
		ns.SetTask("#" + g.subs[g.rng.IntN(len(g.subs))])
		if g.rng.IntN(3) == 0 { // a failed call runs again
			ns.SetRetry(flow.RetryPolicy{Max: 2, Backoff: time.Millisecond})
			ns.SetMeta(flow.MetaIdempotent, true)
		}
		return id
	} else if r < 17 {
		ns.SetTask(`context.put("s", 1)`)
		return id
	}
	b := pBehavior(g.rng.IntN(2))
	if g.rng.IntN(100) < 25 {
		b = pBehavior(2 + g.rng.IntN(int(pCount)-2))
	}
	ns.DoFunc(pTask(b))
	if b == pRetryable || g.rng.IntN(10) == 0 {
		ns.SetRetry(flow.RetryPolicy{Max: 2, Backoff: time.Millisecond})
		ns.SetMeta(flow.MetaIdempotent, true)
	}
	return id
}

func (g *propGen) cond() string {
	return fmt.Sprintf("v%d %s %d", g.rng.IntN(3), []string{">", "<", ">="}[g.rng.IntN(3)], g.rng.IntN(6))
}

// block adds a single-entry, single-exit block and returns its entry and exit.
func (g *propGen) block(depth int) (string, string) {
	if depth <= 0 {
		id := g.activity()
		return id, id
	}
	switch g.rng.IntN(8) {
	case 0, 1: // chain
		in, mid := g.block(depth - 1)
		in2, out := g.block(depth - 1)
		g.spec.NodeByID(mid).LinkTo(in2)
		return in, out
	case 2: // exclusive choice, merging at an activity
		x, merge := g.id("x"), g.id("m")
		xs := g.spec.Exclusive(x)
		k := 1 + g.rng.IntN(3)
		for i := range k {
			in, out := g.block(depth - 1)
			if i == k-1 {
				xs.LinkTo(in)
			} else {
				xs.LinkTo(in, flow.LinkWhen(g.cond()))
			}
			g.spec.NodeByID(out).LinkTo(merge)
		}
		g.spec.Activity(merge)
		return x, merge
	case 3, 4, 5: // parallel, inclusive, or an activity with several links
		s, j := g.id("p"), g.id("j")
		kind := g.rng.IntN(3)
		typ := []flow.NodeType{flow.Parallel, flow.Inclusive, flow.Activity}[kind]
		split := g.spec.Node(s, typ)
		if kind == 0 && g.rng.IntN(2) == 0 {
			split.SetMeta(flow.MetaBranchPolicy, "continue")
		}
		k := 2 + g.rng.IntN(2)
		for range k {
			in, out := g.block(depth - 1)
			if kind > 0 && g.rng.IntN(3) == 0 {
				split.LinkTo(in, flow.LinkWhen(g.cond()))
			} else {
				split.LinkTo(in)
			}
			g.spec.NodeByID(out).LinkTo(j)
		}
		g.spec.Node(j, typ)
		return s, j
	case 6: // loop
		if g.loops > 2 {
			return g.block(depth - 1)
		}
		g.loops++
		open, closing := g.id("l"), g.id("c")
		in, out := g.block(depth - 1)
		g.spec.Loop(open, "i"+open, fmt.Sprintf("0:%d", g.rng.IntN(4))).LinkTo(in)
		g.spec.NodeByID(out).LinkTo(closing)
		g.spec.Loop(closing, "", nil)
		return open, closing
	default:
		id := g.activity()
		return id, id
	}
}

func (g *propGen) graph(t *testing.T, id string, depth int) *flow.Graph {
	g.spec, g.n, g.loops = flow.NewSpec(id), 0, 0
	g.spec.Start("s")
	in, out := g.block(depth)
	g.spec.NodeByID("s").LinkTo(in)
	g.spec.NodeByID(out).LinkTo("e")
	g.spec.End("e")
	return build(t, g.spec)
}

// nowClock makes retries wait for nothing.
type nowClock struct{}

func (nowClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

// frontierChecker restores every frontier a run produces and resumes some of them.
type frontierChecker struct {
	t        *testing.T
	e        *flow.Engine
	g        *flow.Graph
	rng      *rand.Rand
	restored int
}

// restore restores st after a JSON round trip, as a store would keep it.
func (c *frontierChecker) restore(st flow.FrontierState, what string) *flow.Frontier {
	c.t.Helper()
	data, err := json.Marshal(st)
	require.NoError(c.t, err)
	var back flow.FrontierState
	require.NoError(c.t, json.Unmarshal(data, &back))
	fr, err := c.e.RestoreFrontier(c.g, back)
	require.NoError(c.t, err, "%s: %s", what, data)
	c.restored++
	return fr
}

// run evaluates (fr nil) or resumes fr over fc, checks every checkpoint's frontier and
// the result's, and goes on resuming from the result and from one checkpoint.
func (c *frontierChecker) run(fr *flow.Frontier, vars map[string]any, depth int) {
	c.t.Helper()
	var cps []flow.Checkpoint
	opts := []flow.EvalOption{flow.WithCheckpoint(func(_ context.Context, cp flow.Checkpoint) error {
		if len(cp.Frontier.Tokens) > 0 { // the checkpoint of the run's last node has none
			c.restore(cp.Frontier, fmt.Sprintf("checkpoint %d after %s", cp.Seq, cp.Node))
			cps = append(cps, cp)
		}
		return nil
	})}
	if c.rng.IntN(4) == 0 {
		opts = append(opts, flow.WithSteps(3+c.rng.IntN(20)))
	}
	if c.rng.IntN(6) == 0 { // sub-graph calls fail without running
		opts = append(opts, flow.WithEvalInterceptor(skipInvoke{calls: true}, 0))
	}
	fc := flow.NewContextWith("p", vars)
	var res *flow.Result
	if fr == nil {
		res, _ = c.e.EvalGraph(context.Background(), c.g, fc, opts...)
	} else {
		res, _ = c.e.Resume(context.Background(), fr, fc, opts...)
	}
	require.NotNil(c.t, res)
	if depth == 0 {
		return
	}
	if res.Frontier != nil {
		next := c.restore(res.Frontier.State(), "result "+string(res.Status))
		c.run(next, fc.Vars(), depth-1)
	}
	if len(cps) > 0 {
		cp := cps[c.rng.IntN(len(cps))]
		c.run(c.restore(cp.Frontier, "checkpoint"), cp.Vars, depth-1)
	}
}

// TestEveryFrontierRestores runs random graphs and checks that every frontier the
// engine produces (a stopped, suspended or failed run's, and every checkpoint's, on
// evaluation and on each resume) passes RestoreFrontier's checks after a JSON round
// trip: the checks reject corrupt states only. FRONTIER_SEED=n runs seed n alone.
func TestEveryFrontierRestores(t *testing.T) {
	defer goleak.VerifyNone(t)
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	restored := 0
	for seed := range seeds {
		if only := os.Getenv("FRONTIER_SEED"); only != "" && only != strconv.Itoa(seed) { // to reproduce one seed
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		e := flow.NewEngine(flow.WithClock(nowClock{}), flow.WithMaxConcurrency(rng.IntN(4)))
		gen := &propGen{rng: rng}
		for i := range rng.IntN(3) {
			sub := gen.graph(t, fmt.Sprintf("sub%d", i), 1+rng.IntN(2))
			require.NoError(t, e.Register(sub))
			gen.subs = append(gen.subs, sub.ID)
		}
		g := gen.graph(t, "main", 2+rng.IntN(3))
		vars := map[string]any{"v0": rng.IntN(6), "v1": rng.IntN(6), "v2": rng.IntN(6)}
		c := &frontierChecker{t: t, e: e, g: g, rng: rng}
		t.Run(strconv.Itoa(seed), func(t *testing.T) {
			c.t = t
			c.run(nil, vars, 4)
		})
		restored += c.restored
	}
	t.Logf("%d frontiers restored", restored)
}
