package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/examples/a2a-server/remote"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := remote.New("http://" + ln.Addr().String()) // the cards need the address
	hs := &httptest.Server{Listener: ln, Config: &http.Server{Handler: srv.Handler()}}
	hs.Start()
	defer hs.Close()
	defer srv.Close()

	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, hs.Client(), hs.URL))
	assert.Equal(t, `desk: an editorial desk: a researcher, a writer and a reviewer under a supervisor
  remote researcher completed
  remote writer completed
answer: Europe's e-bike market reached about 20bn EUR in 2024 and grows 9% a year.
patents failed: type source_unavailable, code PATENT_DB_DOWN, retryable true: patent_db refused the connection
`, out.String())
}
