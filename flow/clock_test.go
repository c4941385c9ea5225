package flow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNowFollowsTheWallClock(t *testing.T) {
	before := time.Now()
	got := now()
	after := time.Now()
	require.False(t, got.Before(before.Add(-time.Millisecond)), "now() %v is before time.Now() %v", got, before)
	require.False(t, got.After(after.Add(time.Millisecond)), "now() %v is after time.Now() %v", got, after)
	// A stale base is replaced.
	old := time.Now().Add(-2 * wallRefresh)
	wallBase.Store(&old)
	require.WithinDuration(t, time.Now(), now(), time.Millisecond)
	require.NotSame(t, &old, wallBase.Load())
}
