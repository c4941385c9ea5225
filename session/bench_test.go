package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
	"github.com/flowteam/flowteam/testkit"
)

// snapshot20 is a snapshot with 20 variables of the usual kinds.
func snapshot20() *session.Snapshot {
	s := saved("bench-1")
	s.Vars = map[string]any{}
	for i := range 20 {
		var v any
		switch i % 5 {
		case 0:
			v = fmt.Sprintf("value number %d", i)
		case 1:
			v = int64(i * 1000)
		case 2:
			v = float64(i) + 0.5
		case 3:
			v = i%2 == 0
		case 4:
			v = []any{int64(i), "x"}
		}
		s.Vars[fmt.Sprintf("var%02d", i)] = v
	}
	return s
}

func BenchmarkEncode20Vars(b *testing.B) {
	s := snapshot20()
	b.ReportAllocs()
	defer testkit.ReportCPU(b, 0)()
	for b.Loop() {
		if _, err := session.Encode(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode20Vars(b *testing.B) {
	data, err := session.Encode(snapshot20())
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	defer testkit.ReportCPU(b, 0)()
	for b.Loop() {
		if _, err := session.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMemoryStoreSaveLoad(b *testing.B) {
	ctx := context.Background()
	store := session.NewMemoryStore()
	s := snapshot20()
	v := int64(0)
	b.ReportAllocs()
	defer testkit.ReportCPU(b, 0)()
	for b.Loop() {
		if err := store.Save(ctx, s, v); err != nil {
			b.Fatal(err)
		}
		v++
		if _, err := store.Load(ctx, s.Instance); err != nil {
			b.Fatal(err)
		}
	}
}

// chainGraph is n activity nodes in a row, each a trivial Go task.
func chainGraph(b *testing.B, eng *flow.Engine, n int) {
	require.NoError(b, eng.Register(testkit.Chain(b, "chain", n, nil)))
}

// BenchmarkDurability runs a 50-node chain with 20 variables: without a store, with
// the Runner saving on exit, and saving per node; ns/node is the time per node, so
// per-node minus on-exit is the cost of per-node durability.
func BenchmarkDurability(b *testing.B) {
	const nodes = 50
	vars := snapshot20().Vars
	eng := flow.NewEngine()
	chainGraph(b, eng, nodes)
	ctx := context.Background()
	steps := nodes + 2
	b.Run("engine-only", func(b *testing.B) {
		b.ReportAllocs()
		defer testkit.ReportCPU(b, 0)()
		for b.Loop() {
			if _, err := eng.Eval(ctx, "chain", flow.NewContextWith("x", vars)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/node")
	})
	for _, d := range []session.Durability{session.OnExit, session.PerNode} {
		b.Run("memory-"+d.String(), func(b *testing.B) {
			store := session.NewMemoryStore()
			r := session.NewRunner(eng, store, session.WithDurability(d))
			b.ReportAllocs()
			defer testkit.ReportCPU(b, 0)()
			for b.Loop() {
				if _, err := r.Run(ctx, "chain", flow.NewContextWith("i-1", vars)); err != nil {
					b.Fatal(err)
				}
				if err := store.Delete(ctx, "i-1"); err != nil { // a steady state, not a growing heap
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/node")
		})
	}
	b.Run("file-per-node", func(b *testing.B) {
		store, err := session.NewFileStore(b.TempDir())
		require.NoError(b, err)
		r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Run(ctx, "chain", flow.NewContextWith("i-1", vars)); err != nil {
				b.Fatal(err)
			}
			if err := store.Delete(ctx, "i-1"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/node")
	})
}

// BenchmarkRedisSave saves on miniredis (and the real server at REDIS_ADDR) and
// reports the round trips per save.
func BenchmarkRedisSave(b *testing.B) {
	stores := map[string]*session.RedisStore{}
	mr := miniredis.RunT(b)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	b.Cleanup(func() { rdb.Close() })
	stores["miniredis"] = session.NewRedisStore(rdb)
	if realRedisAddr() != "" {
		stores["redis-server"] = realRedis(b)
	}
	for name, store := range stores {
		b.Run(name, func(b *testing.B) {
			rt := &roundTrips{}
			store.Client().AddHook(rt)
			ctx := context.Background()
			s := storetest.NewSnapshot("bench-redis")
			for k, v := range snapshot20().Vars {
				s.Vars[k] = v
			}
			require.NoError(b, store.Client().Ping(ctx).Err())
			if err := store.Delete(ctx, s.Instance); err != nil && !errors.Is(err, session.ErrNotFound) {
				b.Fatal(err)
			}
			before := rt.n.Load()
			v := int64(0)
			b.ReportAllocs()
			for b.Loop() {
				if err := store.Save(ctx, s, v); err != nil {
					b.Fatal(err)
				}
				v++
			}
			b.ReportMetric(float64(rt.n.Load()-before)/float64(b.N), "roundtrips/save")
		})
	}
}

// fileBenchSnapshot is a snapshot as a suspended run saves it: NewSnapshot's
// frontier and trace with vars variables, each of about size bytes when size is not 0
// (else of the usual kinds).
func fileBenchSnapshot(id string, vars, size int) *session.Snapshot {
	s := storetest.NewSnapshot(id)
	for i := range vars {
		var v any
		switch {
		case size > 0:
			v = strings.Repeat(string(rune('a'+i%26)), size)
		case i%4 == 0:
			v = fmt.Sprintf("value number %d", i)
		case i%4 == 1:
			v = int64(i * 1000)
		case i%4 == 2:
			v = map[string]any{"id": int64(i), "name": "item", "tags": []any{"a", "b"}}
		default:
			v = float64(i) + 0.5
		}
		s.Vars[fmt.Sprintf("var%03d", i)] = v
	}
	return s
}

// BenchmarkFileStore saves, loads and lists one instance in a FileStore, with a
// realistic snapshot (50 variables and a frontier) and with a large body (1 MB of
// variables): a save and a List read only the stored file's header, so their cost
// should not grow with the body as Load's does.
func BenchmarkFileStore(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		vars, size int
	}{{"50vars", 50, 0}, {"1MB", 64, 16 << 10}} {
		setup := func(b *testing.B) (*session.FileStore, *session.Snapshot) {
			fs, err := session.NewFileStore(b.TempDir())
			require.NoError(b, err)
			s := fileBenchSnapshot("bench-file", c.vars, c.size)
			require.NoError(b, fs.Save(ctx, s, 0))
			return fs, s
		}
		b.Run(c.name+"/save", func(b *testing.B) {
			fs, s := setup(b)
			b.ReportAllocs()
			for b.Loop() {
				if err := fs.Save(ctx, s, s.Version); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/load", func(b *testing.B) {
			fs, s := setup(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fs.Load(ctx, s.Instance); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/list", func(b *testing.B) {
			fs, _ := setup(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fs.List(ctx, session.StatusSuspended); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCodecShare puts a save beside the store's raw write of the same bytes, so
// that save minus raw is what the codec (and the version check) adds, and encode
// beside both: on a FileStore the raw write is a temporary file written, synced and
// renamed and the directory synced; on Redis one HSET of the encoded snapshot. The
// snapshot is one a per-node checkpoint saves: a frontier, a trace and 20 variables.
// encode-stdlib is encoding/json's Marshal of the same snapshot, a figure to compare
// encode with (it applies none of the codec's rules).
func BenchmarkCodecShare(b *testing.B) {
	ctx := context.Background()
	s := fileBenchSnapshot("bench-share", 0, 0)
	for k, v := range snapshot20().Vars {
		s.Vars[k] = v
	}
	s.Status = session.StatusRunning
	st := s.Clone() // stamped as a save stamps it
	st.Format, st.Version, st.Created, st.Updated = session.FormatVersion, 1, time.Now().UTC(), time.Now().UTC()
	data, err := session.Encode(st)
	require.NoError(b, err)
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		b.ReportMetric(float64(len(data)), "bytes")
		defer testkit.ReportCPU(b, 0)()
		for b.Loop() {
			if _, err := session.Encode(st); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode-stdlib", func(b *testing.B) {
		b.ReportAllocs()
		defer testkit.ReportCPU(b, 0)()
		for b.Loop() {
			if _, err := json.Marshal(st); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("file/save", func(b *testing.B) {
		fs, err := session.NewFileStore(b.TempDir())
		require.NoError(b, err)
		c := s.Clone()
		b.ReportAllocs()
		for b.Loop() {
			if err := fs.Save(ctx, c, c.Version); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("file/raw", func(b *testing.B) {
		dir := b.TempDir()
		b.ReportAllocs()
		for b.Loop() {
			rawFileWrite(b, dir, data)
		}
	})
	mr := miniredis.RunT(b)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	b.Cleanup(func() { rdb.Close() })
	clients := map[string]*session.RedisStore{"miniredis": session.NewRedisStore(rdb)}
	if realRedisAddr() != "" {
		clients["redis-server"] = realRedis(b)
	}
	for name, store := range clients {
		b.Run(name+"/save", func(b *testing.B) {
			c := s.Clone()
			c.Instance = "bench-share-" + name
			_ = store.Delete(ctx, c.Instance)
			b.ReportAllocs()
			for b.Loop() {
				if err := store.Save(ctx, c, c.Version); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/raw", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := store.Client().HSet(ctx, "bench-share-raw", "d", data).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// rawFileWrite writes data as FileStore writes a snapshot, without encoding it or
// checking a version.
func rawFileWrite(b *testing.B, dir string, data []byte) {
	t, err := os.CreateTemp(dir, ".tmp-*")
	require.NoError(b, err)
	_, err = t.Write(data)
	require.NoError(b, err)
	require.NoError(b, t.Sync())
	require.NoError(b, t.Close())
	require.NoError(b, os.Rename(t.Name(), filepath.Join(dir, "raw.json")))
	d, err := os.Open(dir)
	require.NoError(b, err)
	require.NoError(b, d.Sync())
	require.NoError(b, d.Close())
}
