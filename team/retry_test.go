package team_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A supervisor routes bot twice with the same question (the member prompt is the
// task alone): its first turn answers, its second waits for the removal's approval
// and fails after it, which fails the call. The retried call routes bot the same way
// twice: the first routing replays the first answer and the second goes on with the
// kept run, so the records keep their order and the supervisor sees the work it saw.
func TestSupervisorSameQuestionTwiceReplaysInOrder(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(testkit.Reply("looked at /a"), removeA(),
		testkit.FailWith(team.TypeSourceUnavailable), afterRemove("cleaned /a"))
	bot, err := team.NewReActAgent("bot", model, team.WithTools(box.remove()))
	require.NoError(t, err)
	route := testkit.CallTools(testkit.ToolCall("s", team.RouteToolName, `{"to":"bot","task":"see to /a"}`))
	sup := testkit.NewScriptedModel(route, route, route, route, testkit.Reply("FINISH"))
	tm, err := team.NewTeam("desk", team.WithMembers(bot), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup),
		team.WithMemberPrompt(func(_ *team.TeamTrace, _ team.Agent, task string) string { return task }))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-same-twice", map[string]any{"prompt": "tidy up"})
	res := failedAfterApproval(t, eng, g, fc, "bot", "d1")
	first := tm.Trace(fc).Records

	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, 4, model.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
	var got []string
	for _, r := range tm.Trace(fc).MemberRecords() {
		got = append(got, r.Content)
	}
	assert.Equal(t, []string{"looked at /a", "cleaned /a"}, got, "the turns keep their order")
	require.NotEmpty(t, first)
	assert.Equal(t, testkit.LastUserMessage(sup.Requests()[1]), testkit.LastUserMessage(sup.Requests()[3]),
		"the supervisor sees the work it saw before the failure")
}

// down is a retryable failure of a turnsAgent's call.
var down = &team.Error{Type: team.TypeSourceUnavailable, Retry: true, Message: "down"}

// loopGraph is s → l (loop over two items) → crew (the team's Task) → close → e, on
// an engine with the team's Interceptor and opts.
func loopGraph(t *testing.T, tm *team.TeamAgent, opts ...flow.Option) (*flow.Engine, *flow.Graph) {
	t.Helper()
	spec := flow.NewSpec("loop")
	spec.Start("s").LinkTo("l")
	spec.Loop("l", "item", []any{1, 2}).LinkTo("crew")
	spec.Activity("crew").Do(tm.Task()).LinkTo("close")
	spec.Loop("close", "", nil).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	return flow.NewEngine(append(opts, flow.WithInterceptor(tm.Interceptor(), -100))...), g
}

// The team runs in a loop body with the same question each pass. Its second pass
// fails; the retried call replays that pass's answer of a, never the first pass's.
func TestLoopRetryReplaysItsOwnPass(t *testing.T) {
	a := &turnsAgent{name: "a"}
	b := &turnsAgent{name: "b", outcomes: []error{nil, down}}
	tm, err := team.NewTeam("crew", team.WithMembers(a, b))
	require.NoError(t, err)
	eng, g := loopGraph(t, tm)
	fc := flow.NewContextWith("loop-retry", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, 2, a.calls(), "a answered each pass once")
	assert.Equal(t, 3, b.calls())
	tr := tm.Trace(fc)
	assert.Equal(t, "answer 2", tr.Records[0].Content, "the second pass's answer")
	assert.Equal(t, "answer 3", tr.FinalAnswer)
	_, kept := fc.Get("_team.crew:turns")
	assert.False(t, kept, "the completed run leaves no turn log")
}

// The team's first pass in a loop body fails and an error policy recovers the call:
// the second pass asks the same question at the same node and branch, but it is a
// new run, and a is asked again.
func TestLoopRecoveredPassDoesNotReplay(t *testing.T) {
	a := &turnsAgent{name: "a"}
	b := &turnsAgent{name: "b", outcomes: []error{down}}
	tm, err := team.NewTeam("crew", team.WithMembers(a, b))
	require.NoError(t, err)
	eng, g := loopGraph(t, tm, recoverNode("crew"))
	fc := flow.NewContextWith("loop-recovered", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 2, a.calls(), "the second pass asks a again")
	assert.Equal(t, 2, b.calls())
	assert.Equal(t, "answer 2", tm.Trace(fc).FinalAnswer)
}

