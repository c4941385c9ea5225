package worker

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flowteam/flowteam/flow"
)

// WakeAtVar prefixes the variables SuspendUntil keeps a node's wake-up time in (Unix
// milliseconds), one per node: WakeAtVar + node id. It is flow.WakeAtVar, which
// scripts' context.suspendUntil writes too.
const WakeAtVar = flow.WakeAtVar

// SuspendUntil suspends the run until t, for a task of node n run by a Worker: the
// worker queues the instance again once t has passed, and the node runs again. It is
// flow.SuspendUntil, which says how the time is recorded; it reports whether the wait
// is over, so that a task reads
//
//	if !worker.SuspendUntil(c, n, t) {
//		return nil // suspended: the node runs again at t
//	}
//
// Scripts do the same with context.suspendUntil("10m") or an RFC 3339 time.
func SuspendUntil(c *flow.Context, n *flow.Node, t time.Time) bool {
	return flow.SuspendUntil(c, n, t)
}

// wakeAt returns the earliest wake-up time the variables of a suspended instance
// record (false if none).
func wakeAt(vars map[string]any) (time.Time, bool) {
	best, found := int64(math.MaxInt64), false
	for k, v := range vars {
		if !strings.HasPrefix(k, WakeAtVar) {
			continue
		}
		ms, ok := flow.AsInt64(v)
		if !ok {
			continue
		}
		if ms < best {
			best, found = ms, true
		}
	}
	return time.UnixMilli(best), found
}

// Schedule queues a run of the stored instance id at t: until then it is kept in the
// queue's sorted set of wake-ups (a later Schedule of id replaces t).
func (q *Queue) Schedule(ctx context.Context, id string, t time.Time) error {
	if err := q.rdb.ZAdd(ctx, q.wake, redis.Z{Score: float64(t.UnixMilli()), Member: id}).Err(); err != nil {
		return fmt.Errorf("worker: schedule %q: %w", id, err)
	}
	return nil
}

// wakeScript moves the due members of the wake-up set (KEYS[1]) to the stream
// (KEYS[2]), at most ARGV[2] of them, in one atomic step: of several workers that see
// a wake-up due, one queues it and the others find it gone.
var wakeScript = redis.NewScript(`
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('XADD', KEYS[2], '*', 'instance', id)
end
return #due
`)

// wakeBatch is the number of due wake-ups one call of WakeDue queues at most.
const wakeBatch = 100

// WakeDue queues the instances whose wake-up time is at or before now, exactly once
// whatever the number of workers calling it, and returns their number. Workers call
// it at every heartbeat.
func (q *Queue) WakeDue(ctx context.Context, now time.Time) (int, error) {
	n, err := wakeScript.Run(ctx, q.rdb, []string{q.wake, q.stream}, now.UnixMilli(), wakeBatch).Int()
	if err != nil {
		return 0, fmt.Errorf("worker: wake due instances: %w", err)
	}
	return n, nil
}

// WaitTask returns a task that suspends its node until a time its meta gives: "wait",
// a duration from the node's first run ("90s", "24h"), or "until", an RFC 3339 time.
// With meta "for", the name of a variable, the node waits for that variable instead
// (set by a queued resume: flowteam resume --queue --set NAME=...) and the time is a
// timeout: once it has passed, the node sets the variable its meta "timeoutVar" names
// (default "timedOut") to true and the run goes on, so that a gateway after it takes
// the link chosen for a timeout (when: "timedOut == true").
//
// Register it under a name to use it from definitions: eng.RegisterTask("wait",
// worker.WaitTask()), then task "@wait" with meta {wait: 10m}. flowteam worker and
// submit register it as "wait".
func WaitTask() flow.Task {
	return flow.TaskFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		awaited := n.MetaString("for")
		if v, ok := c.Get(awaited); awaited != "" && ok && v != nil {
			c.Delete(WakeAtVar + n.ID) // the timeout is moot
			return nil
		}
		t, err := deadline(n)
		if err != nil {
			return err
		}
		if SuspendUntil(c, n, t) && awaited != "" {
			name := n.MetaString("timeoutVar")
			if name == "" {
				name = "timedOut"
			}
			c.Set(name, true)
		}
		return nil
	})
}

// deadline reads the time a WaitTask node waits until from its meta.
func deadline(n *flow.Node) (time.Time, error) {
	if u := n.MetaString("until"); u != "" {
		t, err := time.Parse(time.RFC3339Nano, u)
		if err != nil {
			return time.Time{}, fmt.Errorf("node %q: meta until: %w", n.ID, err)
		}
		return t, nil
	}
	if w := n.MetaString("wait"); w != "" {
		d, err := time.ParseDuration(w)
		if err != nil {
			return time.Time{}, fmt.Errorf("node %q: meta wait: %w", n.ID, err)
		}
		return time.Now().Add(d), nil
	}
	return time.Time{}, fmt.Errorf("node %q: the wait task needs meta wait (a duration) or until (a time)", n.ID)
}
