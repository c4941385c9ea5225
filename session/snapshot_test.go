package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
	"github.com/flowteam/flowteam/trace"
)

// saved returns a snapshot as a store would have stamped it.
func saved(id string) *session.Snapshot {
	s := storetest.NewSnapshot(id)
	s.Format, s.Version = session.FormatVersion, 3
	s.Created = time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	s.Updated = time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)
	return s
}

func encode(t testing.TB, s *session.Snapshot) []byte {
	t.Helper()
	data, err := session.Encode(s)
	require.NoError(t, err)
	return data
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	s := saved("order-9")
	s.Expires = s.Updated.Add(time.Hour)
	s.Redacted, s.Dropped = []string{"token"}, []string{"cb"}
	got, err := session.Decode(encode(t, s))
	require.NoError(t, err)
	assert.Equal(t, s, got)

	// A split frame with the branches it lost.
	s = withFailedBranches(saved("order-10"))
	got, err = session.Decode(encode(t, s))
	require.NoError(t, err)
	assert.Equal(t, s, got)
}

// withFailedBranches adds to s's frontier a ContinueOnError split frame that two
// failed branches left (one message with characters the codec escapes) and a token
// in its remaining branch.
func withFailedBranches(s *session.Snapshot) *session.Snapshot {
	s.Frontier.Frames = append(s.Frontier.Frames, flow.FrameState{Kind: "split", Parent: 0, Call: 0, Caller: -1, Pending: 1,
		Branch: "main", Split: "p", Policy: "continue", Failed: []flow.FailedBranch{
			{Node: "a", Branch: "p:a", Error: flow.StructuredError{Type: "flow_error", Code: "E1", Message: "bad"}},
			{Node: "c", Branch: "p:c", Error: flow.StructuredError{Type: "flow_error", Code: "E2", Message: "worse \ufffd \"quoted\""}},
		}})
	s.Frontier.Tokens = append(s.Frontier.Tokens, flow.TokenState{Node: "b", Mode: "exec", Frame: 1, Branch: "p:b"},
		flow.TokenState{Node: "j", Mode: "exec", Frame: 0, Branch: "main", Arrivals: 3}) // a suspended join
	return s
}

func TestDecodeNumbers(t *testing.T) {
	s := saved("n-1")
	s.Vars = map[string]any{
		"int": 5, "int64": int64(1) << 62, "neg": -7, "float": 2.5, "integralFloat": 3.0,
		"big": uint64(math.MaxUint64), "huge": 1e300, "tiny": 1e-9,
		"nested": map[string]any{"list": []any{1, 2.25, map[string]any{"x": 10}}},
	}
	s.Frontier.Frames = append(s.Frontier.Frames, flow.FrameState{Kind: "loop", Parent: 0, Call: 0, Caller: -1, Loop: "l", Items: []any{1, 2, 3.5}})
	got, err := session.Decode(encode(t, s))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"int": int64(5), "int64": int64(1) << 62, "neg": int64(-7), "float": 2.5, "integralFloat": int64(3),
		"big": float64(math.MaxUint64), "huge": 1e300, "tiny": 1e-9,
		"nested": map[string]any{"list": []any{int64(1), 2.25, map[string]any{"x": int64(10)}}},
	}, got.Vars, "integral numbers are int64, others float64")
	assert.Equal(t, []any{int64(1), int64(2), 3.5}, got.Frontier.Frames[1].Items, "loop items too")

	// Scripts see the restored numbers as integers.
	eng := flow.NewEngine()
	spec := flow.NewSpec("calc")
	spec.Start("s").SetTask(`context.put("next", int + 1); context.put("half", int / 2); context.put("isInt", int == 5)`)
	g, err := spec.Build()
	require.NoError(t, err)
	fc := flow.RestoreContext("n-1", got.Vars, got.Trace)
	_, err = eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	next, ok := fc.GetInt("next")
	assert.True(t, ok)
	assert.EqualValues(t, 6, next)
	assert.Equal(t, true, fc.Value("isInt"))
}

type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("no") }

type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("refuses") }