// The team's call has a retry policy: b fails twice, and each attempt replays the
// turns of the attempts before it, so a answers once over three attempts.
func TestRetryPolicyThirdAttemptReplays(t *testing.T) {
	a := &turnsAgent{name: "a"}
	b := &turnsAgent{name: "b", outcomes: []error{down, down}}
	tm, err := team.NewTeam("crew", team.WithMembers(a, b))
	require.NoError(t, err)
	eng, g := retriedOpsGraph(t, tm, flow.RetryPolicy{Max: 3})
	fc := flow.NewContextWith("ops-attempts", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, a.calls())
	assert.Equal(t, 3, b.calls())
	tr := tm.Trace(fc)
	assert.Equal(t, []string{"a", "b"}, tr.Route)
	assert.Equal(t, 2, tr.Turns)
	assert.Equal(t, "answer 1", tr.Records[0].Content)
	assert.Equal(t, "answer 3", tr.FinalAnswer)
}

// A parallel team's merge fails once, after every member answered (four at once).
// The retried call replays all four, concurrently, and merges them.
func TestParallelMergeFailureReplaysAllMembers(t *testing.T) {
	var members []team.Agent
	var fixed []*testkit.FixedAgent
	for _, name := range []string{"w1", "w2", "w3", "w4"} {
		f := testkit.NewFixedAgent(name, name+" done")
		fixed, members = append(fixed, f), append(members, f)
	}
	merges := 0
	merge := team.WithMerge(func(_ context.Context, _ *flow.Context, tr *team.TeamTrace) (string, error) {
		merges++
		if merges == 1 {
			return "", down
		}
		return "merged " + string(rune('0'+len(tr.MemberRecords()))), nil
	})
	tm, err := team.NewTeam("par", team.WithProtocol(team.Parallel), merge, team.WithMembers(members...))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-merge", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	var log eventLog
	resumeCompleted(log.ctx(), t, eng, fc, res)
	for _, f := range fixed {
		assert.Len(t, f.Prompts(), 1, f.Name())
		assert.Empty(t, log.byAgent(f.Name()), f.Name())
	}
	tr := tm.Trace(fc)
	assert.Len(t, tr.MemberRecords(), 4)
	assert.Equal(t, "merged 4", tr.FinalAnswer)
}

// As TestTeamTaskRetryReplaysRecoveredFailure, with the retried call in another
// process: the recovered failure comes back from the file store as plain maps, and
// replays as the failure the policy recovers again (payer's new model is not asked,
// its transfer ran once).
func TestRecoveredFailureReplaysAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	box, botBox := &toolbox{}, &toolbox{}
	store, err := session.NewFileStore(t.TempDir())
	require.NoError(t, err)
	build := func(bot ...testkit.Turn) (*session.Runner, *testkit.ScriptedModel) {
		payModel := testkit.NewScriptedModel().
			When(testkit.LastIsToolResult("transfer"), testkit.FailWith(team.TypeSourceUnavailable)).
			When(func(*team.ChatRequest) bool { return true },
				testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)))
		payer, err := team.NewReActAgent("payer", payModel, team.WithTools(box.transfer()))
		require.NoError(t, err)
		b, err := team.NewReActAgent("bot", testkit.NewScriptedModel(bot...), team.WithTools(botBox.remove()))
		require.NoError(t, err)
		tm, err := team.NewTeam("crew", team.WithMembers(payer, b))
		require.NoError(t, err)
		eng, _ := opsGraph(t, tm, recoverNode("payer"))
		return session.NewRunner(eng, store), payModel
	}
	runner, _ := build(removeA(), testkit.FailWith(team.TypeSourceUnavailable))
	res, err := runner.Run(ctx, "ops", flow.NewContextWith("ops-rec-far", map[string]any{"prompt": "pay acme, then clean up"}))
	require.NoError(t, err)
	res = approvePayerThenFailingBot(t, runner, "ops-rec-far", res)

	runner, payModel := build(afterRemove("cleaned"))
	res, err = runner.Resume(ctx, "ops-rec-far", nil)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "nobody is asked again")
	assert.Zero(t, payModel.Calls(), "payer's model is not asked again")
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, botBox.Calls())
	tr := team.TraceOf(res.Context.Vars(), "crew")
	require.NotNil(t, tr)
	require.Len(t, tr.Records, 2)
	assert.Equal(t, team.RunFailed, tr.Records[0].Status)
	assert.Equal(t, team.TypeSourceUnavailable, tr.Records[0].Error.Type)
	assert.Equal(t, "cleaned", tr.FinalAnswer)
	assert.Empty(t, team.SessionOf(res.Context).PendingAll())
}

