//go:build !race

// The race detector's sync.Pool drops items at random, so encoding/json allocates
// its buffers anew and the allocations counted here are not its size.

package session_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// TestEncodeMarshalledValuesGrowOnce: where encoding/json writes a large value, the
// buffer is not copied at every quarter of growth: the allocations are its output
// and the buffer (doubled as often as values the estimate guessed at do not fit),
// not five times the buffer.
func TestEncodeMarshalledValuesGrowOnce(t *testing.T) {
	for _, c := range sizedVars {
		if !c.marshalled || c.name == "json numbers" || c.name == "times" {
			continue // many small values: encoding/json's own cost per value dominates
		}
		t.Run(c.name, func(t *testing.T) {
			s := saved("big")
			s.Vars = c.vars()
			encode(t, s) // encoding/json's buffer pool
			var data []byte
			// The least of a few encodings: a garbage collection between the warm-up and
			// an encoding empties encoding/json's pool, and that one allocates more.
			used := uint64(math.MaxUint64)
			for range 5 {
				used = min(used, allocated(func() { data = encode(t, s) }))
			}
			require.Less(t, used, uint64(len(data))*4, "encoding %d bytes", len(data))
		})
	}
}

// TestEncodeChecksMarshalledJSONInPlace: what encoding/json writes for a struct is
// checked for what Decode would reject without decoding it into maps, slices and
// strings: a save of a megabyte of entries allocates a handful of times (encoding/json's
// output and the buffer), not once per field of every entry (128,000 times).
func TestEncodeChecksMarshalledJSONInPlace(t *testing.T) {
	s := saved("big")
	s.Vars = map[string]any{"ledger": ledger(16000)}
	encode(t, s) // encoding/json's buffer pool
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := session.Encode(s); err != nil {
			t.Fatal(err)
		}
	})
	require.Less(t, allocs, 20.0)
}
