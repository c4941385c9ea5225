package trace

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plain has Record's fields and tags without its MarshalJSON, so encoding/json encodes
// it by reflection: the reference AppendJSON must agree with.
type plain Record

func fullRecord() Record {
	return Record{
		Seq: 42, Time: time.Date(2026, 3, 4, 5, 6, 7, 890123456, time.UTC), Status: Failed,
		GraphID: "leave", Path: "leave/call/child", NodeID: "approve", NodeType: "activity",
		Title: "Approve \"it\"", InstanceID: "inst-1", RunID: "r1-1", BranchID: "main/p:a",
		Agent: "reviewer", Step: 7, Attempt: 2, Duration: 1500 * time.Microsecond,
		Error:  &ErrorInfo{Type: "flow_error", Code: "task_failed", Message: "boom\n<tab>\t\u2028 é \x01"},
		Reason: "waiting", Arrivals: 3, Retrying: true, Recovered: true, Goto: "fall\"back", Resumed: true,
		Attrs: map[string]any{"order": "o-1", "n": 3.0, "nested": map[string]any{"k": []any{"v"}}},
	}
}

func TestRecordJSONRoundTrip(t *testing.T) {
	root := fullRecord()
	root.Path = root.GraphID
	for _, r := range []Record{fullRecord(), root, {Seq: 1, Time: time.Unix(0, 0), Status: Started, RunID: "r"}} {
		got := r.AppendJSON(nil)
		require.True(t, json.Valid(got), "%s", got)

		var back Record
		require.NoError(t, json.Unmarshal(got, &back))
		assert.True(t, r.Time.Equal(back.Time), "time %v != %v", r.Time, back.Time)
		back.Time = r.Time
		assert.Equal(t, r, back)

		// Same fields, same values as encoding/json's reflection encoding, but for a
		// path equal to the graph id, which is left out.
		ref, err := json.Marshal(plain(r))
		require.NoError(t, err)
		var a, b map[string]any
		require.NoError(t, json.Unmarshal(got, &a))
		require.NoError(t, json.Unmarshal(ref, &b))
		if r.Path == r.GraphID {
			assert.NotContains(t, a, "path")
			delete(b, "path")
		}
		at, _ := time.Parse(time.RFC3339Nano, a["time"].(string))
		bt, _ := time.Parse(time.RFC3339Nano, b["time"].(string))
		assert.True(t, at.Equal(bt))
		delete(a, "time")
		delete(b, "time")
		assert.Equal(t, b, a)

		m, err := json.Marshal(r)
		require.NoError(t, err)
		assert.JSONEq(t, string(got), string(m))
	}
}

// A record without a path is on its graph's path; one with a path keeps it, even
// empty; lines written before paths were left out decode the same.
func TestRecordUnmarshalPath(t *testing.T) {
	var r Record
	require.NoError(t, json.Unmarshal([]byte(`{"seq":1,"status":"STARTED","graph":"g","node":"a","run":"r"}`), &r))
	assert.Equal(t, "g", r.Path)
	require.NoError(t, json.Unmarshal([]byte(`{"seq":1,"status":"STARTED","graph":"g","path":"g/c/h","run":"r"}`), &r))
	assert.Equal(t, "g/c/h", r.Path)
	require.NoError(t, json.Unmarshal([]byte(`{"seq":1,"status":"STARTED","graph":"g","path":"","run":"r"}`), &r))
	assert.Equal(t, "", r.Path)
	var old, now Record
	require.NoError(t, json.Unmarshal([]byte(`{"seq":2,"time":"2026-01-02T03:04:05.000000006Z","status":"COMPLETED","graph":"g","path":"g","node":"a","type":"activity","instance":"i","run":"r","branch":"main","step":1,"duration_ns":5}`), &old))
	require.NoError(t, json.Unmarshal([]byte(`{"seq":2,"time":"2026-01-02T03:04:05.000000006Z","status":"COMPLETED","graph":"g","node":"a","type":"activity","instance":"i","run":"r","branch":"main","step":1,"duration_ns":5}`), &now))
	assert.Equal(t, old, now)
	assert.Error(t, json.Unmarshal([]byte(`{"seq":"x"}`), &r))
}

func TestAppendTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []time.Time{
		time.Unix(0, 0), time.Date(2000, 2, 29, 23, 59, 59, 999999999, time.UTC),
		time.Date(2100, 3, 1, 0, 0, 0, 1, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 5*3600)),
	}
	for range 10000 {
		cases = append(cases, time.Unix(rng.Int64N(253402300800), rng.Int64N(1e9)))
	}
	var e Encoder
	for _, tm := range cases {
		got := string(e.appendTime(nil, tm))
		want := tm.UTC().Format("2006-01-02T15:04:05.000000000Z")
		require.Equal(t, want, got)
		back, err := time.Parse(time.RFC3339Nano, got)
		require.NoError(t, err)
		require.True(t, back.Equal(tm))
	}
	// Out of the four-digit range: the time package's format.
	old := time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, old.Format(time.RFC3339Nano), string(e.appendTime(nil, old)))
}

func encodeRef(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "0123456789abcdefghij", "quote\"", "back\\slash", "ctl\x00\x1f",
		"é日本", "\xff\xfe bad", "\u2028\u2029", "<html>&", "long ascii text with a \" late in it",
		"eight!!!\n", "\x7f"} {
		assert.Equal(t, encodeRef(s), string(AppendJSONString(nil, s)), "%q", s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00", "é", "\xff", "\u2028", "12345678\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendJSONString(nil, s)), encodeRef(s); got != want {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestRecordHelpers(t *testing.T) {
	r := Record{Path: "leave/call/child/x/y", NodeID: "a"}
	assert.Equal(t, 2, r.Depth())
	assert.Equal(t, "leave/call/child/x/y:a", r.Qualified())
	assert.False(t, r.IsRun())
	assert.True(t, (&Record{}).IsRun())
}

func BenchmarkAppendJSON(b *testing.B) {
	r := Record{Seq: 12, Time: time.Now(), Status: Completed, GraphID: "chain100", Path: "chain100", NodeID: "n10",
		NodeType: "activity", InstanceID: "bench", RunID: "rdn84lkz4b3mi-1", BranchID: "main", Step: 12, Duration: 1234}
	buf := make([]byte, 0, 512)
	var e Encoder
	b.ReportAllocs()
	for b.Loop() {
		buf = e.Append(buf[:0], &r)
	}
}

// One Encoder over records of several runs and seconds writes each correctly.
func TestEncoderReuse(t *testing.T) {
	var e Encoder
	base := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	recs := []Record{
		{Seq: 1, Time: base, Status: Started, RunID: "r1", InstanceID: "i1", Path: "g", GraphID: "g"},
		{Seq: 2, Time: base.Add(time.Second + 5), Status: Completed, RunID: "r1", InstanceID: "i1", Path: "g", GraphID: "g"},
		{Seq: 1, Time: base.Add(-time.Hour), Status: Suspended, RunID: "r2", InstanceID: "i\"2", Path: "g", GraphID: "g"},
		{Seq: 3, Time: base.Add(time.Second + 7), Status: Interrupted, RunID: "r1", InstanceID: "i1", Path: "g", GraphID: "g"},
	}
	var buf []byte
	for i := range recs {
		buf = e.Append(buf[:0], &recs[i])
		var back Record
		require.NoError(t, json.Unmarshal(buf, &back), "%s", buf)
		assert.True(t, back.Time.Equal(recs[i].Time))
		back.Time = recs[i].Time
		assert.Equal(t, recs[i], back)
	}
}

// AppendUntimed and PutTime write what Append writes, also when the identity fields
// are copied from an earlier record's.
func TestAppendUntimed(t *testing.T) {
	var e, times Encoder
	r := fullRecord()
	want := string(e.Append(nil, &r))
	got, sp := e.AppendUntimed([]byte("x"), &r, nil)
	require.True(t, times.PutTime(got[sp.Time:], r.Time))
	assert.Equal(t, want, string(got[1:]))
	assert.Len(t, r.Time.UTC().Format("2006-01-02T15:04:05.000000000Z"), TimeLen)
	assert.False(t, times.PutTime(got[sp.Time:], time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)))
	assert.False(t, times.PutTime(got[sp.Time:], time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)))
	assert.False(t, times.PutTime(make([]byte, TimeLen-1), r.Time))
	assert.Equal(t, want, string(got[1:]), "a time that does not fit is not written")

	// The terminal record of a node copies its STARTED record's identity.
	start := Record{Seq: 7, Status: Started, GraphID: "g", Path: "g", NodeID: "n\"1", NodeType: "activity", Title: "T",
		InstanceID: "i", RunID: "r", BranchID: "main/p:a", Agent: "bot", Attrs: map[string]any{"k": 1}}
	end := start
	end.Seq, end.Status, end.Step, end.Duration, end.Attrs = 8, Failed, 3, 99, nil
	end.Error = &ErrorInfo{Type: "t", Code: "c", Message: "m"}
	buf, ssp := e.AppendUntimed(nil, &start, nil)
	buf, esp := e.AppendUntimed(buf, &end, buf[ssp.Ident[0]:ssp.Ident[1]])
	require.True(t, times.PutTime(buf[ssp.Time:], r.Time))
	require.True(t, times.PutTime(buf[esp.Time:], r.Time))
	start.Time, end.Time = r.Time, r.Time
	var other Encoder
	assert.Equal(t, string(other.Append(other.Append(nil, &start), &end)), string(buf))
}

