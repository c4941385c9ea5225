// Package worker shares the runs of flow instances among many processes on one Redis:
// a submit queue on a Redis stream read in a consumer group, owner leases, the reclaim
// of a dead worker's runs, and wake-up timers on a sorted set. It is a package of its
// own, beside session, because it is a distributed runtime (goroutines, heartbeats,
// signals, metrics) built on session's Runner and RedisStore, which stay the plain
// storage a single process needs; nothing in session depends on it.
//
// Submit an instance in one process, run it in any other:
//
//	store := session.NewRedisStore(rdb)
//	q := worker.NewQueue(store)
//	err := q.Submit(ctx, eng, "order", "order-42", map[string]any{"amount": 10})
//
//	w, err := worker.New(q, eng, worker.WithConcurrency(8))
//	err = w.Run(ctx) // until ctx is done (SIGTERM), then drains
//
// # Delivery
//
// Submit saves the instance (suspended at its start frontier, reason "queued") and
// adds an entry to the stream (XADD). A worker takes entries with XREADGROUP, at most
// its concurrency at once, and resumes each instance through a session.Runner with
// per-node checkpoints and an owner lease. When the run halts (completed, suspended,
// failed, stopped) the entry is acknowledged and deleted (XACK, XDEL), so the
// stream's length is the queue's depth.
//
// While a run goes on, its worker renews the instance's lease (session.WithLease) and
// resets the entry's idle time (XCLAIM to itself); a worker that dies stops both, and
// once the lease's time to live has passed another worker takes the entry over
// (XPENDING for the idle entries, XCLAIM with the lease as minimum idle time) and
// resumes the instance from its last checkpoint with session.Recover: nodes that
// completed do not run again. A node that was running when its worker died runs
// again. Its writes outside the instance are made exactly once when the task queues
// them with flow.Context.Effect (session.RedisEffect): they are made in the script
// that saves the checkpoint of the node's completion, so a worker that dies before
// that checkpoint leaves none of them, and one whose lease was taken over cannot
// save it (version conflict). Writes a task makes itself are made at least once.
//
// With a session.Cipher (FLOWTEAM_SESSION_KEY), pass it to Submit, to Enqueue and to
// the workers, WithSessionOptions(session.WithCipher(c)), WithSealedUpdates(c) and
// WithCipher(c), so that no snapshot of the instance is in Redis in clear, the queued
// one included, nor the updates of a queued resume. A worker that cannot open an
// entry's sealed updates moves it to the dead letters rather than run without them.
// To mask secrets instead, give Submit the Redactor (WithSessionOptions) and record
// its rules with the instance (WithMeta); a worker with WithRedaction reads them from
// each instance and masks every save of its runs, and its log, with them.
//
// # Dead letters
//
// An instance whose run kills its worker every time (a task that panics the
// process, runs out of memory or hangs past the lease) would be taken over forever.
// The consumer group counts the deliveries of each entry (XPENDING); one delivered
// more than WithMaxDeliveries times (default 5) is moved to the queue's dead-letter
// stream instead of being run, and its instance is recorded as failed with an error
// record saying why (code DeadLetterCode). Queue.Stats counts the dead letters,
// Queue.DeadLetters lists them, and flowteam workers shows both; once the cause is
// fixed, flowteam resume --queue ID runs the instance again from its last checkpoint.
//
// # Wake-ups
//
// A task suspends until a time with SuspendUntil; the worker that saved the suspension
// adds the instance to the queue's sorted set of wake-ups (ZADD), and at every
// heartbeat each worker moves the due ones to the stream with one Lua script
// (ZRANGEBYSCORE, ZREM, XADD): one worker queues each wake-up, exactly once.
// WaitTask does the same from definitions ("@wait"), and can wait for a variable with
// a timeout after which a gateway takes the timeout's link. Enqueue (flowteam resume
// --queue) queues a resume of any stored instance.
//
// # Shutdown
//
// When Run's context is done the worker takes no more entries; the runs in progress
// have the grace period (WithGrace) to halt, then they are cancelled, saved where they
// stand and queued again for another worker.
//
// # Redis Cluster
//
// The queue's keys (stream, dead-letter stream, wake-up set, worker registry) share
// the hash tag {queue-name}, so the scripts that touch two of them (wake-ups: set and
// stream; dead letters: both streams) run in one slot; a queue lives on one shard, and
// more throughput takes more queues. Each instance's snapshot has the instance's own
// hash tag (session.RedisStore.Tag), as must the keys of its effects. What would
// change on a cluster is the store's, not the queue's: its save script also writes
// the store-wide status index sets, in other slots, so the index would have to become
// one per slot read with a scatter-gather, or give way to SCAN. Until then give the
// store a prefix holding a hash tag ("{flowteam}:"): the instances then share one
// slot, and the queues keep their own.
package worker
