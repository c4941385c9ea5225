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
	"github.com/flowteam/flowteam/trace"
)

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
	mu     sync.Mutex
	teams  []string          // the statuses of TeamEnd events, in order
	teamOf map[string]string // the last TeamEnd status of each team
	nodes  map[string]string // the last NodeEnd status of each member
}

func (e *teamEvents) sink(ctx context.Context) context.Context {
	return team.WithSink(ctx, func(ev team.Event) {
		e.mu.Lock()
		defer e.mu.Unlock()
		switch ev.Kind {
		case team.EventTeamEnd:
			e.teams = append(e.teams, ev.Status)
			if e.teamOf == nil {
				e.teamOf = map[string]string{}
			}
			e.teamOf[ev.Agent] = ev.Status
		case team.EventNodeEnd:
			if e.nodes == nil {
				e.nodes = map[string]string{}
			}
			e.nodes[ev.Agent] = ev.Status
		}
	})
}

// A team used as a plain agent node (AsTask, "@crew") in one branch of a parallel
// gateway, cut short because the sibling branch failed fast: flow ends the node
// INTERRUPTED, and the team's run and its member's turn are interrupted too, not
// failed. The resume of the node goes on with the team: the member that answered is
// not asked again, the one cut short runs.
func TestTeamInNodeCutByFailFastSiblingIsInterrupted(t *testing.T) {
	started := make(chan struct{})
	slow := &funcAgent{name: "slow", fn: func(ctx context.Context, n int) (*team.Answer, error) {
		if n == 1 {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &team.Answer{Content: "slow done"}, nil
	}}
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

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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
	waiter := &funcAgent{name: "waiter", fn: func(ctx context.Context, n int) (*team.Answer, error) {
		if n > 1 {
			return &team.Answer{Content: "done"}, nil
		}
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	a := &turnsAgent{name: "a"}
	tm, err := team.NewTeam("crew", team.WithMembers(a, waiter))
	require.NoError(t, err)
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("crew")
	spec.Activity("crew").SetTask("@crew").LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
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

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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
	slow := &funcAgent{name: "slow", fn: func(ctx context.Context, n int) (*team.Answer, error) {
		if n == 1 {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &team.Answer{Content: "slow done"}, nil
	}}
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

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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
	waiter := &funcAgent{name: "waiter", fn: func(ctx context.Context, n int) (*team.Answer, error) {
		if n > 1 {
			return &team.Answer{Content: "done"}, nil
		}
		cancel(shutdown)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	tm, err := team.NewTeam("crew", team.WithMembers(waiter))
	require.NoError(t, err)
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("crew")
	spec.Activity("crew").SetTask("@crew").LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	h := &nodeEnds{}
	eng := flow.NewEngine(team.WithAgents(tm), flow.WithInterceptor(h, 0))
	fc := flow.NewContextWith("ops-innode-cause", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(ctx, g, fc)
	require.ErrorIs(t, err, shutdown)
	assert.Equal(t, trace.Interrupted, h.of("crew"), "flow interrupts the node")
	assert.Equal(t, team.TeamInterrupted, tm.Trace(fc).Status)

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("crew")
	spec.Activity("crew").SetTask("@crew").SetRetry(flow.RetryPolicy{Max: 2, NoJitter: true}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
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
	t.Helper()
	failures := 0
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("fork")
	spec.Parallel("fork").LinkTo("crew").LinkTo("bad")
	spec.Activity("crew").SetTask("@crew").LinkTo("join")
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
