package session_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// note is a variable encoding/json marshals, as a user's type would be.
type note string

// entry is a record of a user's type, which encoding/json marshals as an object.
type entry struct {
	ID    int
	Name  string
	Tags  []string
	Score float64
}

// ledger returns n entries: about 60 bytes of JSON each.
func ledger(n int) []entry {
	recs := make([]entry, n)
	for i := range recs {
		recs[i] = entry{i, "item-" + strconv.Itoa(i), []string{"a", "b"}, 0.5}
	}
	return recs
}

// sizedVars are snapshots whose encoding the encoder's estimate must neither miss by
// much nor overshoot by much. marshalled is true where encoding/json writes the
// values: its output is a copy the encoder cannot avoid, on top of the buffer.
var sizedVars = []struct {
	name       string
	marshalled bool
	vars       func() map[string]any
}{
	{"strings", false, func() map[string]any {
		m := map[string]any{}
		for i := range 64 {
			m[string(rune('a'+i%26))+strings.Repeat("k", i)] = strings.Repeat("x", 16<<10)
		}
		return m
	}},
	{"nested", false, func() map[string]any {
		list := make([]any, 20000)
		for i := range list {
			list[i] = map[string]any{"id": int64(i), "name": "item", "ok": true, "rate": 0.25}
		}
		return map[string]any{"items": list}
	}},
	// Strings JSON must escape: a quote or backslash is written as two bytes, a
	// control character as six. Counted as one, a string of them grew the buffer a
	// quarter at a time: 3 to 5 times the encoding allocated.
	{"quotes", false, func() map[string]any {
		return map[string]any{"quoted": strings.Repeat(`"\`, 1<<19)}
	}},
	{"control characters", false, func() map[string]any {
		m := map[string]any{}
		for i := range 64 {
			m["ctl"+strconv.Itoa(i)] = strings.Repeat("\x01\n", 8<<10)
		}
		return m
	}},
	{"many escaped", false, func() map[string]any {
		list := make([]any, 20000)
		for i := range list {
			list[i] = "say \"hi\"\n\tto \u2028 \xff" + strconv.Itoa(i)
		}
		return map[string]any{"lines": list, "keys \"quoted\"": map[string]string{"a\tb": "c\"d"}}
	}},
	// Small integers: an estimate of 20 bytes each allocated ten times the encoding.
	{"small ints", false, func() map[string]any {
		list := make([]any, 10000)
		for i := range list {
			list[i] = int64(i % 10)
		}
		return map[string]any{"counts": list}
	}},
	// Raw JSON and bytes were guessed at 64 bytes each: the buffer grew by a quarter
	// at a time, and 1 MB of them allocated 6 MB.
	{"raw json", true, func() map[string]any {
		m := map[string]any{}
		for i := range 64 {
			m["raw"+strconv.Itoa(i)] = json.RawMessage(`"` + strings.Repeat("x", 16<<10) + `"`)
		}
		return m
	}},
	{"bytes", true, func() map[string]any {
		m := map[string]any{}
		for i := range 64 {
			m["bytes"+strconv.Itoa(i)] = []byte(strings.Repeat("x", 16<<10))
		}
		return m
	}},
	// Numbers and times were guessed at 64 bytes each too: eight times too many.
	{"json numbers", true, func() map[string]any {
		m := map[string]any{}
		for i := range 10000 {
			m[strconv.Itoa(i)] = json.Number("1")
		}
		return map[string]any{"numbers": m}
	}},
	{"times", true, func() map[string]any {
		m := map[string]any{}
		for i := range 10000 {
			m[strconv.Itoa(i)] = time.Unix(int64(i), 0).UTC()
		}
		return map[string]any{"times": m}
	}},
	// Values whose size only encoding/json knows (a named string type here, which
	// it writes as a string, so no more than one copy of it is made): one large,
	// and many.
	{"marshalled", true, func() map[string]any {
		return map[string]any{"note": note(strings.Repeat("x", 1<<20))}
	}},
	// A struct's JSON is checked for what Decode rejects (see TestMarshalJSONThatWouldNotLoad):
	// decoding it for that allocated thirteen times its size.
	{"marshalled struct", true, func() map[string]any {
		return map[string]any{"ledger": ledger(16000)}
	}},
	// A map encoding/json sorts and writes: the check keeps its keys.
	{"marshalled map", true, func() map[string]any {
		m := map[string]int{}
		for i := range 50000 {
			m["key"+strconv.Itoa(i)] = i * 1000003
		}
		return map[string]any{"counts": m}
	}},
	{"many marshalled", true, func() map[string]any {
		m := map[string]any{}
		for i := range 64 {
			m["note"+strconv.Itoa(i)] = note(strings.Repeat("x", 16<<10))
		}
		return m
	}},
}

// TestEncodeAllocatesAboutItsSize: the encoder's buffer is sized for the snapshot,
// not grown from 1 KB (a 1 MB snapshot cost about 5 MB of allocations), nor
// allocated many times larger than what it holds.
func TestEncodeAllocatesAboutItsSize(t *testing.T) {
	for _, c := range sizedVars {
		t.Run(c.name, func(t *testing.T) {
			s := saved("big")
			s.Vars = c.vars()
			var data []byte
			used := allocated(func() { data = encode(t, s) })
			if !c.marshalled {
				require.Less(t, used, uint64(len(data))*2, "encoding %d bytes", len(data))
			}
			require.Less(t, cap(data), len(data)*2, "encoding %d bytes", len(data))
		})
	}
}

// TestEncodeBranchingCycleFails: a cycle through a map or a list that holds itself
// more than once fails the save at once, as one that holds itself once does. Before,
// the size estimate walked every path to its depth bound first: 3^33 values, for
// ever, and Encode (every Save, every checkpoint) hung.
func TestEncodeBranchingCycleFails(t *testing.T) {
	m := map[string]any{}
	m["a"], m["b"], m["c"] = m, m, m
	l := make([]any, 3)
	for i := range l {
		l[i] = l
	}
	// Through two containers, inside a value that is not part of the cycle.
	inner := map[string]any{}
	outer := []any{inner, inner, inner}
	inner["x"], inner["y"] = outer, outer
	s := saved("cycles")
	s.Vars = map[string]any{"map": m, "list": l, "nested": map[string]any{"ok": "yes", "loop": outer}, "fine": "x"}

	_, err := session.Encode(s)
	var ue *session.UnserializableError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, []string{"list", "map", "nested"}, ue.Names)
	data, err := session.Encode(s, session.DropUnserializable())
	require.NoError(t, err)
	got, err := session.Decode(data)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"fine": "x"}, got.Vars)
}

// BenchmarkEncodeSized encodes the snapshots of sizedVars.
func BenchmarkEncodeSized(b *testing.B) {
	for _, c := range sizedVars {
		b.Run(strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
			s := saved("big")
			s.Vars = c.vars()
			b.SetBytes(int64(len(encode(b, s))))
			b.ReportAllocs()
			for b.Loop() {
				encode(b, s)
			}
		})
	}
}

// TestDecodeLongEscapedStringOnce: a long string with escapes (text with a newline or
// a quote in it, as a model's answer has) is unescaped into one buffer the size of
// its encoding, kept as the string unless escapes took much of it. The buffer started
// at 64 bytes and grew a quarter at a time, then was copied: 6 times the string
// allocated, however few its escapes.
func TestDecodeLongEscapedStringOnce(t *testing.T) {
	text := strings.Repeat(strings.Repeat("x", 79)+"\n", 1<<20/80)
	for name, v := range map[string]string{
		"one escape":  strings.Repeat("x", 1<<20) + `"`,
		"lines":       text,
		"all escapes": strings.Repeat(`"\`, 1<<19),
	} {
		t.Run(name, func(t *testing.T) {
			s := saved("long")
			s.Vars = map[string]any{"v": v}
			data := encode(t, s)
			var got *session.Snapshot
			used := allocated(func() {
				var err error
				got, err = session.Decode(data)
				require.NoError(t, err)
			})
			require.Equal(t, v, got.Vars["v"])
			require.Less(t, used, uint64(len(data))*2, "decoding %d bytes", len(data))
		})
	}
}

// BenchmarkDecodeLongText decodes a snapshot holding 1 MB of text in lines.
func BenchmarkDecodeLongText(b *testing.B) {
	s := saved("long")
	s.Vars = map[string]any{"text": strings.Repeat(strings.Repeat("x", 79)+"\n", 1<<20/80)}
	data := encode(b, s)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := session.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
