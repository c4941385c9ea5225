package session_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// TestDecodeEscapedStringsInLinearMemory decodes a snapshot whose variable is a long
// list of strings with escapes (multi-line text, as a chat history holds): the memory
// it takes grows with the snapshot, not with its square (the decoder used to reserve
// the rest of the input for every escaped string).
func TestDecodeEscapedStringsInLinearMemory(t *testing.T) {
	s := saved("lines")
	l := make([]any, 4000)
	for i := range l {
		l[i] = fmt.Sprintf("line %d\nnext \"quoted\"", i)
	}
	s.Vars = map[string]any{"history": l}
	data := encode(t, s)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := session.Decode(data)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, l, got.Vars["history"])
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(20*len(data)), "decoding %d bytes allocated %d", len(data), allocated)
}
