package retry_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/internal/retry"
	"github.com/flowteam/flowteam/team"
)

// A remote source's retries: zero fields take the defaults, a Retry-After replaces the
// backoff up to the bound, and one beyond the bound ends the retries.
func TestWait(t *testing.T) {
	p := retry.Defaults(flow.RetryPolicy{NoJitter: true})
	assert.Equal(t, flow.RetryPolicy{Max: 3, Backoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second, NoJitter: true}, p)
	assert.Equal(t, 2, retry.Defaults(flow.RetryPolicy{Max: 2}).Max, "a set field is kept")

	wait, ok := retry.Wait(p, time.Minute, team.NewError(team.TypeSourceUnavailable, "down"), 2)
	assert.True(t, ok)
	assert.Equal(t, time.Second, wait, "the backoff doubles")

	limited := &team.Error{Type: team.TypeRateLimited, Retry: true, RetryAfter: 5 * time.Second}
	wait, ok = retry.Wait(p, time.Minute, limited, 1)
	assert.True(t, ok)
	assert.Equal(t, 5*time.Second, wait, "the Retry-After replaces the backoff")

	_, ok = retry.Wait(p, time.Second, limited, 1)
	assert.False(t, ok, "a Retry-After beyond the bound ends the retries")
}
