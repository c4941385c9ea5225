package interceptor_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// Random graphs and task behaviors for TestAuditInvariantRandomized.

type behavior int

const (
	bNoop behavior = iota
	bSet
	bSpin // spins until cancelled or a bound; the "slow sibling" of fail-fast
	bStop
	bInterrupt
	bSuspend
	bPanic
	bFail
	bRecoverable
	bRetryable
	bCancel
	bCount
)

var behaviorNames = [...]string{"noop", "set", "spin", "stop", "interrupt", "suspend", "panic", "fail", "recoverable", "retryable", "cancel"}

// pickBehavior mostly returns harmless behaviors, so graphs run far enough for events
// to meet.
func pickBehavior(rng *rand.Rand) behavior {
	if rng.IntN(100) < 85 {
		return behavior(rng.IntN(3)) // noop, set, spin
	}
	return behavior(3 + rng.IntN(int(bCount)-3))
}

type cancelKey struct{}

// task returns the Go task of a behavior. Stop, suspend and cancel fire once per
// instance (so resuming makes progress), the others every time.
func task(b behavior) flow.TaskFunc {
	once := func(c *flow.Context, n *flow.Node) bool {
		first := false
		c.Update("fired:"+n.Graph().ID+":"+n.ID, func(old any, ok bool) any {
			first = !ok
			return true
		})
		return first
	}
	return func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		switch b {
		case bSet:
			c.Update("count", func(old any, _ bool) any { v, _ := old.(int); return v + 1 })
		case bSpin:
			for range 200 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				default:
					runtime.Gosched()
				}
			}
		case bStop:
			if once(c, n) {
				c.Stop()
			}
		case bInterrupt:
			c.Interrupt()
		case bSuspend:
			if once(c, n) {
				c.Suspend("waiting at " + n.ID + " password=hunter2")
			}
		case bPanic:
			panic("boom at " + n.ID)
		case bFail:
			return fmt.Errorf("fatal at %s: token=abc123", n.ID)
		case bRecoverable:
			return flow.NewRecoverableError("soft failure at " + n.ID)
		case bRetryable:
			return &flow.Error{Code: "TRANSIENT", Message: "try again", Retry: true}
		case bCancel:
			if once(c, n) {
				if cancel, ok := ctx.Value(cancelKey{}).(context.CancelFunc); ok {
					cancel()
				}
			}
		}
		return nil
	}
}

// graphGen builds block-structured random graphs.
type graphGen struct {
	rng    *rand.Rand
	spec   *flow.GraphSpec
	n      int
	subIDs []string      // registered sub-graphs callable by "#id"
	subs   []*flow.Graph // sub-graphs callable by value
	loops  int
}

func (g *graphGen) id(prefix string) string {
	g.n++
	return prefix + strconv.Itoa(g.n)
}

func (g *graphGen) activity() string {
	id := g.id("a")
	ns := g.spec.Activity(id)
	switch r := g.rng.IntN(100); {
	case r < 8 && len(g.subIDs) > 0:
		ns.SetTask("#" + g.subIDs[g.rng.IntN(len(g.subIDs))])
	case r < 12 && len(g.subs) > 0:
		ns.Do(flow.Call(g.subs[g.rng.IntN(len(g.subs))]))
	case r < 15:
		ns.SetTask(`context.put("s", 1)`) // a script task
	default:
		b := pickBehavior(g.rng)
		ns.DoFunc(task(b)).SetTitle(behaviorNames[b])
		if b == bRetryable || g.rng.IntN(10) == 0 {
			ns.SetMeta(flow.MetaRetry, flow.RetryPolicy{Max: 1 + g.rng.IntN(3), Backoff: time.Millisecond})
			ns.SetMeta(flow.MetaIdempotent, true)
		}
	}
	if g.rng.IntN(15) == 0 {
		ns.SetWhen(fmt.Sprintf("v%d > %d", g.rng.IntN(4), g.rng.IntN(10)))
	}
	return id
}

func (g *graphGen) cond() string {
	if g.rng.IntN(25) == 0 {
		return "missing + 1 > 0" // does not evaluate: a condition error
	}
	return fmt.Sprintf("v%d %s %d", g.rng.IntN(4), []string{">", "<", "==", ">="}[g.rng.IntN(4)], g.rng.IntN(10))
}

// block adds a single-entry, single-exit block and returns its entry and exit ids.
func (g *graphGen) block(depth int) (string, string) {
	if depth <= 0 {
		id := g.activity()
		return id, id
	}
	switch g.rng.IntN(7) {
	case 0, 1: // chain
		in, mid := g.block(depth - 1)
		in2, out := g.block(depth - 1)
		g.spec.NodeByID(mid).LinkTo(in2)
		return in, out
	case 2: // exclusive, merging at an activity
		x, merge := g.id("x"), g.id("m")
		xs := g.spec.Exclusive(x)
		k := 1 + g.rng.IntN(3)
		deflt := g.rng.IntN(4) != 0
		for i := range k {
			in, out := g.block(depth - 1)
			if i == k-1 && deflt {
				xs.LinkTo(in)
			} else {
				xs.LinkTo(in, flow.LinkWhen(g.cond()), flow.LinkPriority(g.rng.IntN(3)))
			}
			g.spec.NodeByID(out).LinkTo(merge)
		}
		g.spec.Activity(merge).DoFunc(task(bNoop))
		return x, merge
	case 3, 4: // parallel or inclusive split/join
		inclusive := g.rng.IntN(2) == 0
		s, j := g.id("p"), g.id("j")
		typ := flow.Parallel
		if inclusive {
			typ = flow.Inclusive
		}
		split := g.spec.Node(s, typ)
		if !inclusive && g.rng.IntN(3) == 0 {
			split.SetMeta(flow.MetaBranchPolicy, "continue")
		}
		k := 2 + g.rng.IntN(3)
		for range k {
			in, out := g.block(depth - 1)
			if inclusive && g.rng.IntN(3) != 0 {
				split.LinkTo(in, flow.LinkWhen(g.cond()))
			} else {
				split.LinkTo(in)
			}
			g.spec.NodeByID(out).LinkTo(j)
		}
		g.spec.Node(j, typ)
		return s, j
	case 5: // loop
		if g.loops > 2 {
			return g.block(depth - 1)
		}
		g.loops++
		open, closing := g.id("l"), g.id("c")
		in, out := g.block(depth - 1)
		g.spec.Loop(open, "item"+open, fmt.Sprintf("0:%d", g.rng.IntN(4))).LinkTo(in)
		g.spec.NodeByID(out).LinkTo(closing)
		g.spec.Loop(closing, "", nil)
		return open, closing
	default:
		id := g.activity()
		return id, id
	}
}

func (g *graphGen) graph(t testing.TB, id string, depth int) *flow.Graph {
	g.spec, g.n, g.loops = flow.NewSpec(id), 0, 0
	g.spec.Start("s")
	in, out := g.block(depth)
	g.spec.NodeByID("s").LinkTo(in)
	g.spec.NodeByID(out).LinkTo("e")
	g.spec.End("e")
	gr, err := g.spec.Build()
	require.NoError(t, err)
	return gr
}
