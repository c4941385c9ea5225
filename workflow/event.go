package workflow

import (
	"context"
	"time"
)

// Event is a claim or a submit that took effect, for an audit trail or metrics.
type Event struct {
	// Kind is "claim" or "submit".
	Kind     string
	Time     time.Time
	Instance string
	Graph    string
	// Node is the claimed or submitted task's node ("" for a claim that found none).
	Node   string
	Action Action // submits only
	Actor  Actor
	// Comment is the submit's comment, if any.
	Comment string
	Status  Status // the instance's status after the call
	// Version is the instance's stored version after the call.
	Version int64
}

// WithObserver calls fn after every claim that found a task and every submit that was
// saved, in the caller's goroutine. fn must not keep ev.Actor.
func WithObserver(fn func(ctx context.Context, ev Event)) Option {
	return func(x *Executor) { x.observe = fn }
}

func (x *Executor) emit(ctx context.Context, ev Event) {
	if x.observe != nil {
		ev.Time = x.now().UTC()
		x.observe(ctx, ev)
	}
}
