package team_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
)

// A parallel member cancelled because another member failed fast did not fail: its
// turn is interrupted. The trace records no failure of it (no record, no turn, not in
// the route), its node ends "interrupted", and the retried run takes its turn as it
// would any interrupted node's: once, recorded once.
func TestParallelMemberCancelledByFailFastIsInterrupted(t *testing.T) {
	started := make(chan struct{})
	slow := &funcAgent{name: "slow", fn: func(ctx context.Context, n int) (*team.Answer, error) {
		if n == 1 {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &team.Answer{Content: "slow done"}, nil
	}}
	bad := &funcAgent{name: "bad", fn: func(_ context.Context, n int) (*team.Answer, error) {
		if n == 1 {
			<-started
			return nil, down
		}
		return &team.Answer{Content: "bad done"}, nil
	}}
	tm, err := team.NewTeam("fan", team.WithProtocol(team.Parallel()), team.WithMembers(slow, bad))
	require.NoError(t, err)
	sess := team.NewSession("ff-interrupted")
	var ends []team.Event
	var runErr error
	for ev, err := range tm.Stream(context.Background(), "Evaluate", sess) {
		if err != nil {
			runErr = err
			continue
		}
		if ev.Kind == team.EventNodeEnd {
			ends = append(ends, ev)
		}
	}
	require.ErrorIs(t, runErr, team.ErrSourceUnavailable)
	tr := tm.Trace(sess.Context())
	require.Equal(t, team.TeamFailed, tr.Status)
	assert.Equal(t, []string{"bad"}, tr.Route, "slow's turn did not happen")
	assert.Equal(t, 1, tr.Turns)
	for _, r := range tr.MemberRecords() {
		assert.NotEqual(t, "slow", r.Source, "no record of slow's interrupted turn: %+v", r)
	}
	status := map[string]string{}
	for _, ev := range ends {
		status[ev.Agent] = ev.Status
	}
	assert.Equal(t, map[string]string{"slow": team.RunInterrupted, "bad": team.RunFailed}, status)

	ans, err := tm.Call(context.Background(), "Evaluate", sess)
	require.NoError(t, err)
	assert.Equal(t, "[slow] slow done\n\n[bad] bad done", ans.Content)
	assert.Equal(t, 2, slow.calls())
	assert.Equal(t, 2, bad.calls())
	tr = tm.Trace(sess.Context())
	assert.Equal(t, team.TeamCompleted, tr.Status)
	assert.Equal(t, 3, tr.Turns, "bad's failure and both answers")
	var slowRecs []string
	for _, r := range tr.MemberRecords() {
		if r.Source == "slow" {
			slowRecs = append(slowRecs, r.Status)
		}
	}
	assert.Equal(t, []string{team.RunCompleted}, slowRecs)
}

// A member whose context the caller cancelled is interrupted, as flow ends its node:
// the run fails with the cancellation, the trace records no turn of the member, and
// the retry runs it again. (It failed its turn before, as flow failed the node.)
func TestMemberCancelledByCallerIsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiter := &funcAgent{name: "waiter", fn: func(ctx context.Context, n int) (*team.Answer, error) {
		if n > 1 {
			return &team.Answer{Content: "done"}, nil
		}
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	tm, err := team.NewTeam("seq", team.WithMembers(waiter))
	require.NoError(t, err)
	sess := team.NewSession("caller-cancel")
	var ends []team.Event
	var runErr error
	for ev, err := range tm.Stream(ctx, "go", sess) {
		if err != nil {
			runErr = err
			continue
		}
		if ev.Kind == team.EventNodeEnd {
			ends = append(ends, ev)
		}
	}
	require.ErrorIs(t, runErr, context.Canceled)
	tr := tm.Trace(sess.Context())
	assert.Empty(t, tr.MemberRecords())
	assert.Equal(t, 0, tr.Turns)
	require.Len(t, ends, 1)
	assert.Equal(t, team.RunInterrupted, ends[0].Status)

	ans, err := tm.Call(context.Background(), "go", sess)
	require.NoError(t, err)
	assert.Equal(t, "done", ans.Content)
	assert.Equal(t, 2, waiter.calls())
	tr = tm.Trace(sess.Context())
	assert.Equal(t, team.TeamCompleted, tr.Status)
	assert.Equal(t, 1, tr.Turns)
}

// The same for a nested team cut short by a parallel sibling's failure: the node of
// the nested team and its member's node end "interrupted" (not flow's "INTERRUPTED"),
// and neither team records a failure of them.
func TestNestedTeamCancelledByFailFastIsInterrupted(t *testing.T) {
	started := make(chan struct{})
	slow := &funcAgent{name: "slow", fn: func(ctx context.Context, n int) (*team.Answer, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	bad := &funcAgent{name: "bad", fn: func(context.Context, int) (*team.Answer, error) {
		<-started
		return nil, down
	}}
	inner, err := team.NewTeam("inner", team.WithMembers(slow))
	require.NoError(t, err)
	outer, err := team.NewTeam("outer", team.WithProtocol(team.Parallel()), team.WithMembers(inner, bad))
	require.NoError(t, err)
	sess := team.NewSession("ff-nested")
	status := map[string]string{}
	var runErr error
	for ev, err := range outer.Stream(context.Background(), "go", sess) {
		if err != nil {
			runErr = err
			continue
		}
		if ev.Kind == team.EventNodeEnd {
			status[ev.Agent] = ev.Status
		}
	}
	require.ErrorIs(t, runErr, team.ErrSourceUnavailable)
	assert.Equal(t, map[string]string{"slow": team.RunInterrupted, "inner": team.RunInterrupted, "bad": team.RunFailed}, status)
	assert.Equal(t, []string{"bad"}, outer.Trace(sess.Context()).Route)
	assert.Empty(t, inner.Trace(sess.Context()).Route)
}
