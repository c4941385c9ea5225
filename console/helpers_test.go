package console_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/console"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/workflow"
)

// Tokens of the test users.
const (
	leadToken     = "lead-token-0123456789"
	employeeToken = "employee-token-0123456789"
	adminToken    = "admin-token-0123456789"
)

const leaveYML = "testdata/leave.yml"

// fixture is a console over a memory store holding:
//   - o-fail: an order whose payment failed (card_declined), in the store and the audit;
//   - o-ok: an order that completed;
//   - req-1: a leave request the employee filed, waiting for the lead.
type fixture struct {
	srv   *console.Server
	store *session.MemoryStore
	eng   *flow.Engine
	audit string
	cfg   console.Config // the configuration of srv
}

func newFixture(t testing.TB, withUsers bool) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{store: session.NewMemoryStore(), audit: filepath.Join(dir, "audit.jsonl")}
	out, err := os.Create(f.audit)
	require.NoError(t, err)
	defer out.Close()
	sink := interceptor.NewJSONL(out)
	f.eng = flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(sink)), 0))
	_, err = f.eng.LoadFiles("testdata/order.yml", "testdata/payment.yml", leaveYML)
	require.NoError(t, err)
	r := session.NewRunner(f.eng, f.store)
	ctx := context.Background()
	_, _ = r.Run(ctx, "order", flow.NewContextWith("o-fail", map[string]any{"amount": 500, "password": "hunter2-secret"}))
	_, err = r.Run(ctx, "order", flow.NewContextWith("o-ok", map[string]any{"amount": 50}))
	require.NoError(t, err)
	require.NoError(t, sink.Close())

	x := workflow.NewExecutor(f.eng, workflow.NewActorController(), workflow.NewStoreRepository(f.store))
	_, err = x.ClaimTask(ctx, "leave-approval", "req-1", workflow.As("actor", "employee"), map[string]any{"days": 3})
	require.NoError(t, err)
	_, err = x.SubmitTask(ctx, "leave-approval", "req-1", workflow.Submit{Node: "file", Action: workflow.Forward,
		Actor: workflow.As("actor", "employee")})
	require.NoError(t, err)

	cfg := console.Config{Engine: f.eng, Store: f.store, Audit: f.audit, Poll: 10 * time.Millisecond,
		Sources:  map[string]string{"order": "id: order\n"},
		Redactor: redact.New(redact.Secrets("employeeName")),
		Logger:   discardLogger(), Loopback: true}
	if withUsers {
		cfg.Users, err = console.NewUsers(map[string]console.User{
			leadToken: {Actor: "lead"}, employeeToken: {Actor: "employee"}, adminToken: {Actor: "hr", Admin: true}})
		require.NoError(t, err)
	}
	f.cfg = cfg
	f.srv, err = console.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// do serves one request; token, if not empty, goes as a bearer token.
func (f *fixture) do(t testing.TB, method, target, token, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if strings.HasPrefix(body, "{") {
		req.Header.Set("Content-Type", "application/json")
	} else if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Host = "localhost"
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		}
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, req)
	return w
}

var _ http.Handler = (*console.Server)(nil)

// countingStore counts the snapshots loaded from a store.
type countingStore struct {
	session.Store
	loads atomic.Int64
}

func (c *countingStore) Load(ctx context.Context, id string) (*session.Snapshot, error) {
	c.loads.Add(1)
	return c.Store.Load(ctx, id)
}

// countingServer returns a console configured as f.srv over f's store counted.
func (f *fixture) countingServer(t testing.TB) (*console.Server, *countingStore) {
	t.Helper()
	cs := &countingStore{Store: f.store}
	cfg := f.cfg
	cfg.Store = cs
	srv, err := console.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv, cs
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