// A team run's turn log is only there for a retry of the run: once the run's call
// can no longer be retried, none is left in the variables (which a snapshot stores
// and the command line prints). Here the team's call fails and an error policy
// recovers it, and a nested team's failure is recovered in a root team that
// completes.
func TestUnretriableFailureLeavesNoTurnLog(t *testing.T) {
	t.Run("task", func(t *testing.T) {
		b := &turnsAgent{name: "b", outcomes: []error{down}}
		tm, err := team.NewTeam("crew", team.WithMembers(&turnsAgent{name: "a"}, b))
		require.NoError(t, err)
		eng, g := opsGraph(t, tm, recoverNode("crew"))
		fc := flow.NewContextWith("ops-left", map[string]any{"prompt": "work"})
		res, err := eng.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err)
		require.Equal(t, flow.StatusCompleted, res.Status)
		require.Equal(t, team.TeamFailed, tm.Trace(fc).Status)
		_, left := fc.Get("_team.crew:turns")
		assert.False(t, left)
	})
	t.Run("nested", func(t *testing.T) {
		w := &turnsAgent{name: "w", outcomes: []error{down}}
		inner, err := team.NewTeam("inner", team.WithMembers(&turnsAgent{name: "x"}, w))
		require.NoError(t, err)
		outer, err := team.NewTeam("outer", team.WithMembers(inner), team.WithEngineOptions(recoverNode("inner")))
		require.NoError(t, err)
		sess := team.NewSession("nested-left")
		_, err = outer.Call(context.Background(), "work", sess)
		require.NoError(t, err)
		require.Equal(t, team.TeamCompleted, outer.Trace(sess.Context()).Status)
		require.Equal(t, team.TeamFailed, inner.Trace(sess.Context()).Status)
		_, left := sess.Context().Get("_team.inner:turns")
		assert.False(t, left)
	})
}

// A nested team's failure is recovered in its parent, which a later member's failure
// then fails. The retried call calls the nested team again (its failure is not
// replayed), and it retries its failed run: x, which answered there, replays.
func TestRecoveredNestedFailureRetriedWithParent(t *testing.T) {
	x := &turnsAgent{name: "x"}
	w := &turnsAgent{name: "w", outcomes: []error{down}}
	inner, err := team.NewTeam("inner", team.WithMembers(x, w))
	require.NoError(t, err)
	bot := &turnsAgent{name: "bot", outcomes: []error{down}}
	tm, err := team.NewTeam("crew", team.WithMembers(inner, bot))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm, recoverNode("inner"))
	require.NoError(t, eng.Register(inner.Graph()))
	fc := flow.NewContextWith("ops-nested-rec", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, 1, w.calls())

	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, 1, x.calls(), "x is not asked again")
	assert.Equal(t, 2, w.calls())
	assert.Equal(t, 2, bot.calls())
	_, left := fc.Get("_team.inner:turns")
	assert.False(t, left, "the completed parent leaves no log of its nested team")
}

// funcAgent answers with its function, which gets the call's number (1, 2, …).
type funcAgent struct {
	name string
	mu   sync.Mutex
	n    int
	fn   func(ctx context.Context, n int) (*team.Answer, error)
}

func (a *funcAgent) Name() string { return a.name }
func (a *funcAgent) Role() string { return "worker" }

func (a *funcAgent) Call(ctx context.Context, _ string, _ *team.AgentSession) (*team.Answer, error) {
	a.mu.Lock()
	a.n++
	n := a.n
	a.mu.Unlock()
	return a.fn(ctx, n)
}

