package session_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