func TestEncodeUnserializable(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	s := saved("u-1")
	s.Vars["fn"] = func() {}
	s.Vars["ch"] = make(chan int)
	s.Vars["nan"] = math.NaN()
	s.Vars["inf"] = math.Inf(1)
	s.Vars["complex"] = complex(1, 2)
	s.Vars["cycle"] = cyclic
	s.Vars["panics"] = panicky{}
	s.Vars["fails"] = failing{}
	s.Vars["nested"] = map[string]any{"deep": []any{func() {}}}
	bad := []string{"ch", "complex", "cycle", "fails", "fn", "inf", "nan", "nested", "panics"}

	_, err := session.Encode(s)
	var ue *session.UnserializableError
	require.ErrorAs(t, err, &ue)
	assert.ErrorIs(t, err, session.ErrUnserializable)
	assert.Equal(t, bad, ue.Names, "every culprit is named, sorted")
	for _, n := range bad {
		assert.ErrorContains(t, err, `"`+n+`"`)
	}
	assert.NotContains(t, ue.Names, "days")

	data, err := session.Encode(s, session.DropUnserializable())
	require.NoError(t, err)
	got, err := session.Decode(data)
	require.NoError(t, err)
	assert.Equal(t, bad, got.Dropped)
	assert.Equal(t, int64(5), got.Vars["days"], "the rest is kept")
	for _, n := range bad {
		assert.NotContains(t, got.Vars, n)
	}
	assert.Contains(t, s.Vars, "fn", "the caller's snapshot is not modified")

	// Loop items in the frontier cannot be dropped: that is an error naming the frontier.
	s = saved("u-2")
	s.Frontier.Frames = append(s.Frontier.Frames, flow.FrameState{Kind: "loop", Items: []any{func() {}}})
	_, err = session.Encode(s, session.DropUnserializable())
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, []string{"frontier"}, ue.Names)
}

