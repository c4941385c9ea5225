package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Info is what a Worker publishes of itself at every heartbeat.
type Info struct {
	Name string `json:"name"`
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Running is the number of runs in progress; Done the number of runs it ended.
	Running int   `json:"running"`
	Done    int64 `json:"done"`
	// Concurrency is the most runs it takes at once.
	Concurrency int       `json:"concurrency"`
	Started     time.Time `json:"started"`
	Heartbeat   time.Time `json:"heartbeat"`
	// Expires is when the worker counts as gone unless it beats again.
	Expires time.Time `json:"expires"`
}

// publish records info in the queue's registry of workers.
func (q *Queue) publish(ctx context.Context, info Info) error {
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return q.rdb.HSet(ctx, q.workers, info.Name, b).Err()
}

// unpublish removes a worker from the registry.
func (q *Queue) unpublish(ctx context.Context, name string) error {
	return q.rdb.HDel(ctx, q.workers, name).Err()
}

// Workers lists the live workers of the queue, by name: those whose last heartbeat
// has not expired. Entries of workers gone without leaving (killed) are removed from
// the registry once expired.
func (q *Queue) Workers(ctx context.Context) ([]Info, error) {
	all, err := q.rdb.HGetAll(ctx, q.workers).Result()
	if err != nil {
		return nil, fmt.Errorf("worker: list workers: %w", err)
	}
	now := time.Now()
	var live []Info
	for name, v := range all {
		var in Info
		if json.Unmarshal([]byte(v), &in) != nil || now.After(in.Expires) {
			q.rdb.HDel(ctx, q.workers, name) // gone: best effort, the next listing retries
			continue
		}
		live = append(live, in)
	}
	slices.SortFunc(live, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return live, nil
}

// pruneConsumers deletes from the consumer group the consumers idle for longer than
// idle with no pending entry: workers that stopped or died, whose entries were
// reclaimed. A live worker reads at least every second, and an entry is only
// delivered to a consumer that reads or claims, so the deletion loses nothing. Left
// alone, every restarted worker (named host-pid) would stay listed in the group.
func (q *Queue) pruneConsumers(ctx context.Context, idle time.Duration) {
	cs, err := q.rdb.XInfoConsumers(ctx, q.stream, group).Result()
	if err != nil {
		return // no group yet: nothing to prune
	}
	for _, c := range cs {
		if c.Pending == 0 && c.Idle > idle {
			q.rdb.XGroupDelConsumer(ctx, q.stream, group, c.Name) // best effort: the next beat retries
		}
	}
}

// leaveGroup deletes the worker's consumer from the group if it has no pending entry.
func (q *Queue) leaveGroup(ctx context.Context, name string) {
	p, err := q.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: q.stream, Group: group, Consumer: name,
		Start: "-", End: "+", Count: 1}).Result()
	if err == nil && len(p) == 0 {
		q.rdb.XGroupDelConsumer(ctx, q.stream, group, name)
	}
}
