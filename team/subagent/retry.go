package subagent

import (
	"context"
	"time"

	"github.com/flowteam/flowteam/flow"
)

// Defaults of a SubAgent's retry policy, for the zero fields of its flow.RetryPolicy.
const (
	defaultAttempts      = 3
	defaultBackoff       = 500 * time.Millisecond
	defaultMaxBackoff    = 30 * time.Second
	defaultMaxRetryAfter = time.Minute
)

// retryDefaults fills the zero fields of p.
func retryDefaults(p flow.RetryPolicy) flow.RetryPolicy {
	if p.Max <= 0 {
		p.Max = defaultAttempts
	}
	if p.Backoff <= 0 {
		p.Backoff = defaultBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = defaultMaxBackoff
	}
	return p
}

// sleepContext waits for d or until ctx ends (then it returns ctx's cause).
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
