package team_test

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// payerAgent returns a ReAct agent "payer" whose model asks to transfer 5000 to acme
// (call p1, which needs a human's approval) whenever it is asked afresh, and answers
// "acme is paid" once it sees the transfer's result.
func payerAgent(t *testing.T, box *toolbox) (*team.ReActAgent, *testkit.ScriptedModel) {
	t.Helper()
	model := testkit.NewScriptedModel().
		When(testkit.LastIsToolResult("transfer"), testkit.Reply("acme is paid")).
		When(func(*team.ChatRequest) bool { return true },
			testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)))
	a, err := team.NewReActAgent("payer", model, team.WithTools(box.transfer()))
	require.NoError(t, err)
	return a, model
}

// eventLog collects the events of a context's agent runs.
type eventLog struct {
	mu  sync.Mutex
	evs []team.Event
}

func (l *eventLog) ctx() context.Context {
	return team.WithSink(context.Background(), func(ev team.Event) {
		l.mu.Lock()
		l.evs = append(l.evs, ev)
		l.mu.Unlock()
	})
}

func (l *eventLog) byAgent(agent string) []team.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []team.Event
	for _, ev := range l.evs {
		if ev.Agent == agent {
			out = append(out, ev)
		}
	}
	return out
}

// A sequential team [payer, bot] runs as a sub-graph (Task). payer's transfer is
// approved and runs, payer finishes; bot's approved removal runs, then its model
// fails, which fails the call. The resume of the failed flow run calls the team's
// graph again from its start: payer, whose turn ended in the failed call, replays its
// answer (no model call, no transfer, nobody asked, no events), bot goes on with its
// run, and the team's trace is the one the run would have had without the failure.
func TestTeamTaskRetryReplaysFinishedMembers(t *testing.T) {
	box := &toolbox{}
	payer, payModel := payerAgent(t, box)
	botBox, botModel, bot := flakyRemover(t, afterRemove("cleaned"))
	tm, err := team.NewTeam("crew", team.WithMembers(payer, bot))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-replay", map[string]any{"prompt": "pay acme, then clean up"})

	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	res, err = approveAndResume(t, eng, fc, res, "payer", "p1")
	require.NoError(t, err)
	res, err = approveAndResume(t, eng, fc, res, "bot", "d1", "bot waits for its decision")
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, flow.StatusFailed, res.Status)
	require.Equal(t, 2, payModel.Calls())
	paid := tm.Trace(fc).Records[0]
	require.Equal(t, "acme is paid", paid.Content)

	var log eventLog
	resumeCompleted(log.ctx(), t, eng, fc, res, "nobody is asked again")
	assert.Equal(t, 2, payModel.Calls(), "payer's model is not asked again")
	assert.Equal(t, 3, botModel.Calls())
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls(), "the approved transfer ran once")
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, botBox.Calls(), "the approved removal ran once")
	assert.Empty(t, team.SessionOf(fc).PendingAll())
	assert.Equal(t, "cleaned", fc.Value(team.AnswerKey("crew")))
	assert.Empty(t, log.byAgent("payer"), "the replayed turn does not show payer working again")

	tr := tm.Trace(fc)
	require.NotNil(t, tr)
	assert.Equal(t, team.TeamCompleted, tr.Status)
	assert.Equal(t, []string{"payer", "bot"}, tr.Route)
	assert.Equal(t, 2, tr.Turns)
	require.Len(t, tr.MemberRecords(), 2)
	got := tr.Records[0]
	assert.Equal(t, paid.RunID, got.RunID, "payer's turn is the one it took")
	assert.Equal(t, "acme is paid", got.Content)
	assert.Equal(t, 1, got.Turn)
	assert.Equal(t, team.RunCompleted, tr.Records[1].Status)
	assert.Equal(t, "cleaned", tr.FinalAnswer)
	assert.Equal(t, 2, tr.Members["payer"].ModelCalls, "payer's turn is counted once")
	assert.Equal(t, 1, tr.Members["payer"].ToolCalls)
	assert.Contains(t, testkit.LastUserMessage(botModel.Requests()[2]), "[payer] acme is paid",
		"bot's question is the one it was asked")
}

