package trace

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// appendInt is a fast path of strconv.AppendInt: it must write the same digits.
func TestAppendInt(t *testing.T) {
	cases := []int64{0, 1, 9, 10, 99, 100, 101, 999, 1000, 65535, 1e9 - 1, 1e9, math.MaxInt64, -1, -10, math.MinInt64}
	for p := int64(1); p > 0 && p < math.MaxInt64/10; p *= 10 {
		cases = append(cases, p-1, p, p+1)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		cases = append(cases, rng.Int64N(math.MaxInt64)>>rng.IntN(63), -rng.Int64N(1e6))
	}
	for _, v := range cases {
		require.Equal(t, strconv.FormatInt(v, 10), string(appendInt([]byte{}, v)), "%d", v)
	}
	assert.Equal(t, "x42", string(appendInt([]byte("x"), 42)))
}

// PutUnix writes what PutTime writes for the same instant, whatever the split
// between seconds and nanoseconds.
func TestPutUnix(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var e, ref Encoder
	for range 10000 {
		sec, nsec := rng.Int64N(maxSecs-1e6), rng.Int64N(1e15)-5e14
		tm := time.Unix(sec, nsec)
		want := make([]byte, TimeLen)
		got := make([]byte, TimeLen)
		okWant := ref.PutTime(want, tm)
		okGot := e.PutUnix(got, sec, nsec)
		require.Equal(t, okWant, okGot, "%d %d", sec, nsec)
		require.Equal(t, string(want), string(got), "%d %d", sec, nsec)
	}
	b := make([]byte, TimeLen)
	assert.False(t, e.PutUnix(b, 0, -1), "before 1970")
	assert.True(t, e.PutUnix(b, -1, 1e9))
	assert.Equal(t, "1970-01-01T00:00:00.000000000Z", string(b))
	assert.False(t, e.PutUnix(b, maxSecs, 1e9), "after 9999")
	assert.False(t, e.PutUnix(b[:TimeLen-1], 0, 0))
}

// appendSeq increments the last number written in place: it must write what
// strconv writes, across carries and jumps.
func TestAppendSeq(t *testing.T) {
	var e Encoder
	seqs := []int64{1, 2, 3, 0, 1, -4, 5}
	for v := int64(6); v < 1200; v++ {
		seqs = append(seqs, v)
	}
	seqs = append(seqs, 99, 100, 7, 8, 999999, 1000000, 1000001, math.MaxInt64-1, math.MaxInt64, 1, math.MinInt64, 10)
	for _, v := range seqs {
		require.Equal(t, "x"+strconv.FormatInt(v, 10), string(e.appendSeq([]byte("x"), v)), "%d", v)
	}
}

// An Encoder reused over records that share some fields and not others (its caches of
// the last graph, node, type, ids and sequence number) writes what a fresh one writes.
func TestEncoderCaches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	var e Encoder
	seq := int64(0)
	for range 20000 {
		if rng.IntN(10) == 0 {
			seq = rng.Int64N(1200)
		}
		seq++
		r := Record{Seq: seq, Time: time.Unix(1.7e9+rng.Int64N(3), rng.Int64N(1e9)), Status: Status(pick("STARTED", "COMPLETED", "FAILED")),
			GraphID: pick("g", "h"), Path: pick("g", "g/c/h"), NodeID: pick("", "a", "b\""), NodeType: pick("", "activity", "start"),
			Title: pick("", "T"), InstanceID: pick("i", "j"), RunID: pick("r1", "r2"), BranchID: pick("", "main", "main/p:a"),
			Agent: pick("", "bot"), Step: rng.IntN(3), Duration: time.Duration(rng.Int64N(1e6))}
		var fresh Encoder
		want := string(fresh.Append(nil, &r))
		require.Equal(t, want, string(e.Append(nil, &r)))
		got, sp := e.AppendUntimed(nil, &r, nil)
		require.True(t, fresh.PutTime(got[sp.Time:], r.Time))
		require.Equal(t, want, string(got))
	}
}
