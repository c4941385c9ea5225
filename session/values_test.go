package session_test

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// allStores returns a constructor per store: memory, file, miniredis and, with
// REDIS_ADDR, the real server.
func allStores() map[string]func(t *testing.T) session.Store {
	return map[string]func(t *testing.T) session.Store{
		"memory": func(t *testing.T) session.Store { return session.NewMemoryStore() },
		"file": func(t *testing.T) session.Store {
			fs, err := session.NewFileStore(t.TempDir())
			require.NoError(t, err)
			return fs
		},
		"miniredis": func(t *testing.T) session.Store {
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { rdb.Close() })
			return session.NewRedisStore(rdb)
		},
		"redis-server": func(t *testing.T) session.Store { return realRedis(t) },
	}
}

type point struct {
	X int    `json:"x"`
	Y string `json:"y,omitempty"`
}

// TestValueRoundTrips saves variables of many Go types in every store and through
// Encode/Decode: what comes back is what went in, or its documented canonical form
// (integers int64, other numbers float64, objects map[string]any, arrays []any,
// other values their JSON form).
func TestValueRoundTrips(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 123456789, time.UTC)
	paris := time.FixedZone("CET", 3600)
	n := 7
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	cases := []struct {
		name    string
		in, out any
	}{
		{"nil", nil, nil},
		{"true", true, true},
		{"empty string", "", ""},
		{"unicode string", "Zoë 日本 🚀 \u2028", "Zoë 日本 🚀 \u2028"},
		{"control characters", "a\x00b\tc\nd\x1f", "a\x00b\tc\nd\x1f"},
		{"invalid UTF-8 string", "bad \xff", "bad \ufffd"},
		{"int", 42, int64(42)},
		{"int64 max", int64(math.MaxInt64), int64(math.MaxInt64)},
		{"int64 min", int64(math.MinInt64), int64(math.MinInt64)},
		{"int8", int8(-8), int64(-8)},
		{"uint32", uint32(math.MaxUint32), int64(math.MaxUint32)},
		{"uint64 that fits", uint64(math.MaxInt64), int64(math.MaxInt64)},
		{"uint64 max", uint64(math.MaxUint64), float64(math.MaxUint64)},
		{"float", 2.5, 2.5},
		{"negative float", -0.125, -0.125},
		{"integral float", 3.0, int64(3)},
		{"negative zero", math.Copysign(0, -1), int64(0)},
		{"2^60 as float", float64(1 << 60), int64(1 << 60)},
		{"2^53+2 as float", float64(1<<53 + 2), int64(1<<53 + 2)},
		{"-2^62 as float", -float64(1 << 62), int64(-1 << 62)},
		{"-2^63 as float", float64(math.MinInt64), float64(math.MinInt64)},
		{"2^63 as float", float64(1 << 63), float64(1 << 63)},
		{"1e20", 1e20, 1e20},
		{"1e21", 1e21, 1e21},
		{"huge float", 1e300, 1e300},
		{"max float", math.MaxFloat64, math.MaxFloat64},
		{"tiny float", 1e-9, 1e-9},
		{"smallest float", math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64},
		{"float32", float32(0.1), 0.1},
		{"integral float32", float32(1.5e6), int64(1.5e6)},
		{"2^40 as float32", float32(1 << 40), int64(1 << 40)},
		{"large float32", float32(123456789), int64(123456792)}, // the float32 nearest 123456789
		{"huge float32", float32(1e30), 1e30},                   // its shortest form, as encoding/json writes it
		{"json.Number", json.Number("12.50"), 12.5},
		{"big.Int that fits", big.NewInt(1 << 62), int64(1 << 62)},
		{"big.Int", huge, 1.2345678901234568e29},
		{"pointer", &n, int64(7)},
		{"nil pointer", (*int)(nil), nil},
		{"bytes", []byte("hi"), "aGk="},
		{"raw JSON", json.RawMessage(`{"a":[1,"x"]}`), map[string]any{"a": []any{int64(1), "x"}}},
		{"MarshalJSON writing invalid UTF-8", json.RawMessage("\"a\xffb\xfe\""), "a\ufffdb\ufffd"},
		{"time UTC", at, "2026-11-30T09:30:00.123456789Z"},
		{"time with zone", at.In(paris), "2026-11-30T10:30:00.123456789+01:00"},
		{"time with monotonic reading", time.Now().Round(0).Add(0), nil}, // checked below
		{"struct", point{X: 1, Y: "é"}, map[string]any{"x": int64(1), "y": "é"}},
		{"nested", map[string]any{"a": []any{1, map[string]any{"b": nil, "": []any{}}}, "日本": map[string]any{}},
			map[string]any{"a": []any{int64(1), map[string]any{"b": nil, "": []any{}}}, "日本": map[string]any{}}},
		{"typed slice", []int{1, -2}, []any{int64(1), int64(-2)}},
		{"typed map", map[string]int{"k": 1}, map[string]any{"k": int64(1)}},
		{"int-keyed map", map[int]string{2: "b", 1: "a"}, map[string]any{"1": "a", "2": "b"}},
		{"strings", []string{"a", ""}, []any{"a", ""}},
		{"string map", map[string]string{"é": "v"}, map[string]any{"é": "v"}},
		// Nil slices and maps: as encoding/json writes them (null), except the two
		// kinds the codec writes itself, which come back empty.
		{"nil []string", []string(nil), nil},
		{"nil []int", []int(nil), nil},
		{"nil map[string]string", map[string]string(nil), nil},
		{"nil []any", []any(nil), nil},
		{"nil map[string]any", map[string]any(nil), nil},
	}
	vars := map[string]any{}
	want := map[string]any{}
	for i, c := range cases {
		key := c.name
		if i%2 == 1 {
			key = "clé " + key // unicode keys too
		}
		vars[key] = c.in
		want[key] = c.out
		if c.name == "time with monotonic reading" {
			want[key] = c.in.(time.Time).Format(time.RFC3339Nano)
		}
	}
	check := func(t *testing.T, got map[string]any) {
		t.Helper()
		for k, w := range want {
			g, ok := got[k]
			if assert.True(t, ok, "%q is missing", k) {
				assert.Equal(t, w, g, "%q", k)
			}
		}
		assert.Len(t, got, len(want))
	}
	t.Run("codec", func(t *testing.T) {
		s := saved("values")
		s.Vars = vars
		got, err := session.Decode(encode(t, s))
		require.NoError(t, err)
		check(t, got.Vars)
	})
	for name, newStore := range allStores() {
		t.Run(name, func(t *testing.T) {
			store := newStore(t)
			s := saved("values")
			s.Vars = vars
			require.NoError(t, store.Save(t.Context(), s, 0))
			got, err := store.Load(t.Context(), "values")
			require.NoError(t, err)
			check(t, got.Vars)
		})
	}
}

