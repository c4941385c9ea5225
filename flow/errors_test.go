package flow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

type codedErr struct{ code string }

func (e codedErr) Error() string     { return "coded " + e.code }
func (e codedErr) ErrorCode() string { return e.code }
func (e codedErr) ErrorType() string { return "inventory_error" }

type legacyErr struct{ code int }

func (e legacyErr) Error() string { return "legacy" }
func (e legacyErr) Code() int     { return e.code }

type codeStr struct{}

func (codeStr) Error() string { return "s" }
func (codeStr) Code() string  { return "S1" }

type code64 struct{}

func (code64) Error() string { return "x" }
func (code64) Code() int64   { return 7 }

func TestToStructured(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want flow.StructuredError
	}{
		{codedErr{"ORDER_X"}, flow.StructuredError{Type: "inventory_error", Code: "ORDER_X", Message: "coded ORDER_X"}},
		{legacyErr{40401}, flow.StructuredError{Type: "flow_error", Code: "40401", Message: "legacy"}},
		{codeStr{}, flow.StructuredError{Type: "flow_error", Code: "S1", Message: "s"}},
		{code64{}, flow.StructuredError{Type: "flow_error", Code: "7", Message: "x"}},
		{errors.New("plain"), flow.StructuredError{Type: "flow_error", Message: "plain"}},
		{flow.MarkRecoverable(legacyErr{5}), flow.StructuredError{Type: "flow_error", Code: "5", Message: "legacy"}},
	} {
		assert.Equal(t, tc.want, flow.ToStructured(tc.err))
		wrapped := flow.ToStructured(errors.Join(errors.New("ctx"), tc.err))
		assert.Equal(t, tc.want.Code, wrapped.Code, "found through a wrapper")
	}
}

// inventory builds the seed's inventory graph: lookup may fail; a recoverable error goes
// to fallback_lookup, a fatal one ends the run with the fallback business state.
func inventory(t *testing.T, e *flow.Engine) *flow.Graph {
	s := flow.NewSpec("inventory")
	s.Start("s").LinkTo("lookup")
	s.Activity("lookup").SetTask("@lookup").
		OnError("fallback_lookup", map[string]any{"inventory_status": "fallback"}).
		LinkTo("finalize")
	s.Activity("fallback_lookup").SetTask(`context.put("inventory_status", "estimated")`).LinkTo("finalize")
	s.Activity("finalize").SetTask(`context.put("done", true)`).LinkTo("e")
	s.End("e")
	return build(t, s)
}

func lookupFails(err error) flow.Option {
	return flow.WithTaskFunc("lookup", func(context.Context, *flow.Context, *flow.Node) error { return err })
}

func TestRecoverableGoesToFallbackAndKeepsRecord(t *testing.T) {
	for name, err := range map[string]error{
		"Recoverable()":       &flow.Error{Code: "ORDER_INVENTORY_SOFT_TIMEOUT", Message: "timed out", Recover: true},
		"MarkRecoverable":     flow.MarkRecoverable(codedErr{"ORDER_INVENTORY_SOFT_TIMEOUT"}),
		"NewRecoverableError": flow.NewRecoverableError("soft"),
	} {
		t.Run(name, func(t *testing.T) {
			e := flow.NewEngine(lookupFails(err))
			res, fc, path := run(t, e, inventory(t, e), nil)
			require.NoError(t, res.Err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, "estimated", fc.Value("inventory_status"))
			assert.Equal(t, []string{"s", "lookup", "fallback_lookup", "finalize", "e"}, path)
			require.Len(t, res.ExecutionErrors, 1)
			rec := res.ExecutionErrors[0]
			assert.Equal(t, flow.Recoverable, rec.Severity)
			assert.Equal(t, "lookup", rec.NodeID)
			assert.Equal(t, "fallback_lookup", rec.Goto)
			assert.Equal(t, res.ExecutionErrors, flow.ExecutionErrors(fc, flow.DefaultErrorKey), "kept in the state")
			assert.Equal(t, 1, res.Fallbacks)
		})
	}
}

