package main

import (
	"bytes"
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/examples/a2a-server/remote"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/a2a"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, &out) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	base := "http://" + ln.Addr().String()

	deskAgent, err := a2a.NewClient(ctx, base+remote.DeskPath)
	require.NoError(t, err)
	defer deskAgent.Close()
	assert.Equal(t, "desk", deskAgent.Name())
	ans, err := deskAgent.Call(ctx, "Write a brief on the European e-bike market.", team.NewSession("s-1"))
	require.NoError(t, err)
	assert.Equal(t, "Europe's e-bike market reached about 20bn EUR in 2024 and grows 9% a year.", ans.Content)

	patents, err := a2a.NewClient(ctx, base+remote.PatentsPath, a2a.WithStreaming(false))
	require.NoError(t, err)
	defer patents.Close()
	_, err = patents.Call(ctx, "solid-state battery patents", nil)
	var e *team.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, team.TypeSourceUnavailable, e.Type)
	assert.Equal(t, "PATENT_DB_DOWN", e.Code)
	assert.True(t, e.Retryable())
	assert.Contains(t, out.String(), "serving "+base+"/desk/")
}
