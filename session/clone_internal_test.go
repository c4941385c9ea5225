package session

import (
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/trace"
)

// TestValidString holds the word-at-a-time validString to utf8.ValidString, for
// strings of every length up to 40 with a byte that is not ASCII (valid or not)
// anywhere in them.
func TestValidString(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	tails := []string{"", "é", "日", "🚀", "\xff", "\xc3", "\xe6\x97", "\xed\xa0\x80", "\x80", "\xf4\x90\x80\x80"}
	for range 100000 {
		n := r.IntN(40)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(' ' + r.IntN(95))
		}
		at := r.IntN(n + 1)
		s := string(b[:at]) + tails[r.IntN(len(tails))] + string(b[at:])
		if got, want := validString(s), utf8.ValidString(s); got != want {
			t.Fatalf("validString(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestYearBounds(t *testing.T) {
	if got := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix(); got != minYearSec {
		t.Errorf("minYearSec is %d, want %d", int64(minYearSec), got)
	}
	if got := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix(); got != maxYearSec {
		t.Errorf("maxYearSec is %d, want %d", int64(maxYearSec), got)
	}
	zone := time.FixedZone("z", -3600)
	for _, tm := range []time.Time{time.Date(0, 1, 1, 0, 0, 0, 0, zone), time.Date(-1, 12, 31, 23, 59, 59, 999999999, zone),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, zone), time.Date(10000, 1, 1, 0, 0, 0, 0, zone),
		time.Date(9999, 12, 31, 23, 30, 0, 0, time.UTC).In(time.FixedZone("e", 3600)), time.Date(2026, 1, 1, 0, 0, 0, 0, time.Local)} {
		_, err := canonTime(tm)
		if y := tm.Year(); (err == nil) != (y >= 0 && y <= 9999) {
			t.Errorf("canonTime(%v): %v (year %d)", tm, err, y)
		}
	}
}

// TestOwnedTraceMatchesCodec: a trace handed over to the store (kept, or copied when
// a path is not valid UTF-8) comes out as the codec reads it back, and a time the
// codec cannot write is the same error.
func TestOwnedTraceMatchesCodec(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.FixedZone("x", 0))
	rec := trace.NodeRecord{Path: "p\xff", GraphID: "g", NodeID: "n", NodeType: "activity", Time: at}
	for _, last := range []map[string]trace.NodeRecord{
		{"a": rec, "b": rec, "c": rec},
		{"a": rec, "b\xff": rec, "c": rec, "d": rec},
		{"a": rec, "b": {Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"a\xfe": rec, "b": {Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}},
	} {
		s := &Snapshot{Format: FormatVersion, Instance: "i", Graph: "g", Hash: strings.Repeat("a", 64), Status: StatusSuspended,
			Version: 1, Created: at, Updated: at, Trace: trace.FlowTrace{Last: last}}
		want, werr := canonicalClone(s)
		owned := *s
		owned.Trace.Last = maps.Clone(last)
		got, gerr := canonicalOwned(&owned, nil)
		require.Equal(t, werr, gerr)
		if werr != nil {
			_, eerr := Encode(s)
			require.Error(t, eerr)
			continue
		}
		require.Equal(t, want, got)
		dec, err := Decode(encode(t, s))
		require.NoError(t, err)
		require.Equal(t, dec.Trace, got.Trace)
	}
}

func encode(t *testing.T, s *Snapshot) []byte {
	t.Helper()
	data, err := Encode(s)
	require.NoError(t, err)
	return data
}
