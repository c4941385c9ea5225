package session

import (
	"context"
	"encoding"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStore is a Store on Redis (github.com/redis/go-redis/v9).
//
// Each instance is a hash at "<prefix>s:{<id>}" holding the version ("v"), the status
// ("st"), the creation time ("c", see Store.Save), the format ("f"), the id ("id") and
// the encoded snapshot ("d"). The sets "<prefix>status:<status>" and "<prefix>all"
// index the instances for List; an instance that expires leaves its id there until
// List, or a save that adds an id to the set (it checks a few random members), removes
// it, so the sets stay close to the number of live instances. Save is one Lua script,
// sent with EVAL: the version check, the effects (SaveEffects), the write, the expiry
// and the index updates are atomic and cost exactly one round trip. Load is one HMGET.
// The hash's "v" and "st" are the truth for saves and List: Load reports a hash where
// they disagree with the snapshot in "d", or one missing a field, as ErrCorrupt.
//
// A hash at the key without braces, "<prefix>s:<id>", is read too: Load falls back to that key when
// the new one is missing (one more round trip on a miss), the next save moves it there
// (RENAME, which keeps its TTL), Delete removes both and List sees both. A hash at the
// old key counts only without the field "id", which every hash at the new place has:
// the old key of instance "{x}" is the new key of instance "x".
//
// # Redis Cluster
//
// The braces in the key are a hash tag: each instance's hash has a slot of its own, and
// Tag gives keys that share it (the keys of SaveEffects' effects). Two things would
// have to change to spread a store over a cluster: the index sets are one slot each,
// yet every save's script writes them beside the instance and List reads them with the
// instances; and the old-key fallback (the save's RENAME, Delete) spans two slots. A
// script given keys of several slots fails (CROSSSLOT), so until then use a prefix
// holding a hash tag ("{flowteam}:"): every key of the store, and of the effects built
// with Tag, is in that one slot, and the store works on a cluster, on one node.
//
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

// key is the key of instance id's hash.
func (s *RedisStore) key(id string) string { return s.prefix + "s:{" + id + "}" }

// oldKey is where earlier builds kept instance id's hash.
func (s *RedisStore) oldKey(id string) string { return s.prefix + "s:" + id }

// stateScript defines state(p, id), the status of instance id with instance key
// prefix p: a string, false when the instance is not stored (or the key at its old
// place is no instance, see RedisStore), or an error table when its key is not a hash.
const stateScript = `
local function state(p, id)
  local st = redis.pcall('HGET', p .. '{' .. id .. '}', 'st')
  if st then return st end
  local old = redis.pcall('HMGET', p .. id, 'st', 'id')
  if old.err or old[2] then return false end
  return old[1]
end
`

// saveScript: KEYS[1] the instance hash, KEYS[2] the set of all ids, KEYS[3] the
// instance's old key, KEYS[4:] the effects' keys; ARGV expected version, new version,
// status, data, ttl in ms (0: none), status set prefix, id, instance key prefix,
// creation time to store, creation time to check ("": none; see recreated), snapshot
// format, then per effect its command, its number of arguments and the arguments. It
// returns {1, new version}, {0, stored version}, {2, 0} when the hash exists without a
// version (damage Load reports: not saved over as if no instance were stored), {3, 0}
// when the stored instance was created at another time, or {4, stored format} when the
// hash holds a snapshot of another format (a newer build's: never saved over, as
// FileStore does). Hashes written before the field "f" existed are not checked. An
// effect that fails ends the script with its error, the effect's number added.
//
// Versions stay decimal strings, as the store writes them, and are compared as such:
// a Lua number is a float64, which above 2^53 would make neighbouring versions equal.
//
// An instance that expires stays a member of its index sets. So a save that adds a
// member to a set checks up to pruneSample random members of it and removes those whose
// instance expired (or, in a status set, changed status), as List does. A set grows
// only by such saves, and once its stale members are more than about 1/pruneSample of
// it, each removes more of them on average than it adds: without any List the sets
// stay within a small factor of the live instances. A save that adds nothing (every
// save of a running instance after its first) checks nothing.
//
// A key at an instance's place that is not a hash (another program's) is never
// written over ({5, 0}), and pruning leaves its id alone: a save of another instance
// must not fail on it.
const saveScript = stateScript + `
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('TYPE', KEYS[3])['ok'] == 'hash'
  and redis.call('HEXISTS', KEYS[3], 'id') == 0 then
  redis.call('RENAME', KEYS[3], KEYS[1])
  redis.call('HSET', KEYS[1], 'id', ARGV[7])
end
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
local a = 12
for i = 4, #KEYS do
  local n = tonumber(ARGV[a + 1])
  local r = redis.pcall(ARGV[a], KEYS[i], unpack(ARGV, a + 2, a + 1 + n))
  if type(r) == 'table' and r.err then
    return redis.error_reply(r.err .. ' (effect ' .. (i - 3) .. ': ' .. ARGV[a] .. ')')
  end
  a = a + 2 + n
end
local old = redis.call('HGET', KEYS[1], 'st')
if old and old ~= ARGV[3] then redis.call('SREM', ARGV[6] .. old, ARGV[7]) end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'st', ARGV[3], 'd', ARGV[4], 'c', ARGV[9], 'f', ARGV[11], 'id', ARGV[7])
local ttl = tonumber(ARGV[5])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('PERSIST', KEYS[1]) end
local function prune(set, status)
  for _, id in ipairs(redis.call('SRANDMEMBER', set, ` + pruneSample + `)) do
    local st = state(ARGV[8], id)
    if type(st) == 'table' then
      -- not a hash: another program's key, left for Load and Delete to report
    elseif (not st) or (status and st ~= status) then redis.call('SREM', set, id) end
  end
end
if redis.call('SADD', ARGV[6] .. ARGV[3], ARGV[7]) == 1 then prune(ARGV[6] .. ARGV[3], ARGV[3]) end
if redis.call('SADD', KEYS[2], ARGV[7]) == 1 then prune(KEYS[2], false) end
return {1, ARGV[2]}
`

// pruneSample is the number of members of an index set a save checks (see
// saveScript).
const pruneSample = "8"

// deleteScript: KEYS[1] the instance hash, KEYS[2] the set of all ids, KEYS[3] the
// instance's old key; ARGV status set prefix, id, snapshot format. It deletes both
// hashes and returns 1, 0 when the instance is not stored, or -1 when a hash holds a
// snapshot of another format (nothing deleted, see saveScript), -2 when the key is not
// a hash (another program's: nothing deleted either). A hash that lost its status
// (damage Load reports) is deleted too; its id leaves the status set it is in when
// List or a save checks that set.
const deleteScript = `
local keys = {}
local t = redis.call('TYPE', KEYS[1])['ok']
if t ~= 'none' then
  if t ~= 'hash' then return -2 end
  table.insert(keys, KEYS[1])
end
if redis.call('TYPE', KEYS[3])['ok'] == 'hash' and redis.call('HEXISTS', KEYS[3], 'id') == 0 then
  table.insert(keys, KEYS[3])
end
if #keys == 0 then return 0 end
for _, k in ipairs(keys) do
  local f = redis.call('HGET', k, 'f')
  if f and f ~= ARGV[3] then return -1 end
end
for _, k in ipairs(keys) do
  local st = redis.call('HGET', k, 'st')
  redis.call('DEL', k)
  if st then redis.call('SREM', ARGV[1] .. st, ARGV[2]) end
end
redis.call('SREM', KEYS[2], ARGV[2])
return 1
`

// listScript: KEYS[1] the index set; ARGV instance key prefix, status ("" for all).
// Members whose instance expired or changed status are removed from the set on the way;
// a member whose key is not a hash is not listed (it failed the whole List).
const listScript = stateScript + `
local ids = redis.call('SMEMBERS', KEYS[1])
local out = {}
for _, id in ipairs(ids) do
  local st = state(ARGV[1], id)
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
// would conflict), and one of another status would be listed under the wrong one. An
// instance not at its key is looked for at its old key (see RedisStore), a second
// round trip.
func (s *RedisStore) Load(ctx context.Context, id string) (*Snapshot, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	vals, err := s.rdb.HMGet(ctx, s.key(id), "v", "st", "d").Result()
	if redis.HasErrorPrefix(err, "WRONGTYPE") {
		return nil, fmt.Errorf("session: redis: load %q: %w: the key is not a hash", id, ErrCorrupt)
	}
	if err == nil && vals[0] == nil && vals[1] == nil && vals[2] == nil {
		// Not at its key: at the old one, if a hash without "id" is there.
		vals, err = s.rdb.HMGet(ctx, s.oldKey(id), "v", "st", "d", "id").Result()
		if redis.HasErrorPrefix(err, "WRONGTYPE") || (err == nil && vals[3] != nil) {
			return nil, notFound(id)
		}
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
	return s.save(ctx, snap, expectedVersion, s.ttl, nil)
}

// SaveTTL implements TTLStore.
func (s *RedisStore) SaveTTL(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration) error {
	return s.save(ctx, snap, expectedVersion, ttl, nil)
}

// SaveEffects implements EffectStore. Each effect must be a RedisEffect with a Name;
// its Key goes to the script as one of its KEYS, its Args as ARGV, which takes what
// go-redis takes as a command's argument except pointers (strings, []byte, integers,
// floats, bools, time.Time, time.Duration, net.IP, nil and encoding.BinaryMarshaler,
// marshalled here), at most MaxEffectArgs of them. Anything else fails the save before
// anything is sent. A ttl of 0
// is the store's (WithTTL).
//
// The script makes the effects in order once its version, format and creation checks
// pass and before it writes the snapshot, so a save that fails them makes none. An
// effect whose command fails (WRONGTYPE, an unknown command) ends the script with the
// command's error (a redis.Error, its text followed by the effect's number and
// command) before the snapshot is written, but the effects before it stay made: Redis
// rolls back neither a script nor a MULTI. It is still one round trip. On Redis
// Cluster the effects' keys must be in the instance's slot (Tag).
func (s *RedisStore) SaveEffects(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration, effects []any) error {
	if ttl <= 0 {
		ttl = s.ttl
	}
	return s.save(ctx, snap, expectedVersion, ttl, effects)
}

// MaxEffectArgs is the most arguments a RedisEffect may have: the save's script
// passes them to the command with Lua's unpack, which takes a few thousand values at
// most (about 8000 on Redis 7, fewer on miniredis). Split a longer write in several.
const MaxEffectArgs = 1000

// redisEffects returns effects as RedisEffect values with their arguments as go-redis
// will write them, or an error naming the first that is not one.
func redisEffects(effects []any) ([]RedisEffect, error) {
	out := make([]RedisEffect, len(effects))
	for i, e := range effects {
		re, ok := e.(RedisEffect)
		if !ok {
			return nil, fmt.Errorf("effect %d: %T is not a session.RedisEffect", i+1, e)
		}
		if re.Name == "" {
			return nil, fmt.Errorf("effect %d: no command", i+1)
		}
		if len(re.Args) > MaxEffectArgs {
			return nil, fmt.Errorf("effect %d (%s): %d arguments, more than %d", i+1, re.Name, len(re.Args), MaxEffectArgs)
		}
		re.Args = slices.Clone(re.Args)
		for j, a := range re.Args {
			v, err := effectArg(a)
			if err != nil {
				return nil, fmt.Errorf("effect %d (%s): argument %d: %w", i+1, re.Name, j+1, err)
			}
			re.Args[j] = v
		}
		out[i] = re
	}
	return out, nil
}

// effectArg returns a as go-redis will write it when it takes it, else an error
// (before anything is sent, where go-redis would fail while writing the command).
func effectArg(a any) (any, error) {
	switch a := a.(type) {
	case nil, string, []byte, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr,
		float32, float64, bool, time.Time, time.Duration, net.IP:
		return a, nil
	case encoding.BinaryMarshaler:
		b, err := a.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("marshal %T: %w", a, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("can't send %T as a redis argument (implement encoding.BinaryMarshaler)", a)
}

// save runs saveScript for snap and its effects (see SaveEffects).
func (s *RedisStore) save(ctx context.Context, snap *Snapshot, expectedVersion int64, ttl time.Duration, effects []any) error {
	p, err := prepare(snap, expectedVersion, s.now(), ttl, encodeConfig{})
	if err != nil {
		return err
	}
	id := snap.Instance
	effs, err := redisEffects(effects)
	if err != nil {
		return fmt.Errorf("session: redis: save %q: %w", id, err)
	}
	ms := int64(0)
	if ttl > 0 {
		ms = max(ttl.Milliseconds(), 1)
	}
	check := ""
	if !snap.Created.IsZero() {
		check = createdField(snap.Created)
	}
	keys := append(make([]string, 0, 3+len(effs)), s.key(id), s.prefix+"all", s.oldKey(id))
	args := append(make([]any, 0, 11+2*len(effs)), expectedVersion, p.snap.Version, string(p.snap.Status), p.data,
		ms, s.prefix+"status:", id, s.prefix+"s:", createdField(p.snap.Created), check, FormatVersion)
	for _, e := range effs {
		keys = append(keys, e.Key)
		args = append(append(args, e.Name, len(e.Args)), e.Args...)
	}
	res, err := s.rdb.Eval(ctx, saveScript, keys, args...).Int64Slice()
	if err != nil {
		return fmt.Errorf("session: redis: save %q: %w", id, err)
	}
	if err := saveResult(id, expectedVersion, check, res); err != nil {
		return err
	}
	p.done(snap)
	return nil
}

// saveResult is the error saveScript's reply res stands for, if any.
func saveResult(id string, expectedVersion int64, check string, res []int64) error {
	if len(res) != 2 {
		return fmt.Errorf("session: redis: save %q: unexpected reply %v", id, res)
	}
	switch res[0] {
	case 1:
		return nil
	case 2:
		return fmt.Errorf("session: redis: save %q: %w: the hash holds no stored version", id, ErrCorrupt)
	case 3:
		return fmt.Errorf("%w: instance %q: expected version %d of the instance created at %s, the stored one was created at another time",
			ErrConflict, id, expectedVersion, check)
	case 4:
		return fmt.Errorf("session: redis: save %q: %w %d (this build writes format %d): not saved over", id, ErrFormat, res[1], FormatVersion)
	case 5:
		return fmt.Errorf("session: redis: save %q: %w: the key is not a hash: not saved over", id, ErrCorrupt)
	}
	return conflict(id, expectedVersion, res[1])
}

// createdField is a creation time as the hash field "c" holds it: one instant, one
// string, so that the save script can compare them.
func createdField(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Delete implements Store. It deletes the instance at its key and at its old one
// (see RedisStore).
func (s *RedisStore) Delete(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	n, err := s.rdb.Eval(ctx, deleteScript, []string{s.key(id), s.prefix + "all", s.oldKey(id)}, s.prefix+"status:", id, FormatVersion).Int64()
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
