package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flowteam/flowteam/session"
)

// DefaultMaxDeliveries is the number of deliveries of a queue entry after which a
// Worker moves it to the dead letters (WithMaxDeliveries). An entry is delivered
// again only when the worker running it stopped renewing it: it died or hung past
// its lease. Shutdowns queue new entries and do not count. Five deaths in a row
// during one instance's run leave little doubt that the run is what kills them (a
// task that panics, runs out of memory or hangs), while a crash or two of its own
// (a node lost, a rolling restart with SIGKILL) still leaves the run some tries.
const DefaultMaxDeliveries = 5

// DeadLetterCode is the code of the ErrorRecord a dead letter adds to its instance.
const DeadLetterCode = "dead_letter"

// deadLetterCap bounds the dead-letter stream (XADD MAXLEN ~): it is a record for
// operators, not a queue, and must not grow without end.
const deadLetterCap = 10000

// WithMaxDeliveries sets how many times an entry may be delivered to a worker before
// the next worker to take it moves it to the queue's dead-letter stream instead of
// running it (default DefaultMaxDeliveries, at least 1). The count is the consumer
// group's own (XPENDING's delivery count): a new entry's first delivery is 1 and each
// reclaim adds one, while the heartbeat that keeps a running entry from looking idle
// does not (XCLAIM with JUSTID and the entry's own count as RETRYCOUNT).
//
// A dead letter records the instance, the entry, its deliveries, the last consumer
// it was delivered to and the time (Queue.DeadLetters); the entry is acknowledged
// and deleted from the queue, and the instance is recorded as failed with an error
// record of code DeadLetterCode saying why, unless it completed or a save came after
// the one its last worker left (the version check), so that flowteam sessions show
// explains it and a queued resume (Enqueue, flowteam resume --queue) retries it from
// its last checkpoint once the cause is fixed. An entry whose instance is running
// under a fresh lease is not dead: it waits for that run (a queued resume), and a
// delivery that found the instance so does not count.
func WithMaxDeliveries(n int) Option { return func(w *Worker) { w.maxDel = int64(max(n, 1)) } }

// touch resets the idle time of entries (XCLAIM to the consumer itself) whose
// delivery count is deliveries. JUSTID alone leaves the count alone on Redis, but
// not on every server that speaks its protocol (miniredis adds one); RETRYCOUNT sets
// it to what it was on both.
func (q *Queue) touch(ctx context.Context, consumer string, deliveries int64, entries []string) error {
	args := []any{"XCLAIM", q.stream, group, consumer, 0}
	for _, e := range entries {
		args = append(args, e)
	}
	args = append(args, "RETRYCOUNT", deliveries, "JUSTID")
	return q.rdb.Do(ctx, args...).Err()
}

// moveScript moves a pending entry of the stream (KEYS[1]) to the dead-letter stream
// (KEYS[2]): the XACK tells whether it is still pending, so of two workers that
// dead-letter one entry (one stalled past its lease) one moves it. ARGV: group, entry
// id, cap, then the dead letter's field-value pairs.
var moveScript = redis.NewScript(`
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', unpack(ARGV, 4))
return 1
`)

// tooManyDeliveries is the reason of a dead letter delivered more than the maximum.
func tooManyDeliveries(d delivery) string {
	from := d.from
	if from == "" {
		from = "unknown"
	}
	return fmt.Sprintf("was delivered %d times and every worker it was delivered to stopped before the run "+
		"ended (the last: %s)", d.count-1, from)
}

// leased reports whether snap's instance is running under a fresh lease: a live
// worker holds it.
func leased(snap *session.Snapshot) bool {
	return snap.Status == session.StatusRunning && snap.Lease.Fresh(time.Now())
}