// TestMarshalJSONThatWouldNotLoad: encoding/json checks the syntax of what a
// MarshalJSON writes, not what Decode also rejects. Such a value (keys that are one
// once their invalid UTF-8 is repaired, repeated keys in raw JSON, a big.Int beyond
// float64's range) is unserializable in every store; the file and Redis stores used to
// save it as a snapshot that never loaded.
func TestMarshalJSONThatWouldNotLoad(t *testing.T) {
	huge, ok := new(big.Int).SetString("1"+strings.Repeat("0", 400), 10)
	require.True(t, ok)
	values := map[string]any{
		"colliding keys": json.RawMessage("{\"k\xff\":1,\"k\xfe\":2}"),
		"repeated keys":  json.RawMessage(`{"a":1,"a":2}`),
		"huge big.Int":   huge,
		"huge in a list": json.RawMessage(`[1, 1e400]`),
		"nested deep":    json.RawMessage(strings.Repeat("[", 10100) + strings.Repeat("]", 10100)),
	}
	for name, newStore := range allStores() {
		t.Run(name, func(t *testing.T) {
			store := newStore(t)
			for what, v := range values {
				s := saved("would-not-load")
				s.Vars = map[string]any{"ok": 1, "v": v}
				var ue *session.UnserializableError
				require.ErrorAs(t, store.Save(t.Context(), s, 0), &ue, what)
				assert.Equal(t, []string{"v"}, ue.Names, what)
				_, err := store.Load(t.Context(), "would-not-load")
				assert.ErrorIs(t, err, session.ErrNotFound, what)
			}
		})
	}
}
