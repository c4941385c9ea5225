package session_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// counter counts node executions outside the flow context, as a side effect a real
// task would have (a mail sent, a row written), so a test can tell whether a node ran
// again after a resume.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func newCounter() *counter { return &counter{n: map[string]int{}} }

func (c *counter) add(id string) {
	c.mu.Lock()
	c.n[id]++
	c.mu.Unlock()
}

func (c *counter) get(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[id]
}

func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int, len(c.n))
	for k, v := range c.n {
		m[k] = v
	}
	return m
}

// approvalGraph is the leave request: the manager's task suspends until the variable
// "approved" is set, then the exclusive gateway routes on it. title lets a test change
// the definition (and so its hash).
func approvalGraph(t testing.TB, eng *flow.Engine, cnt *counter, title string) *flow.Graph {
	t.Helper()
	count := func(_ context.Context, _ *flow.Context, n *flow.Node) error {
		cnt.add(n.ID)
		return nil
	}
	s := flow.NewSpec("leave")
	s.Start("s").DoFunc(count).LinkTo("submit")
	s.Activity("submit").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		cnt.add(n.ID)
		c.Set("status", "submitted")
		return nil
	}).LinkTo("manager")
	s.Activity("manager").SetTitle(title).DoFunc(func(_ context.Context, c *flow.Context, n *flow.Node) error {
		cnt.add(n.ID)
		if _, ok := c.Get("approved"); !ok {
			c.Suspend("waiting for the manager")
		}
		return nil
	}).LinkTo("decide")
	s.Exclusive("decide").LinkTo("ok", flow.LinkWhen("approved == true")).LinkTo("rejected")
	s.Activity("ok").SetTask(`context.put("status", "approved")`).LinkTo("e")
	s.Activity("rejected").SetTask(`context.put("status", "rejected")`).LinkTo("e")
	s.End("e").DoFunc(count)
	g, err := s.Build()
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
	return g
}

// expireLease makes the lease of the running instance id expire, as it does once the
// process that holds it has died and the lease's time to live has passed.
func expireLease(t *testing.T, store session.Store, id string) {
	t.Helper()
	snap, err := store.Load(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, session.StatusRunning, snap.Status)
	require.NotNil(t, snap.Lease, "a running instance has a lease")
	snap.Lease.Expiry = time.Now().Add(-time.Second)
	require.NoError(t, store.Save(t.Context(), snap, snap.Version))
}
