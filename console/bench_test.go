package console_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/console"
	"github.com/flowteam/flowteam/trace"
)

// bigAudit writes n node records of instance "big" of graph order: a run that went
// round check, pack and ship n/6 times.
func bigAudit(t testing.TB, n int) string {
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	nodes := []string{"check", "pack", "ship"}
	var b []byte
	for i := range n {
		rec := trace.Record{Seq: int64(i + 1), Time: at.Add(time.Duration(i) * time.Millisecond), Status: trace.Started,
			GraphID: "order", Path: "order", NodeID: nodes[(i/2)%3], NodeType: "activity", InstanceID: "big",
			RunID: "r1", BranchID: "main"}
		if i%2 == 1 {
			rec.Status, rec.Duration, rec.Step = trace.Completed, time.Millisecond, i/2+1
		}
		b = rec.AppendJSON(b[:0])
		w.Write(append(b, '\n'))
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	return path
}

// BenchmarkInstancePage10k renders the page of an instance with 10,000 audit
// records (the file already read); the target is at most 300 ms a page.
func BenchmarkInstancePage10k(b *testing.B) {
	f := newFixture(b, false)
	srv, err := console.New(console.Config{Engine: f.eng, Store: f.store, Audit: bigAudit(b, 10000),
		Logger: discardLogger()})
	require.NoError(b, err)
	defer srv.Close()
	get := func() {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, httptest.NewRequest("GET", "/instances/big", nil))
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body.String())
		}
	}
	get()
	b.ReportAllocs()
	for b.Loop() {
		get()
	}
}
