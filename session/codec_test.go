package session_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// TestDecodeEscapedStringsInLinearMemory decodes a snapshot whose variable is a long
// list of strings with escapes (multi-line text, as a chat history holds): the memory
// it takes grows with the snapshot, not with its square.
func TestDecodeEscapedStringsInLinearMemory(t *testing.T) {
	s := saved("lines")
	l := make([]any, 4000)
	for i := range l {
		l[i] = fmt.Sprintf("line %d\nnext \"quoted\"", i)
	}
	s.Vars = map[string]any{"history": l}
	data := encode(t, s)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := session.Decode(data)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, l, got.Vars["history"])
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(20*len(data)), "decoding %d bytes allocated %d", len(data), allocated)
}

// unicodeSnapshot is a saved snapshot whose strings are not all ASCII.
func unicodeSnapshot() *session.Snapshot {
	s := saved("заявка-7")
	s.Vars["name"] = "Zoë 日本 🚀"
	s.Vars["ключ"] = []any{"é", int64(-12), 0.25}
	s.Reason = "attente du responsable — 5 jours"
	return s
}

// TestDecodeRejectsInvalidUTF8: the encoder writes valid UTF-8 only, so bytes that
// are not (a bit flipped in a multi-byte character, a snapshot edited with a tool
// that wrote Latin-1) are damage: the snapshot is rejected, not loaded with U+FFFD
// in place of what was there. So is a lone surrogate escape, which stands for no
// character.
func TestDecodeRejectsInvalidUTF8(t *testing.T) {
	valid := encode(t, unicodeSnapshot())
	for name, bad := range map[string][]byte{
		"value":                  bytes.Replace(valid, []byte("Zoë"), []byte("Zo\xeb"), 1), // Latin-1
		"key":                    bytes.Replace(valid, []byte("ключ"), []byte("\xd0ключ"), 1),
		"instance id":            bytes.Replace(valid, []byte("заявка"), []byte("за\xffявка"), 1),
		"reason":                 bytes.Replace(valid, []byte("—"), []byte("\xe2\x80"), 1), // cut short
		"overlong":               bytes.Replace(valid, []byte("é"), []byte("\xc0\xa9"), 1),
		"encoded surrogate":      bytes.Replace(valid, []byte("🚀"), []byte("\xed\xa0\xbd"), 1),
		"after an escape":        bytes.Replace(valid, []byte("Zoë"), []byte("Z\\n\xeb"), 1),
		"in a frontier string":   bytes.Replace(valid, []byte(`"mode":"exec"`), []byte("\"mode\":\"ex\xe9c\""), 1),
		"in a trace path":        bytes.Replace(valid, []byte(`"last":{"leave"`), []byte("\"last\":{\"le\xe1ve\""), 1),
		"flipped high bit (ë→k)": bytes.Replace(valid, []byte("Zoë"), []byte("Zo\xc3\x2b"), 1),
	} {
		t.Run(name, func(t *testing.T) {
			require.NotEqual(t, valid, bad, "the edit applies")
			s, err := session.Decode(bad)
			assert.Nil(t, s)
			require.ErrorIs(t, err, session.ErrCorrupt)
			assert.ErrorContains(t, err, "invalid UTF-8")
		})
	}
	lone := bytes.Replace(valid, []byte(`"Zoë`), []byte(`"\ud800Zoë`), 1)
	s, err := session.Decode(lone)
	assert.Nil(t, s)
	require.ErrorIs(t, err, session.ErrCorrupt)
	assert.ErrorContains(t, err, "surrogate")
}

// TestDecodeFlippedBytes changes every byte of a valid snapshot in several ways. Each
// result is either rejected (ErrCorrupt or ErrFormat, no snapshot) or, when the change
// still makes a valid snapshot (a digit of a number, a letter of a string), loads as
// one that encodes and loads again to the same.
func TestDecodeFlippedBytes(t *testing.T) {
	valid := encode(t, unicodeSnapshot())
	rejected, loaded := 0, 0
	for i := range valid {
		for _, b := range []byte{valid[i] ^ 0x01, valid[i] ^ 0x20, valid[i] ^ 0x80, '"', '\\', '{', '}', ',', ':', ' ', 0, 0xff} {
			if b == valid[i] {
				continue
			}
			data := bytes.Clone(valid)
			data[i] = b
			s, err := session.Decode(data)
			if err != nil {
				assert.Nil(t, s)
				if !errors.Is(err, session.ErrCorrupt) && !errors.Is(err, session.ErrFormat) {
					t.Fatalf("byte %d set to %#x: error %v is neither ErrCorrupt nor ErrFormat", i, b, err)
				}
				rejected++
				continue
			}
			loaded++
			require.True(t, utf8.Valid(data), "byte %d set to %#x: a snapshot that is not UTF-8 loaded", i, b)
			again, err := session.Decode(encode(t, s))
			require.NoError(t, err, "byte %d set to %#x", i, b)
			require.Equal(t, s, again, "byte %d set to %#x", i, b)
		}
	}
	t.Logf("%d changed snapshots rejected, %d still valid", rejected, loaded)
}