// opsGraph is s → crew (the team's Task) → e, on an engine with the team's
// Interceptor.
func opsGraph(t *testing.T, tm *team.TeamAgent, opts ...flow.Option) (*flow.Engine, *flow.Graph) {
	t.Helper()
	return buildOpsGraph(t, tm, nil, opts)
}

// retriedOpsGraph is opsGraph with the team's node retried by retry.
func retriedOpsGraph(t *testing.T, tm *team.TeamAgent, retry flow.RetryPolicy, opts ...flow.Option) (*flow.Engine, *flow.Graph) {
	t.Helper()
	return buildOpsGraph(t, tm, &retry, opts)
}

func buildOpsGraph(t *testing.T, tm *team.TeamAgent, retry *flow.RetryPolicy, opts []flow.Option) (*flow.Engine, *flow.Graph) {
	t.Helper()
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo(tm.Name())
	n := spec.Activity(tm.Name()).Do(tm.Task())
	if retry != nil {
		n.SetRetry(*retry)
	}
	n.LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(append([]flow.Option{flow.WithInterceptor(tm.Interceptor(), -100)}, opts...)...)
	require.NoError(t, eng.Register(g))
	return eng, g
}

// approveAndResume checks that the run res is suspended, approves the call id of
// member and resumes the run.
func approveAndResume(t *testing.T, eng *flow.Engine, fc *flow.Context, res *flow.Result, member, id string,
	msgAndArgs ...any) (*flow.Result, error) {
	t.Helper()
	require.Equal(t, flow.StatusSuspended, res.Status, msgAndArgs...)
	require.NoError(t, team.SessionOf(fc).Decide(member, team.Approve(id)))
	return eng.Resume(context.Background(), res.Frontier, fc)
}

// runFlowApproved runs g in sess, approves the call id of member where the run
// suspends, and resumes the run with ResumeFlow.
func runFlowApproved(t *testing.T, sess *team.AgentSession, eng *flow.Engine, g *flow.Graph, member, id string) (*flow.Result, error) {
	t.Helper()
	res, err := sess.RunFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, sess.Decide(member, team.Approve(id)))
	return sess.ResumeFlow(context.Background(), eng, g)
}

// failedAfterApproval evaluates g, approves the call id of member where the run
// suspends, and checks that the resumed run fails with ErrSourceUnavailable; it
// returns the failed run.
func failedAfterApproval(t *testing.T, eng *flow.Engine, g *flow.Graph, fc *flow.Context, member, id string) *flow.Result {
	t.Helper()
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	res, err = approveAndResume(t, eng, fc, res, member, id)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	return res
}

// resumeCompleted resumes the run res and checks that it completes.
func resumeCompleted(ctx context.Context, t *testing.T, eng *flow.Engine, fc *flow.Context, res *flow.Result,
	msgAndArgs ...any) {
	t.Helper()
	res, err := eng.Resume(ctx, res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, msgAndArgs...)
}

