//go:build unix

package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeUntilSignal serves, re-reads the users on SIGHUP and shuts down on SIGTERM.
func TestServeUntilSignal(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users.json")
	require.NoError(t, os.WriteFile(users, []byte(`{"lead-token-0123456789": {"actor": "lead"}}`), 0o600))
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, _, err := parseServeArgs([]string{leaveYML, "--store", "memory:", "--users", users})
	require.NoError(t, err)
	srv, u, closeFn, err := newConsole(cfg, logger)
	require.NoError(t, err)
	defer closeFn()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- serveUntilSignal(ln, srv, u, logger) }()

	get := func(token string) int {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/graphs", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, get("lead-token-0123456789"))

	require.NoError(t, os.WriteFile(users, []byte(`{"other-token-0123456789": {"actor": "lead"}}`), 0o600))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	assert.Eventually(t, func() bool { return get("lead-token-0123456789") == http.StatusUnauthorized },
		5*time.Second, 10*time.Millisecond, "SIGHUP re-reads the users file")
	assert.Equal(t, http.StatusOK, get("other-token-0123456789"))

	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("no shutdown on SIGTERM")
	}
}
