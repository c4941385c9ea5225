package subagent

import (
	"context"
	"time"
)

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
