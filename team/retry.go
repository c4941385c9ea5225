package team

import (
	"time"

	"github.com/flowteam/flowteam/flow"
)

// DefaultMaxRetryAfter is the longest Retry-After a remote source's client waits for
// unless told otherwise: a longer one ends the retries (RetryWait).
const DefaultMaxRetryAfter = time.Minute

// RetryDefaults fills the zero fields of p with the defaults of the retries of a
// remote source (a model provider, a sub-agent's search): 3 attempts in all, 500ms
// backoff doubling up to 30s.
func RetryDefaults(p flow.RetryPolicy) flow.RetryPolicy {
	if p.Max <= 0 {
		p.Max = 3
	}
	if p.Backoff <= 0 {
		p.Backoff = 500 * time.Millisecond
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = 30 * time.Second
	}
	return p
}

// RetryWait returns how long to wait after attempt n failed with e before the next:
// the Retry-After e carries, or else p's backoff (flow.Backoff, with jitter unless
// p.NoJitter). It returns false when e asks to wait longer than maxAfter, which ends
// the retries. It does not check whether e is retryable or attempts are left.
func RetryWait(p flow.RetryPolicy, maxAfter time.Duration, e *Error, n int) (time.Duration, bool) {
	if e.RetryAfter > 0 {
		return e.RetryAfter, e.RetryAfter <= maxAfter
	}
	return flow.Backoff(p.Backoff, p.MaxBackoff, n, !p.NoJitter), true
}
