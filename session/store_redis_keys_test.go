package session_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
	"github.com/flowteam/flowteam/testkit"
)

// keySlot is the Redis Cluster slot of key: the CRC16 (XMODEM) of its hash tag, or of
// the whole key when it has none, modulo 16384.
func keySlot(key string) int {
	if i := indexByte(key, '{', 0); i >= 0 {
		if j := indexByte(key, '}', i+1); j > i+1 {
			key = key[i+1 : j]
		}
	}
	crc := 0
	for _, c := range []byte(key) {
		crc ^= int(c) << 8
		for range 8 {
			crc <<= 1
			if crc&0x10000 != 0 {
				crc ^= 0x11021
			}
		}
	}
	return crc % 16384
}

func indexByte(s string, c byte, from int) int {
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// The slots CLUSTER KEYSLOT gives on a redis-server 7.0 started with cluster-enabled.
func TestKeySlot(t *testing.T) {
	for key, slot := range map[string]int{
		"foo": 12182, "somekey": 11058, "foo{hash_tag}": 2515, "123456789": 12739,
		"a{}b": 13694, "s:{}x}": 10693,
	} {
		assert.Equal(t, slot, keySlot(key), key)
	}
}

// TestRedisTag: a key holding Tag(id) is in the slot of the instance's hash, whatever
// braces the prefix and the id hold; it is "{id}" for a plain prefix and the prefix's
// tag when the prefix holds one.
func TestRedisTag(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // Tag sends nothing
	t.Cleanup(func() { rdb.Close() })
	ids := []string{"order-1", "{x}", "a{b", "a}b", "}x", "{}", "x{}", "{", "}", "a{b}c", "}}{{"}
	for _, prefix := range []string{session.DefaultRedisPrefix, "{flowteam}:", "a{}b:", "x{y:", "p}q:", "{"} {
		s := session.NewRedisStore(rdb, session.WithPrefix(prefix))
		for _, id := range ids {
			tag := s.Tag(id)
			for _, key := range []string{tag, "fx:" + tag + ":count", tag + "}{"} {
				assert.Equal(t, keySlot(instanceKey(s, id)), keySlot(key), "prefix %q, id %q, key %q", prefix, id, key)
			}
		}
	}
	plain := session.NewRedisStore(rdb)
	for i := range 5000 { // keys hashed whole, over most slots
		id := fmt.Sprintf("}%d", i)
		require.Equal(t, keySlot(instanceKey(plain, id)), keySlot(plain.Tag(id)), id)
	}
	assert.Equal(t, "{order-1}", plain.Tag("order-1"))
	assert.Equal(t, "{a{b}", plain.Tag("a{b"))
	assert.Equal(t, "{flowteam}", session.NewRedisStore(rdb, session.WithPrefix("{flowteam}:")).Tag("order-1"))
	assert.NotContains(t, plain.Tag("}x")[1:len(plain.Tag("}x"))-1], "}", "a tag for a key hashed whole")
}

// toOldLayout moves instance id's hash to the key earlier builds kept it at, as they
// wrote it: without the field "id". RENAME keeps the TTL.
func toOldLayout(t *testing.T, s *session.RedisStore, id string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.Client().Rename(ctx, instanceKey(s, id), s.Prefix()+"s:"+id).Err())
	require.NoError(t, s.Client().HDel(ctx, s.Prefix()+"s:"+id, "id").Err())
}

// TestRedisOldKey: an instance an earlier build saved at "<prefix>s:<id>" is loaded
// and listed there, moved to its key (with its TTL) by the next save even when that
// save conflicts, and deleted there.
func TestRedisOldKey(t *testing.T) {
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			rdb := s.store.Client()
			old := s.store.Prefix() + "s:old-1"
			require.NoError(t, s.store.SaveTTL(ctx, storetest.NewSnapshot("old-1"), 0, time.Hour))
			toOldLayout(t, s.store, "old-1")

			before := s.rt.n.Load()
			got, err := s.store.Load(ctx, "old-1")
			require.NoError(t, err)
			assert.EqualValues(t, 1, got.Version)
			assert.EqualValues(t, 2, s.rt.n.Load()-before, "a miss at the key costs one more round trip")
			for _, st := range []session.Status{"", session.StatusSuspended} {
				ids, err := s.store.List(ctx, st)
				require.NoError(t, err)
				assert.Equal(t, []string{"old-1"}, ids)
			}

			require.ErrorIs(t, s.store.Save(ctx, storetest.NewSnapshot("old-1"), 5), session.ErrConflict)
			assert.EqualValues(t, 0, rdb.Exists(ctx, old).Val(), "moved before the checks")
			assert.Greater(t, rdb.PTTL(ctx, instanceKey(s.store, "old-1")).Val(), 59*time.Minute, "with its TTL")
			before = s.rt.n.Load()
			got, err = s.store.Load(ctx, "old-1")
			require.NoError(t, err)
			assert.EqualValues(t, 1, got.Version)
			assert.EqualValues(t, 1, s.rt.n.Load()-before, "a hit is one round trip")
			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot("old-1"), 1))

			// Delete removes the instance at both keys, when both hold it
			// (an earlier build that saved the instance after this one had moved it).
			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot("old-2"), 0))
			fields := rdb.HGetAll(ctx, instanceKey(s.store, "old-2")).Val()
			delete(fields, "id")
			require.NoError(t, rdb.HSet(ctx, s.store.Prefix()+"s:old-2", fields).Err())
			require.NoError(t, s.store.Delete(ctx, "old-2"))
			assert.EqualValues(t, 0, rdb.Exists(ctx, instanceKey(s.store, "old-2"), s.store.Prefix()+"s:old-2").Val())
			_, err = s.store.Load(ctx, "old-2")
			assert.ErrorIs(t, err, session.ErrNotFound)
			require.NoError(t, s.store.Delete(ctx, "old-1"))
			ids, err := s.store.List(ctx, "")
			require.NoError(t, err)
			assert.Empty(t, ids)
		})
	}
}