func TestFatalPathKeepsFallbackState(t *testing.T) {
	e := flow.NewEngine(lookupFails(codedErr{"ORDER_INVENTORY_UNAVAILABLE"}))
	res, fc, path := run(t, e, inventory(t, e), nil)
	assert.Equal(t, flow.StatusFailed, res.Status)
	require.Error(t, res.Err)
	assert.Equal(t, "fallback", fc.Value("inventory_status"))
	assert.Equal(t, map[string]any{"inventory_status": "fallback"}, res.Fallback)
	assert.NotContains(t, path, "finalize")
	require.Len(t, res.ExecutionErrors, 1)
	rec := res.ExecutionErrors[0]
	assert.Equal(t, flow.Fatal, rec.Severity)
	assert.Equal(t, "ORDER_INVENTORY_UNAVAILABLE", rec.Error.Code)
	assert.Equal(t, "inventory_error", rec.Error.Type)
	var ne *flow.NodeError
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, "ORDER_INVENTORY_UNAVAILABLE", ne.Code)
}

func TestRecoverableWithoutGotoFollowsLinks(t *testing.T) {
	errSoft := errors.New("soft limit")
	e := flow.NewEngine(lookupFails(errSoft), flow.WithRecoverableErrors(errSoft))
	s := flow.NewSpec("plain")
	s.Start("s").LinkTo("lookup")
	s.Activity("lookup").SetTask("@lookup").LinkTo("next")
	s.End("next")
	res, _, path := run(t, e, build(t, s), nil)
	require.NoError(t, res.Err)
	assert.Equal(t, []string{"s", "lookup", "next"}, path)
	require.Len(t, res.ExecutionErrors, 1)
	assert.Equal(t, flow.Recoverable, res.ExecutionErrors[0].Severity)
}

func TestCustomPolicyReplacement(t *testing.T) {
	policy := func(_ context.Context, _ *flow.Context, n *flow.Node, err error, def flow.ErrorDecision) flow.ErrorDecision {
		if !def.Recover {
			return def
		}
		def.Update = map[string]any{"inventory_status": "fallback"}
		def.Goto = "finalize"
		return def
	}
	e := flow.NewEngine(lookupFails(flow.NewRecoverableError("soft")), flow.WithErrorPolicy(policy))
	res, fc, path := run(t, e, inventory(t, e), nil)
	require.NoError(t, res.Err)
	assert.Equal(t, "fallback", fc.Value("inventory_status"))
	assert.NotContains(t, path, "fallback_lookup")
	assert.Equal(t, "finalize", res.ExecutionErrors[0].Goto)
}

func TestConditionErrorIsRecorded(t *testing.T) {
	s := flow.NewSpec("cond")
	s.Start("s").LinkTo("g")
	s.Exclusive("g").LinkTo("a", flow.LinkWhen(`amount > 10`)).LinkTo("b")
	s.End("a")
	s.End("b")
	res, _, _ := run(t, flow.NewEngine(), build(t, s), map[string]any{"amount": "ten"})
	assert.Equal(t, flow.StatusFailed, res.Status)
	require.Len(t, res.ExecutionErrors, 1)
	assert.Equal(t, flow.CodeCondition, res.ExecutionErrors[0].Error.Code)
	assert.Equal(t, "g", res.ExecutionErrors[0].NodeID)
}

func TestSubgraphErrorsReachParent(t *testing.T) {
	e := flow.NewEngine(lookupFails(codedErr{"ORDER_INVENTORY_UNAVAILABLE"}))
	require.NoError(t, e.Register(inventory(t, e)))
	p := flow.NewSpec("order")
	p.Start("s").LinkTo("check")
	p.Activity("check").SetTask("#inventory").
		SetMeta(flow.MetaOnError, map[string]any{"recover": []any{"ORDER_INVENTORY_UNAVAILABLE"}}).
		LinkTo("ship")
	p.Activity("ship").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		out, ok := c.CallOutcome("order/check/inventory")
		if !ok {
			return errors.New("no outcome")
		}
		c.Set("childStatus", string(out.Status))
		c.Set("childFallback", out.Fallback["inventory_status"])
		return nil
	}).LinkTo("e")
	p.End("e")
	res, fc, _ := run(t, e, build(t, p), nil)
	require.NoError(t, res.Err)
	assert.Equal(t, "failed", fc.Value("childStatus"))
	assert.Equal(t, "fallback", fc.Value("childFallback"))
	require.Len(t, res.ExecutionErrors, 2)
	assert.Equal(t, "order/check/inventory", res.ExecutionErrors[0].Path)
	assert.Equal(t, flow.Fatal, res.ExecutionErrors[0].Severity)
	assert.Equal(t, "check", res.ExecutionErrors[1].NodeID)
	assert.Equal(t, flow.Recoverable, res.ExecutionErrors[1].Severity, "the parent recovered the child's failure")
	assert.Equal(t, "ORDER_INVENTORY_UNAVAILABLE", res.ExecutionErrors[1].Error.Code)
}