// Decoding errors name Record and its JSON fields, not the wrapper UnmarshalJSON
// decodes through.
func TestRecordUnmarshalErrorsNameRecord(t *testing.T) {
	var r Record
	err := json.Unmarshal([]byte(`[1]`), &r)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "trace.Record")
	assert.NotContains(t, err.Error(), "fields")

	err = json.Unmarshal([]byte(`{"seq":"x"}`), &r)
	var te *json.UnmarshalTypeError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "seq", te.Field)
	assert.Equal(t, "Record", te.Struct)
	assert.NotContains(t, err.Error(), "fields")
}

// A record is written byte for byte as encoding/json writes it with HTML escaping off
// (but for the time's format), attributes included: HTML characters are left alone
// everywhere in the line, not in the strings only.
func TestAppendJSONHTMLInAttrs(t *testing.T) {
	r := fullRecord()
	r.Title = "<b>Approve</b> & pay"
	r.Attrs = map[string]any{"html": "<i>x</i> & y", "<k>": []any{"a&b"}, "n": 1.5}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(plain(r)))
	tm, err := json.Marshal(r.Time)
	require.NoError(t, err)
	want := strings.Replace(strings.TrimSuffix(buf.String(), "\n"), string(tm),
		`"`+r.Time.UTC().Format("2006-01-02T15:04:05.000000000Z")+`"`, 1)
	assert.Equal(t, want, string(r.AppendJSON(nil)))

	// An attribute without a JSON encoding: the record is still written with the
	// other attributes, and says which one failed and why.
	r.Attrs = map[string]any{"x": math.NaN(), "f": struct {
		A string
		F func()
	}{A: "a"}, "ok": "kept", "n": 2}
	var back Record
	line := r.AppendJSON([]byte("prefix"))[len("prefix"):]
	require.NoError(t, json.Unmarshal(line, &back), "%s", line)
	assert.Equal(t, map[string]any{
		"f":  map[string]any{"!error": "json: unsupported type: func()"},
		"n":  2.0,
		"ok": "kept",
		"x":  map[string]any{"!error": "json: unsupported value: NaN"},
	}, back.Attrs)
	assert.Contains(t, string(line), `"attrs":{"f":{"!error":"json: unsupported type: func()"},"n":2,"ok":"kept","x":{"!error":"json: unsupported value: NaN"}}`)
}

// JSON null leaves a record as it is, as it leaves a struct without UnmarshalJSON:
// a null record in a list or a field does not move a sub-graph record's path.
func TestRecordUnmarshalNull(t *testing.T) {
	r := Record{Seq: 3, GraphID: "child", Path: "root/call/child", NodeID: "a"}
	want := r
	require.NoError(t, json.Unmarshal([]byte(`null`), &r))
	assert.Equal(t, want, r)
	var w struct{ Rec Record }
	w.Rec = want
	require.NoError(t, json.Unmarshal([]byte(`{"Rec":null}`), &w))
	assert.Equal(t, want, w.Rec)
}
