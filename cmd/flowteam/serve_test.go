package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

func TestServeRefusesBadStarts(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.json")
	require.NoError(t, os.WriteFile(short, []byte(`{"abc": {"actor": "lead"}}`), 0o600))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--store", "memory:"}, "no definition file given"},
		{[]string{leaveYML}, "--store is required"},
		{[]string{leaveYML, "--store", "memory:", "--addr", "0.0.0.0:8080"}, "is not loopback: give --users"},
		{[]string{leaveYML, "--store", "memory:", "--addr", ":8080"}, "is not loopback"},
		{[]string{leaveYML, "--store", "memory:", "--users", short}, "shorter than 16"},
		{[]string{leaveYML, "--store", "memory:", "--users", filepath.Join(dir, "none.json")}, "users file"},
	}
	for _, tt := range tests {
		code, _, stderr := call(t, cmdServe, tt.args...)
		assert.Equal(t, exitUsage, code, tt.args)
		assert.Contains(t, stderr, tt.want, tt.args)
	}
}

func TestServeHelp(t *testing.T) {
	code, stdout, _ := call(t, cmdServe, "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "flowteam serve DEFS --store DSN")
}

// An instance "flowteam task" stored masked (--redact employee, --redact-pattern)
// stays masked through the console: a submit through the JSON API that sets the name
// again and quotes it and a card number in a comment leaves neither in the store,
// which keeps the recorded rules; no page, JSON answer, event or error message of
// the console shows them, serve given no --redact.
func TestServeKeepsTheRulesTaskRecorded(t *testing.T) {
	const name, card = "Ada Lovelace", "card-4242"
	dir := t.TempDir()
	sessions := filepath.Join(dir, "sessions")
	store := "file:" + sessions
	bad := filepath.Join(dir, "bad.yml")
	require.NoError(t, os.WriteFile(bad, []byte(`id: bad
layout:
  - {id: s, type: start, link: a}
  - {id: a, meta: {actor: employee}, task: 'context.put("n", int(employee))', link: e}
  - {id: e, type: end}
`), 0o644))
	for _, args := range [][]string{
		{"claim", leaveApprovalYML, "--instance", "req-1", "--store", store, "--actor", "employee", "--set", "days=8",
			"--set", `employee="` + name + `"`, "--redact", "employee", "--redact-pattern", `card-\d+`},
		{"claim", bad, "--instance", "bad-1", "--store", store, "--actor", "employee", "--redact", "employee"},
	} {
		code, _, stderr := taskCmd(t, args...)
		require.Equal(t, exitOK, code, stderr)
	}
	users := filepath.Join(dir, "users.json")
	require.NoError(t, os.WriteFile(users, []byte(`{"employee-token-0123456789": {"actor": "employee"},
		"lead-token-0123456789": {"actor": "lead"}}`), 0o600))
	srv, _, closeFn, err := newConsole(serveConfig{dsn: store, addr: "127.0.0.1:0", users: users, actorKey: "actor",
		files: []string{leaveApprovalYML, bad}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	defer closeFn()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	do := func(method, path, token, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := hs.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b)
	}
	seen := map[string]string{}
	code, body := do("POST", "/api/tasks/submit", "employee-token-0123456789", `{"graph":"leave-approval",
		"instance":"req-1","node":"file","action":"forward","vars":{"employee":"`+name+`","note":"leave for `+name+`"},
		"comment":"filed by `+name+`, pay with `+card+`"}`)
	require.Equal(t, http.StatusOK, code, body)
	seen["submit"] = body
	code, body = do("POST", "/api/tasks/submit", "employee-token-0123456789", `{"graph":"bad","instance":"bad-1",
		"node":"a","action":"forward","vars":{"employee":"`+name+`"}}`)
	require.Equal(t, http.StatusUnprocessableEntity, code, body)
	assert.Contains(t, body, "int(***)", "the script's error quotes the value")
	seen["failed submit"] = body

	raw, err := os.ReadFile(filepath.Join(sessions, "req-1.json"))
	require.NoError(t, err)
	seen["store"] = string(raw)
	var snap struct {
		Meta     []string `json:"meta"`
		Redacted []string `json:"redacted"`
	}
	require.NoError(t, json.Unmarshal(raw, &snap))
	assert.ElementsMatch(t, []string{"redact=employee", `redact-pattern=card-\d+`}, snap.Meta)
	assert.Contains(t, snap.Redacted, "employee")
	assert.Contains(t, string(raw), "filed by ***, pay with ***")

	for _, path := range []string{"/instances/req-1", "/api/instances/req-1", "/instances", "/api/instances",
		"/tasks", "/api/tasks", "/instances/req-1/picture", "/instances/bad-1", "/api/instances/bad-1"} {
		code, body := do("GET", path, "lead-token-0123456789", "")
		require.Equal(t, http.StatusOK, code, "%s: %s", path, body)
		seen[path] = body
	}
	assert.Contains(t, seen["/api/instances/req-1"], `"note": "leave for ***"`)
	seen["events"] = firstEvent(t, hs, "/instances/req-1/events", "lead-token-0123456789")
	addFiles(t, seen, sessions)
	for what, text := range seen {
		assert.NotContains(t, strings.ToLower(text), "lovelace", what)
		assert.NotContains(t, text, card, what)
	}
}

// firstEvent reads the first server-sent event of path and ends the stream.
func firstEvent(t *testing.T, hs *httptest.Server, path, token string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", hs.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := hs.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	var ev strings.Builder
	for sc.Scan() && sc.Text() != "" {
		ev.WriteString(sc.Text() + "\n")
	}
	require.Contains(t, ev.String(), "event: change")
	return ev.String()
}

// serve takes --redact and --redact-pattern as task does; a pattern that does not
// compile is bad usage.
func TestServeRedactFlags(t *testing.T) {
	cfg, _, err := parseServeArgs([]string{leaveApprovalYML, "--store", "memory:", "--redact", "a,b", "--redact-pattern", `x\d+`})
	require.NoError(t, err)
	flags, red, err := serveRedactor(cfg)
	require.NoError(t, err)
	rd, err := serveRedaction(flags, red)(nil)
	require.NoError(t, err)
	assert.True(t, rd.Store)
	assert.Equal(t, []string{"redact=a", "redact=b", `redact-pattern=x\d+`}, rd.Meta)
	assert.Equal(t, "id ***", rd.Redactor.String("id x42"))
	same, err := serveRedaction(flags, red)(&session.Snapshot{Instance: "i", Meta: []string{"redact=a"}})
	require.NoError(t, err)
	assert.Same(t, red, same.Redactor, "an instance recording no rule beyond the flags gets their Redactor")
	own, err := serveRedaction(flags, red)(&session.Snapshot{Instance: "i", Redacted: []string{"c"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"redact=a", "redact=b", "redact=c", `redact-pattern=x\d+`}, own.Meta)
	assert.True(t, own.Redactor.Sensitive("c") && own.Redactor.Sensitive("a"), "the flags' rules and the instance's")
	assert.Equal(t, "id ***", own.Redactor.String("id x42"))
	assert.False(t, red.Sensitive("c"), "the flags' Redactor is not changed")
	code, _, stderr := call(t, cmdServe, leaveApprovalYML, "--store", "memory:", "--redact-pattern", "(")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--redact-pattern "("`)
}
