package session_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// TestPerNodeSnapshotsStayIndependent runs a chain with per-node durability whose
// nodes set, delete and mutate in place (without Set) variables, and checks that each
// node loads exactly what the previous node left, that snapshots loaded earlier are
// not changed by later checkpoints (which recycle their maps and keep unchanged
// values), and, with a reader loading all the time, that nothing races (-race).
func TestPerNodeSnapshotsStayIndependent(t *testing.T) {
	const nodes = 12
	for _, name := range []string{"memory", "file"} {
		t.Run(name, func(t *testing.T) {
			var store session.Store = session.NewMemoryStore()
			if name == "file" {
				fs, err := session.NewFileStore(t.TempDir())
				require.NoError(t, err)
				store = fs
			}
			ctx := context.Background()
			// want[i] is the variables after node i.
			want := make([]map[string]any, nodes+1)
			want[0] = map[string]any{"step": int64(0), "list": []any{int64(0), "x"}, "fixed": map[string]any{"a": []any{"b"}}}
			for i := 1; i <= nodes; i++ {
				w := map[string]any{"step": int64(i), "list": []any{int64(i), "x"}, "fixed": map[string]any{"a": []any{"b"}}}
				if i%3 == 1 {
					w["extra"] = fmt.Sprint(i)
				}
				want[i] = w
			}
			var loaded []*session.Snapshot
			eng := flow.NewEngine()
			s := flow.NewSpec("mut")
			s.Start("s").LinkTo("n1")
			for i := 1; i <= nodes; i++ {
				next := fmt.Sprintf("n%d", i+1)
				if i == nodes {
					next = "e"
				}
				s.Activity(fmt.Sprintf("n%d", i)).DoFunc(func(ctx context.Context, c *flow.Context, _ *flow.Node) error {
					snap, err := store.Load(ctx, "mut-1")
					if err != nil {
						return err
					}
					if i > 1 { // the claim is before the start node; its checkpoint has step 0 too
						if !assert.Equal(t, want[i-1], snap.Vars, "node %d loads what node %d left", i, i-1) {
							return fmt.Errorf("node %d: wrong snapshot", i)
						}
					}
					loaded = append(loaded, snap)
					c.Set("step", int64(i))
					if i%2 == 0 {
						c.Value("list").([]any)[0] = int64(i) // in place: the checkpoint must see it
					} else {
						c.Set("list", []any{int64(i), "x"})
					}
					if i%3 == 1 {
						c.Set("extra", fmt.Sprint(i))
					} else {
						c.Delete("extra")
					}
					return nil
				}).LinkTo(next)
			}
			s.End("e")
			g, err := s.Build()
			require.NoError(t, err)
			require.NoError(t, eng.Register(g))

			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if snap, err := store.Load(ctx, "mut-1"); err == nil {
						_ = fmt.Sprint(snap.Vars, snap.Trace, snap.Frontier) // read it all
					}
				}
			})
			r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))
			fc := flow.NewContextWith("mut-1", map[string]any{"step": int64(0), "list": []any{int64(0), "x"}, "fixed": map[string]any{"a": []any{"b"}}})
			res, err := r.Run(ctx, "mut", fc)
			close(stop)
			wg.Wait()
			require.NoError(t, err)
			require.Equal(t, flow.StatusCompleted, res.Status)
			require.Len(t, loaded, nodes)
			for i, snap := range loaded[1:] {
				assert.Equal(t, want[i+1], snap.Vars, "snapshot loaded by node %d, after the run", i+2)
			}
			final, err := store.Load(ctx, "mut-1")
			require.NoError(t, err)
			assert.Equal(t, want[nodes], final.Vars)
		})
	}
}

// loaded is what a node saw in the store: the variables and the frontier of the last
// checkpoint.
type loaded struct {
	Vars     map[string]any
	Frontier *flow.FrontierState
}

