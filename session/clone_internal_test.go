package session

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
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

// TestOwnedFrontierMatchesClone holds the in-place conversion of an owned frontier
// (canonFrameOwned, canonIn) to the copying one: for random frames and tokens with
// strings that are not valid UTF-8, loop items that need converting or are empty,
// and failed tokens, against no hint, an equal one and another one, canonicalOwned
// gives what canonicalClone gives, and what the codec reads back.
func TestOwnedFrontierMatchesClone(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	strs := []string{"", "a", "g", "main", "b\xff", "\xfe", "loop"}
	str := func() string { return strs[r.IntN(len(strs))] }
	gen := func() *flow.FrontierState {
		f := &flow.FrontierState{Graph: str()}
		for range r.IntN(4) {
			fs := flow.FrameState{Kind: str(), Parent: r.IntN(3), Branch: str(), Split: str(), Join: str(), Policy: str(),
				Loop: str(), Closing: str(), Graph: str(), Path: str(), Node: str(), Caller: r.IntN(3) - 1, Index: r.IntN(5)}
			switch r.IntN(4) {
			case 0:
				fs.Items = []any{}
			case 1:
				fs.Items = []any{1, "x\xff", 2.5, []string{"y"}}
			}
			switch r.IntN(4) {
			case 0:
				fs.Failed = []flow.FailedBranch{}
			case 1:
				for range 1 + r.IntN(2) {
					fs.Failed = append(fs.Failed, flow.FailedBranch{Node: str(), Branch: str(),
						Error: flow.StructuredError{Type: str(), Code: str(), Message: str()}})
				}
			}
			f.Frames = append(f.Frames, fs)
		}
		for range r.IntN(3) {
			ts := flow.TokenState{Node: str(), Mode: str(), Frame: r.IntN(3), Branch: str(), Arrivals: r.IntN(2) * r.IntN(5)}
			if r.IntN(3) == 0 {
				ts.Error = &flow.StructuredError{Type: str(), Code: str(), Message: str()}
			}
			f.Tokens = append(f.Tokens, ts)
		}
		return f
	}
	deep := func(f *flow.FrontierState) *flow.FrontierState {
		c := *f
		c.Frames = slices.Clone(f.Frames)
		c.Tokens = slices.Clone(f.Tokens)
		return &c
	}
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	for range 2000 {
		s := &Snapshot{Format: FormatVersion, Instance: "i", Graph: "g", Hash: strings.Repeat("a", 64), Status: StatusSuspended,
			Version: 1, Created: at, Updated: at, Frontier: gen()}
		want, werr := canonicalClone(s)
		require.NoError(t, werr)
		other, err := canonicalClone(&Snapshot{Created: at, Updated: at, Frontier: gen()})
		require.NoError(t, err)
		for _, hint := range []*Snapshot{nil, want, other} {
			owned := *s
			owned.Frontier = deep(s.Frontier)
			got, err := canonicalOwned(&owned, hint)
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
		if s.Frontier.Graph != "g" || len(s.Frontier.Frames) == 0 || len(s.Frontier.Tokens) == 0 {
			continue // Decode would reject the snapshot
		}
		dec, err := Decode(encode(t, s))
		require.NoError(t, err)
		require.Equal(t, dec.Frontier, want.Frontier)
	}
}

// TestTracePathsThatCollide: two trace paths that become one once their invalid
// UTF-8 is replaced cannot be written so that they load again (Decode rejects the
// repeated path), so Encode, the memory store's clone and the owned conversion all
// reject them, naming the trace once; a single such path is repaired.
func TestTracePathsThatCollide(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	rec := trace.NodeRecord{Path: "p", GraphID: "g", NodeID: "n", NodeType: "activity", Time: at}
	bad := trace.NodeRecord{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, last := range []map[string]trace.NodeRecord{
		{"b\xff": rec, "b\xfe": rec},
		{"b\ufffd": rec, "b\xff": rec, "c": rec},
		{"b\xff": rec, "b\xfe": rec, "x": bad, "y": bad},
	} {
		s := &Snapshot{Format: FormatVersion, Instance: "i", Graph: "g", Hash: strings.Repeat("a", 64), Status: StatusSuspended,
			Version: 1, Created: at, Updated: at, Trace: trace.FlowTrace{Last: last}}
		_, eerr := Encode(s)
		var ue *UnserializableError
		require.ErrorAs(t, eerr, &ue, "%q", slices.Collect(maps.Keys(last)))
		require.Equal(t, []string{"trace"}, ue.Names)
		_, cerr := canonicalClone(s)
		require.ErrorAs(t, cerr, &ue)
		require.Equal(t, []string{"trace"}, ue.Names)
		owned := *s
		owned.Trace.Last = maps.Clone(last)
		_, oerr := canonicalOwned(&owned, nil)
		require.ErrorAs(t, oerr, &ue) // which of the trace's errors it holds depends on the map's order
		require.Equal(t, []string{"trace"}, ue.Names)
	}
	// One path with invalid UTF-8 alone is repaired and loads.
	s := &Snapshot{Format: FormatVersion, Instance: "i", Graph: "g", Hash: strings.Repeat("a", 64), Status: StatusSuspended,
		Version: 1, Created: at, Updated: at, Trace: trace.FlowTrace{Last: map[string]trace.NodeRecord{"b\xff": rec, "c": rec}}}
	got, err := Decode(encode(t, s))
	require.NoError(t, err)
	require.Contains(t, got.Trace.Last, "b\ufffd")
}