// fakeClock returns immediately and records every wait.
type fakeClock struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Now()
	return ch
}

func TestRetryBoundedWithBackoff(t *testing.T) {
	var calls int
	clock := &fakeClock{}
	e := flow.NewEngine(flow.WithClock(clock), flow.WithTaskFunc("flaky", func(context.Context, *flow.Context, *flow.Node) error {
		calls++
		return &flow.Error{Code: "UPSTREAM_BUSY", Message: "busy", Retry: true}
	}))
	mk := func(idempotent bool) *flow.Graph {
		s := flow.NewSpec("retry")
		s.Start("s").LinkTo("call")
		s.Activity("call").SetTask("@flaky").
			SetMeta(flow.MetaRetry, map[string]any{"max": 4, "backoff": "10ms", "maxBackoff": "25ms"}).
			SetMeta(flow.MetaIdempotent, idempotent).LinkTo("e")
		s.End("e")
		return build(t, s)
	}
	rec := &pathRec{}
	res, err := e.EvalGraph(context.Background(), mk(true), flow.NewContext("r"), flow.WithEvalInterceptor(rec, 0))
	require.Error(t, err)
	assert.Equal(t, 4, calls, "max attempts in all")
	assert.Equal(t, 3, res.Retries)
	require.Len(t, clock.waits, 3)
	for i, bounds := range [][2]time.Duration{{5, 10}, {10, 20}, {12, 25}} {
		assert.GreaterOrEqual(t, clock.waits[i], bounds[0]*time.Millisecond, "wait %d", i)
		assert.LessOrEqual(t, clock.waits[i], bounds[1]*time.Millisecond, "wait %d", i)
	}
	assert.Equal(t, []flow.NodeStatus{"COMPLETED", "FAILED", "FAILED", "FAILED", "FAILED"}, rec.ends, "each attempt is an audit record")
	assert.Equal(t, 4, res.ExecutionErrors[0].Attempts)

	calls = 0
	_, err = e.EvalGraph(context.Background(), mk(false), flow.NewContext("r"))
	require.Error(t, err)
	assert.Equal(t, 1, calls, "a node not marked idempotent is never retried")
}

func TestRetryHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	blocking := clockFunc(func(time.Duration) <-chan time.Time { cancel(); return make(chan time.Time) })
	e := flow.NewEngine(flow.WithClock(blocking), flow.WithTaskFunc("flaky", func(context.Context, *flow.Context, *flow.Node) error {
		return flow.MarkRetryable(errors.New("busy"))
	}))
	s := flow.NewSpec("retry")
	s.Start("s").SetTask("@flaky").SetRetry(flow.RetryPolicy{Max: 5, Backoff: time.Hour})
	res, err := e.EvalGraph(ctx, build(t, s), flow.NewContext("r"))
	require.Error(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	assert.Equal(t, 1, res.Retries)
}

type clockFunc func(time.Duration) <-chan time.Time

func (f clockFunc) After(d time.Duration) <-chan time.Time { return f(d) }

func TestYAMLErrorModel(t *testing.T) {
	doc := `
id: rules
layout:
  - { id: s, type: start, link: check }
  - id: check
    task: 'day > 30 ? raise("LEAVE_TOO_LONG", "more than 30 days", true) : context.put("ok", true)'
    meta:
      onError: { goto: reject, recover: [LEAVE_TOO_LONG] }
    link: e
  - { id: reject, task: 'context.put("rejected", true)', link: e }
  - { id: e, type: end }
`
	g, err := flow.LoadGraph("rules.yml", []byte(doc))
	require.NoError(t, err)
	e := flow.NewEngine()
	res, fc, path := run(t, e, g, map[string]any{"day": 40})
	require.NoError(t, res.Err)
	assert.Equal(t, true, fc.Value("rejected"))
	assert.Contains(t, path, "reject")
	require.Len(t, res.ExecutionErrors, 1)
	assert.Equal(t, "LEAVE_TOO_LONG", res.ExecutionErrors[0].Error.Code)
	res, fc, _ = run(t, e, g, map[string]any{"day": 3})
	require.NoError(t, res.Err)
	assert.Equal(t, true, fc.Value("ok"))
	assert.Empty(t, res.ExecutionErrors)
}