// TestRedisOldKeyOfBracedID: the old key of instance "{x}" is the key of instance
// "x". A hash there with the field "id" is x's: "{x}" does not see, move or delete it;
// one without is an earlier build's "{x}", moved to its key by its next save.
func TestRedisOldKeyOfBracedID(t *testing.T) {
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot("x"), 0))
			_, err := s.store.Load(ctx, "{x}")
			require.ErrorIs(t, err, session.ErrNotFound)
			ids, err := s.store.List(ctx, "")
			require.NoError(t, err)
			assert.Equal(t, []string{"x"}, ids)
			require.ErrorIs(t, s.store.Delete(ctx, "{x}"), session.ErrNotFound)
			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot("{x}"), 0))
			for _, id := range []string{"x", "{x}"} {
				got, err := s.store.Load(ctx, id)
				require.NoError(t, err, id)
				assert.Equal(t, id, got.Instance)
			}
			require.NoError(t, s.store.Delete(ctx, "{x}"))
			_, err = s.store.Load(ctx, "x")
			require.NoError(t, err, "x is left")
			require.NoError(t, s.store.Delete(ctx, "x"))

			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot("{y}"), 0))
			toOldLayout(t, s.store, "{y}") // at the key of "y"
			got, err := s.store.Load(ctx, "{y}")
			require.NoError(t, err)
			assert.Equal(t, "{y}", got.Instance)
			require.NoError(t, s.store.Save(ctx, storetest.NewSnapshot("{y}"), 1))
			_, err = s.store.Load(ctx, "y")
			require.ErrorIs(t, err, session.ErrNotFound, "moved off the key of y")
			require.NoError(t, s.store.Delete(ctx, "{y}"))
		})
	}
}

// TestRedisResumeOfOldKey: a run suspended by an earlier build resumes and completes.
func TestRedisResumeOfOldKey(t *testing.T) {
	for name, s := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			eng, cnt := flow.NewEngine(), newCounter()
			approvalGraph(t, eng, cnt, "Manager")
			r := session.NewRunner(eng, s.store, session.WithDurability(session.PerNode))
			_, err := r.Run(ctx, "leave", flow.NewContext("leave-old"))
			require.NoError(t, err)
			toOldLayout(t, s.store, "leave-old")
			res, err := r.Resume(ctx, "leave-old", map[string]any{"approved": true})
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, 2, cnt.get("manager"))
			ids, err := s.store.List(ctx, session.StatusCompleted)
			require.NoError(t, err)
			assert.Equal(t, []string{"leave-old"}, ids)
			assert.EqualValues(t, 0, s.store.Client().Exists(ctx, s.store.Prefix()+"s:leave-old").Val())
		})
	}
}

// TestRedisPrunesWhenASetGrows: a save checks an index set's members only when it adds
// one; the saves of an instance already listed check nothing.
func TestRedisPrunesWhenASetGrows(t *testing.T) {
	ctx := t.Context()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	store := session.NewRedisStore(rdb)
	all := store.Prefix() + "all"
	suspended := store.Prefix() + "status:" + string(session.StatusSuspended)
	require.NoError(t, store.Save(ctx, storetest.NewSnapshot("a"), 0))
	stale := []any{"gone-1", "gone-2", "gone-3"}
	require.NoError(t, rdb.SAdd(ctx, all, stale...).Err())
	require.NoError(t, rdb.SAdd(ctx, suspended, stale...).Err())
	require.NoError(t, store.Save(ctx, storetest.NewSnapshot("a"), 1))
	for _, set := range []string{all, suspended} {
		assert.ElementsMatch(t, append(stale, "a"), toAny(rdb.SMembers(ctx, set).Val()), "%s: nothing added, nothing checked", set)
	}
	require.NoError(t, store.Save(ctx, storetest.NewSnapshot("b"), 0))
	for _, set := range []string{all, suspended} {
		assert.ElementsMatch(t, []any{"a", "b"}, toAny(rdb.SMembers(ctx, set).Val()), "%s: b added, the set checked", set)
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// BenchmarkRedisSaveAmongMany saves one instance again and again while 1000 others are
// stored (and indexed): a per-node checkpoint in a busy store, on the real server at
// REDIS_ADDR (else miniredis).
func BenchmarkRedisSaveAmongMany(b *testing.B) {
	store := testkit.RedisStore(b)
	ctx := context.Background()
	for i := range 1000 {
		require.NoError(b, store.Save(ctx, storetest.NewSnapshot(fmt.Sprintf("other-%d", i)), 0))
	}
	s := storetest.NewSnapshot("busy")
	s.Status = session.StatusRunning
	v := int64(0)
	for b.Loop() {
		if err := store.Save(ctx, s, v); err != nil {
			b.Fatal(err)
		}
		v++
	}
}
