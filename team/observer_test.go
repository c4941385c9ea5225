package team_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/subagent"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowCutByBad returns two members for a fail-fast cut: on its first call slow
// starts and waits for its context to end, and bad fails with down once slow has
// started; on later calls both answer ("slow done", "bad done").
func slowCutByBad() (slow, bad *funcAgent) {
	started := make(chan struct{})
	slow = slowUntilCut(started)
	bad = &funcAgent{name: "bad", fn: func(_ context.Context, n int) (*team.Answer, error) {
		if n == 1 {
			<-started
			return nil, down
		}
		return &team.Answer{Content: "bad done"}, nil
	}}
	return slow, bad
}

// slowUntilCut returns a member "slow" that on its first call closes started and
// waits for its context to end, and on later calls answers "slow done".
func slowUntilCut(started chan struct{}) *funcAgent {
	return &funcAgent{name: "slow", fn: func(ctx context.Context, n int) (*team.Answer, error) {
		if n == 1 {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &team.Answer{Content: "slow done"}, nil
	}}
}

// cancelsCaller returns a member "waiter" that on its first call calls cancel and
// waits for its context to end, and on later calls answers "done".
func cancelsCaller(cancel func()) *funcAgent {
	return &funcAgent{name: "waiter", fn: func(ctx context.Context, n int) (*team.Answer, error) {
		if n > 1 {
			return &team.Answer{Content: "done"}, nil
		}
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}}
}

// streamEvents runs a with Stream and collects its events; it returns the last error
// the stream yielded.
func streamEvents(ctx context.Context, a team.Agent, prompt string, sess *team.AgentSession) (*teamEvents, error) {
	evs := &teamEvents{}
	var runErr error
	for ev, err := range team.Stream(ctx, a, prompt, sess) {
		if err != nil {
			runErr = err
			continue
		}
		evs.add(ev)
	}
	return evs, runErr
}

// A parallel member cancelled because another member failed fast did not fail: its
// turn is interrupted. The trace records no failure of it (no record, no turn, not in
// the route), its node ends "interrupted", and the retried run takes its turn as it
// would any interrupted node's: once, recorded once.
func TestParallelMemberCancelledByFailFastIsInterrupted(t *testing.T) {
	slow, bad := slowCutByBad()
	tm, err := team.NewTeam("fan", team.WithProtocol(team.Parallel), team.WithMembers(slow, bad))
	require.NoError(t, err)
	sess := team.NewSession("ff-interrupted")
	evs, runErr := streamEvents(context.Background(), tm, "Evaluate", sess)
	require.ErrorIs(t, runErr, team.ErrSourceUnavailable)
	tr := tm.Trace(sess.Context())
	require.Equal(t, team.TeamFailed, tr.Status)
	assert.Equal(t, []string{"bad"}, tr.Route, "slow's turn did not happen")
	assert.Equal(t, 1, tr.Turns)
	for _, r := range tr.MemberRecords() {
		assert.NotEqual(t, "slow", r.Source, "no record of slow's interrupted turn: %+v", r)
	}
	assert.Equal(t, map[string]string{"slow": team.RunInterrupted, "bad": team.RunFailed}, evs.nodes)

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
	waiter := cancelsCaller(cancel)
	tm, err := team.NewTeam("seq", team.WithMembers(waiter))
	require.NoError(t, err)
	sess := team.NewSession("caller-cancel")
	evs, runErr := streamEvents(ctx, tm, "go", sess)
	require.ErrorIs(t, runErr, context.Canceled)
	tr := tm.Trace(sess.Context())
	assert.Equal(t, team.TeamFailed, tr.Status, "a root team the caller cancelled fails")
	assert.Empty(t, tr.MemberRecords())
	assert.Equal(t, 0, tr.Turns)
	assert.Equal(t, []string{team.RunInterrupted}, evs.nodeEnds)

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
	slow, bad := slowCutByBad()
	inner, err := team.NewTeam("inner", team.WithMembers(slow))
	require.NoError(t, err)
	outer, err := team.NewTeam("outer", team.WithProtocol(team.Parallel), team.WithMembers(inner, bad))
	require.NoError(t, err)
	sess := team.NewSession("ff-nested")
	evs, runErr := streamEvents(context.Background(), outer, "go", sess)
	require.ErrorIs(t, runErr, team.ErrSourceUnavailable)
	assert.Equal(t, map[string]string{"slow": team.RunInterrupted, "inner": team.RunInterrupted, "bad": team.RunFailed}, evs.nodes)
	assert.Equal(t, []string{"bad"}, outer.Trace(sess.Context()).Route)
	assert.Empty(t, inner.Trace(sess.Context()).Route)
	// The nested team's own run did not fail either: the outer one did.
	assert.Equal(t, map[string]string{"inner": team.TeamInterrupted, "outer": team.TeamFailed}, evs.teamOf)
	assert.Equal(t, team.TeamInterrupted, inner.Trace(sess.Context()).Status)
	assert.Nil(t, inner.Trace(sess.Context()).Error)
}

// A team run as a node (Task) in one branch of a flow's parallel gateway, cut short
// because the sibling branch failed fast, did not fail: flow ends its node
// INTERRUPTED and the resume goes on with it. Its trace, its TeamEnd and its team
// interceptor's end say interrupted, with no error of its own; the resume starts it
// "resumed" and it completes.
func TestTeamTaskCancelledByFailFastSiblingIsInterrupted(t *testing.T) {
	started := make(chan struct{})
	slow := slowUntilCut(started)
	h := &ttHooks{}
	tm, err := team.NewTeam("crew", team.WithMembers(&turnsAgent{name: "a"}, slow), team.WithInterceptor(h))
	require.NoError(t, err)
	g := forkedWithBad(t, started, func(n *flow.NodeSpec) { n.Do(tm.Task()) })
	eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100))
	evs := &teamEvents{}
	ctx := evs.sink(context.Background())
	fc := flow.NewContextWith("ops-ff", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(ctx, g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	tr := tm.Trace(fc)
	assert.Equal(t, team.TeamInterrupted, tr.Status)
	assert.Nil(t, tr.Error, "the team did not fail")
	assert.Equal(t, []string{"a"}, tr.Route)
	assert.Equal(t, []string{team.TeamInterrupted}, evs.teams)
	assert.Equal(t, []*team.Error{nil}, evs.teamErrs)
	assert.Equal(t, "team_end:crew:interrupted:true", h.Log()[len(h.Log())-1], "the hook gets the cause, as a member's end does")
	n := len(h.Log())

	resumeCompleted(ctx, t, eng, fc, res)
	assert.Equal(t, []string{"team_start:crew:running", "member_start:slow:work", "member_end:slow:slow done:false",
		"team_end:crew:completed:false"}, filterLog(h.Log()[n:], "team_", "member_"))
	tr = tm.Trace(fc)
	assert.Equal(t, team.TeamCompleted, tr.Status)
	assert.Equal(t, []string{"a", "slow"}, tr.Route)
	assert.Equal(t, 2, slow.calls())
}

// filterLog keeps the entries of a hook log that start with one of the prefixes.
func filterLog(log []string, prefixes ...string) []string {
	var out []string
	for _, s := range log {
		for _, p := range prefixes {
			if strings.HasPrefix(s, p) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// A nested team cut short because its parent's fork failed fast, the parent running
// as a sub-graph (Task): the failure aborts the parent's call rather than the run, and
// flow ends the nested team's node without its run reaching its end. The nested run
// is interrupted all the same (its member's node is), not failed; the retried call
// retries it, replaying the turn it had answered.
func TestNestedTeamCutByParentCallFailureIsInterrupted(t *testing.T) {
	slow, bad := slowCutByBad()
	a := &turnsAgent{name: "a"}
	inner, err := team.NewTeam("inner", team.WithMembers(a, slow))
	require.NoError(t, err)
	outer, err := team.NewTeam("outer", team.WithProtocol(team.Parallel), team.WithMembers(inner, bad))
	require.NoError(t, err)
	eng, g := opsGraph(t, outer)
	require.NoError(t, eng.Register(inner.Graph()))
	evs := &teamEvents{}
	ctx := evs.sink(context.Background())
	fc := flow.NewContextWith("ops-cut", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(ctx, g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	assert.Equal(t, map[string]string{"inner": team.TeamInterrupted, "outer": team.TeamFailed}, evs.teamOf)
	assert.Equal(t, map[string]string{"a": team.RunCompleted, "slow": team.RunInterrupted, "inner": team.RunInterrupted,
		"bad": team.RunFailed}, evs.nodes)
	assert.Equal(t, team.TeamInterrupted, inner.Trace(fc).Status)
	assert.Equal(t, []string{"bad"}, outer.Trace(fc).Route, "no turn of inner's")

	resumeCompleted(ctx, t, eng, fc, res)
	assert.Equal(t, 1, a.calls(), "a's answer is replayed")
	assert.Equal(t, 2, slow.calls())
	assert.Equal(t, []string{"a", "slow"}, inner.Trace(fc).Route)
	assert.Equal(t, team.TeamCompleted, inner.Trace(fc).Status)
}

// The same with the team's graph called by reference, written with spaces around it
// (flow trims them): the team's Interceptor still knows the calling node, so the cut
// run ends, interrupted, as the node does.
func TestTeamCalledByPaddedReferenceCutBySiblingIsInterrupted(t *testing.T) {
	started := make(chan struct{})
	slow := slowUntilCut(started)
	tm, err := team.NewTeam("crew", team.WithMembers(slow))
	require.NoError(t, err)
	g := forkedWithBad(t, started, func(n *flow.NodeSpec) { n.SetTask(" #" + tm.Graph().ID + " ") })
	eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100))
	require.NoError(t, eng.Register(tm.Graph()))
	evs := &teamEvents{}
	fc := flow.NewContextWith("ops-ref", map[string]any{"prompt": "work"})
	_, err = eng.EvalGraph(evs.sink(context.Background()), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	assert.Equal(t, []string{team.TeamInterrupted}, evs.teams)
	assert.Equal(t, team.TeamInterrupted, tm.Trace(fc).Status)
}

// A team run with Task whose context the caller cancelled is interrupted, as its
// member is: flow ends the calling node INTERRUPTED (the run fails with the
// cancellation), and the resume goes on with the team.
func TestTeamTaskCancelledByCallerIsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiter := cancelsCaller(cancel)
	tm, err := team.NewTeam("crew", team.WithMembers(waiter))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	evs := &teamEvents{}
	fc := flow.NewContextWith("ops-caller", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(evs.sink(ctx), g, fc)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []string{team.TeamInterrupted}, evs.teams)
	tr := tm.Trace(fc)
	assert.Equal(t, team.TeamInterrupted, tr.Status)
	assert.Nil(t, tr.Error)

	resumeCompleted(evs.sink(context.Background()), t, eng, fc, res)
	assert.Equal(t, 2, waiter.calls())
	assert.Equal(t, []string{team.TeamInterrupted, team.TeamCompleted}, evs.teams)
	assert.Equal(t, team.TeamCompleted, tm.Trace(fc).Status)
}

// The parent's hooks see the cut turn of a nested team as a member's: its end, with
// the cause, when it is interrupted, and a new start when the resume goes on with it.
func TestNestedTeamInterruptedTurnHooksPaired(t *testing.T) {
	slow, bad := slowCutByBad()
	inner, err := team.NewTeam("inner", team.WithMembers(slow))
	require.NoError(t, err)
	h := &ttHooks{}
	outer, err := team.NewTeam("outer", team.WithProtocol(team.Parallel), team.WithMembers(inner, bad),
		team.WithInterceptor(h))
	require.NoError(t, err)
	sess := team.NewSession("ff-nested-hooks")
	_, err = outer.Call(context.Background(), "go", sess)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	assert.Equal(t, []string{"member_start:inner:go", "member_end:inner::true"}, filterLog(h.Log(), "member_start:inner", "member_end:inner"))
	n := len(h.Log())

	ans, err := outer.Call(context.Background(), "go", sess)
	require.NoError(t, err)
	assert.Equal(t, "[inner] slow done\n\n[bad] bad done", ans.Content)
	assert.Equal(t, []string{"member_start:inner:go", "member_end:inner:slow done:false"},
		filterLog(h.Log()[n:], "member_start:inner", "member_end:inner"))
}

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
	outer, err := team.NewTeam("outer", team.WithProtocol(team.Parallel), team.WithMembers(mid, bad))
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
	outer, err := team.NewTeam("outer", team.WithProtocol(team.Parallel), team.WithMembers(mid, bad))
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

	resumeCompleted(context.Background(), t, eng, fc, res)
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
	sub := &subagent.SubAgent{Task: "search", Search: func(ctx context.Context, _ string) ([]any, error) {
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
	tm, err := team.NewTeam("fan", team.WithProtocol(team.Parallel), team.WithMembers(sub, bad))
	require.NoError(t, err)
	evs := &teamEvents{}
	sess := team.NewSession("sub-ff")
	_, err = tm.Call(evs.sink(context.Background()), "find", sess)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	assert.Equal(t, map[string]string{"search": team.RunInterrupted, "bad": team.RunFailed}, evs.nodes)
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

// nodeEnds records how flow ends each node, by id.
type nodeEnds struct {
	flow.NopInterceptor
	mu  sync.Mutex
	end map[string]trace.Status
}

func (h *nodeEnds) OnNodeEnd(_ context.Context, _ *flow.Context, n *flow.Node, end flow.NodeEnd) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.end == nil {
		h.end = map[string]trace.Status{}
	}
	h.end[n.ID] = end.Status
}

func (h *nodeEnds) of(id string) trace.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.end[id]
}

// teamEvents collects a team's TeamEnd and NodeEnd statuses by agent.
type teamEvents struct {
	mu       sync.Mutex
	teams    []string          // the statuses of TeamEnd events, in order
	teamErrs []*team.Error     // the errors of TeamEnd events, in order
	teamOf   map[string]string // the last TeamEnd status of each team
	nodeEnds []string          // the statuses of NodeEnd events, in order
	nodes    map[string]string // the last NodeEnd status of each member
}

func (e *teamEvents) sink(ctx context.Context) context.Context {
	return team.WithSink(ctx, e.add)
}

func (e *teamEvents) add(ev team.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev.Kind {
	case team.EventTeamEnd:
		e.teams = append(e.teams, ev.Status)
		e.teamErrs = append(e.teamErrs, ev.Error)
		if e.teamOf == nil {
			e.teamOf = map[string]string{}
		}
		e.teamOf[ev.Agent] = ev.Status
	case team.EventNodeEnd:
		e.nodeEnds = append(e.nodeEnds, ev.Status)
		if e.nodes == nil {
			e.nodes = map[string]string{}
		}
		e.nodes[ev.Agent] = ev.Status
	}
}

// A team used as a plain agent node (AsTask, "@crew") in one branch of a parallel
// gateway, cut short because the sibling branch failed fast: flow ends the node
// INTERRUPTED, and the team's run and its member's turn are interrupted too, not
// failed. The resume of the node goes on with the team: the member that answered is
// not asked again, the one cut short runs.
func TestTeamInNodeCutByFailFastSiblingIsInterrupted(t *testing.T) {
	started := make(chan struct{})
	slow := slowUntilCut(started)
	a := &turnsAgent{name: "a"}
	tm, err := team.NewTeam("crew", team.WithMembers(a, slow))
	require.NoError(t, err)
	g := crewForkedWithBad(t, started)
	h := &nodeEnds{}
	eng := flow.NewEngine(team.WithAgents(tm), flow.WithInterceptor(h, 0))
	evs := &teamEvents{}
	fc := flow.NewContextWith("ops-innode", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(evs.sink(context.Background()), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, trace.Interrupted, h.of("crew"), "flow interrupts the node")
	tr := tm.Trace(fc)
	assert.Equal(t, team.TeamInterrupted, tr.Status)
	assert.Nil(t, tr.Error, "the team did not fail")
	assert.Equal(t, []string{"a"}, tr.Route)
	assert.Equal(t, []string{team.TeamInterrupted}, evs.teams)
	assert.Equal(t, map[string]string{"a": team.RunCompleted, "slow": team.RunInterrupted}, evs.nodes)

	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, 1, a.calls(), "a's answer is not asked for again")
	assert.Equal(t, 2, slow.calls())
	tr = tm.Trace(fc)
	assert.Equal(t, team.TeamCompleted, tr.Status)
	assert.Equal(t, []string{"a", "slow"}, tr.Route)
	assert.Equal(t, "slow done", fc.Value(team.AnswerKey("crew")))
	_, left := fc.Get("_team.crew:turns")
	assert.False(t, left, "the completed run leaves no log")
}

// The same for a team node whose context the caller cancelled: the flow run fails
// with the cancellation, the node is interrupted, and so are the team's run and its
// member's turn; the resume goes on with the team.
func TestTeamInNodeCancelledByCallerIsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiter := cancelsCaller(cancel)
	a := &turnsAgent{name: "a"}
	tm, err := team.NewTeam("crew", team.WithMembers(a, waiter))
	require.NoError(t, err)
	g := crewInNode(t, nil)
	h := &nodeEnds{}
	eng := flow.NewEngine(team.WithAgents(tm), flow.WithInterceptor(h, 0))
	evs := &teamEvents{}
	fc := flow.NewContextWith("ops-innode-cancel", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(evs.sink(ctx), g, fc)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, trace.Interrupted, h.of("crew"), "flow interrupts the node")
	tr := tm.Trace(fc)
	assert.Equal(t, team.TeamInterrupted, tr.Status)
	assert.Nil(t, tr.Error)
	assert.Equal(t, []string{team.TeamInterrupted}, evs.teams)
	assert.Equal(t, map[string]string{"a": team.RunCompleted, "waiter": team.RunInterrupted}, evs.nodes)

	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, 1, a.calls(), "a's answer is not asked for again")
	assert.Equal(t, 2, waiter.calls())
	assert.Equal(t, team.TeamCompleted, tm.Trace(fc).Status)
	assert.Equal(t, "done", fc.Value(team.AnswerKey("crew")))
}

// The same with the member cut short inside a team nested in the node's team: the
// nested run is interrupted too, and the node's resume retries both, replaying the
// answer given before the cut.
func TestTeamInNodeWithNestedTeamCutBySiblingIsInterrupted(t *testing.T) {
	started := make(chan struct{})
	slow := slowUntilCut(started)
	a, b := &turnsAgent{name: "a"}, &turnsAgent{name: "b"}
	sub, err := team.NewTeam("sub", team.WithMembers(b, slow))
	require.NoError(t, err)
	tm, err := team.NewTeam("crew", team.WithMembers(a, sub))
	require.NoError(t, err)
	g := crewForkedWithBad(t, started)
	h := &nodeEnds{}
	eng := flow.NewEngine(team.WithAgents(tm), flow.WithInterceptor(h, 0))
	evs := &teamEvents{}
	fc := flow.NewContextWith("ops-innode-nested", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(evs.sink(context.Background()), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, trace.Interrupted, h.of("crew"))
	assert.Equal(t, team.TeamInterrupted, tm.Trace(fc).Status)
	assert.Equal(t, team.TeamInterrupted, sub.Trace(fc).Status)
	assert.Equal(t, []string{team.TeamInterrupted, team.TeamInterrupted}, evs.teams)
	assert.Equal(t, map[string]string{"a": team.RunCompleted, "b": team.RunCompleted, "slow": team.RunInterrupted,
		"sub": team.RunInterrupted}, evs.nodes)

	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, 1, a.calls(), "a's answer is replayed")
	assert.Equal(t, 1, b.calls(), "b's answer is replayed")
	assert.Equal(t, 2, slow.calls())
	assert.Equal(t, team.TeamCompleted, tm.Trace(fc).Status)
	assert.Equal(t, team.TeamCompleted, sub.Trace(fc).Status)
	assert.Equal(t, "slow done", fc.Value(team.AnswerKey("crew")))
}

// The same when the caller cancels with a cause (context.WithCancelCause): the team's
// error keeps the context's error beside the cause, so flow interrupts the node as
// the team's run is interrupted. With the cause alone, flow failed the node.
func TestTeamInNodeCancelledWithCauseIsInterrupted(t *testing.T) {
	shutdown := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	waiter := cancelsCaller(func() { cancel(shutdown) })
	tm, err := team.NewTeam("crew", team.WithMembers(waiter))
	require.NoError(t, err)
	g := crewInNode(t, nil)
	h := &nodeEnds{}
	eng := flow.NewEngine(team.WithAgents(tm), flow.WithInterceptor(h, 0))
	fc := flow.NewContextWith("ops-innode-cause", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(ctx, g, fc)
	require.ErrorIs(t, err, shutdown)
	assert.Equal(t, trace.Interrupted, h.of("crew"), "flow interrupts the node")
	assert.Equal(t, team.TeamInterrupted, tm.Trace(fc).Status)

	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, "done", fc.Value(team.AnswerKey("crew")))
}

// A team in an agent node whose run failed is retried by the node's retry policy as
// by the node's resume: the member that answered replays its answer, the one that
// failed runs again. (It started afresh, asking every member again.)
func TestTeamInNodeRetriedReplaysAnsweredMembers(t *testing.T) {
	a := &turnsAgent{name: "a"}
	f := &turnsAgent{name: "f", outcomes: []error{down}}
	tm, err := team.NewTeam("crew", team.WithMembers(a, f))
	require.NoError(t, err)
	g := crewInNode(t, &flow.RetryPolicy{Max: 2, NoJitter: true})
	eng := flow.NewEngine(team.WithAgents(tm))
	fc := flow.NewContextWith("ops-innode-retry", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, a.calls(), "a's answer is replayed")
	assert.Equal(t, 2, f.calls())
	tr := tm.Trace(fc)
	assert.Equal(t, team.TeamCompleted, tr.Status)
	assert.Equal(t, "answer 2", tr.FinalAnswer)
}

// crewForkedWithBad is a graph forking, fail-fast, to the agent node "@crew" and a
// node "bad" that fails once started is closed (on its first run only).
func crewForkedWithBad(t *testing.T, started <-chan struct{}) *flow.Graph {
	return forkedWithBad(t, started, func(n *flow.NodeSpec) { n.SetTask("@crew") })
}

// forkedWithBad is a graph forking, fail-fast, to a node "crew" whose task crew
// sets and a node "bad" that fails once started is closed (on its first run only).
func forkedWithBad(t *testing.T, started <-chan struct{}, crew func(*flow.NodeSpec)) *flow.Graph {
	t.Helper()
	failures := 0
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("fork")
	spec.Parallel("fork").LinkTo("crew").LinkTo("bad")
	n := spec.Activity("crew")
	crew(n)
	n.LinkTo("join")
	spec.Activity("bad").Do(flow.TaskFunc(func(context.Context, *flow.Context, *flow.Node) error {
		if failures++; failures == 1 {
			<-started
			return down
		}
		return nil
	})).LinkTo("join")
	spec.Parallel("join").LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	return g
}

// crewInNode is a graph running the agent node "@crew" between its start and end,
// retried by retry when it is set.
func crewInNode(t *testing.T, retry *flow.RetryPolicy) *flow.Graph {
	t.Helper()
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("crew")
	n := spec.Activity("crew").SetTask("@crew")
	if retry != nil {
		n.SetRetry(*retry)
	}
	n.LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	return g
}
