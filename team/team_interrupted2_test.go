package team_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// A team nested two levels deep, cut short because the root team's fork failed fast:
// both nested runs and their nodes are interrupted, not failed, and the retried run
// goes on with them, replaying the answer given before the cut.
func TestTwoLevelNestedTeamCutByFailFastIsInterrupted(t *testing.T) {
	slow, bad := slowCutByBad()
	a := &turnsAgent{name: "a"}
	inner, err := team.NewTeam("inner", team.WithMembers(a, slow))
	require.NoError(t, err)
	mid, err := team.NewTeam("mid", team.WithMembers(inner))
	require.NoError(t, err)
	outer, err := team.NewTeam("outer", team.WithProtocol(team.Parallel()), team.WithMembers(mid, bad))
	require.NoError(t, err)
	evs := &teamEvents{}
	ctx := evs.sink(context.Background())
	sess := team.NewSession("two-levels")
	_, err = outer.Call(ctx, "work", sess)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	assert.Equal(t, map[string]string{"inner": team.TeamInterrupted, "mid": team.TeamInterrupted, "outer": team.TeamFailed}, evs.teamOf)
	assert.Equal(t, map[string]string{"a": team.RunCompleted, "slow": team.RunInterrupted, "inner": team.RunInterrupted,
		"mid": team.RunInterrupted, "bad": team.RunFailed}, evs.nodes)
	fc := sess.Context()
	assert.Nil(t, inner.Trace(fc).Error)
	assert.Nil(t, mid.Trace(fc).Error)
	assert.Empty(t, mid.Trace(fc).Route, "no turn of inner's")

	ans, err := outer.Call(context.Background(), "work", sess)
	require.NoError(t, err)
	assert.Equal(t, "[mid] slow done\n\n[bad] bad done", ans.Content)
	assert.Equal(t, 1, a.calls(), "a's answer is replayed")
	assert.Equal(t, 2, slow.calls())
	assert.Equal(t, team.TeamCompleted, inner.Trace(fc).Status)
	assert.Equal(t, team.TeamCompleted, mid.Trace(fc).Status)
}

