package flow

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func runIDSeqOf(t *testing.T, id string) uint64 {
	t.Helper()
	require.True(t, strings.HasPrefix(id, runIDs.prefix), "run id %q", id)
	n, err := strconv.ParseUint(strings.TrimPrefix(id, runIDs.prefix), 10, 64)
	require.NoError(t, err, "run id %q", id)
	return n
}

// Run ids taken concurrently are unique and well formed, and
// those one goroutine takes increase.
func TestRunIDsAreUnique(t *testing.T) {
	const goroutines, each = 8, 800
	ids := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				ids[g] = append(ids[g], NewRunID())
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool, goroutines*each)
	for _, mine := range ids {
		var last uint64
		for _, id := range mine {
			require.False(t, seen[id], "run id %s given twice", id)
			seen[id] = true
			n := runIDSeqOf(t, id)
			require.Greater(t, n, last, "run ids of one goroutine increase")
			last = n
		}
	}
}
