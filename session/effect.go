package session

import (
	"context"
	"time"
)

// EffectStore is a Store that makes a checkpoint's effects in the transaction of its
// save: the writes a node's task queued with flow.Context.Effect are made if and only
// if the checkpoint recording the node's completion is saved. A worker that dies
// before the checkpoint leaves neither; the node runs again on Recover and queues them
// again, so each is made once. A Runner with PerNode durability hands a checkpoint's
// effects to its store, which must then be an EffectStore (RedisStore is one).
type EffectStore interface {
	Store
	// SaveEffects is Save (SaveTTL when ttl > 0) that also makes effects, in order, in
	// the same atomic step. A save that does not take effect (ErrConflict) makes none
	// of them. An effect of a type the store does not know fails the save before
	// anything is written.
	SaveEffects(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration, effects []any) error
}

// RedisEffect is a write a RedisStore makes in a save's script (see EffectStore): one
// command on one key, such as INCR, HINCRBY, SET, LPUSH, ZADD or XADD to an outbox
// stream. On Redis Cluster the key must be in the instance's slot: build it with
// RedisStore.Tag.
type RedisEffect struct {
	// Name is the command.
	Name string
	// Key is the one key the command writes.
	Key string
	// Args are the command's arguments after the key.
	Args []any
}
