package interceptor_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// WithFsync on a pipe (a JSONL sink on stdout piped to another program): a pipe has
// nothing to sync to disk, and syncing it fails (EINVAL), which must not fail every
// batch.
func TestJSONLFsyncPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer func() { _ = r.Close() }()
	s := interceptor.NewJSONL(w, interceptor.WithFsync())
	// A small batch fits in the pipe's buffer: no reader needs to run meanwhile.
	require.NoError(t, s.Write(context.Background(), []trace.Record{{Seq: 1, Status: trace.Started, GraphID: "g", RunID: "r"}}))
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"run":"r"`)
}
