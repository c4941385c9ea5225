package openai_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team/openai"
	"github.com/flowteam/flowteam/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-test-secret"

// fakeClock records the waits between retries instead of sleeping.
type fakeClock struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeClock) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

func (f *fakeClock) Waits() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.waits...)
}

// server is an httptest server whose handler is given per test; it records the
// request bodies and Authorization headers.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	auth   []string
}

func newServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(data, &body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		n := len(s.bodies)
		s.mu.Unlock()
		h(w, r, n)
	}))
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
		http.DefaultClient.CloseIdleConnections()
	})
	return s
}

func (s *server) Bodies() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies
}

func (s *server) Auth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth
}

// testRetry retries twice, waiting 1s then 2s, without jitter.
var testRetry = flow.RetryPolicy{Max: 3, Backoff: time.Second, MaxBackoff: 10 * time.Second, NoJitter: true}

// client returns a model on url with testRetry and a fake clock; opts come after
// those and may replace them.
func client(t *testing.T, url string, opts ...openai.Option) (*openai.Model, *fakeClock) {
	t.Helper()
	clk := &fakeClock{}
	all := append([]openai.Option{openai.WithBaseURL(url + "/v1/"), openai.WithAPIKey(testKey),
		openai.WithRetry(testRetry), openai.WithClock(clk)}, opts...)
	m, err := openai.New("gpt-test", all...)
	require.NoError(t, err)
	return m, clk
}

func writeJSON(w http.ResponseWriter, status int, v string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, v)
}

// sse writes server-sent events, flushing each.
func sse(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for _, l := range lines {
		_, _ = io.WriteString(w, l)
		w.(http.Flusher).Flush()
	}
}

// counter is a trace.CounterSink.
type counter struct {
	mu sync.Mutex
	n  map[trace.Counter]int
}

func (c *counter) Count(k trace.Counter, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[trace.Counter]int{}
	}
	c.n[k] += n
}

func (c *counter) Get(k trace.Counter) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}