// perNodeHistory runs a loop whose body changes variables of many kinds (set,
// deleted, changed in place, values that are not canonical) with per-node
// durability, and returns what every node loaded from the store, then the outcome.
func perNodeHistory(t *testing.T, store session.Store, opts ...session.Option) []loaded {
	t.Helper()
	ctx := t.Context()
	var (
		r       *session.Runner
		history []loaded
		n       int
	)
	record := func(ctx context.Context) error {
		snap, err := r.Load(ctx, "diff-1")
		if err != nil {
			return err
		}
		history = append(history, loaded{snap.Vars, snap.Frontier})
		return nil
	}
	eng := flow.NewEngine()
	s := flow.NewSpec("diff")
	s.Start("s").DoFunc(func(ctx context.Context, c *flow.Context, _ *flow.Node) error {
		c.Set("list", []any{0, "a", []any{1.5}})
		c.Set("obj", map[string]any{"inner": []any{"x", "y"}, "n": 1})
		return record(ctx)
	}).LinkTo("loop")
	items := []any{1, 2.0, "three\xff", []string{"four"}, map[string]string{"five": "5"}, int8(6), 7.5, nil, true, uint64(10)}
	s.Loop("loop", "item", items).LinkTo("work")
	s.Activity("work").DoFunc(func(ctx context.Context, c *flow.Context, _ *flow.Node) error {
		if err := record(ctx); err != nil {
			return err
		}
		n++
		switch n % 6 {
		case 0:
			c.Set("n", n)
			c.Set("u", uint64(n))
		case 1:
			c.Set("f", float64(n))
			c.Set("g", float64(n)+0.5)
			c.Set("nil list", []any(nil))
		case 2:
			c.Value("list").([]any)[0] = n // in place, without Set
			c.Value("list").([]any)[2].([]any)[0] = float64(n) / 4
		case 3:
			c.Set("ss", []string{"a\xff", fmt.Sprint(n)})
			c.Set("ms", map[string]string{"k": fmt.Sprint(n)})
		case 4:
			c.Delete("ss")
			c.Set("t", time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)).Add(time.Duration(n)*time.Hour))
			c.Set("p", point{X: n, Y: "é\xfe"})
		case 5:
			c.Value("obj").(map[string]any)["inner"].([]any)[1] = fmt.Sprint("y", n)
			c.Value("obj").(map[string]any)["added"] = n
			c.Delete("f")
		}
		c.Set("last item", c.Value("item"))
		return nil
	}).LinkTo("close")
	s.Loop("close", "", nil).LinkTo("after")
	s.Activity("after").DoFunc(func(ctx context.Context, c *flow.Context, _ *flow.Node) error {
		return record(ctx)
	}).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
	r = session.NewRunner(eng, store, append([]session.Option{session.WithDurability(session.PerNode)}, opts...)...)
	res, err := r.Run(ctx, "diff", flow.NewContextWith("diff-1", map[string]any{"start": 3.0}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	require.NoError(t, record(ctx))
	return history
}

// TestPerNodeStoresAgree holds the memory store's per-node fast paths (variables
// copied and made canonical as the engine hands them over, values kept from the last
// checkpoint, the frontier converted in place, maps recycled) to the stores that
// encode and decode every checkpoint: every node of the same run loads the same
// variables and frontier from each of them.
func TestPerNodeStoresAgree(t *testing.T) {
	key := []byte("0123456789abcdef")
	c, err := session.NewCipher(key)
	require.NoError(t, err)
	want := perNodeHistory(t, allStores()["file"](t))
	require.Len(t, want, 1+10+1+1)
	runs := map[string]func(t *testing.T) []loaded{
		"memory": func(t *testing.T) []loaded { return perNodeHistory(t, session.NewMemoryStore()) },
		"memory, redacting": func(t *testing.T) []loaded {
			return perNodeHistory(t, session.NewMemoryStore(), session.WithRedaction("absent"))
		},
		"memory, sealed": func(t *testing.T) []loaded { return perNodeHistory(t, session.NewMemoryStore(), session.WithCipher(c)) },
		"miniredis":      func(t *testing.T) []loaded { return perNodeHistory(t, allStores()["miniredis"](t)) },
	}
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			got := run(t)
			require.Len(t, got, len(want))
			for i := range want {
				assert.Equal(t, want[i].Vars, got[i].Vars, "load %d", i)
				assert.Equal(t, want[i].Frontier, got[i].Frontier, "load %d", i)
			}
		})
	}
}
