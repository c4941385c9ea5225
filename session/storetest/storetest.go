// Package storetest is the conformance suite for session.Store implementations, in
// the spirit of testing/fstest.TestFS: a store that passes Run behaves as the session
// package expects, whatever it is built on.
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) session.Store {
//			return mystore.New(t.TempDir())
//		})
//	}
//
// newStore is called once per subtest and must return an empty store (or one whose
// keys no other subtest sees). Expiry is tested when the store implements
// session.TTLStore; if it also implements FastForwarder the suite moves the store's
// clock instead of waiting.
package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/trace"
)

// FastForwarder is implemented by test stores whose expiry clock can be moved forward
// (a fake clock, miniredis's FastForward).
type FastForwarder interface {
	FastForward(d time.Duration)
}

// Hash is a valid definition hash for test snapshots.
const Hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// Run runs the conformance suite against the stores newStore returns.
func Run(t *testing.T, newStore func(t *testing.T) session.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s session.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"Sealed", testSealed},
		{"Missing", testMissing},
		{"Conflict", testConflict},
		{"ConcurrentSavers", testConcurrentSavers},
		{"InvalidIDs", testInvalidIDs},
		{"UnicodeIDs", testUnicodeIDs},
		{"List", testList},
		{"Delete", testDelete},
		{"Recreated", testRecreated},
		{"LargeVariables", testLargeVariables},
		{"Unserializable", testUnserializable},
		{"InvalidSaves", testInvalidSaves},
		{"TTL", testTTL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

// NewSnapshot returns a valid snapshot of a suspended instance with a few variables,
// a frontier and a FlowTrace, as the suite saves it.
func NewSnapshot(id string) *session.Snapshot {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	return &session.Snapshot{
		Instance: id, Graph: "leave", Hash: Hash, Status: session.StatusSuspended,
		Sources: []string{"/defs/leave.yml"},
		RunID:   "r-1",
		Vars: map[string]any{
			"days": int64(5), "rate": 0.5, "name": "Ada", "ok": true, "none": nil,
			"list": []any{int64(1), "two", 3.25}, "obj": map[string]any{"a": int64(1), "b": []any{}},
		},
		Frontier: &flow.FrontierState{
			Graph:  "leave",
			Frames: []flow.FrameState{{Kind: "call", Parent: -1, Call: -1, Caller: -1, Pending: 1, Branch: "main", Graph: "leave", Path: "leave"}},
			Tokens: []flow.TokenState{{Node: "manager", Mode: "exec", Frame: 0, Branch: "main"}},
		},
		Trace:  trace.FlowTrace{Last: map[string]trace.NodeRecord{"leave": {Path: "leave", GraphID: "leave", NodeID: "manager", NodeType: "activity", Time: at}}},
		Reason: "waiting for the manager",
		Errors: []session.ErrorRecord{{Code: "task_failed", Node: "n", Graph: "leave", Path: "leave", Branch: "main", Step: 3, Message: "boom"}},
	}
}

// fullSnapshot is NewSnapshot with the fields a Runner sets only sometimes: dropped
// and redacted names, meta entries, the structured type and severity of an error, the
// called graphs' hashes and an owner's lease.
func fullSnapshot(id string) *session.Snapshot {
	s := NewSnapshot(id)
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	s.Called = map[string]string{"check": Hash}
	s.Lease = &session.Lease{Host: "node-1", PID: 42, Token: "0123456789abcdef", Renewed: at, Expiry: at.Add(time.Minute)}
	s.Errors[0].Type, s.Errors[0].Severity = "flow_error", "recoverable"
	s.Dropped, s.Redacted = []string{"callback"}, []string{"token"}
	s.Meta = []string{"durability=per-node"}
	return s
}

func ctx(t *testing.T) context.Context { return t.Context() }

// equalBody checks the body and identity of two snapshots.
func equalBody(t *testing.T, want, got *session.Snapshot) {
	t.Helper()
	assert.Equal(t, want.Instance, got.Instance)
	assert.Equal(t, want.Graph, got.Graph)
	assert.Equal(t, want.Hash, got.Hash)
	assert.Equal(t, want.Status, got.Status)
	assert.Equal(t, want.Sources, got.Sources)
	assert.Equal(t, want.RunID, got.RunID)
	assert.Equal(t, want.Vars, got.Vars)
	assert.Equal(t, want.Frontier, got.Frontier)
	assert.Equal(t, want.Trace, got.Trace)
	assert.Equal(t, want.Reason, got.Reason)
	assert.Equal(t, want.Errors, got.Errors)
	// A store that lost these would resume with a mask as a value, or without saying
	// which variables it could not keep.
	assert.Equal(t, want.Dropped, got.Dropped, "dropped")
	assert.Equal(t, want.Redacted, got.Redacted, "redacted")
	assert.Equal(t, want.Meta, got.Meta, "meta")
	// A store that lost these would resume on changed called graphs, or let Recover
	// run a live instance a second time.
	assert.Equal(t, want.Called, got.Called, "called")
	assert.Equal(t, want.Lease, got.Lease, "lease")
	assert.Equal(t, want.Sealed, got.Sealed, "sealed")
	assert.Equal(t, session.FormatVersion, got.Format)
}

func testRoundTrip(t *testing.T, s session.Store) {
	snap := fullSnapshot("order-1")
	require.NoError(t, s.Save(ctx(t), snap, 0))
	assert.EqualValues(t, 1, snap.Version, "Save sets the version")
	assert.False(t, snap.Created.IsZero(), "Save sets Created")
	assert.Equal(t, snap.Created, snap.Updated)

	got, err := s.Load(ctx(t), "order-1")
	require.NoError(t, err)
	equalBody(t, fullSnapshot("order-1"), got)
	assert.EqualValues(t, 1, got.Version)
	assert.True(t, snap.Created.Equal(got.Created), "created %v, loaded %v", snap.Created, got.Created)

	// Change and save again: the version goes up, Created stays.
	got.Status = session.StatusCompleted
	got.Frontier = nil
	got.Vars["approved"] = true
	require.NoError(t, s.Save(ctx(t), got, 1))
	assert.EqualValues(t, 2, got.Version)
	again, err := s.Load(ctx(t), "order-1")
	require.NoError(t, err)
	assert.EqualValues(t, 2, again.Version)
	assert.Equal(t, session.StatusCompleted, again.Status)
	assert.Nil(t, again.Frontier)
	assert.Equal(t, true, again.Vars["approved"])
	assert.True(t, snap.Created.Equal(again.Created))
	assert.False(t, again.Updated.Before(again.Created))

	// The loaded snapshot shares nothing with the store: changing it changes nothing.
	again.Vars["days"] = int64(99)
	third, err := s.Load(ctx(t), "order-1")
	require.NoError(t, err)
	assert.Equal(t, int64(5), third.Vars["days"])
}

// testSealed stores an encrypted snapshot: its header in clear and its body in
// Sealed, bytes the store keeps as they are without the key.
func testSealed(t *testing.T, s session.Store) {
	c, err := session.NewCipher([]byte("0123456789abcdef"))
	require.NoError(t, err)
	snap, err := c.Seal(NewSnapshot("sealed-1"))
	require.NoError(t, err)
	require.NoError(t, s.Save(ctx(t), snap, 0))
	got, err := s.Load(ctx(t), "sealed-1")
	require.NoError(t, err)
	want := *snap
	want.Version = 1
	equalBody(t, &want, got)
	opened, err := c.Open(got)
	require.NoError(t, err, "the body opens after the round trip")
	equalBody(t, NewSnapshot("sealed-1"), opened)
	ids, err := s.List(ctx(t), session.StatusSuspended)
	require.NoError(t, err)
	assert.Equal(t, []string{"sealed-1"}, ids, "listed by its clear status")
}

func testMissing(t *testing.T, s session.Store) {
	_, err := s.Load(ctx(t), "nobody")
	assert.ErrorIs(t, err, session.ErrNotFound)
	assert.ErrorIs(t, s.Delete(ctx(t), "nobody"), session.ErrNotFound)
	err = s.Save(ctx(t), NewSnapshot("nobody"), 1)
	assert.ErrorIs(t, err, session.ErrConflict, "expecting version 1 of a missing instance")
	_, err = s.Load(ctx(t), "nobody")
	assert.ErrorIs(t, err, session.ErrNotFound, "a failed save stores nothing")
}

func testConflict(t *testing.T, s session.Store) {
	first := NewSnapshot("c-1")
	require.NoError(t, s.Save(ctx(t), first, 0))
	for _, expected := range []int64{0, 2, 7} {
		stale := NewSnapshot("c-1")
		stale.Reason = "stale"
		err := s.Save(ctx(t), stale, expected)
		require.ErrorIs(t, err, session.ErrConflict, "expected version %d", expected)
		assert.Contains(t, err.Error(), "c-1", "the error names the instance")
		assert.Zero(t, stale.Version, "a failed save leaves the snapshot alone")
	}
	got, err := s.Load(ctx(t), "c-1")
	require.NoError(t, err)
	assert.EqualValues(t, 1, got.Version)
	assert.Equal(t, "waiting for the manager", got.Reason, "the stale writers stored nothing")
}

func testConcurrentSavers(t *testing.T, s session.Store) {
	const savers, rounds = 16, 4
	for round := range int64(rounds) {
		var (
			wins      atomic.Int32
			conflicts atomic.Int32
			winner    atomic.Int32
			wg        sync.WaitGroup
			start     = make(chan struct{})
		)
		for i := range savers {
			wg.Go(func() {
				snap := NewSnapshot("race")
				snap.Vars["saver"] = int64(i)
				<-start
				err := s.Save(ctx(t), snap, round)
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(int32(i))
				case assert.ErrorIs(t, err, session.ErrConflict):
					conflicts.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		require.EqualValues(t, 1, wins.Load(), "round %d: exactly one saver wins version %d", round, round+1)
		require.EqualValues(t, savers-1, conflicts.Load())
		got, err := s.Load(ctx(t), "race")
		require.NoError(t, err)
		assert.Equal(t, round+1, got.Version)
		assert.Equal(t, int64(winner.Load()), got.Vars["saver"], "the stored snapshot is the winner's")
	}
}

func testInvalidIDs(t *testing.T, s session.Store) {
	for _, id := range []string{"", "../x", "..", ".", ".hidden", "/abs", "/etc/passwd", "a/b", `a\b`, `..\x`,
		"a\x00b", "line\nbreak", " padded", "bad\xffutf8", strings.Repeat("x", session.MaxIDLen+1)} {
		snap := NewSnapshot("ok")
		snap.Instance = id
		assert.ErrorIs(t, s.Save(ctx(t), snap, 0), session.ErrInvalidID, "save %q", id)
		_, err := s.Load(ctx(t), id)
		assert.ErrorIs(t, err, session.ErrInvalidID, "load %q", id)
		assert.ErrorIs(t, s.Delete(ctx(t), id), session.ErrInvalidID, "delete %q", id)
	}
	ids, err := s.List(ctx(t), "")
	require.NoError(t, err)
	assert.Empty(t, ids, "nothing was stored")
}

func testUnicodeIDs(t *testing.T, s session.Store) {
	ids := []string{"订单-42", "заявка №7", "Ünïcødé ✓", "🚀-launch", "a b", "x:y@z", strings.Repeat("é", session.MaxIDLen/2)}
	for _, id := range ids {
		snap := NewSnapshot(id)
		require.NoError(t, s.Save(ctx(t), snap, 0), id)
		got, err := s.Load(ctx(t), id)
		require.NoError(t, err, id)
		assert.Equal(t, id, got.Instance)
	}
	listed, err := s.List(ctx(t), "")
	require.NoError(t, err)
	assert.ElementsMatch(t, ids, listed)
	for _, id := range ids {
		require.NoError(t, s.Delete(ctx(t), id), id)
	}
}

func testList(t *testing.T, s session.Store) {
	ids, err := s.List(ctx(t), "")
	require.NoError(t, err)
	assert.Empty(t, ids)
	statuses := map[string]session.Status{
		"b": session.StatusSuspended, "a": session.StatusSuspended, "c": session.StatusCompleted,
		"d": session.StatusFailed, "e": session.StatusRunning, "f": session.StatusStopped,
	}
	for id, st := range statuses {
		snap := NewSnapshot(id)
		snap.Status = st
		require.NoError(t, s.Save(ctx(t), snap, 0))
	}
	all, err := s.List(ctx(t), "")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c", "d", "e", "f"}, all, "sorted")
	for st, want := range map[session.Status][]string{
		session.StatusSuspended: {"a", "b"}, session.StatusCompleted: {"c"}, session.StatusFailed: {"d"},
		session.StatusRunning: {"e"}, session.StatusStopped: {"f"},
	} {
		got, err := s.List(ctx(t), st)
		require.NoError(t, err)
		assert.Equal(t, want, got, "status %s", st)
	}

	// A save that changes the status moves the instance; a delete removes it.
	snap, err := s.Load(ctx(t), "a")
	require.NoError(t, err)
	snap.Status = session.StatusRunning
	require.NoError(t, s.Save(ctx(t), snap, 1))
	require.NoError(t, s.Delete(ctx(t), "b"))
	for st, want := range map[session.Status][]string{
		session.StatusSuspended: {}, session.StatusRunning: {"a", "e"},
	} {
		got, err := s.List(ctx(t), st)
		require.NoError(t, err)
		assert.Equal(t, want, got, "status %s", st)
	}
	all, err = s.List(ctx(t), "")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "c", "d", "e", "f"}, all)
}

func testDelete(t *testing.T, s session.Store) {
	require.NoError(t, s.Save(ctx(t), NewSnapshot("d-1"), 0))
	require.NoError(t, s.Delete(ctx(t), "d-1"))
	_, err := s.Load(ctx(t), "d-1")
	assert.ErrorIs(t, err, session.ErrNotFound)
	assert.ErrorIs(t, s.Delete(ctx(t), "d-1"), session.ErrNotFound)
	assert.ErrorIs(t, s.Save(ctx(t), NewSnapshot("d-1"), 1), session.ErrConflict, "the old version is gone")
	again := NewSnapshot("d-1")
	require.NoError(t, s.Save(ctx(t), again, 0), "a deleted id can be created again")
	assert.EqualValues(t, 1, again.Version)
}

// testRecreated: an instance deleted (or expired) and created again restarts its
// versions, so a save that expects a version of the old one could land on the new
// one (a resume that loaded the old one claiming the new). A save whose Created is
// set must find the stored snapshot created then.
func testRecreated(t *testing.T, s session.Store) {
	old := NewSnapshot("r-1")
	old.Created = time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	require.NoError(t, s.Save(ctx(t), old, 0))
	require.NoError(t, s.Save(ctx(t), old, 1))
	require.NoError(t, s.Delete(ctx(t), "r-1"))
	fresh := NewSnapshot("r-1")
	fresh.Created = old.Created.Add(time.Hour)
	fresh.Reason = "the new one"
	require.NoError(t, s.Save(ctx(t), fresh, 0))
	require.NoError(t, s.Save(ctx(t), fresh, 1))

	stale := NewSnapshot("r-1")
	stale.Created, stale.Reason = old.Created, "stale"
	require.ErrorIs(t, s.Save(ctx(t), stale, 2), session.ErrConflict, "a save for the instance created first")
	got, err := s.Load(ctx(t), "r-1")
	require.NoError(t, err)
	assert.Equal(t, "the new one", got.Reason)
	require.NoError(t, s.Save(ctx(t), got, 2), "the loaded snapshot is of the stored instance")
	anyone := NewSnapshot("r-1") // no Created: the version alone decides
	require.NoError(t, s.Save(ctx(t), anyone, 3))
}

func testLargeVariables(t *testing.T, s session.Store) {
	big := strings.Repeat("flowteam ", 1<<20/9+1)[:1<<20] // 1 MiB
	list := make([]any, 10_000)
	for i := range list {
		list[i] = int64(i)
	}
	snap := NewSnapshot("large")
	snap.Vars["big"] = big
	snap.Vars["list"] = list
	snap.Vars["unicode"] = strings.Repeat("日本語テキスト", 10_000)
	require.NoError(t, s.Save(ctx(t), snap, 0))
	got, err := s.Load(ctx(t), "large")
	require.NoError(t, err)
	assert.Len(t, got.Vars["big"], 1<<20)
	assert.True(t, big == got.Vars["big"], "1 MiB variable comes back intact")
	assert.Equal(t, list, got.Vars["list"])
	assert.Equal(t, snap.Vars["unicode"], got.Vars["unicode"])
}

func testUnserializable(t *testing.T, s session.Store) {
	snap := NewSnapshot("u-1")
	snap.Vars["callback"] = func() {}
	snap.Vars["ch"] = make(chan int)
	err := s.Save(ctx(t), snap, 0)
	require.ErrorIs(t, err, session.ErrUnserializable)
	assert.ErrorContains(t, err, `"callback"`)
	assert.ErrorContains(t, err, `"ch"`)
	_, err = s.Load(ctx(t), "u-1")
	assert.ErrorIs(t, err, session.ErrNotFound, "nothing was stored")
}

// testInvalidSaves saves snapshots that must not be stored over a stored instance:
// each save fails, the stored snapshot is unchanged and so is the caller's.
func testInvalidSaves(t *testing.T, s session.Store) {
	require.NoError(t, s.Save(ctx(t), NewSnapshot("inv-1"), 0))
	before, err := s.Load(ctx(t), "inv-1")
	require.NoError(t, err)
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		edit     func(s *session.Snapshot)
		expected int64
	}{
		{"stale version", func(*session.Snapshot) {}, 0},
		{"future version", func(*session.Snapshot) {}, 2},
		{"negative version", func(*session.Snapshot) {}, -1},
		{"unserializable variable", func(s *session.Snapshot) { s.Vars["f"] = func() {} }, 1},
		{"cycle", func(s *session.Snapshot) { m := map[string]any{}; m["m"] = m; s.Vars["m"] = m }, 1},
		{"key not UTF-8", func(s *session.Snapshot) { s.Vars["k\xff"] = 1 }, 1},
		{"no graph", func(s *session.Snapshot) { s.Graph = "" }, 1},
		{"bad hash", func(s *session.Snapshot) { s.Hash = "abc" }, 1},
		{"bad status", func(s *session.Snapshot) { s.Status = "dancing" }, 1},
		{"frontier of another graph", func(s *session.Snapshot) { s.Frontier.Graph = "other" }, 1},
		{"empty frontier", func(s *session.Snapshot) { s.Frontier.Tokens = nil }, 1},
		{"unserializable loop item", func(s *session.Snapshot) {
			s.Frontier.Frames = append(s.Frontier.Frames, flow.FrameState{Kind: "loop", Items: []any{make(chan int)}})
		}, 1},
		{"trace time out of range", func(s *session.Snapshot) {
			s.Trace.Last["leave"] = trace.NodeRecord{Path: "leave", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
		}, 1},
		{"trace paths that collide", func(s *session.Snapshot) {
			s.Trace.Last = map[string]trace.NodeRecord{"p\xff": {Time: at}, "p\xfe": {Time: at}}
		}, 1},
		{"created out of range", func(s *session.Snapshot) { s.Created = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, 1},
	} {
		snap := NewSnapshot("inv-1")
		snap.Reason = "must not be stored"
		tc.edit(snap)
		created := snap.Created
		assert.Error(t, s.Save(ctx(t), snap, tc.expected), tc.name)
		assert.Zero(t, snap.Version, "%s: a failed save leaves the snapshot alone", tc.name)
		assert.Equal(t, created, snap.Created, tc.name)
		got, err := s.Load(ctx(t), "inv-1")
		require.NoError(t, err, tc.name)
		assert.Equal(t, before, got, "%s: the stored snapshot did not change", tc.name)
	}
}

func testTTL(t *testing.T, s session.Store) {
	ts, ok := s.(session.TTLStore)
	if !ok {
		t.Skip("the store does not implement session.TTLStore")
	}
	ff, fake := s.(FastForwarder)
	ttl := time.Hour
	if !fake {
		ttl = 300 * time.Millisecond // a real clock: keep the wait short
	}
	wait := func(d time.Duration, cond func() bool, msg string) {
		t.Helper()
		if fake {
			ff.FastForward(d)
			require.True(t, cond(), msg)
			return
		}
		require.Eventually(t, cond, d+5*time.Second, 20*time.Millisecond, msg)
	}
	gone := func(id string) func() bool {
		return func() bool {
			_, err := s.Load(ctx(t), id)
			return err != nil && assert.ErrorIs(t, err, session.ErrNotFound)
		}
	}

	snap := NewSnapshot("ttl-1")
	require.NoError(t, ts.SaveTTL(ctx(t), snap, 0, ttl))
	assert.False(t, snap.Expires.IsZero(), "SaveTTL sets Expires")
	assert.WithinDuration(t, snap.Updated.Add(ttl), snap.Expires, time.Millisecond)
	keep := NewSnapshot("ttl-keep")
	require.NoError(t, ts.SaveTTL(ctx(t), keep, 0, ttl))
	require.NoError(t, ts.Save(ctx(t), keep, 1), "a save without ttl clears the expiry")
	assert.True(t, keep.Expires.IsZero())
	got, err := s.Load(ctx(t), "ttl-1")
	require.NoError(t, err)
	assert.True(t, snap.Expires.Equal(got.Expires))

	wait(ttl+time.Second, gone("ttl-1"), "the snapshot expires")
	_, err = s.Load(ctx(t), "ttl-keep")
	require.NoError(t, err, "the snapshot without ttl stays")
	ids, err := s.List(ctx(t), "")
	require.NoError(t, err)
	assert.Equal(t, []string{"ttl-keep"}, ids, "an expired instance is not listed")
	ids, err = s.List(ctx(t), session.StatusSuspended)
	require.NoError(t, err)
	assert.Equal(t, []string{"ttl-keep"}, ids)
	assert.ErrorIs(t, s.Save(ctx(t), NewSnapshot("ttl-1"), 1), session.ErrConflict, "an expired version is gone")
	again := NewSnapshot("ttl-1")
	require.NoError(t, s.Save(ctx(t), again, 0), "an expired id can be created again")
	assert.EqualValues(t, 1, again.Version)
}

// Clock is a fake clock for stores that take one (session.WithClock).
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock set to a fixed time.
func NewClock() *Clock { return &Clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// FastForward moves the clock forward.
func (c *Clock) FastForward(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// WithFastForward returns s with a FastForward method calling ff, so the suite can
// expire its snapshots without waiting. s must implement session.TTLStore.
func WithFastForward(s session.TTLStore, ff func(d time.Duration)) session.Store {
	return fastForward{TTLStore: s, ff: ff}
}

type fastForward struct {
	session.TTLStore
	ff func(time.Duration)
}

func (f fastForward) FastForward(d time.Duration) { f.ff(d) }

// String names the wrapped store in messages.
func (f fastForward) String() string { return fmt.Sprintf("%T", f.TTLStore) }