// TestDecodeRejectsMalformedFields edits one field of a valid snapshot at a time, at
// every level of it: each edit is rejected as a whole with an error that says what
// is wrong.
func TestDecodeRejectsMalformedFields(t *testing.T) {
	valid := encode(t, saved("m-1"))
	replace := func(old, new string) []byte {
		t.Helper()
		require.Contains(t, string(valid), old)
		return bytes.Replace(valid, []byte(old), []byte(new), 1)
	}
	deep := strings.Repeat("[", 10002) + strings.Repeat("]", 10002)
	tests := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"format as a float", replace(`"format":1`, `"format":1.0`), session.ErrCorrupt, "into Go int"},
		{"format as a string", replace(`"format":1`, `"format":"1"`), session.ErrCorrupt, "into Go int"},
		{"format with an exponent", replace(`"format":1`, `"format":1e0`), session.ErrCorrupt, "into Go int"},
		{"format with a leading zero", replace(`"format":1`, `"format":01`), session.ErrCorrupt, "invalid character"},
		{"format 0", replace(`"format":1`, `"format":0`), session.ErrFormat, "format 0"},
		{"format -1", replace(`"format":1`, `"format":-1`), session.ErrFormat, "format -1"},
		{"format null", replace(`"format":1`, `"format":null`), session.ErrFormat, "format 0"},
		{"huge format", replace(`"format":1`, `"format":99999999999999999999`), session.ErrCorrupt, "into Go int"},
		{"version past int64", replace(`"version":3`, `"version":9223372036854775808`), session.ErrCorrupt, "into Go int"},
		{"negative version", replace(`"version":3`, `"version":-3`), session.ErrCorrupt, "version -3"},
		{"version null", replace(`"version":3`, `"version":null`), session.ErrCorrupt, "version 0"},
		{"huge frame index", replace(`"parent":-1`, `"parent":1e400`), session.ErrCorrupt, "parent"},
		{"frame index as a float", replace(`"parent":-1`, `"parent":-1.5`), session.ErrCorrupt, "into Go int"},
		{"frame index past int", replace(`"parent":-1`, `"parent":-99999999999999999999`), session.ErrCorrupt, "into Go int"},
		{"error step as a float", replace(`"step":3`, `"step":3.5`), session.ErrCorrupt, "step"},
		{"duplicate frontier field", replace(`"frontier":{"graph":"leave"`, `"frontier":{"graph":"leave","graph":"leave"`), session.ErrCorrupt, `duplicate object member name "graph"`},
		{"duplicate frame field", replace(`"kind":"call"`, `"kind":"call","kind":"loop"`), session.ErrCorrupt, `duplicate object member name "kind"`},
		{"duplicate token field", replace(`"node":"manager"`, `"node":"manager","node":"other"`), session.ErrCorrupt, `duplicate object member name "node"`},
		{"duplicate trace field", replace(`"trace":{"last":{`, `"trace":{"last":{},"last":{`), session.ErrCorrupt, `duplicate object member name "last"`},
		{"duplicate trace path", replace(`"last":{"leave":{`, `"last":{"leave":{},"leave":{`), session.ErrCorrupt, `duplicate object member name "leave"`},
		{"duplicate trace record field", replace(`"node":"manager","type"`, `"node":"manager","node":"x","type"`), session.ErrCorrupt, `duplicate object member name "node"`},
		{"duplicate error field", replace(`"code":"task_failed"`, `"code":"task_failed","code":"x"`), session.ErrCorrupt, `duplicate object member name "code"`},
		{"duplicate nested key", replace(`"obj":{"a":1`, `"obj":{"a":1,"a":2`), session.ErrCorrupt, `duplicate object member name "a"`},
		{"duplicate long nested key", replace(`"obj":{"a":1`, `"obj":{"a key longer than sixteen bytes":1,"a key longer than sixteen bytes":2,"a":1`), session.ErrCorrupt, "duplicate object member name"},
		{"duplicate escaped variable", replace(`"days":5`, `"days":5,"d\u0061ys":6`), session.ErrCorrupt, "duplicate"},
		{"vars as a list", replace(`"vars":{`, `"vars":[],"x":{`), session.ErrCorrupt, "into Go map"},
		{"frontier as a list", replace(`"frontier":{`, `"frontier":[],"x":{`), session.ErrCorrupt, ""},
		{"duplicate failed branches", replace(`"caller":-1}`, `"caller":-1,"failed":[],"failed":[]}`), session.ErrCorrupt, `duplicate object member name "failed"`},
		{"failed branches as an object", replace(`"caller":-1}`, `"caller":-1,"failed":{}}`), session.ErrCorrupt, ""},
		{"duplicate failed branch field", replace(`"caller":-1}`, `"caller":-1,"failed":[{"node":"a","node":"b"}]}`), session.ErrCorrupt, `duplicate object member name "node"`},
		{"unknown failed branch field", replace(`"caller":-1}`, `"caller":-1,"failed":[{"node":"a","nodes":"b"}]}`), session.ErrCorrupt, "unknown object member name"},
		{"duplicate failed branch error field", replace(`"caller":-1}`, `"caller":-1,"failed":[{"node":"a","error":{"code":"E1","code":"E2"}}]}`), session.ErrCorrupt, `duplicate object member name "code"`},
		{"unknown failed branch error field", replace(`"caller":-1}`, `"caller":-1,"failed":[{"node":"a","error":{"cod":"E1"}}]}`), session.ErrCorrupt, "unknown object member name"},
		{"failed branch error as a string", replace(`"caller":-1}`, `"caller":-1,"failed":[{"node":"a","error":"E1"}]}`), session.ErrCorrupt, ""},
		{"loop items as an object", replace(`"caller":-1}`, `"caller":-1,"items":{}}`), session.ErrCorrupt, "into Go []interface"},
		{"month 13", replace(`"created":"2026-11-01`, `"created":"2026-13-01`), session.ErrCorrupt, "created"},
		{"time as a word", replace(`"created":"2026-11-01T08:00:00Z"`, `"created":"yesterday"`), session.ErrCorrupt, "created"},
		{"time as a number", replace(`"created":"2026-11-01T08:00:00Z"`, `"created":1762000000`), session.ErrCorrupt, "into Go time.Time"},
		{"sealed not base64", replace(`"format":1`, `"format":1,"sealed":"!!"`), session.ErrCorrupt, "sealed"},
		{"source not a string", replace(`"sources":["/defs/leave.yml"`, `"sources":["/defs/leave.yml",1`), session.ErrCorrupt, "into Go string"},
		{"values nested too deep", replace(`"days":5`, `"days":`+deep), session.ErrCorrupt, "exceeded max depth"},
		{"byte order mark", append([]byte("\ufeff"), valid...), session.ErrCorrupt, ""},
		{"trailing NUL", append(bytes.Clone(valid), 0), session.ErrCorrupt, "after top-level value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.NotEqual(t, valid, tc.data)
			s, err := session.Decode(tc.data)
			assert.Nil(t, s, "never half-loaded")
			require.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
	// Whitespace around and between the tokens is JSON, and loads.
	spaced := bytes.ReplaceAll(valid, []byte(`,"`), []byte(" ,\n\t\"")) // not inside strings: none has `,"`
	s, err := session.Decode(append(append([]byte(" \n"), spaced...), "\r\n "...))
	require.NoError(t, err)
	assert.Equal(t, saved("m-1"), s)
}