// As TestTeamTaskRetryReplaysFinishedMembers with a supervisor: asked again in the
// retried call, it routes payer with the same task, and payer replays its answer;
// then it routes bot, which goes on with its run.
func TestSupervisorRetriedCallReplaysSameTask(t *testing.T) {
	box := &toolbox{}
	payer, payModel := payerAgent(t, box)
	botBox, botModel, bot := flakyRemover(t, afterRemove("cleaned"))
	route := func(id, to, task string) testkit.Turn {
		return testkit.CallTools(testkit.ToolCall(id, team.RouteToolName, `{"to":"`+to+`","task":"`+task+`"}`))
	}
	sup := testkit.NewScriptedModel(
		route("s1", "payer", "pay acme"), route("s2", "bot", "remove /a"),
		route("s3", "payer", "pay acme"), route("s4", "bot", "remove /a"), testkit.Reply("FINISH"))
	tm, err := team.NewTeam("desk", team.WithMembers(payer, bot), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-sup", map[string]any{"prompt": "pay acme, then clean up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	res, err = approveAndResume(t, eng, fc, res, "payer", "p1")
	require.NoError(t, err)
	res, err = approveAndResume(t, eng, fc, res, "bot", "d1")
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	var log eventLog
	resumeCompleted(log.ctx(), t, eng, fc, res, "nobody is asked again")
	assert.Equal(t, 5, sup.Calls(), "the supervisor is asked again")
	assert.Equal(t, testkit.LastUserMessage(sup.Requests()[1]), testkit.LastUserMessage(sup.Requests()[3]),
		"it sees the work it saw before the failure")
	assert.Equal(t, 2, payModel.Calls(), "payer's model is not asked again")
	assert.Equal(t, 3, botModel.Calls())
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, botBox.Calls())
	assert.Empty(t, log.byAgent("payer"))
	tr := tm.Trace(fc)
	assert.Equal(t, []string{"payer", "bot"}, tr.Route)
	assert.Equal(t, "cleaned", tr.FinalAnswer)
	assert.Equal(t, 2, tr.Members["payer"].ModelCalls)
	assert.Empty(t, team.SessionOf(fc).PendingAll())
}

// The retried call runs in another process: the failed instance is stored, and a
// runner built anew (new agents, new models) resumes it. The replay needs nothing but
// the stored variables: payer's new model is never asked, and its transfer ran once.
func TestTeamTaskRetryReplaysAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	box, botBox := &toolbox{}, &toolbox{}
	store, err := session.NewFileStore(t.TempDir())
	require.NoError(t, err)
	build := func(bot ...testkit.Turn) (*session.Runner, *testkit.ScriptedModel, *testkit.ScriptedModel) {
		payer, payModel := payerAgent(t, box)
		botModel := testkit.NewScriptedModel(bot...)
		b, err := team.NewReActAgent("bot", botModel, team.WithTools(botBox.remove()))
		require.NoError(t, err)
		tm, err := team.NewTeam("crew", team.WithMembers(payer, b))
		require.NoError(t, err)
		eng, _ := opsGraph(t, tm)
		return session.NewRunner(eng, store), payModel, botModel
	}
	runner, _, _ := build(removeA(), testkit.FailWith(team.TypeSourceUnavailable))
	res, err := runner.Run(ctx, "ops", flow.NewContextWith("ops-far", map[string]any{"prompt": "pay acme, then clean up"}))
	require.NoError(t, err)
	res = approvePayerThenFailingBot(t, runner, "ops-far", res)

	runner, payModel, botModel := build(afterRemove("cleaned"))
	res, err = runner.Resume(ctx, "ops-far", nil)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "nobody is asked again")
	assert.Zero(t, payModel.Calls(), "payer's model is not asked again")
	assert.Equal(t, 1, botModel.Calls(), "bot goes on with its run")
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, botBox.Calls())
	tr := team.TraceOf(res.Context.Vars(), "crew")
	require.NotNil(t, tr)
	assert.Equal(t, []string{"payer", "bot"}, tr.Route)
	assert.Equal(t, "acme is paid", tr.Records[0].Content)
	assert.Equal(t, "cleaned", tr.FinalAnswer)
}