func (a *funcAgent) calls() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// Two teams run as sub-graphs in parallel branches. One fails (fail-fast) while the
// other's second member is working, after its first answered. The resumed run goes
// on with both: neither asks a member that answered again, and the members that
// failed or were cancelled run.
func TestParallelTeamsFailFastReplayEach(t *testing.T) {
	started := make(chan struct{})
	blocker := &funcAgent{name: "blocker", fn: func(ctx context.Context, n int) (*team.Answer, error) {
		if n == 1 {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &team.Answer{Content: "unblocked"}, nil
	}}
	f := &funcAgent{name: "f", fn: func(_ context.Context, n int) (*team.Answer, error) {
		if n == 1 {
			<-started
			return nil, down
		}
		return &team.Answer{Content: "f done"}, nil
	}}
	a1, a2 := &turnsAgent{name: "a1"}, &turnsAgent{name: "a2"}
	t1, err := team.NewTeam("one", team.WithMembers(a1, f))
	require.NoError(t, err)
	t2, err := team.NewTeam("two", team.WithMembers(a2, blocker))
	require.NoError(t, err)
	spec := flow.NewSpec("both")
	spec.Start("s").LinkTo("fork")
	spec.Parallel("fork").LinkTo("one").LinkTo("two")
	spec.Activity("one").Do(t1.Task()).LinkTo("join")
	spec.Activity("two").Do(t2.Task()).LinkTo("join")
	spec.Parallel("join").LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithInterceptor(t1.Interceptor(), -101), flow.WithInterceptor(t2.Interceptor(), -100))
	fc := flow.NewContextWith("both", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, team.TeamFailed, t1.Trace(fc).Status)
	// blocker was cancelled because the other call failed: its turn is interrupted,
	// not failed (the node runs again on resume), and so is two's run.
	require.Equal(t, team.TeamInterrupted, t2.Trace(fc).Status)
	assert.Equal(t, []string{"a2"}, t2.Trace(fc).Route)

	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, 1, a1.calls())
	assert.Equal(t, 1, a2.calls())
	assert.Equal(t, 2, f.calls())
	assert.Equal(t, 2, blocker.calls())
	assert.Equal(t, "f done", t1.Trace(fc).FinalAnswer)
	assert.Equal(t, "unblocked", t2.Trace(fc).FinalAnswer)
	assert.Equal(t, []string{"a2", "blocker"}, t2.Trace(fc).Route)
}

// The team's hooks see a retried call's run without the replayed turn: no admission
// check, member start or end for a, whose turn the failed call's run reported.
func TestRetriedCallHooksSkipReplayedTurn(t *testing.T) {
	h := &ttHooks{}
	b := &turnsAgent{name: "b", outcomes: []error{down}}
	tm, err := team.NewTeam("crew", team.WithMembers(&turnsAgent{name: "a"}, b), team.WithInterceptor(h))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-hooks", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	failed := len(h.Log())

	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, []string{
		"team_start:crew:running",
		"agent_continue:b", "member_start:b:work", "member_end:b:answer 2:false",
		"team_end:crew:completed:false",
	}, h.Log()[failed:])
	assert.Equal(t, 2, h.sawTurnsEnd)
}

// session.Runner on an engine with DiscardStaleRuns (installed twice) retries a team
// run as a sub-graph: the resume that retries the failed call is no new run, so bot's
// kept run survives it, payer replays, and the completed run leaves nothing pending.
func TestDiscardStaleRunsKeepsRetriedTeamRuns(t *testing.T) {
	ctx := context.Background()
	box := &toolbox{}
	payer, payModel := payerAgent(t, box)
	botBox, botModel, bot := flakyRemover(t, afterRemove("cleaned"))
	tm, err := team.NewTeam("crew", team.WithMembers(payer, bot))
	require.NoError(t, err)
	eng, _ := opsGraph(t, tm, flow.WithInterceptor(team.DiscardStaleRuns(), 0), flow.WithInterceptor(team.DiscardStaleRuns(), 1))
	runner := session.NewRunner(eng, session.NewMemoryStore())
	res, err := runner.Run(ctx, "ops", flow.NewContextWith("ops-stale", map[string]any{"prompt": "pay acme, then clean up"}))
	require.NoError(t, err)
	res = approvePayerThenFailingBot(t, runner, "ops-stale", res)

	res, err = runner.Resume(ctx, "ops-stale", nil)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "nobody is asked again")
	assert.Equal(t, 2, payModel.Calls())
	assert.Equal(t, 3, botModel.Calls())
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, botBox.Calls())
	assert.Empty(t, team.SessionOf(res.Context).PendingAll())
	assert.Equal(t, "cleaned", tm.Trace(res.Context).FinalAnswer)
}

