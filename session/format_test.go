package session_test

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
	"github.com/flowteam/flowteam/trace"
)

// writeFixtures rewrites testdata/format-v1-*.json. The files were written by the
// first codec of format 1 and must go on decoding: regenerate them only for a new
// format version.
var writeFixtures = flag.Bool("write-fixtures", false, "rewrite testdata/format-v1-*.json")

type fixtureStruct struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
	Skip string    `json:"-"`
}

// fixtureSnapshot uses every field of the format and values of the kinds the rules
// for values (see the package doc) speak of.
func fixtureSnapshot() *session.Snapshot {
	s := storetest.NewSnapshot("order-42 \u00e9")
	s.Format, s.Version = session.FormatVersion, 7
	s.Created = time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	s.Updated = time.Date(2026, 11, 2, 8, 0, 0, 123456789, time.UTC)
	s.Expires = s.Updated.Add(48 * time.Hour)
	s.Vars["big"] = int64(1) << 62
	s.Vars["bigFloat"] = float64(1 << 60)
	s.Vars["maxUint"] = uint64(math.MaxUint64)
	s.Vars["small"] = 1e-9
	s.Vars["huge"] = 1e300
	s.Vars["three"] = 3.0
	s.Vars["f32"] = float32(0.1)
	s.Vars["text"] = "<b>&</b> \"q\" \\ \n\t \u2028 \x01 caf\u00e9 \U0001F600"
	s.Vars["bad\u00e9"] = "a\xffb"
	s.Vars["strs"] = []string{"x", "y"}
	s.Vars["nilStrs"] = []string(nil)
	s.Vars["strMap"] = map[string]string{"k": "v"}
	s.Vars["bytes"] = []byte("hi")
	s.Vars["when"] = time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	s.Vars["struct"] = fixtureStruct{Name: "n", At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Skip: "s"}
	s.Vars["raw"] = json.RawMessage(`{"b":1, "a":[true,null]}`)
	s.Vars["dur"] = 1500 * time.Millisecond
	s.Vars["intMap"] = map[int]string{2: "two", 10: "ten"}
	s.Vars["emptyList"] = []any{}
	s.Vars["emptyObj"] = map[string]any{}
	s.Frontier.Frames = append(s.Frontier.Frames,
		flow.FrameState{Kind: "split", Parent: 0, Call: 0, Caller: -1, Pending: 1, Branch: "main", Split: "p", Join: "j",
			Arrived: 1, Policy: "continue", Failed: []flow.FailedBranch{
				{Node: "a", Branch: "p:a", Error: flow.StructuredError{Type: "flow_error", Code: "E1", Message: "bad \"x\""}}}},
		flow.FrameState{Kind: "loop", Parent: 1, Call: 0, Caller: -1, Pending: 1, Branch: "p:b", Loop: "l", Closing: "lc",
			Items: []any{int64(1), 2.5, "three", map[string]any{"n": int64(4)}}, Index: 2})
	s.Frontier.Tokens = append(s.Frontier.Tokens,
		flow.TokenState{Node: "b", Mode: "exec", Frame: 2, Branch: "p:b", Arrivals: 2},
		flow.TokenState{Node: "f", Mode: "failed", Frame: 1, Branch: "p:c", Error: &flow.StructuredError{Type: "t", Code: "c", Message: "m"}})
	s.Trace.Last["leave/sub/child"] = trace.NodeRecord{Path: "leave/sub/child", GraphID: "child", NodeID: "x", NodeType: "activity",
		Title: "X", Time: time.Date(2026, 11, 2, 7, 0, 0, 5, time.UTC)}
	s.Errors = append(s.Errors, session.ErrorRecord{Code: "run_failed", Message: "m", Type: "flow_error", Severity: "fatal"})
	s.Dropped, s.Redacted, s.Meta = []string{"callback"}, []string{"token"}, []string{"durability=per-node", "steps=10"}
	return s
}

// fixtureWant is fixtureSnapshot as Decode returns it.
func fixtureWant() *session.Snapshot {
	s := fixtureSnapshot()
	for k, v := range map[string]any{
		"big": int64(1) << 62, "bigFloat": int64(1) << 60, "maxUint": float64(math.MaxUint64), "three": int64(3),
		"f32": 0.1, "text": "<b>&</b> \"q\" \\ \n\t \u2028 \x01 caf\u00e9 \U0001F600", "bad\u00e9": "a\ufffdb",
		"strs": []any{"x", "y"}, "nilStrs": nil, "strMap": map[string]any{"k": "v"}, "bytes": "aGk=",
		"when": "2026-01-02T03:04:05.000000006+01:00", "struct": map[string]any{"name": "n", "at": "2026-01-01T00:00:00Z"},
		"raw": map[string]any{"b": int64(1), "a": []any{true, nil}}, "dur": int64(1500 * time.Millisecond),
		"intMap": map[string]any{"2": "two", "10": "ten"},
	} {
		s.Vars[k] = v
	}
	s.Frontier.Frames[2].Items = []any{int64(1), 2.5, "three", map[string]any{"n": int64(4)}}
	return s
}

func TestFormatV1Fixtures(t *testing.T) {
	full := filepath.Join("testdata", "format-v1-full.json")
	file := filepath.Join("testdata", "format-v1-file.json")
	if *writeFixtures {
		data, err := session.Encode(fixtureSnapshot())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(full, data, 0o644))
		dir := t.TempDir()
		fs, err := session.NewFileStore(dir, session.WithClock(func() time.Time { return fixtureSnapshot().Updated }))
		require.NoError(t, err)
		s := fixtureSnapshot()
		s.Expires, s.Created = time.Time{}, time.Time{}
		require.NoError(t, fs.Save(context.Background(), s, 0))
		data, err = os.ReadFile(filepath.Join(dir, s.Instance+".json"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, data, 0o644))
	}
	want := fixtureWant()
	data, err := os.ReadFile(full)
	require.NoError(t, err)
	got, err := session.Decode(data)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	again, err := session.Encode(got)
	require.NoError(t, err)
	assert.JSONEq(t, string(data), string(again), "a decoded snapshot encodes as it was written")

	// A FileStore's file of format 1 loads from a directory.
	data, err = os.ReadFile(file)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, want.Instance+".json"), data, 0o600))
	fs, err := session.NewFileStore(dir, session.WithClock(func() time.Time { return want.Updated }))
	require.NoError(t, err)
	got, err = fs.Load(context.Background(), want.Instance)
	require.NoError(t, err)
	want.Version, want.Expires, want.Created = 1, time.Time{}, want.Updated
	assert.Equal(t, want, got)
	ids, err := fs.List(context.Background(), session.StatusSuspended)
	require.NoError(t, err)
	assert.Equal(t, []string{want.Instance}, ids)
	require.NoError(t, fs.Save(context.Background(), got, 1), "saved over at its version")
}