// payThenClean nests the sequential team [payer, bot] in teams named by nesting,
// innermost first, under a root team "outer" [planner, …]; payer's transfer and
// bot's removal are approved, and bot's resumed run fails, which fails every call
// up to the outer team. The outer team called again with its prompt retries from the
// failed node, which calls the nested teams' graphs again from their starts: payer
// replays its answer, bot goes on with its run.
func payThenClean(t *testing.T, nesting ...string) {
	box := &toolbox{}
	payer, payModel := payerAgent(t, box)
	botBox, botModel, bot := flakyRemover(t, afterRemove("cleaned"))
	var member team.Agent
	for i, name := range nesting {
		members := []team.Agent{member}
		if i == 0 {
			members = []team.Agent{payer, bot}
		}
		tm, err := team.NewTeam(name, team.WithMembers(members...))
		require.NoError(t, err)
		member = tm
	}
	outer, err := team.NewTeam("outer", team.WithMembers(testkit.NewFixedAgent("planner", "plan"), member))
	require.NoError(t, err)
	sess := team.NewSession("nested-replay")
	for _, agent := range []string{"payer", "bot"} {
		ans, err := outer.Call(context.Background(), "pay acme, then clean up", sess)
		require.NoError(t, err)
		require.NotNil(t, ans.Pending)
		require.Equal(t, agent, ans.Pending.Agent)
		require.NoError(t, sess.Decide(agent, team.Approve(callIDs(ans.Pending)[0])))
	}
	_, err = outer.Call(context.Background(), "pay acme, then clean up", sess)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	var log eventLog
	ans, err := outer.Call(log.ctx(), "pay acme, then clean up", sess)
	require.NoError(t, err)
	require.Nil(t, ans.Pending, "nobody is asked again")
	assert.Equal(t, "cleaned", ans.Content)
	assert.Equal(t, 2, payModel.Calls(), "payer's model is not asked again")
	assert.Equal(t, 3, botModel.Calls())
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, botBox.Calls())
	assert.Empty(t, log.byAgent("payer"))
	tr := team.TraceOf(sess.Context().Vars(), nesting[0])
	require.NotNil(t, tr)
	assert.Equal(t, []string{"payer", "bot"}, tr.Route)
	assert.Equal(t, "acme is paid", tr.Records[0].Content)
	assert.Empty(t, sess.PendingAll())
}

func TestNestedTeamRetryReplaysFinishedMembers(t *testing.T) {
	t.Run("depth 1", func(t *testing.T) { payThenClean(t, "inner") })
	t.Run("depth 2", func(t *testing.T) { payThenClean(t, "inner", "mid") })
}