// The same team is called at two nodes with the same question. The first call fails
// and an error policy recovers it; the second fails. The retried second call replays
// its own run's answer of a, not the first call's.
func TestTeamCalledAtTwoNodesReplaysItsOwnCall(t *testing.T) {
	a := &turnsAgent{name: "a"}
	b := &turnsAgent{name: "b", outcomes: []error{down, down}}
	tm, err := team.NewTeam("crew", team.WithMembers(a, b))
	require.NoError(t, err)
	spec := flow.NewSpec("twice")
	spec.Start("s").LinkTo("first")
	spec.Activity("first").Do(tm.Task()).LinkTo("second")
	spec.Activity("second").Do(tm.Task()).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100), recoverNode("first"))
	fc := flow.NewContextWith("twice", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, 2, a.calls(), "a answered each call once")
	assert.Equal(t, 3, b.calls())
	tr := tm.Trace(fc)
	assert.Equal(t, "answer 2", tr.Records[0].Content, "the second call's answer")
	assert.Equal(t, "answer 3", tr.FinalAnswer)
}

// Every attempt of a retry policy fails b. The turn log keeps what a later attempt
// could replay (a's answer, and the last attempt's turns), not one dead failure per
// attempt: a failure that ended its attempt never replays.
func TestTurnLogDoesNotGrowWithFailedAttempts(t *testing.T) {
	b := &turnsAgent{name: "b", outcomes: []error{down, down, down, down}}
	tm, err := team.NewTeam("crew", team.WithMembers(&turnsAgent{name: "a"}, b))
	require.NoError(t, err)
	eng, g := retriedOpsGraph(t, tm, flow.RetryPolicy{Max: 4})
	fc := flow.NewContextWith("ops-growth", map[string]any{"prompt": "work"})
	_, err = eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, 4, b.calls())

	raw, err := json.Marshal(fc.Value("_team.crew:turns"))
	require.NoError(t, err)
	var log struct{ Turns, Replay []json.RawMessage }
	require.NoError(t, json.Unmarshal(raw, &log))
	assert.Len(t, log.Turns, 2, "the last attempt's turns: a replayed, b failed")
	assert.Len(t, log.Replay, 0, "nothing left that could replay")
}

// A parallel team's merge fails once after its nested team and a member answered.
// The retried call replays the nested team as one turn beside the member's replay:
// nobody is asked again and the stream shows neither working.
func TestParallelRetryReplaysNestedTeam(t *testing.T) {
	x, w := &turnsAgent{name: "x"}, &turnsAgent{name: "w"}
	inner, err := team.NewTeam("inner", team.WithMembers(x))
	require.NoError(t, err)
	merges := 0
	merge := team.WithMerge(func(_ context.Context, _ *flow.Context, tr *team.TeamTrace) (string, error) {
		if merges++; merges == 1 {
			return "", down
		}
		return tr.LastAnswerOf("inner") + " + " + tr.LastAnswerOf("w"), nil
	})
	tm, err := team.NewTeam("par", team.WithProtocol(team.Parallel), merge, team.WithMembers(inner, w))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	require.NoError(t, eng.Register(inner.Graph()))
	fc := flow.NewContextWith("ops-par-nested", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	innerRun := inner.Trace(fc).RunID

	var log eventLog
	resumeCompleted(log.ctx(), t, eng, fc, res)
	assert.Equal(t, 1, x.calls())
	assert.Equal(t, 1, w.calls())
	assert.Empty(t, log.byAgent("inner"))
	assert.Empty(t, log.byAgent("x"))
	assert.Empty(t, log.byAgent("w"))
	assert.Equal(t, innerRun, inner.Trace(fc).RunID)
	assert.Equal(t, "answer 1 + answer 1", tm.Trace(fc).FinalAnswer)
}
