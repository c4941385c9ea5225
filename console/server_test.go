package console_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/console"
	"github.com/flowteam/flowteam/trace"
)

func decode(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	return m
}

func TestGraphHandlers(t *testing.T) {
	f := newFixture(t, false)
	w := f.do(t, "GET", "/graphs", "", "")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), `href="/graphs/leave-approval"`)

	w = f.do(t, "GET", "/graphs/order", "", "")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), "<svg")
	assert.Contains(t, w.Body.String(), "id: order")
	assert.NotContains(t, w.Body.String(), "<?xml")

	assert.Equal(t, http.StatusNotFound, f.do(t, "GET", "/graphs/nope", "", "").Code)
	assert.Equal(t, http.StatusNotFound, f.do(t, "GET", "/api/graphs/nope", "", "").Code)

	w = f.do(t, "GET", "/api/graphs", "", "")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Len(t, decode(t, w.Body.String())["graphs"], 3)

	w = f.do(t, "GET", "/api/graphs/order?format=svg", "", "")
	assert.Equal(t, "image/svg+xml", w.Header().Get("Content-Type"))
	w = f.do(t, "GET", "/api/graphs/order", "", "")
	assert.Equal(t, "order", decode(t, w.Body.String())["id"])
	w = f.do(t, "GET", "/api/graphs/order?format=yaml", "", "")
	assert.True(t, strings.HasPrefix(w.Body.String(), "id: order"), w.Body.String())
	assert.Equal(t, http.StatusBadRequest, f.do(t, "GET", "/api/graphs/order?format=gif", "", "").Code)
}

func TestInstanceListFiltersAndPages(t *testing.T) {
	f := newFixture(t, false)
	w := f.do(t, "GET", "/api/instances", "", "")
	require.Equal(t, http.StatusOK, w.Code)
	m := decode(t, w.Body.String())
	assert.EqualValues(t, 3, m["total"])

	m = decode(t, f.do(t, "GET", "/api/instances?status=failed", "", "").Body.String())
	require.Len(t, m["instances"], 1)
	assert.Equal(t, "o-fail", m["instances"].([]any)[0].(map[string]any)["id"])

	m = decode(t, f.do(t, "GET", "/api/instances?offset=1&limit=1", "", "").Body.String())
	require.Len(t, m["instances"], 1)
	assert.Equal(t, "o-ok", m["instances"].([]any)[0].(map[string]any)["id"])

	assert.Equal(t, http.StatusBadRequest, f.do(t, "GET", "/api/instances?status=lost", "", "").Code)
	assert.Equal(t, http.StatusBadRequest, f.do(t, "GET", "/api/instances?limit=x", "", "").Code)

	w = f.do(t, "GET", "/instances?status=completed", "", "")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), `href="/instances/o-ok"`)
	assert.NotContains(t, w.Body.String(), `href="/instances/o-fail"`)
	w = f.do(t, "GET", "/instances?limit=1", "", "")
	assert.Contains(t, w.Body.String(), `offset=1`)
}

func TestInstancePageShowsTheRun(t *testing.T) {
	f := newFixture(t, false)
	w := f.do(t, "GET", "/instances/o-fail", "", "")
	require.Equal(t, http.StatusOK, w.Code)
	body := w.Body.String()
	assert.Contains(t, body, `id="node_bill" class="node failed`)
	assert.Contains(t, body, `href="/instances/o-fail?path=order%2Fbill%2Fpayment"`)
	assert.Contains(t, body, "card_declined")
	assert.Contains(t, body, `<table id="timeline">`)
	assert.NotContains(t, body, "data-events=", "a failed run does not change by itself")
	assert.Equal(t, 1+22, strings.Count(body[strings.Index(body, `id="timeline"`):], "<tr"), "header and 22 records")

	w = f.do(t, "GET", "/instances/o-fail?path=order/bill/payment", "", "")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), `id="node_charge" class="node failed"`)

	assert.Equal(t, http.StatusBadRequest, f.do(t, "GET", "/instances/o-fail?path=order/x/y", "", "").Code)
	assert.Equal(t, http.StatusNotFound, f.do(t, "GET", "/instances/nobody", "", "").Code)
	assert.Equal(t, http.StatusNotFound, f.do(t, "GET", "/api/instances/nobody", "", "").Code)

	w = f.do(t, "GET", "/instances/o-fail/picture", "", "")
	assert.Equal(t, "image/svg+xml", w.Header().Get("Content-Type"))
	w = f.do(t, "GET", "/api/instances/o-fail?format=svg", "", "")
	assert.Contains(t, w.Body.String(), "<svg")
}