// A nested team whose run completed inside the failed call: crew [inner [payer],
// bot] runs as a sub-graph (Task), and bot's failure fails the call. The retried call
// calls inner's graph again: its turn, which ended with an answer, is replayed as a
// whole (inner does not run, payer is not asked again, no events).
func TestTeamTaskRetryReplaysFinishedNestedTeam(t *testing.T) {
	box := &toolbox{}
	payer, payModel := payerAgent(t, box)
	botBox, botModel, bot := flakyRemover(t, afterRemove("cleaned"))
	inner, err := team.NewTeam("inner", team.WithMembers(payer))
	require.NoError(t, err)
	tm, err := team.NewTeam("crew", team.WithMembers(inner, bot))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	require.NoError(t, eng.Register(inner.Graph()))
	fc := flow.NewContextWith("ops-nested", map[string]any{"prompt": "pay acme, then clean up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	res, err = approveAndResume(t, eng, fc, res, "payer", "p1")
	require.NoError(t, err)
	res, err = approveAndResume(t, eng, fc, res, "bot", "d1")
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	innerRun := inner.Trace(fc).RunID

	var log eventLog
	resumeCompleted(log.ctx(), t, eng, fc, res, "nobody is asked again")
	assert.Equal(t, 2, payModel.Calls(), "payer's model is not asked again")
	assert.Equal(t, 3, botModel.Calls())
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, botBox.Calls())
	assert.Empty(t, log.byAgent("payer"))
	assert.Empty(t, log.byAgent("inner"), "the replayed nested turn emits nothing")
	assert.Equal(t, innerRun, inner.Trace(fc).RunID, "inner's run is the one that answered")
	tr := tm.Trace(fc)
	assert.Equal(t, []string{"inner", "bot"}, tr.Route)
	assert.Equal(t, "acme is paid", tr.Records[0].Content)
	assert.Equal(t, innerRun, tr.Records[0].RunID)
	assert.Equal(t, "cleaned", tr.FinalAnswer)
	assert.Equal(t, 2, tr.Members["inner"].ModelCalls, "inner's turn is counted once")
	assert.Empty(t, team.SessionOf(fc).PendingAll())
}

// A swarm run as a sub-graph: a hands over to bot with the transfer tool, and bot's
// failure after its approved batch fails the call. In the retried call a replays its
// turn, handoff included, so the swarm routes to bot again, which goes on with its
// run.
func TestSwarmRetriedCallReplaysHandoff(t *testing.T) {
	am := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("t1", team.TransferToolName, `{"to":"bot","reason":"clean /a"}`)),
		testkit.Reply("over to bot"))
	a, err := team.NewReActAgent("a", am, team.WithTools(team.TransferTool()))
	require.NoError(t, err)
	botBox, botModel, bot := flakyRemover(t, afterRemove("cleaned"))
	tm, err := team.NewTeam("sw", team.WithProtocol(team.Swarm), team.WithMembers(a, bot))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-swarm", map[string]any{"prompt": "tidy up"})
	res := failedAfterApproval(t, eng, g, fc, "bot", "d1")

	resumeCompleted(context.Background(), t, eng, fc, res, "nobody is asked again")
	assert.Equal(t, 2, am.Calls(), "a's model is not asked again")
	assert.Equal(t, 3, botModel.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, botBox.Calls())
	tr := tm.Trace(fc)
	assert.Equal(t, []string{"a", "bot"}, tr.Route)
	assert.Equal(t, "cleaned", tr.FinalAnswer)
	require.NotEmpty(t, tr.Decisions)
	assert.Equal(t, "clean /a", tr.Decisions[1].Task, "the handoff is a's, as it was made")
}

// A parallel team run as a sub-graph: writer answers at once, bot waits for its
// decision; bot's resumed run then fails, which fails the call (fail-fast; writer's
// branch had ended). In the retried call writer replays its answer, and the merge
// sees both members once. Bot asks for its decision only once writer was asked: else
// its suspension could park writer's branch before writer ran, and writer's first
// turn would be in the resume the failure cancels.
func TestParallelRetriedCallReplaysFinishedMembers(t *testing.T) {
	writer := testkit.NewFixedAgent("writer", "report written")
	askRemove := removeA()
	afterWriter := testkit.Turn{Respond: func(*team.ChatRequest) (*team.ChatResponse, error) {
		for len(writer.Prompts()) == 0 {
			runtime.Gosched()
		}
		return &team.ChatResponse{Message: team.Message{Role: team.RoleAssistant, ToolCalls: askRemove.ToolCalls}}, nil
	}}
	botBox := &toolbox{}
	botModel := testkit.NewScriptedModel(afterWriter, testkit.FailWith(team.TypeSourceUnavailable), afterRemove("cleaned"))
	bot, err := team.NewReActAgent("bot", botModel, team.WithTools(botBox.remove()))
	require.NoError(t, err)
	tm, err := team.NewTeam("par", team.WithProtocol(team.Parallel), team.WithMembers(writer, bot))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-par", map[string]any{"prompt": "tidy up"})
	res := failedAfterApproval(t, eng, g, fc, "bot", "d1")
	require.Len(t, writer.Prompts(), 1)

	resumeCompleted(context.Background(), t, eng, fc, res, "nobody is asked again")
	assert.Len(t, writer.Prompts(), 1, "writer is not asked again")
	assert.Equal(t, 3, botModel.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, botBox.Calls())
	tr := tm.Trace(fc)
	assert.ElementsMatch(t, []string{"writer", "bot"}, tr.Route)
	assert.Equal(t, "[writer] report written\n\n[bot] cleaned", tr.FinalAnswer)
}

