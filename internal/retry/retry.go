// Package retry holds the retry defaults of the project's remote sources (a model
// provider, a sub-agent's search): team/openai and team/subagent share them, and
// package team stays without them.
package retry

import (
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
)

// MaxAfter is the longest Retry-After a remote source's client waits for
// unless told otherwise: a longer one ends the retries (Wait).
const MaxAfter = time.Minute

// Defaults fills the zero fields of p with the defaults of the retries of a
// remote source (a model provider, a sub-agent's search): 3 attempts in all, 500ms
// backoff doubling up to 30s.
func Defaults(p flow.RetryPolicy) flow.RetryPolicy {
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

// Wait returns how long to wait after attempt n failed with e before the next:
// the Retry-After e carries, or else p's backoff (flow.Backoff, with jitter unless
// p.NoJitter). It returns false when e asks to wait longer than maxAfter, which ends
// the retries. It does not check whether e is retryable or attempts are left.
func Wait(p flow.RetryPolicy, maxAfter time.Duration, e *team.Error, n int) (time.Duration, bool) {
	if e.RetryAfter > 0 {
		return e.RetryAfter, e.RetryAfter <= maxAfter
	}
	return flow.Backoff(p.Backoff, p.MaxBackoff, n, !p.NoJitter), true
}
