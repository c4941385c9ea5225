package session

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStore is a Store on Redis (github.com/redis/go-redis/v9).
//
// Each instance is a hash at "<prefix>s:<id>" holding the version ("v"), the status
// ("st"), the creation time ("c", see Store.Save) and the encoded snapshot ("d"). The sets "<prefix>status:<status>" and
// "<prefix>all" index the instances for List; an instance that expires leaves its id
// there until List or a later save (which checks a few random members) removes it, so
// the sets stay close to the number of live instances. Save is one Lua script, sent with EVAL,
// so the version check, the write, the expiry and the index updates are atomic and
// cost exactly one round trip; Load is one HMGET. List and Delete are one script each.
// The hash's "v" and "st" are the truth for saves and List: Load checks them against
// the snapshot in "d" and reports a hash where they disagree, or one missing a field,
// as ErrCorrupt naming what it found (see Load); Save does not take a hash without
// a version for a missing instance (ErrCorrupt), and Delete removes such a hash.
//
// The scripts build the index keys from the prefix, so in Redis Cluster the prefix
// must hold a hash tag ("{flowteam}:") to keep an installation's keys in one slot.
// The RedisStore does not own the client: close it yourself.
type RedisStore struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
	now    func() time.Time
}

// RedisOption configures a RedisStore.
type RedisOption func(*RedisStore)

// DefaultRedisPrefix is the key prefix of a RedisStore without WithPrefix.
const DefaultRedisPrefix = "flowteam:session:"

// WithPrefix sets the prefix of every key the store uses (default DefaultRedisPrefix).
func WithPrefix(p string) RedisOption { return func(s *RedisStore) { s.prefix = p } }

// WithTTL sets the time to live of every Save (default 0: never expire). Redis
// forgets the instance when it passes.
func WithTTL(ttl time.Duration) RedisOption { return func(s *RedisStore) { s.ttl = ttl } }

// WithRedisClock sets the clock used for the snapshot's timestamps (default
// time.Now). Expiry is Redis's own.
func WithRedisClock(now func() time.Time) RedisOption { return func(s *RedisStore) { s.now = now } }

