package trace

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// randomRecord draws each field from a few values, so consecutive records often share
// some of them (what the Encoder caches) and differ in others.
func randomRecord(rng *rand.Rand) Record {
	pick := func(vs ...string) string { return vs[rng.IntN(len(vs))] }
	r := Record{
		Seq:        []int64{1, 2, 9, 10, 99, 100, 999, 1000, 12345, -3, 0, 1<<63 - 1}[rng.IntN(12)],
		Status:     Status(pick("STARTED", "COMPLETED", "FAILED", "SUSPENDED", "INTERRUPTED", "")),
		GraphID:    pick("g", "", "graph\"q", "ünï", "a-very-long-graph-identifier-over-16"),
		NodeID:     pick("", "n", "n2", "<n&>", "line\nbreak", "x\u2028y"),
		NodeType:   pick("", "activity", "parallel", "start"),
		Title:      pick("", "T", "Title with \\ backslash and \x01 ctl"),
		InstanceID: pick("i", "", "i\"2"),
		RunID:      pick("r1", "r2", ""),
		BranchID:   pick("", "main", "main/p:a", "main/loop[2]"),
		Agent:      pick("", "bot", "reviewer"),
		Step:       rng.IntN(3) * 7,
		Attempt:    rng.IntN(3),
		Duration:   time.Duration(rng.IntN(3)) * 1234567,
		Reason:     pick("", "why", "\"quoted\""),
		Arrivals:   rng.IntN(3),
		Retrying:   rng.IntN(2) == 0,
		Recovered:  rng.IntN(2) == 0,
		Goto:       pick("", "fb", "fall\"back"),
		Resumed:    rng.IntN(2) == 0,
	}
	switch rng.IntN(4) {
	case 0:
		r.Path = r.GraphID
	case 1:
		r.Path = r.GraphID + "/call/sub"
	case 2:
		r.Path = ""
	default:
		r.Path = pick("root", "g")
	}
	if rng.IntN(3) == 0 {
		r.Error = &ErrorInfo{Type: pick("", "flow_error"), Code: pick("", "task_failed"), Message: pick("", "boom", "m\t\"x\"")}
	}
	if rng.IntN(4) == 0 {
		r.Attrs = map[string]any{"k": "v", "n": 1.5, "nested": map[string]any{"l": []any{true, nil, "s"}}}
	}
	base := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	switch rng.IntN(6) {
	case 0:
		r.Time = base.Add(time.Duration(rng.Int64N(int64(time.Hour))))
	case 1:
		r.Time = time.Date(1960, 1, 1, 0, 0, 0, 5, time.UTC) // before 1970: another format
	case 2:
		r.Time = base.In(time.FixedZone("X", 3600))
	default:
		r.Time = base.Add(time.Duration(rng.IntN(3)) * time.Second)
	}
	return r
}

// A long sequence of records through one Encoder (Append, and AppendUntimed with
// PutTime) gives, line for line, what encoding/json gives by reflection (but for a path
// equal to the graph, left out), and each line decodes back to the record.
func TestEncoderRandomSequence(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	var enc, times Encoder
	for i := range 20000 {
		r := randomRecord(rng)
		var line []byte
		if rng.IntN(2) == 0 || r.Time.Unix() < 0 {
			line = enc.Append(nil, &r)
		} else {
			var sp Spans
			line, sp = enc.AppendUntimed(nil, &r, nil)
			require.True(t, times.PutTime(line[sp.Time:], r.Time))
		}
		ref, err := json.Marshal((*plain)(&r))
		require.NoError(t, err)
		var want, got map[string]any
		require.NoError(t, json.Unmarshal(ref, &want))
		require.NoError(t, json.Unmarshal(line, &got), "record %d: %s", i, line)
		if r.Path == r.GraphID {
			delete(want, "path")
		}
		wantTime, _ := time.Parse(time.RFC3339Nano, want["time"].(string))
		gotTime, _ := time.Parse(time.RFC3339Nano, got["time"].(string))
		require.True(t, wantTime.Equal(gotTime), "record %d: time %s, want %s", i, got["time"], want["time"])
		delete(want, "time")
		delete(got, "time")
		require.Equal(t, want, got, "record %d:\n%s\n%s", i, line, ref)

		var back Record
		require.NoError(t, json.Unmarshal(line, &back))
		require.True(t, back.Time.Equal(r.Time))
		back.Time = r.Time
		if r.Attrs != nil {
			require.Equal(t, r.Attrs, back.Attrs)
		}
		require.Equal(t, r, back, "record %d: %s", i, line)
	}
}
