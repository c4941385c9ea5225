package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// DefaultQueue is the name of the queue of NewQueue without WithName.
const DefaultQueue = "default"

// group is the consumer group every worker of a queue reads in.
const group = "workers"

// QueuedReason is the suspend reason of an instance Submit recorded and no worker has
// run yet.
const QueuedReason = "queued"

// Queue is a queue of instances to run on a Redis stream, with its wake-up set and its
// registry of workers. Submit and Resume queue; a Worker consumes. It is safe for
// concurrent use.
type Queue struct {
	store *session.RedisStore
	rdb   redis.UniversalClient
	name  string
	// stream, wake, workers and dead are the queue's keys; they share one hash tag.
	stream, wake, workers, dead string
}

// QueueOption configures a Queue.
type QueueOption func(*Queue)

// WithName names the queue (default DefaultQueue): queues of other names share the
// store but not their work.
func WithName(name string) QueueOption { return func(q *Queue) { q.name = name } }

// NewQueue returns the queue named by the options on the Redis client of store, where
// the instances are kept.
func NewQueue(store *session.RedisStore, opts ...QueueOption) *Queue {
	q := &Queue{store: store, rdb: store.Client(), name: DefaultQueue}
	for _, o := range opts {
		o(q)
	}
	// One hash tag for the queue's keys: the wake-up script moves members of the
	// sorted set to the stream atomically, which Redis Cluster allows within a slot.
	base := store.Prefix() + "worker:{" + q.name + "}:"
	q.stream, q.wake, q.workers, q.dead = base+"queue", base+"wake", base+"workers", base+"dead"
	return q
}

// Store returns the store the queue's instances are kept in.
func (q *Queue) Store() *session.RedisStore { return q.store }

// SubmitOption configures one Submit.
type SubmitOption func(*submitConfig)

type submitConfig struct {
	sources []string
	meta    []string
	runOpts []session.Option
}

// WithSources records where the graph definitions came from (Snapshot.Sources), for
// tools that load them again, such as flowteam resume and sessions show.
func WithSources(files ...string) SubmitOption {
	return func(c *submitConfig) { c.sources = append(c.sources, files...) }
}

// WithMeta records entries in the queued snapshot's Meta, such as the redaction rules
// of the instance: the workers' runs keep them, and a Worker's WithRedaction function
// reads them.
func WithMeta(entries ...string) SubmitOption {
	return func(c *submitConfig) { c.meta = append(c.meta, entries...) }
}

// WithSessionOptions saves the queued snapshot as a session.Runner with opts saves
// (session.Runner.Save): session.WithCipher seals it and session.WithRedactor or
// WithRedaction masks its secrets, so that the variables are not in Redis in clear
// before a worker runs the instance; session.WithExpiry applies too. The workers
// mask the runs' saves with the same rules when given them (WithRunnerOptions), or
// when the instance records them (WithMeta) and they read them (WithRedaction).
// Masked variables are not restored: a run has one only when a queued resume's
// updates (Enqueue) supply it again. Options about running (durability, lease,
// sources, meta: see WithSources and WithMeta) have no effect here.
func WithSessionOptions(opts ...session.Option) SubmitOption {
	return func(c *submitConfig) { c.runOpts = append(c.runOpts, opts...) }
}

// Submit records instance id of graph graphID (registered in eng) with vars, as a
// suspended snapshot at its start frontier with reason QueuedReason, and queues it; it
// returns without waiting for a worker. An id that exists fails with
// session.ErrConflict and queues nothing.
func (q *Queue) Submit(ctx context.Context, eng *flow.Engine, graphID, id string, vars map[string]any,
	opts ...SubmitOption) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("worker: submit: %w", err)
	}
	g, ok := eng.Graph(graphID)
	if !ok {
		return fmt.Errorf("worker: submit %q: graph %q: %w", id, graphID, flow.ErrGraphNotFound)
	}
	start, err := eng.StartFrontier(g)
	if err != nil {
		return fmt.Errorf("worker: submit %q: %w", id, err)
	}
	var cfg submitConfig
	for _, o := range opts {
		o(&cfg)
	}
	st := start.State()
	if vars == nil {
		vars = map[string]any{}
	}
	// The graphs g calls are not hashed here: the worker's resume records them.
	snap := &session.Snapshot{Instance: id, Graph: g.ID, Hash: g.Hash(), Status: session.StatusSuspended,
		Reason: QueuedReason, RunID: flow.NewRunID(), Vars: vars, Frontier: &st, Sources: cfg.sources, Meta: cfg.meta}
	if err := session.NewRunner(eng, q.store, cfg.runOpts...).Save(ctx, snap, 0); err != nil {
		return fmt.Errorf("worker: submit %q: %w", id, err)
	}
	return q.Enqueue(ctx, id, nil)
}

// EnqueueOption configures one Enqueue.
type EnqueueOption func(*enqueueConfig)

type enqueueConfig struct {
	cipher *session.Cipher
}