// deadLetter moves entry d to the dead letters, saying why (reason, a clause whose
// subject is the entry), and records its instance as failed: snap and loadErr are
// what loading the instance returned. An instance running under a fresh lease is
// left to that run. A load error other than an instance that cannot be read (not
// found, sealed, corrupt) leaves the entry pending for a later reclaim to try again.
// The updates of the entry go with it as they are: sealed ones stay sealed.
func (w *Worker) deadLetter(ctx context.Context, d delivery, snap *session.Snapshot, loadErr error, reason string) {
	ctx = context.WithoutCancel(ctx)
	id, _ := d.Values["instance"].(string)
	deliveries := d.count - 1 // the deliveries that did not end
	switch err := loadErr; {
	case err == nil && leased(snap):
		// A live worker runs the instance: its outcome is that run's to save.
	case err == nil:
		w.failDead(ctx, snap, d, reason)
	case errors.Is(err, session.ErrNotFound), errors.Is(err, session.ErrSealed),
		errors.Is(err, session.ErrDecrypt), errors.Is(err, session.ErrCorrupt), errors.Is(err, session.ErrInvalidID):
		w.log.Warn("worker: dead letter: instance not recorded as failed", "instance", id, "err", err)
	default:
		w.log.Error("worker: dead letter: load instance, entry left pending", "instance", id, "err", err)
		return
	}
	fields := []any{"entry", d.ID, "instance", id, "deliveries", deliveries, "consumer", d.from,
		"time", time.Now().UTC().Format(time.RFC3339Nano), "reason", reason}
	for _, f := range []string{updatesField, sealedUpdatesField} {
		if u, ok := d.Values[f].(string); ok {
			fields = append(fields, f, u)
		}
	}
	moved, err := moveScript.Run(ctx, w.q.rdb, []string{w.q.stream, w.q.dead},
		append([]any{group, d.ID, deadLetterCap}, fields...)...).Int()
	switch {
	case err != nil:
		w.log.Error("worker: dead letter: move entry, left pending", "entry", d.ID, "instance", id, "err", err)
	case moved == 1:
		w.inst.deadLetters.Add(ctx, 1, w.inst.ofQueue)
		w.log.Error("worker: dead letter: entry "+reason, "entry", d.ID, "instance", id,
			"deliveries", deliveries, "last_consumer", d.from)
	}
}

// failDead records the instance of a dead letter as failed, with an error record
// saying why, expecting the version loaded: a save that came after it wins. A
// completed instance is left as it is, and a record of this entry is not added twice
// (a worker that died between this save and the move).
func (w *Worker) failDead(ctx context.Context, snap *session.Snapshot, d delivery, reason string) {
	if snap.Status == session.StatusCompleted {
		return
	}
	if n := len(snap.Errors); n > 0 && snap.Errors[n-1].Code == DeadLetterCode &&
		strings.Contains(snap.Errors[n-1].Message, "entry "+d.ID+" ") {
		return
	}
	rec := session.ErrorRecord{Code: DeadLetterCode, Type: "worker_error", Severity: "fatal",
		Message: fmt.Sprintf("queue %s: entry %s %s; it was moved to the dead letters: fix the cause, then "+
			"resume the instance (flowteam resume --queue)", w.q.name, d.ID, reason)}
	snap.Status, snap.Reason, snap.Lease = session.StatusFailed, "", nil
	snap.Errors = append(snap.Errors, rec)
	if err := w.runner.Save(ctx, snap, snap.Version); err != nil {
		w.log.Warn("worker: dead letter: instance not recorded as failed", "instance", snap.Instance, "err", err)
	}
}

// DeadLetter is an entry a Worker moved to the queue's dead-letter stream because it
// was delivered more times than its maximum (WithMaxDeliveries) or carried updates
// the worker could not open (WithCipher).
type DeadLetter struct {
	// ID is the dead letter's id in the dead-letter stream.
	ID string `json:"id"`
	// Entry is the id the entry had in the queue.
	Entry    string `json:"entry"`
	Instance string `json:"instance"`
	// Deliveries is the number of times the entry was delivered to a worker that did
	// not end its run; Consumer the last of those workers.
	Deliveries int64     `json:"deliveries"`
	Consumer   string    `json:"consumer"`
	Time       time.Time `json:"time"`
	// Reason says why the entry is dead: delivered too many times, or its updates
	// could not be opened (WithCipher).
	Reason string `json:"reason,omitempty"`
	// Updates are the variables of a queued resume (JSON), if the entry was one and
	// carried them in clear; Sealed tells one that carried them sealed
	// (WithSealedUpdates), which the dead letter keeps sealed.
	Updates string `json:"updates,omitempty"`
	Sealed  bool   `json:"sealedUpdates,omitempty"`
}

// DeadLetters returns the newest n dead letters of the queue (all with n 0), newest
// first. The dead-letter stream keeps about the last 10000.
func (q *Queue) DeadLetters(ctx context.Context, n int64) ([]DeadLetter, error) {
	var (
		msgs []redis.XMessage
		err  error
	)
	if n > 0 {
		msgs, err = q.rdb.XRevRangeN(ctx, q.dead, "+", "-", n).Result()
	} else {
		msgs, err = q.rdb.XRevRange(ctx, q.dead, "+", "-").Result()
	}
	if err != nil {
		return nil, fmt.Errorf("worker: dead letters: %w", err)
	}
	out := make([]DeadLetter, len(msgs))
	for i, m := range msgs {
		str := func(k string) string { s, _ := m.Values[k].(string); return s }
		dl := DeadLetter{ID: m.ID, Entry: str("entry"), Instance: str("instance"), Consumer: str("consumer"),
			Reason: str("reason"), Updates: str(updatesField), Sealed: str(sealedUpdatesField) != ""}
		dl.Deliveries, _ = strconv.ParseInt(str("deliveries"), 10, 64)
		dl.Time, _ = time.Parse(time.RFC3339Nano, str("time"))
		out[i] = dl
	}
	return out, nil
}