// NewRedisStore returns a store on the given client.
func NewRedisStore(rdb redis.UniversalClient, opts ...RedisOption) *RedisStore {
	s := &RedisStore{rdb: rdb, prefix: DefaultRedisPrefix, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Client returns the store's client.
func (s *RedisStore) Client() redis.UniversalClient { return s.rdb }

// Prefix returns the key prefix.
func (s *RedisStore) Prefix() string { return s.prefix }

func (s *RedisStore) key(id string) string { return s.prefix + "s:" + id }

// saveScript: KEYS[1] the instance hash, KEYS[2] the set of all ids; ARGV expected
// version, new version, status, data, ttl in ms (0: none), status set prefix, id,
// instance key prefix, creation time to store, creation time to check ("": none; see
// recreated), snapshot format. It returns {1, new version}, {0, stored version}, {2, 0}
// when the hash exists without a version (damage Load reports: not saved over as if
// no instance were stored), {3, 0} when the stored instance was created at another
// time, or {4, stored format} when the hash holds a snapshot of another format (a
// newer build's: never saved over, as FileStore does). Hashes written before the
// field "f" existed are not checked.
//
// Versions stay decimal strings, as the store writes them, and are compared as such:
// a Lua number is a float64, which above 2^53 would make neighbouring versions equal.
//
// An instance that expires stays a member of its index sets, and only List removed
// such members. So each save also checks up to pruneSample random members of the two
// sets it adds to and removes those whose instance expired (or, in the status set,
// changed status), as List does: a set grows only by saves, and once its stale
// members are more than a fraction of about 1/pruneSample, a save removes more of them
// on average than it adds, so without any List the sets stay within a small factor
// of the live instances. A set of at most pruneSample members is pruned whole.
//
// A key at an instance's place that is not a hash (another program's) is never
// written over ({5, 0}), and pruning leaves its id alone: a save of another instance
// must not fail on it.
const saveScript = `
local t = redis.call('TYPE', KEYS[1])['ok']
if t ~= 'hash' and t ~= 'none' then return {5, 0} end
local v = redis.call('HGET', KEYS[1], 'v')
if not v then
  if redis.call('EXISTS', KEYS[1]) == 1 then return {2, 0} end
  v = '0'
end
if v ~= ARGV[1] then return {0, v} end
local f = redis.call('HGET', KEYS[1], 'f')
if f and f ~= ARGV[11] then return {4, f} end
if ARGV[10] ~= '' and v ~= '0' then
  local c = redis.call('HGET', KEYS[1], 'c')
  if c and c ~= ARGV[10] then return {3, 0} end
end
local old = redis.call('HGET', KEYS[1], 'st')
if old and old ~= ARGV[3] then redis.call('SREM', ARGV[6] .. old, ARGV[7]) end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'st', ARGV[3], 'd', ARGV[4], 'c', ARGV[9], 'f', ARGV[11])
local ttl = tonumber(ARGV[5])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('PERSIST', KEYS[1]) end
redis.call('SADD', ARGV[6] .. ARGV[3], ARGV[7])
redis.call('SADD', KEYS[2], ARGV[7])
local function prune(set, status)
  for _, id in ipairs(redis.call('SRANDMEMBER', set, ` + pruneSample + `)) do
    local st = redis.pcall('HGET', ARGV[8] .. id, 'st')
    if type(st) == 'table' then
      -- not a hash: another program's key, left for Load and Delete to report
    elseif (not st) or (status and st ~= status) then redis.call('SREM', set, id) end
  end
end
prune(ARGV[6] .. ARGV[3], ARGV[3])
prune(KEYS[2], false)
return {1, ARGV[2]}
`

// pruneSample is the number of members of each index set a save checks (see
// saveScript).
const pruneSample = "8"

// deleteScript: KEYS[1] the instance hash, KEYS[2] the set of all ids; ARGV status
// set prefix, id, snapshot format. It returns 1, 0 when the instance is not stored, or
// -1 when the hash holds a snapshot of another format (not deleted, see saveScript), -2
// when the key is not a hash (another program's: not deleted either). A
// hash that lost its status (damage Load reports) is deleted too; its id leaves the
// status set it is in when List or a save checks that set.
const deleteScript = `
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then return 0 end
if t ~= 'hash' then return -2 end
local f = redis.call('HGET', KEYS[1], 'f')
if f and f ~= ARGV[3] then return -1 end
local st = redis.call('HGET', KEYS[1], 'st')
redis.call('DEL', KEYS[1])
if st then redis.call('SREM', ARGV[1] .. st, ARGV[2]) end
redis.call('SREM', KEYS[2], ARGV[2])
return 1
`

// listScript: KEYS[1] the index set; ARGV instance key prefix, status ("" for all).
// Members whose instance expired or changed status are removed from the set on the way;
// a member whose key is not a hash is not listed (it failed the whole List).
const listScript = `
local ids = redis.call('SMEMBERS', KEYS[1])
local out = {}
for _, id in ipairs(ids) do
  local st = redis.pcall('HGET', ARGV[1] .. id, 'st')
  if type(st) == 'table' then
    -- not a hash: not an instance (another program's key); Load reports it
  elseif (not st) or (ARGV[2] ~= '' and st ~= ARGV[2]) then
    redis.call('SREM', KEYS[1], id)
  else
    table.insert(out, id)
  end
end
return out
`

// Load implements Store. It reads the hash's version and status with the snapshot
// (still one round trip) and reports a hash whose fields disagree with its snapshot as
// ErrCorrupt naming both: saves check the version in "v" and List goes by "st", so a
// snapshot loaded from "d" at another version could never be saved over (every resume
// would conflict), and one of another status would be listed under the wrong one.
func (s *RedisStore) Load(ctx context.Context, id string) (*Snapshot, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	vals, err := s.rdb.HMGet(ctx, s.key(id), "v", "st", "d").Result()
	if redis.HasErrorPrefix(err, "WRONGTYPE") {
		return nil, fmt.Errorf("session: redis: load %q: %w: the key is not a hash", id, ErrCorrupt)
	}
	if err != nil {
		return nil, fmt.Errorf("session: redis: load %q: %w", id, err)
	}
	if vals[0] == nil && vals[1] == nil && vals[2] == nil {
		return nil, notFound(id)
	}
	snap, err := decodeHash(id, vals)
	if err != nil {
		return nil, fmt.Errorf("session: redis: load %q: %w", id, err)
	}
	return snap, nil
}

// decodeHash decodes the snapshot of id from the hash fields v, st and d (nil where
// missing) and checks it against the other two.
func decodeHash(id string, vals []any) (*Snapshot, error) {
	v, _ := vals[0].(string)
	st, _ := vals[1].(string)
	d, _ := vals[2].(string)
	switch {
	case vals[2] == nil:
		return nil, fmt.Errorf("%w: the hash holds no snapshot (version %q, status %q)", ErrCorrupt, v, st)
	case vals[0] == nil:
		return nil, fmt.Errorf("%w: the hash holds no stored version", ErrCorrupt)
	}
	snap, err := Decode([]byte(d))
	if err != nil {
		return nil, err
	}
	if err := belongsTo(snap, id); err != nil {
		return nil, err
	}
	if v != strconv.FormatInt(snap.Version, 10) {
		return nil, fmt.Errorf("%w: stored version is %s, the snapshot's is %d", ErrCorrupt, v, snap.Version)
	}
	if st != string(snap.Status) {
		return nil, fmt.Errorf("%w: stored status is %q, the snapshot's is %q", ErrCorrupt, st, snap.Status)
	}
	return snap, nil
}

// Save implements Store.
func (s *RedisStore) Save(ctx context.Context, snap *Snapshot, expectedVersion int64) error {
	return s.SaveTTL(ctx, snap, expectedVersion, s.ttl)
}

// SaveTTL implements TTLStore.
func (s *RedisStore) SaveTTL(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration) error {
	p, err := prepare(snap, expectedVersion, s.now(), ttl, encodeConfig{})
	if err != nil {
		return err
	}
	ms := int64(0)
	if ttl > 0 {
		ms = max(ttl.Milliseconds(), 1)
	}
	id := snap.Instance
	check := ""
	if !snap.Created.IsZero() {
		check = createdField(snap.Created)
	}
	res, err := s.rdb.Eval(ctx, saveScript, []string{s.key(id), s.prefix + "all"},
		expectedVersion, p.snap.Version, string(p.snap.Status), p.data, ms, s.prefix+"status:", id, s.prefix+"s:",
		createdField(p.snap.Created), check, FormatVersion).Int64Slice()
	if err != nil {
		return fmt.Errorf("session: redis: save %q: %w", id, err)
	}
	if len(res) != 2 {
		return fmt.Errorf("session: redis: save %q: unexpected reply %v", id, res)
	}
	switch res[0] {
	case 1:
	case 2:
		return fmt.Errorf("session: redis: save %q: %w: the hash holds no stored version", id, ErrCorrupt)
	case 3:
		return fmt.Errorf("%w: instance %q: expected version %d of the instance created at %s, the stored one was created at another time",
			ErrConflict, id, expectedVersion, check)
	case 4:
		return fmt.Errorf("session: redis: save %q: %w %d (this build writes format %d): not saved over", id, ErrFormat, res[1], FormatVersion)
	case 5:
		return fmt.Errorf("session: redis: save %q: %w: the key is not a hash: not saved over", id, ErrCorrupt)
	default:
		return conflict(id, expectedVersion, res[1])
	}
	p.done(snap)
	return nil
}

// createdField is a creation time as the hash field "c" holds it: one instant, one
// string, so that the save script can compare them.
func createdField(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Delete implements Store.
func (s *RedisStore) Delete(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	n, err := s.rdb.Eval(ctx, deleteScript, []string{s.key(id), s.prefix + "all"}, s.prefix+"status:", id, FormatVersion).Int64()
	if err != nil {
		return fmt.Errorf("session: redis: delete %q: %w", id, err)
	}
	if n == -2 {
		return fmt.Errorf("session: redis: delete %q: %w: the key is not a hash; not deleted", id, ErrCorrupt)
	}
	if n < 0 {
		return fmt.Errorf("session: redis: delete %q: %w: the hash holds a snapshot of another format; not deleted", id, ErrFormat)
	}
	if n == 0 {
		return notFound(id)
	}
	return nil
}

// List implements Store.
func (s *RedisStore) List(ctx context.Context, status Status) ([]string, error) {
	set := s.prefix + "all"
	if status != "" {
		set = s.prefix + "status:" + string(status)
	}
	ids, err := s.rdb.Eval(ctx, listScript, []string{set}, s.prefix+"s:", string(status)).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("session: redis: list: %w", err)
	}
	if ids == nil {
		ids = []string{}
	}
	slices.Sort(ids)
	return ids, nil
}