// UnmarshalVars reads numbers as a snapshot's variables are read.
func TestUnmarshalVars(t *testing.T) {
	vars, err := session.UnmarshalVars([]byte(`{"n":5,"f":2.5,"big":1e400,"l":[1,{"m":2}]}`))
	assert.EqualError(t, err, `variable "big": number 1e400 out of range`, "a number beyond float64")
	assert.Nil(t, vars)
	vars, err = session.UnmarshalVars([]byte(`{"n":5,"f":2.5,"e":1e3,"l":[1,{"m":2}]}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"n": int64(5), "f": 2.5, "e": 1000.0, "l": []any{int64(1), map[string]any{"m": int64(2)}}}, vars)
}

// TestEncodeRepairsAndRefusesNestedValues: what Encode repairs or refuses in a
// variable, it repairs or refuses at any depth of plain maps and lists too.
func TestEncodeRepairsAndRefusesNestedValues(t *testing.T) {
	s := saved("nested")
	s.Vars = map[string]any{
		"text": map[string]any{"k\xff": []any{"a\xffb"}},
		"big":  []any{map[string]any{"n": float64(1 << 60)}},
	}
	got, err := session.Decode(encode(t, s))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"text": map[string]any{"k\ufffd": []any{"a\ufffdb"}},
		"big":  []any{map[string]any{"n": int64(1) << 60}},
	}, got.Vars)

	for name, v := range map[string]any{
		"keys that collide once repaired": map[string]any{"ok": 1, "obj": map[string]any{"k\xff": 1, "k\xfe": 2}},
		"NaN in a list":                   []any{1.5, math.NaN()},
		"a list holding itself":           func() any { l := []any{nil}; l[0] = l; return l }(),
	} {
		s := saved("nested")
		s.Vars = map[string]any{"fine": "x", "v": v}
		_, err := session.Encode(s)
		var ue *session.UnserializableError
		require.ErrorAs(t, err, &ue, name)
		assert.Equal(t, []string{"v"}, ue.Names, name)
	}
}
