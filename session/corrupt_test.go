package session_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

// TestDecodeEscapedStringsInLinearMemory decodes a snapshot whose variable is a long
// list of strings with escapes (multi-line text, as a chat history holds): the memory
// it takes grows with the snapshot, not with its square (the decoder used to reserve
// the rest of the input for every escaped string).
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
// in place of what was there. A lone surrogate escape is valid JSON and loads as
// U+FFFD, as encoding/json reads it.
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
	require.NoError(t, err)
	assert.Equal(t, "\ufffdZoë 日本 🚀", s.Vars["name"])
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