func TestErrorsSurviveSuspendResume(t *testing.T) {
	e := flow.NewEngine(lookupFails(flow.NewRecoverableError("soft")), flow.WithTaskFunc("wait", func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if ok, _ := c.GetBool("approved"); !ok {
			c.Suspend("approval")
		}
		return nil
	}))
	s := flow.NewSpec("sr")
	s.Start("s").LinkTo("lookup")
	s.Activity("lookup").SetTask("@lookup").LinkTo("wait")
	s.Activity("wait").SetTask("@wait").LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("sr")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	// Store and restore as a session would: vars through JSON.
	restored := restoreThroughJSON(t, fc, map[string]any{"approved": true})
	fr, err := e.RestoreFrontier(g, res.Frontier.State())
	require.NoError(t, err)
	res2, err := e.Resume(context.Background(), fr, restored)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res2.Status)
	recs := flow.ExecutionErrors(restored, flow.DefaultErrorKey)
	require.Len(t, recs, 1, "the record from before the suspension is kept")
	assert.Equal(t, "lookup", recs[0].NodeID)
	assert.Empty(t, res2.ExecutionErrors, "the handler did not run again")
}

// raise() names its code once: the node error and the structured error carry the
// code and the message, without expr's source excerpt.
func TestRaiseMessageSaysTheCodeOnce(t *testing.T) {
	g, err := flow.LoadGraph("r.yml", []byte("id: r\nlayout:\n  - {id: s, type: start}\n  - {id: a, task: 'raise(\"E2\", \"second split\")'}\n  - {id: e, type: end}\n"))
	require.NoError(t, err)
	res, err := flow.NewEngine().EvalGraph(context.Background(), g, flow.NewContext("i"))
	require.Error(t, err)
	assert.Equal(t, `node "a" in graph "r": E2: second split`, err.Error())
	assert.Equal(t, flow.StructuredError{Type: flow.ErrorTypeFlow, Code: "E2", Message: "second split"}, flow.ToStructured(err))
	require.Len(t, res.ExecutionErrors, 1)
	assert.Equal(t, "second split", res.ExecutionErrors[0].Error.Message)

	// A Go task's own *flow.Error of another code keeps its whole text.
	ne := &flow.NodeError{Node: "a", Graph: "r", Code: "wrapped", Err: &flow.Error{Code: "E9", Message: "inner"}}
	assert.Equal(t, `node "a" in graph "r": wrapped: E9: inner`, ne.Error())
}

// A context says under which key its engine keeps the error records.
func TestContextErrorKey(t *testing.T) {
	fc := flow.NewContext("i")
	assert.Equal(t, flow.DefaultErrorKey, fc.ErrorKey(), "before any run")
	g, err := flow.LoadGraph("r.yml", []byte("id: r\nlayout:\n  - {id: s, type: start}\n  - {id: a, task: 'raise(\"E2\", \"x\", true)'}\n  - {id: e, type: end}\n"))
	require.NoError(t, err)
	_, err = flow.NewEngine(flow.WithErrorKey("my.errors")).EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, "my.errors", fc.ErrorKey())
	require.Len(t, flow.ExecutionErrors(fc, fc.ErrorKey()), 1)
}

