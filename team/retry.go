package team

import (
	"context"
	"time"

	"github.com/flowteam/flowteam/flow"
)

// RetryPolicy bounds the retries of retryable failures (timeouts, rate limits,
// unavailable providers): at most MaxAttempts attempts in all, waiting Backoff before
// the second, twice as long before each next one, up to MaxBackoff. A Retry-After the
// provider sends replaces the backoff; one longer than MaxRetryAfter is not waited
// for: the rate_limited error is returned at once with its RetryAfter, for the caller
// to decide. Zero fields take the defaults (3 attempts, 500ms, 30s, 60s).
type RetryPolicy struct {
	MaxAttempts   int
	Backoff       time.Duration
	MaxBackoff    time.Duration
	MaxRetryAfter time.Duration
	// Jitter draws each backoff from [d/2, d] so that many clients do not retry in step.
	Jitter bool
}

// NoRetry is a policy with a single attempt.
var NoRetry = RetryPolicy{MaxAttempts: 1}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 3
	}
	if p.Backoff <= 0 {
		p.Backoff = 500 * time.Millisecond
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = 30 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = time.Minute
	}
	return p
}

// delay returns the wait before the given retry (1 = the first retry).
func (p RetryPolicy) delay(retry int) time.Duration {
	return flow.Backoff(p.Backoff, p.MaxBackoff, retry, p.Jitter)
}

// Sleeper waits for d or until ctx ends (then it returns ctx's error). Tests replace
// it so that nothing really sleeps.
type Sleeper func(ctx context.Context, d time.Duration) error

// SleepContext is the real Sleeper.
func SleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
