package flow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// runCtx is the context.Context a run's tasks see: the caller's context plus the run's
// own cancellation (fail-fast cancels it). It lives inside the run and creates its done
// channel only when a task asks for it, so a run whose tasks never wait costs no
// context allocations.
type runCtx struct {
	parent context.Context
	mu     sync.Mutex
	done   chan struct{}
	err    error
	stop   func() bool // unregisters the propagation from parent
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *runCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }
func (c *runCtx) Value(key any) any           { return c.parent.Value(key) }

func (c *runCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	if c.err != nil {
		c.done = closedChan
		return c.done
	}
	c.done = make(chan struct{})
	if c.parent.Done() != nil {
		c.stop = context.AfterFunc(c.parent, func() { c.cancel(c.parent.Err()) })
	}
	return c.done
}

func (c *runCtx) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	return nil
}

// cancel ends the context with err (context.Canceled when the run fails fast, the
// parent's error when the caller's context ended).
func (c *runCtx) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil && c.done != closedChan {
		close(c.done)
	}
}

// finish ends the context when the run is over: it is cancelled, and the parent's
// cancellation no longer propagates to it.
func (c *runCtx) finish() {
	c.mu.Lock()
	if c.err == nil {
		c.err = context.Canceled
		if c.done != nil && c.done != closedChan {
			close(c.done)
		}
	}
	stop := c.stop
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// cancelCause returns what a run that ctx's end cancelled fails with: ctx's error
// (context.Canceled or DeadlineExceeded, which errors.Is tells apart, as the package
// doc promises) and the cause the caller gave, if any (WithCancelCause,
// WithDeadlineCause), which errors.Is finds too.
func cancelCause(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || errors.Is(cause, err) {
		return err
	}
	return fmt.Errorf("%w: %w", err, cause)
}