func TestDecodeRejectsCorruptSnapshots(t *testing.T) {
	valid := encode(t, saved("c-1"))
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		require.NoError(t, json.Unmarshal(valid, &m))
		f(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	tests := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, session.ErrCorrupt, "truncated"},
		{"null", []byte("null"), session.ErrCorrupt, "no format"},
		{"array", []byte("[]"), session.ErrCorrupt, ""},
		{"empty object", []byte("{}"), session.ErrCorrupt, "no format"},
		{"trailing data", append(bytes.Clone(valid), []byte(` {}`)...), session.ErrCorrupt, "after top-level value"},
		{"unknown field", edit(func(m map[string]any) { m["surprise"] = 1 }), session.ErrCorrupt, "surprise"},
		{"nested unknown field", edit(func(m map[string]any) { m["frontier"].(map[string]any)["tokens"].([]any)[0].(map[string]any)["x"] = 1 }), session.ErrCorrupt, `unknown object member name "x" within "/frontier/tokens/0"`},
		{"duplicate field", bytes.Replace(valid, []byte(`"graph":"leave"`), []byte(`"graph":"leave","graph":"other"`), 1), session.ErrCorrupt, "duplicate"},
		{"duplicate field far apart", bytes.Replace(valid, []byte(`"reason":`), []byte(`"updated":"2026-11-03T08:00:00Z","reason":`), 1), session.ErrCorrupt, `duplicate object member name "updated"`},
		{"duplicate nested field", bytes.Replace(valid, []byte(`"mode":"exec"`), []byte(`"mode":"exec","mode":"exec"`), 1), session.ErrCorrupt, `duplicate object member name "mode"`},
		{"duplicate escaped field", bytes.Replace(valid, []byte(`"graph":"leave"`), []byte(`"graph":"leave","gr\u0061ph":"other"`), 1), session.ErrCorrupt, "duplicate"},
		{"duplicate variable", bytes.Replace(valid, []byte(`"days":5`), []byte(`"days":5,"days":6`), 1), session.ErrCorrupt, "duplicate"},
		{"bad escape", bytes.Replace(valid, []byte(`"Ada"`), []byte(`"A\qda"`), 1), session.ErrCorrupt, "escape"},
		{"control character", bytes.Replace(valid, []byte(`"Ada"`), []byte("\"A\nda\""), 1), session.ErrCorrupt, "control"},
		{"bad number", bytes.Replace(valid, []byte(`"days":5`), []byte(`"days":05`), 1), session.ErrCorrupt, ""},
		{"newer format", edit(func(m map[string]any) { m["format"] = 2; m["newField"] = true }), session.ErrFormat, "format 2"},
		{"no format", edit(func(m map[string]any) { delete(m, "format") }), session.ErrCorrupt, "no format"},
		{"no instance", edit(func(m map[string]any) { delete(m, "instance") }), session.ErrCorrupt, "instance id"},
		{"bad instance", edit(func(m map[string]any) { m["instance"] = "../etc" }), session.ErrCorrupt, "invalid instance id"},
		{"no graph", edit(func(m map[string]any) { delete(m, "graph") }), session.ErrCorrupt, "graph"},
		{"bad hash", edit(func(m map[string]any) { m["hash"] = "abc" }), session.ErrCorrupt, "hash"},
		{"bad status", edit(func(m map[string]any) { m["status"] = "dancing" }), session.ErrCorrupt, "dancing"},
		{"version 0", edit(func(m map[string]any) { m["version"] = 0 }), session.ErrCorrupt, "version"},
		{"no times", edit(func(m map[string]any) { delete(m, "created") }), session.ErrCorrupt, "created"},
		{"wrong type", edit(func(m map[string]any) { m["version"] = "three" }), session.ErrCorrupt, "version"},
		{"number out of range", bytes.Replace(valid, []byte(`"days":5`), []byte(`"days":1e999`), 1), session.ErrCorrupt, "out of range"},
		{"frontier of another graph", edit(func(m map[string]any) { m["frontier"].(map[string]any)["graph"] = "other" }), session.ErrCorrupt, "other"},
		{"empty frontier", edit(func(m map[string]any) { m["frontier"].(map[string]any)["tokens"] = nil }), session.ErrCorrupt, "empty frontier"},
		{"sealed with clear body", edit(func(m map[string]any) { m["sealed"] = "AQID" }), session.ErrCorrupt, "sealed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := session.Decode(tc.data)
			assert.Nil(t, s, "never half-loaded")
			require.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
}

// TestDecodeRejectsEveryTruncation cuts a valid snapshot at every byte: no prefix
// loads.
func TestDecodeRejectsEveryTruncation(t *testing.T) {
	valid := encode(t, saved("t-1"))
	for n := range len(valid) {
		s, err := session.Decode(valid[:n])
		if !assert.ErrorIs(t, err, session.ErrCorrupt, "prefix of %d bytes", n) {
			break
		}
		assert.Nil(t, s)
	}
	_, err := session.Decode(valid[:len(valid)/2])
	assert.ErrorContains(t, err, "truncated")
}

func FuzzDecode(f *testing.F) {
	f.Add(encode(f, saved("f-1")))
	s := saved("f-2")
	s.Frontier, s.Errors, s.Trace.Last = nil, nil, nil
	s.Vars = map[string]any{"a": []any{1.5, "x", nil, true}, "b": map[string]any{"c": -3}}
	f.Add(encode(f, s))
	f.Add(encode(f, withFailedBranches(saved("f-3"))))
	f.Add([]byte(`{"format":1}`))
	f.Add([]byte(`{"format":1,"instance":"x","graph":"g","hash":"` + storetest.Hash + `","status":"running","version":1,"created":"2026-01-01T00:00:00Z","updated":"2026-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := session.Decode(data)
		if err != nil {
			if s != nil {
				t.Fatal("a snapshot with an error")
			}
			if !errors.Is(err, session.ErrCorrupt) && !errors.Is(err, session.ErrFormat) {
				t.Fatalf("error %v is neither ErrCorrupt nor ErrFormat", err)
			}
			return
		}
		// What loads re-encodes, and the re-encoding loads to the same thing.
		again, err := session.Encode(s)
		if err != nil {
			t.Fatalf("decoded snapshot does not encode: %v", err)
		}
		s2, err := session.Decode(again)
		if err != nil {
			t.Fatalf("re-encoded snapshot does not decode: %v\n%s", err, again)
		}
		third, err := session.Encode(s2)
		if err != nil || !bytes.Equal(again, third) {
			t.Fatalf("encoding is not stable:\n%s\n%s", again, third)
		}
	})
}

func TestValidateID(t *testing.T) {
	for _, id := range []string{"a", "order-42", "订单-1", "Ünïcødé", "a b", "x.json", "a..b", strings.Repeat("x", session.MaxIDLen)} {
		assert.NoError(t, session.ValidateID(id), id)
	}
	for _, id := range []string{"", ".", "..", "../x", "/abs", "a/b", `a\b`, "a\x00b", "tab\there", " x", "x ", ".x", "\xff"} {
		assert.ErrorIs(t, session.ValidateID(id), session.ErrInvalidID, "%q", id)
	}
}

// Encode refuses a snapshot Decode would reject, so what it writes always reads back.
func TestEncodeRefusesWhatDecodeRejects(t *testing.T) {
	for name, spoil := range map[string]func(*session.Snapshot){
		"hash":       func(s *session.Snapshot) { s.Hash = "not-a-sha256" },
		"instance":   func(s *session.Snapshot) { s.Instance = "../x" },
		"graph":      func(s *session.Snapshot) { s.Graph = "" },
		"status":     func(s *session.Snapshot) { s.Status = "paused" },
		"version":    func(s *session.Snapshot) { s.Version = 0 },
		"created":    func(s *session.Snapshot) { s.Created = time.Time{} },
		"frontier":   func(s *session.Snapshot) { s.Frontier.Graph = "other" },
		"sealedBody": func(s *session.Snapshot) { s.Sealed = []byte("x") },
	} {
		s := saved("order-11")
		spoil(s)
		_, err := session.Encode(s)
		assert.Error(t, err, name)
	}
	_, err := session.Decode(encode(t, saved("order-11")))
	require.NoError(t, err)
}

// TestDecodeNullSealedIsNotSealed: "sealed": null (as a tool that writes every field
// of its own model writes an absent one) means not sealed, as null means absent for
// every other optional field.
func TestDecodeNullSealedIsNotSealed(t *testing.T) {
	for name, s := range map[string]*session.Snapshot{"with a body": saved("null-1"), "without": {
		Format: session.FormatVersion, Instance: "null-2", Graph: "leave", Hash: storetest.Hash, Status: session.StatusCompleted,
		Version: 2, Created: time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC), Updated: time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC),
	}} {
		data := encode(t, s)
		data = append([]byte(`{"sealed":null,`), data[1:]...)
		got, err := session.Decode(data)
		require.NoError(t, err, name)
		assert.Nil(t, got.Sealed, name)
		assert.Equal(t, s, got, name)
	}
}

// TestEncodeBranchingCycleFails: a cycle through a map or a list that holds itself
// more than once fails the save at once, as one that holds itself once does.
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

// TestTracePathsThatCollide: two trace paths that become one once their invalid
// UTF-8 is replaced cannot be written so that they load again (Decode rejects the
// repeated path), so Encode rejects them, naming the trace once; a single such path
// is repaired.
func TestTracePathsThatCollide(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	rec := trace.NodeRecord{Path: "p", GraphID: "g", NodeID: "n", NodeType: "activity", Time: at}
	bad := trace.NodeRecord{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, last := range []map[string]trace.NodeRecord{
		{"b\xff": rec, "b\xfe": rec},
		{"b\ufffd": rec, "b\xff": rec, "c": rec},
		{"b\xff": rec, "b\xfe": rec, "x": bad, "y": bad},
	} {
		s := &session.Snapshot{Format: session.FormatVersion, Instance: "i", Graph: "g", Hash: strings.Repeat("a", 64), Status: session.StatusSuspended,
			Version: 1, Created: at, Updated: at, Trace: trace.FlowTrace{Last: last}}
		_, eerr := session.Encode(s)
		var ue *session.UnserializableError
		require.ErrorAs(t, eerr, &ue, "%q", slices.Collect(maps.Keys(last)))
		require.Equal(t, []string{"trace"}, ue.Names)
	}
	// One path with invalid UTF-8 alone is repaired and loads.
	s := &session.Snapshot{Format: session.FormatVersion, Instance: "i", Graph: "g", Hash: strings.Repeat("a", 64), Status: session.StatusSuspended,
		Version: 1, Created: at, Updated: at, Trace: trace.FlowTrace{Last: map[string]trace.NodeRecord{"b\xff": rec, "c": rec}}}
	got, err := session.Decode(encode(t, s))
	require.NoError(t, err)
	require.Contains(t, got.Trace.Last, "b\ufffd")
}