// Two instances forked from one copy of the variables (NewContextWith(id, c.Vars()))
// share the slices of the execution error records and branch failures they hold;
// recording a failure in one must not write over the other's (appending in place
// did, once the slice had spare capacity).
func TestForkedContextsKeepTheirOwnRecords(t *testing.T) {
	e := flow.NewEngine()
	s := flow.NewSpec("forked")
	s.Start("s").SetTask(`raise("SOFT", who, true)`).LinkTo("p")
	s.Parallel("p").SetMeta(flow.MetaBranchPolicy, "continue").LinkTo("bad").LinkTo("ok")
	s.Activity("bad").SetTask(`raise("HARD", who)`).LinkTo("j")
	s.Activity("ok").LinkTo("j")
	s.Parallel("j")
	g := build(t, s)
	a := flow.NewContextWith("a", map[string]any{"who": "a"})
	for range 3 {
		_, err := e.EvalGraph(context.Background(), g, a)
		require.NoError(t, err)
	}
	b := flow.NewContextWith("b", a.Vars())
	b.Set("who", "b")
	for _, fc := range []*flow.Context{a, b} {
		_, err := e.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err)
	}
	for _, fc := range []*flow.Context{a, b} {
		who := fc.Value("who")
		recs := flow.ExecutionErrors(fc, fc.ErrorKey())
		require.Len(t, recs, 8)
		for _, rec := range recs[6:] {
			assert.Equal(t, who, rec.Error.Message, "instance %s", fc.InstanceID())
		}
		failures := flow.BranchFailuresOf(fc.Value(flow.KeyBranchFailures))
		require.Len(t, failures, 4)
		require.NotNil(t, failures[3].Err)
		assert.Equal(t, who, flow.ToStructured(failures[3].Err).Message, "instance %s", fc.InstanceID())
	}
}

// A fallback's integers stay integers when the records are read back from a context
// restored from JSON: as plain decoded values (float64 from encoding/json, int64 from
// the session codec) or as json.Number, the way loop items come back from a frontier.
func TestExecutionErrorsOfKeepsFallbackIntegers(t *testing.T) {
	rec := flow.ExecutionError{Severity: flow.Fatal, NodeID: "n", Fallback: map[string]any{
		"retries": 3, "big": int64(1) << 60, "ratio": 0.5, "nested": map[string]any{"ids": []any{1, 2}}, "s": "x",
	}}
	data, err := json.Marshal([]flow.ExecutionError{rec})
	require.NoError(t, err)
	var plain any
	require.NoError(t, json.Unmarshal(data, &plain))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var numbers any
	require.NoError(t, dec.Decode(&numbers))
	sessionLike := []any{map[string]any{"severity": "fatal", "node": "n", "fallback": map[string]any{
		"retries": int64(3), "big": int64(1) << 60, "ratio": 0.5, "nested": map[string]any{"ids": []any{int64(1), int64(2)}}, "s": "x",
	}}}
	want := map[string]any{"retries": int64(3), "big": int64(1) << 60, "ratio": 0.5, "nested": map[string]any{"ids": []any{int64(1), int64(2)}}, "s": "x"}
	for name, v := range map[string]any{"numbers": numbers, "session": sessionLike} {
		got := flow.ExecutionErrorsOf(v)
		require.Len(t, got, 1, name)
		assert.Equal(t, want, got[0].Fallback, name)
	}
	// float64 has already lost 1<<60's exact value, but small integers come back as int64.
	got := flow.ExecutionErrorsOf(plain)
	require.Len(t, got, 1)
	assert.Equal(t, int64(3), got[0].Fallback["retries"])
	assert.Equal(t, 0.5, got[0].Fallback["ratio"])
}

// An error policy is handed the run's context.Context and a view of its Context. A
// policy that keeps them must find the instance it was given, never another run's,
// and the run's context ended, however many runs follow.
func TestErrorPolicyMayKeepItsContext(t *testing.T) {
	var (
		kept    *flow.Context
		keptCtx context.Context
	)
	e := flow.NewEngine(flow.WithErrorPolicy(func(ctx context.Context, c *flow.Context, _ *flow.Node, _ error, def flow.ErrorDecision) flow.ErrorDecision {
		if kept == nil {
			kept, keptCtx = c, ctx
		}
		return def
	}))
	g, err := flow.LoadGraph("p.yml", []byte(`
id: p
layout:
  - {id: s, type: start}
  - {id: bad, task: 'raise("SOFT", "soft failure", true)'}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	for i := range 200 {
		who := "first"
		if i > 0 {
			who = "later"
		}
		res, err := e.EvalGraph(context.Background(), g, flow.NewContextWith("i", map[string]any{"who": who}))
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		require.Len(t, res.ExecutionErrors, 1)
	}
	require.NotNil(t, kept)
	assert.Equal(t, "first", kept.Value("who"))
	assert.Equal(t, "main", kept.BranchID())
	assert.Error(t, keptCtx.Err(), "the run is over")
}