// The supervisor's own model call fails after payer's turn, which fails the call. In
// the retried call the supervisor, asked again, routes payer with the same task, and
// payer replays its answer: its approved transfer does not run again.
func TestSupervisorFailureRetriedCallReplaysMember(t *testing.T) {
	box := &toolbox{}
	payer, payModel := payerAgent(t, box)
	route := testkit.CallTools(testkit.ToolCall("s1", team.RouteToolName, `{"to":"payer","task":"pay acme"}`))
	sup := testkit.NewScriptedModel(route, testkit.FailWith(team.TypeSourceUnavailable), route, testkit.Reply("FINISH"))
	tm, err := team.NewTeam("desk", team.WithMembers(payer), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-supfail", map[string]any{"prompt": "pay acme"})
	res := failedAfterApproval(t, eng, g, fc, "payer", "p1")

	resumeCompleted(context.Background(), t, eng, fc, res, "nobody is asked again")
	assert.Equal(t, 2, payModel.Calls(), "payer's model is not asked again")
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls())
	assert.Equal(t, "acme is paid", tm.Trace(fc).FinalAnswer)
}

// turnsAgent answers each call with the next of its outcomes: an answer, or the
// error when err is set.
type turnsAgent struct {
	name     string
	mu       sync.Mutex
	outcomes []error // nil: answer "answer <n>"
	prompts  []string
}

func (a *turnsAgent) Name() string { return a.name }
func (a *turnsAgent) Role() string { return "worker" }

func (a *turnsAgent) Call(_ context.Context, prompt string, _ *team.AgentSession) (*team.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.prompts = append(a.prompts, prompt)
	n := len(a.prompts)
	if n <= len(a.outcomes) && a.outcomes[n-1] != nil {
		return nil, a.outcomes[n-1]
	}
	return &team.Answer{Agent: a.name, Content: "answer " + string(rune('0'+n))}, nil
}

func (a *turnsAgent) calls() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.prompts)
}