// WithSealedUpdates seals the updates of the entry with c (session.Cipher.SealData,
// bound to the instance id): the entry holds them encrypted, in field
// "sealed-updates", instead of as clear JSON, so that a secret a resume supplies again
// is not in Redis in clear while it waits, nor in a dead letter. The workers need the
// same key (WithCipher); one without it, or with another, dead-letters the entry.
func WithSealedUpdates(c *session.Cipher) EnqueueOption {
	return func(cfg *enqueueConfig) { cfg.cipher = c }
}

// Enqueue queues a run of the stored instance id: a worker resumes it with updates
// applied to its variables (nil for none). A suspended instance continues at the node
// it suspended in; a completed one is dropped by the worker.
func (q *Queue) Enqueue(ctx context.Context, id string, updates map[string]any, opts ...EnqueueOption) error {
	var cfg enqueueConfig
	for _, o := range opts {
		o(&cfg)
	}
	values := map[string]any{"instance": id}
	if len(updates) > 0 {
		b, err := json.Marshal(updates)
		if err != nil {
			return fmt.Errorf("worker: queue %q: updates: %w", id, err)
		}
		if cfg.cipher == nil {
			values[updatesField] = string(b)
		} else if values[sealedUpdatesField], err = cfg.cipher.SealData(b, id); err != nil {
			return fmt.Errorf("worker: queue %q: updates: %w", id, err)
		}
	}
	if err := q.rdb.XAdd(ctx, &redis.XAddArgs{Stream: q.stream, Values: values}).Err(); err != nil {
		return fmt.Errorf("worker: queue %q: %w", id, err)
	}
	return nil
}

// The fields of a queue entry (and of a dead letter) that hold a resume's updates:
// clear JSON, or JSON sealed with a session.Cipher (WithSealedUpdates).
const (
	updatesField       = "updates"
	sealedUpdatesField = "sealed-updates"
)

// entryUpdates returns the updates an entry carries (nil for none), opened with c if
// they are sealed. Sealed updates without a cipher, or that c does not open, are an
// error wrapping session.ErrDecrypt; clear ones that do not decode, one wrapping
// errBadUpdates.
func entryUpdates(values map[string]any, id string, c *session.Cipher) (map[string]any, error) {
	if s, ok := values[sealedUpdatesField].(string); ok {
		if c == nil {
			return nil, fmt.Errorf("%w: the updates are sealed and this worker has no key (WithCipher)", session.ErrDecrypt)
		}
		b, err := c.OpenData([]byte(s), id)
		if err != nil {
			return nil, err
		}
		return decodeUpdates(b)
	}
	if s, ok := values[updatesField].(string); ok {
		return decodeUpdates([]byte(s))
	}
	return nil, nil
}

// errBadUpdates is the error of updates that are not a JSON object of variables.
var errBadUpdates = errors.New("bad updates")

func decodeUpdates(b []byte) (map[string]any, error) {
	u, err := session.UnmarshalVars(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadUpdates, err)
	}
	return u, nil
}

// ensureGroup creates the consumer group (and the stream) unless they exist.
func (q *Queue) ensureGroup(ctx context.Context) error {
	err := q.rdb.XGroupCreateMkStream(ctx, q.stream, group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("worker: create group on %s: %w", q.stream, err)
	}
	return nil
}

// Stats is the state of a queue at one moment.
type Stats struct {
	// Depth is the number of entries not yet acknowledged: waiting or running.
	Depth int64
	// Pending is the number of entries delivered to a worker and not acknowledged.
	Pending int64
	// Oldest is when the oldest entry was queued (zero when Depth is 0).
	Oldest time.Time
	// Wakeups is the number of instances waiting for a wake-up time; NextWakeup is the
	// earliest (zero if none).
	Wakeups    int64
	NextWakeup time.Time
	// DeadLetters is the number of entries in the queue's dead-letter stream (see
	// WithMaxDeliveries).
	DeadLetters int64
}

// Stats reads the queue's depth, its oldest entry, its wake-ups and its dead letters.
func (q *Queue) Stats(ctx context.Context) (Stats, error) {
	pipe := q.rdb.Pipeline()
	xlen := pipe.XLen(ctx, q.stream)
	first := pipe.XRangeN(ctx, q.stream, "-", "+", 1)
	zcard := pipe.ZCard(ctx, q.wake)
	next := pipe.ZRangeWithScores(ctx, q.wake, 0, 0)
	pend := pipe.XPending(ctx, q.stream, group)
	dead := pipe.XLen(ctx, q.dead)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && !isNoGroup(err) {
		return Stats{}, fmt.Errorf("worker: queue stats: %w", err)
	}
	s := Stats{Depth: xlen.Val(), Wakeups: zcard.Val(), DeadLetters: dead.Val()}
	if p, err := pend.Result(); err == nil {
		s.Pending = p.Count
	}
	if msgs := first.Val(); len(msgs) > 0 {
		s.Oldest = entryTime(msgs[0].ID)
	}
	if z := next.Val(); len(z) > 0 {
		s.NextWakeup = time.UnixMilli(int64(z[0].Score))
	}
	return s, nil
}

func isNoGroup(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOGROUP") }

// entryTime is the time a stream entry id ("ms-seq") was added.
func entryTime(id string) time.Time {
	ms, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(n)
}
