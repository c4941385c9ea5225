package flow

import (
	"sync/atomic"
	"time"
)

// wallBase is a recent time.Now reading. now derives the wall time from it and the
// monotonic clock, which is one clock read instead of two (time.Now reads both the
// wall and the monotonic clock; on virtual machines each read can cost 40 ns or more).
var wallBase atomic.Pointer[time.Time]

// wallRefresh bounds how long now follows the monotonic clock alone: a step of the
// system's wall clock (an operator or NTP setting it) shows after at most this long.
const wallRefresh = time.Second

func init() {
	t := time.Now()
	wallBase.Store(&t)
}

// now returns the current time, with a monotonic reading, as time.Now does; its wall
// part may lag a step of the system clock by up to wallRefresh.
func now() time.Time {
	b := wallBase.Load()
	if d := time.Since(*b); d < wallRefresh {
		return b.Add(d)
	}
	t := time.Now()
	wallBase.Store(&t)
	return t
}