func TestInstanceAPIRedactsVariables(t *testing.T) {
	f := newFixture(t, false)
	w := f.do(t, "GET", "/api/instances/o-fail", "", "")
	require.Equal(t, http.StatusOK, w.Code)
	assert.NotContains(t, w.Body.String(), "hunter2-secret")
	m := decode(t, w.Body.String())
	vars := m["vars"].(map[string]any)
	assert.Equal(t, "***", vars["password"])
	assert.EqualValues(t, 500, vars["amount"])
	assert.Equal(t, "failed", m["status"])
	assert.NotEmpty(t, m["errors"])
	assert.NotEmpty(t, m["audit"])

	assert.NotContains(t, f.do(t, "GET", "/instances/o-fail", "", "").Body.String(), "hunter2-secret")
}

func TestWorkflowInstanceShowsTasksAndHistory(t *testing.T) {
	f := newFixture(t, false)
	m := decode(t, f.do(t, "GET", "/api/instances/req-1", "", "").Body.String())
	assert.Equal(t, true, m["workflow"])
	assert.Equal(t, "running", m["status"])
	tasks := m["tasks"].([]any)
	require.Len(t, tasks, 1)
	assert.Equal(t, "lead", tasks[0].(map[string]any)["node"])
	assert.Len(t, m["history"], 1)
	assert.NotContains(t, m["vars"], "$workflow")

	body := f.do(t, "GET", "/instances/req-1", "", "").Body.String()
	assert.Contains(t, body, `id="node_lead" class="node waiting frontier"`)
	assert.Contains(t, body, `id="node_file" class="node visited"`)
}

func TestReadOnlyWithoutUsers(t *testing.T) {
	f := newFixture(t, false)
	w := f.do(t, "POST", "/api/tasks/claim", "", `{"graph":"leave-approval","instance":"req-1"}`)
	assert.Equal(t, http.StatusForbidden, w.Code)
	assert.Contains(t, w.Body.String(), "read-only")
	m := decode(t, f.do(t, "GET", "/api/tasks", "", "").Body.String())
	assert.Empty(t, m["tasks"])
	assert.Contains(t, f.do(t, "GET", "/tasks", "", "").Body.String(), "read-only")
}

func TestLoopbackConsoleRefusesOtherHosts(t *testing.T) {
	f := newFixture(t, false)
	w := f.do(t, "GET", "/graphs", "", "", "Host", "evil.example:8080")
	assert.Equal(t, http.StatusMisdirectedRequest, w.Code)
	w = f.do(t, "GET", "/graphs", "", "", "Host", "localhost:8080")
	assert.Equal(t, http.StatusOK, w.Code)
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "localhost:80": true, "[::1]:8080": true,
		":8080": false, "0.0.0.0:8080": false, "10.0.0.1:80": false, "example.com:80": false} {
		assert.Equal(t, want, console.IsLoopback(addr), addr)
	}
}

func TestInstancePageEscapesTheTimeline(t *testing.T) {
	f := newFixture(t, false)
	path := filepath.Join(t.TempDir(), "evil.jsonl")
	rec := trace.Record{Seq: 1, Time: time.Now(), Status: trace.Suspended, GraphID: "order", Path: "order", NodeID: "check",
		InstanceID: "evil", RunID: "r1", BranchID: "main", Reason: `<script>alert(1)</script>`}
	require.NoError(t, os.WriteFile(path, append(rec.AppendJSON(nil), '\n'), 0o644))
	srv, err := console.New(console.Config{Engine: f.eng, Store: f.store, Audit: path, Logger: discardLogger()})
	require.NoError(t, err)
	defer srv.Close()
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, httptest.NewRequest("GET", "/instances/evil", nil))
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.NotContains(t, w.Body.String(), "<script>alert")
}
