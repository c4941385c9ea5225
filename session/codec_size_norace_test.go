//go:build !race

// The race detector's sync.Pool drops items at random, so encoding/json allocates
// its buffers anew and the allocations counted here are not its size.

package session_test

import (
	"encoding/json"
	"math"
	"strconv"
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
		if !c.marshalled || c.name == "json numbers" || c.name == "times" || c.name == "marshalled map" {
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

// TestEncodeChecksMarshalledMapInPlace: checking what encoding/json writes for a map
// of many entries costs about its size on top of encoding/json's own allocations (the
// buffer, and the keys of the object being checked); they were kept on a stack grown
// a quarter at a time, and the check allocated nine times the map's JSON.
func TestEncodeChecksMarshalledMapInPlace(t *testing.T) {
	m := map[string]int{}
	for i := range 50000 {
		m["key"+strconv.Itoa(i)] = i * 1000003
	}
	s := saved("big")
	s.Vars = map[string]any{"counts": m}
	encode(t, s) // encoding/json's buffer pool
	var data []byte
	ours := uint64(math.MaxUint64)
	for range 5 {
		marshal := allocated(func() {
			_, err := json.Marshal(m)
			require.NoError(t, err)
		})
		all := allocated(func() { data = encode(t, s) })
		if all > marshal {
			ours = min(ours, all-marshal)
		}
	}
	require.Less(t, ours, uint64(len(data))*3, "encoding %d bytes", len(data))
}