// The same with the root team run as a sub-graph (Task): the failure aborts its call,
// and the teams nested two levels inside it are cut short with it, interrupted; the
// resumed flow retries the call, replaying the answer given before the cut.
func TestTwoLevelNestedTeamCutByAbortedCallIsInterrupted(t *testing.T) {
	slow, bad := slowCutByBad()
	a := &turnsAgent{name: "a"}
	inner, err := team.NewTeam("inner", team.WithMembers(a, slow))
	require.NoError(t, err)
	mid, err := team.NewTeam("mid", team.WithMembers(inner))
	require.NoError(t, err)
	outer, err := team.NewTeam("outer", team.WithProtocol(team.Parallel()), team.WithMembers(mid, bad))
	require.NoError(t, err)
	eng, g := opsGraph(t, outer)
	require.NoError(t, eng.Register(inner.Graph()))
	require.NoError(t, eng.Register(mid.Graph()))
	evs := &teamEvents{}
	ctx := evs.sink(context.Background())
	fc := flow.NewContextWith("two-levels-call", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(ctx, g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	assert.Equal(t, map[string]string{"inner": team.TeamInterrupted, "mid": team.TeamInterrupted, "outer": team.TeamFailed}, evs.teamOf)
	assert.Equal(t, map[string]string{"a": team.RunCompleted, "slow": team.RunInterrupted, "inner": team.RunInterrupted,
		"mid": team.RunInterrupted, "bad": team.RunFailed}, evs.nodes)
	assert.Nil(t, inner.Trace(fc).Error)
	assert.Nil(t, mid.Trace(fc).Error)

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, a.calls(), "a's answer is replayed")
	assert.Equal(t, 2, slow.calls())
	assert.Equal(t, team.TeamCompleted, inner.Trace(fc).Status)
	assert.Equal(t, team.TeamCompleted, mid.Trace(fc).Status)
	assert.Equal(t, "[mid] slow done\n\n[bad] bad done", outer.Trace(fc).FinalAnswer)
}

// A member whose model call the caller's cancellation cut short is interrupted also
// when the caller gave a cause (context.WithCancelCause): the agent's error keeps the
// context's error, which flow looks for, beside the cause. It failed the member's
// turn and its node (the error policy asked, the node skipped on resume after a
// recover goto), as the cause alone hid the cancellation.
func TestMemberCancelledWithCauseIsInterrupted(t *testing.T) {
	shutdown := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	model := testkit.NewScriptedModel(testkit.Turn{Wait: make(chan struct{})}, testkit.Reply("done"))
	w, err := team.NewSimpleAgent("w", model)
	require.NoError(t, err)
	tm, err := team.NewTeam("seq", team.WithMembers(w))
	require.NoError(t, err)
	var ends []string
	ctx = team.WithSink(ctx, func(ev team.Event) {
		switch {
		case ev.Kind == team.EventReasonStart && ev.Agent == "w":
			cancel(shutdown)
		case ev.Kind == team.EventNodeEnd:
			ends = append(ends, ev.Status)
		}
	})
	sess := team.NewSession("cause")
	_, err = tm.Call(ctx, "go", sess)
	require.ErrorIs(t, err, shutdown, "the run fails with the cause")
	assert.Equal(t, []string{team.RunInterrupted}, ends)
	tr := tm.Trace(sess.Context())
	assert.Empty(t, tr.MemberRecords())
	assert.Equal(t, 0, tr.Turns)

	ans, err := tm.Call(context.Background(), "go", sess)
	require.NoError(t, err)
	assert.Equal(t, "done", ans.Content)
	assert.Equal(t, 1, tm.Trace(sess.Context()).Turns)
}

// A sub-agent member of a parallel team cancelled because another member failed fast
// is interrupted like any member: its error keeps the context's error, which flow
// looks for. Its report said cancelled with no cause to unwrap, so flow failed its
// node and the team recorded a failed turn of it.
func TestSubAgentMemberCancelledByFailFastIsInterrupted(t *testing.T) {
	started := make(chan struct{})
	searches := 0
	sub := &team.SubAgent{Task: "search", Search: func(ctx context.Context, _ string) ([]any, error) {
		if searches++; searches == 1 {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return []any{"hit"}, nil
	}}
	bad := &funcAgent{name: "bad", fn: func(_ context.Context, n int) (*team.Answer, error) {
		if n == 1 {
			<-started
			return nil, down
		}
		return &team.Answer{Content: "bad done"}, nil
	}}
	tm, err := team.NewTeam("fan", team.WithProtocol(team.Parallel()), team.WithMembers(sub, bad))
	require.NoError(t, err)
	var (
		mu   sync.Mutex
		ends = map[string]string{}
	)
	ctx := team.WithSink(context.Background(), func(ev team.Event) {
		if ev.Kind == team.EventNodeEnd {
			mu.Lock()
			ends[ev.Agent] = ev.Status
			mu.Unlock()
		}
	})
	sess := team.NewSession("sub-ff")
	_, err = tm.Call(ctx, "find", sess)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	assert.Equal(t, map[string]string{"search": team.RunInterrupted, "bad": team.RunFailed}, ends)
	assert.Equal(t, []string{"bad"}, tm.Trace(sess.Context()).Route, "no turn of the sub-agent's")

	_, err = tm.Call(context.Background(), "find", sess)
	require.NoError(t, err)
	assert.Equal(t, 2, searches)
	var recs []string
	for _, r := range tm.Trace(sess.Context()).MemberRecords() {
		if r.Source == "search" {
			recs = append(recs, r.Status)
		}
	}
	assert.Equal(t, []string{team.RunCompleted}, recs)
}