// A supervisor routes the nested team inner twice; its first turn completes, its
// second fails, which fails the call. In the retried call the supervisor routes it
// the same way: the first turn is replayed (inner's trace is then that of the failed
// second turn, which the retry runs again), and the stream shows no node of inner
// for the replayed turn, in particular not a failed one.
func TestSupervisorReplaysNestedTeamRoutedTwice(t *testing.T) {
	w := &turnsAgent{name: "w", outcomes: []error{nil, &team.Error{Type: team.TypeSourceUnavailable, Message: "down"}}}
	inner, err := team.NewTeam("inner", team.WithMembers(w))
	require.NoError(t, err)
	route := func(task string) testkit.Turn {
		return testkit.CallTools(testkit.ToolCall("s", team.RouteToolName, `{"to":"inner","task":"`+task+`"}`))
	}
	sup := testkit.NewScriptedModel(route("one"), route("two"), route("one"), route("two"), testkit.Reply("FINISH"))
	tm, err := team.NewTeam("desk", team.WithMembers(inner), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	require.NoError(t, eng.Register(inner.Graph()))
	fc := flow.NewContextWith("ops-twice", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, 2, w.calls())

	var log eventLog
	resumeCompleted(log.ctx(), t, eng, fc, res)
	assert.Equal(t, 3, w.calls(), "only the failed turn runs again")
	var ends []string
	for _, ev := range log.byAgent("inner") {
		if ev.Kind == team.EventNodeEnd {
			ends = append(ends, ev.Status+":"+ev.Content)
		}
	}
	assert.Equal(t, []string{"completed:answer 3"}, ends)
	tr := tm.Trace(fc)
	assert.Equal(t, []string{"inner", "inner"}, tr.Route)
	assert.Equal(t, "answer 1", tr.Records[1].Content)
}

// payer's model fails after its approved transfer ran, and the error policy recovers
// the failure, so the team goes on to bot; bot's failure after its approved batch
// then fails the call. In the retried call payer's recovered failure is replayed (the
// node fails again with the recorded error, and the policy recovers it again): payer
// is not asked again, so its transfer is not approved and made a second time.
func TestTeamTaskRetryReplaysRecoveredFailure(t *testing.T) {
	box := &toolbox{}
	payModel := testkit.NewScriptedModel().
		When(testkit.LastIsToolResult("transfer"), testkit.FailWith(team.TypeSourceUnavailable)).
		When(func(*team.ChatRequest) bool { return true },
			testkit.CallTools(testkit.ToolCall("p1", "transfer", `{"to":"acme","amount":5000}`)))
	payer, err := team.NewReActAgent("payer", payModel, team.WithTools(box.transfer()))
	require.NoError(t, err)
	botBox, botModel, bot := flakyRemover(t, afterRemove("cleaned"))
	tm, err := team.NewTeam("crew", team.WithMembers(payer, bot))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm, recoverNode("payer"))
	fc := flow.NewContextWith("ops-recovered", map[string]any{"prompt": "pay acme, then clean up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	res, err = approveAndResume(t, eng, fc, res, "payer", "p1")
	require.NoError(t, err)
	res, err = approveAndResume(t, eng, fc, res, "bot", "d1", "payer's failure was recovered; bot waits")
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, 2, payModel.Calls())

	var log eventLog
	resumeCompleted(log.ctx(), t, eng, fc, res, "nobody is asked again")
	assert.Equal(t, 2, payModel.Calls(), "payer's model is not asked again")
	assert.Equal(t, []string{`transfer:{"to":"acme","amount":5000}`}, box.Calls(), "the transfer ran once")
	assert.Equal(t, 3, botModel.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, botBox.Calls())
	assert.Empty(t, log.byAgent("payer"))
	assert.Empty(t, team.SessionOf(fc).PendingAll())
	tr := tm.Trace(fc)
	require.Len(t, tr.Records, 2)
	assert.Equal(t, team.RunFailed, tr.Records[0].Status)
	assert.Equal(t, team.TypeSourceUnavailable, tr.Records[0].Error.Type)
	assert.Equal(t, "cleaned", tr.FinalAnswer)
}

// approvePayerThenFailingBot approves the pending call of payer, then of bot, each
// through the store as another process would (Load, DecideIn, Resume), where bot's
// run fails after its approved batch; it returns the failed run's result.
func approvePayerThenFailingBot(t *testing.T, runner *session.Runner, id string, res *session.Result) *session.Result {
	t.Helper()
	ctx := context.Background()
	for _, agent := range []string{"payer", "bot"} {
		require.Equal(t, flow.StatusSuspended, res.Status)
		snap, err := runner.Load(ctx, id)
		require.NoError(t, err)
		p := team.SessionOf(flow.NewContextWith("", snap.Vars)).Pending(agent)
		require.NotNil(t, p, agent)
		updates, err := team.DecideIn(snap.Vars, agent, team.Approve(callIDs(p)[0]))
		require.NoError(t, err)
		res, err = runner.Resume(ctx, id, updates)
		if agent == "bot" {
			require.ErrorIs(t, err, team.ErrSourceUnavailable)
		} else {
			require.NoError(t, err)
		}
	}
	require.Equal(t, flow.StatusFailed, res.Status)
	return res
}

// A supervisor routes a worker whose turn fails; the error policy recovers the
// failure, and the supervisor, asked again, routes the same worker with the same
// task. That is a new turn, not a retry of the failed one (nobody resumed or retried
// the node): the worker runs fresh, whether it is a plain member or a nested team,
// whose members then all run again (a nested team replays its members only when
// flow resumes or retries its node, or retries its parent's call).
func TestSupervisorRerouteAfterRecoveredFailureRunsFresh(t *testing.T) {
	route := func(to string) testkit.Turn {
		return testkit.CallTools(testkit.ToolCall("r", team.RouteToolName, `{"to":"`+to+`","task":"check"}`))
	}
	for _, nested := range []bool{false, true} {
		name := map[bool]string{false: "member", true: "nested team"}[nested]
		t.Run(name, func(t *testing.T) {
			wModel := testkit.NewScriptedModel(testkit.FailWith(team.TypeSourceUnavailable), testkit.Reply("w done"))
			w, err := team.NewSimpleAgent("w", wModel)
			require.NoError(t, err)
			aModel := testkit.NewScriptedModel(testkit.Reply("a first"), testkit.Reply("a again"))
			a, err := team.NewSimpleAgent("a", aModel)
			require.NoError(t, err)
			var worker team.Agent = w
			if nested {
				inner, err := team.NewTeam("inner", team.WithMembers(a, w))
				require.NoError(t, err)
				worker = inner
			}
			sup := testkit.NewScriptedModel(route(worker.Name()), route(worker.Name()), testkit.Reply("FINISH"))
			desk, err := team.NewTeam("desk", team.WithMembers(worker), team.WithProtocol(team.Supervisor),
				team.WithSupervisorModel(sup), team.WithEngineOptions(recoverNode(worker.Name())))
			require.NoError(t, err)
			sess := team.NewSession("reroute")
			ans, err := desk.Call(context.Background(), "work", sess)
			require.NoError(t, err)
			assert.Equal(t, 2, wModel.Calls(), "w's turn ran again")
			tr := desk.Trace(sess.Context())
			require.Len(t, tr.MemberRecords(), 2)
			assert.Equal(t, team.RunFailed, tr.MemberRecords()[0].Status)
			assert.Equal(t, team.RunCompleted, tr.MemberRecords()[1].Status)
			if !nested {
				assert.Equal(t, "w done", ans.Content)
				return
			}
			assert.Equal(t, 2, aModel.Calls(), "a is asked again: the re-routed team runs fresh")
			assert.Equal(t, "w done", ans.Content)
			itr := team.TraceOf(sess.Context().Vars(), "inner")
			assert.Equal(t, []string{"a", "w"}, itr.Route)
			assert.Equal(t, "a again", itr.Records[0].Content)
		})
	}
}

// The contrast: a retry policy on the nested team's node retries its failed run
// (the node's own execution continues it), so a, which answered, is not asked again.
func TestNestedTeamNodeRetryPolicyReplaysAnsweredMember(t *testing.T) {
	wModel := testkit.NewScriptedModel(testkit.FailWith(team.TypeSourceUnavailable), testkit.Reply("w done"))
	w, err := team.NewSimpleAgent("w", wModel)
	require.NoError(t, err)
	aModel := testkit.NewScriptedModel(testkit.Reply("a first"), testkit.Reply("a again"))
	a, err := team.NewSimpleAgent("a", aModel)
	require.NoError(t, err)
	inner, err := team.NewTeam("inner", team.WithMembers(a, w))
	require.NoError(t, err)
	desk, err := team.NewTeam("desk", team.WithMembers(inner), team.WithGraphAdjuster(func(s *flow.GraphSpec) {
		s.NodeByID("inner").SetRetry(flow.RetryPolicy{Max: 2})
	}))
	require.NoError(t, err)
	sess := team.NewSession("nested-retry-policy")
	ans, err := desk.Call(context.Background(), "work", sess)
	require.NoError(t, err)
	assert.Equal(t, "w done", ans.Content)
	assert.Equal(t, 1, aModel.Calls(), "a's answer is replayed")
	assert.Equal(t, 2, wModel.Calls())
	itr := team.TraceOf(sess.Context().Vars(), "inner")
	assert.Equal(t, []string{"a", "w"}, itr.Route)
	assert.Equal(t, "a first", itr.Records[0].Content)
}
