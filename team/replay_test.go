package team_test

import (
	"context"
	"encoding/json"
	"maps"
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
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("payer", team.Approve("p1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status, "bot waits for its decision")
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, flow.StatusFailed, res.Status)
	require.Equal(t, 2, payModel.Calls())
	paid := tm.Trace(fc).Records[0]
	require.Equal(t, "acme is paid", paid.Content)

	var log eventLog
	res, err = eng.Resume(log.ctx(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "nobody is asked again")
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
	assert.Contains(t, botModel.Requests()[2].LastUserMessage(), "[payer] acme is paid",
		"bot's question is the one it was asked")
}

// opsGraph is s → crew (the team's Task) → e, on an engine with the team's
// Interceptor.
func opsGraph(t *testing.T, tm *team.TeamAgent, opts ...flow.Option) (*flow.Engine, *flow.Graph) {
	t.Helper()
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo(tm.Name())
	spec.Activity(tm.Name()).Do(tm.Task()).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(append([]flow.Option{flow.WithInterceptor(tm.Interceptor(), -100)}, opts...)...)
	require.NoError(t, eng.Register(g))
	return eng, g
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
	tm, err := team.NewTeam("desk", team.WithMembers(payer, bot), team.WithProtocol(team.Supervisor()),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-sup", map[string]any{"prompt": "pay acme, then clean up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("payer", team.Approve("p1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	var log eventLog
	res, err = eng.Resume(log.ctx(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "nobody is asked again")
	assert.Equal(t, 5, sup.Calls(), "the supervisor is asked again")
	assert.Equal(t, sup.Requests()[1].LastUserMessage(), sup.Requests()[3].LastUserMessage(),
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
		require.NoError(t, sess.Decide(agent, team.Approve(ans.Pending.IDs()[0])))
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
	tr := team.TraceIn(sess.Context(), nesting[0])
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
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("payer", team.Approve("p1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	innerRun := inner.Trace(fc).RunID

	var log eventLog
	res, err = eng.Resume(log.ctx(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "nobody is asked again")
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
	tm, err := team.NewTeam("sw", team.WithProtocol(team.Swarm()), team.WithMembers(a, bot))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-swarm", map[string]any{"prompt": "tidy up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "nobody is asked again")
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
	tm, err := team.NewTeam("par", team.WithProtocol(team.Parallel()), team.WithMembers(writer, bot))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-par", map[string]any{"prompt": "tidy up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Len(t, writer.Prompts(), 1)

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "nobody is asked again")
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
	tm, err := team.NewTeam("desk", team.WithMembers(payer), team.WithProtocol(team.Supervisor()),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-supfail", map[string]any{"prompt": "pay acme"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("payer", team.Approve("p1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "nobody is asked again")
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
	tm, err := team.NewTeam("desk", team.WithMembers(inner), team.WithProtocol(team.Supervisor()),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	require.NoError(t, eng.Register(inner.Graph()))
	fc := flow.NewContextWith("ops-twice", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, 2, w.calls())

	var log eventLog
	res, err = eng.Resume(log.ctx(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("payer", team.Approve("p1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status, "payer's failure was recovered; bot waits")
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	require.Equal(t, 2, payModel.Calls())

	var log eventLog
	res, err = eng.Resume(log.ctx(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status, "nobody is asked again")
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
		p := team.PendingIn(snap.Vars, agent)
		require.NotNil(t, p, agent)
		updates, err := team.DecideIn(snap.Vars, agent, team.Approve(p.IDs()[0]))
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
	tm, err := team.NewTeam("desk", team.WithMembers(bot), team.WithProtocol(team.Supervisor()),
		team.WithSupervisorModel(sup),
		team.WithMemberPrompt(func(_ *team.TeamTrace, _ team.Agent, task string) string { return task }))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-same-twice", map[string]any{"prompt": "tidy up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	first := tm.Trace(fc).Records

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 4, model.Calls())
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
	var got []string
	for _, r := range tm.Trace(fc).MemberRecords() {
		got = append(got, r.Content)
	}
	assert.Equal(t, []string{"looked at /a", "cleaned /a"}, got, "the turns keep their order")
	require.NotEmpty(t, first)
	assert.Equal(t, sup.Requests()[1].LastUserMessage(), sup.Requests()[3].LastUserMessage(),
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

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("crew")
	spec.Activity("crew").Do(tm.Task()).SetRetry(flow.RetryPolicy{Max: 3}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100))
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
	merge := team.ParallelMerge(func(_ context.Context, _ *flow.Context, tr *team.TeamTrace) (string, error) {
		merges++
		if merges == 1 {
			return "", down
		}
		return "merged " + string(rune('0'+len(tr.MemberRecords()))), nil
	})
	tm, err := team.NewTeam("par", team.WithProtocol(team.Parallel(merge)), team.WithMembers(members...))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-merge", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	var log eventLog
	res, err = eng.Resume(log.ctx(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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
	tm, err := team.NewTeam("crew", team.WithMembers(&turnsAgent{name: "a"}, b), team.WithTeamInterceptor(h, 0))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-hooks", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	failed := len(h.Log())

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("crew")
	spec.Activity("crew").Do(tm.Task()).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100),
		flow.WithInterceptor(team.DiscardStaleRuns(), 0), flow.WithInterceptor(team.DiscardStaleRuns(), 1))
	require.NoError(t, eng.Register(g))
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

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
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
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("crew")
	spec.Activity("crew").Do(tm.Task()).SetRetry(flow.RetryPolicy{Max: 4}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100))
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
	merge := team.ParallelMerge(func(_ context.Context, _ *flow.Context, tr *team.TeamTrace) (string, error) {
		if merges++; merges == 1 {
			return "", down
		}
		return tr.LastAnswerOf("inner") + " + " + tr.LastAnswerOf("w"), nil
	})
	tm, err := team.NewTeam("par", team.WithProtocol(team.Parallel(merge)), team.WithMembers(inner, w))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	require.NoError(t, eng.Register(inner.Graph()))
	fc := flow.NewContextWith("ops-par-nested", map[string]any{"prompt": "work"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	innerRun := inner.Trace(fc).RunID

	var log eventLog
	res, err = eng.Resume(log.ctx(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, x.calls())
	assert.Equal(t, 1, w.calls())
	assert.Empty(t, log.byAgent("inner"))
	assert.Empty(t, log.byAgent("x"))
	assert.Empty(t, log.byAgent("w"))
	assert.Equal(t, innerRun, inner.Trace(fc).RunID)
	assert.Equal(t, "answer 1 + answer 1", tm.Trace(fc).FinalAnswer)
}

// Two levels of nesting: outer → middle → inner → bot. The member's resumed run fails
// after its approved batch; called again with its prompt, the outer team retries its
// failed run: the member goes on, as it does one level down
// (TestNestedTeamMemberModelFailureAfterResumedBatch).
func TestDoublyNestedTeamMemberModelFailureAfterResumedBatch(t *testing.T) {
	retryNestedMember(t, "inner", "middle")
}

// twoRemovers is a parallel team whose members a and b each remove one path (both
// calls need a decision), built afresh as a new process would.
func twoRemovers(t *testing.T, box *toolbox) *team.TeamAgent {
	t.Helper()
	member := func(name, id, path string) team.Agent {
		call := testkit.CallTools(testkit.ToolCall(id, "remove", `{"path":"`+path+`"}`))
		model := testkit.NewScriptedModel(call).When(testkit.LastIsToolResult("remove"), testkit.Reply(name+" removed "+path))
		a, err := team.NewReActAgent(name, model, team.WithTools(box.remove()))
		require.NoError(t, err)
		return a
	}
	tm, err := team.NewTeam("pair", team.WithMembers(member("a", "a1", "/a"), member("b", "b1", "/b")),
		team.WithProtocol(team.Parallel()))
	require.NoError(t, err)
	return tm
}

// Members of a parallel team wait for decisions (both at once, or one after the
// other when the first suspension stops the other branch before it asks: flow's
// suspend stops the run). Each round the run is loaded in a new process (a team,
// engine and store built again), every waiting call is approved, and the instance is
// resumed twice at the same time: one resume wins, the other gets a conflict. Each
// approved call runs once and nothing is left pending.
func TestParallelPendingResumedOnceInNewProcess(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	box := &toolbox{}
	tm := twoRemovers(t, box)
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	res, err := session.NewRunner(tm.Engine(), store).Run(ctx, tm.Graph().ID,
		flow.NewContextWith("pair-1", map[string]any{tm.InputKey(): "clean up"}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)

	var final *session.Result
	for round := 0; final == nil; round++ {
		require.Less(t, round, 3, "each member waits once")
		runner := session.NewRunner(twoRemovers(t, box).Engine(), must(session.NewFileStore(dir)))
		snap, err := runner.Load(ctx, "pair-1")
		require.NoError(t, err)
		updates := map[string]any{}
		vars := maps.Clone(snap.Vars)
		for _, name := range []string{"a", "b"} {
			p := team.PendingIn(vars, name)
			if p == nil || len(p.Calls) == 0 {
				continue
			}
			u, err := team.DecideIn(vars, name, team.Approve(p.IDs()[0]))
			require.NoError(t, err)
			maps.Copy(vars, u)
			maps.Copy(updates, u)
		}
		require.NotEmpty(t, updates, "a suspended run waits for someone")
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			wins []*session.Result
		)
		start := make(chan struct{})
		for range 2 {
			wg.Go(func() {
				<-start
				res, err := runner.Resume(ctx, "pair-1", updates)
				if err != nil {
					assert.ErrorIs(t, err, session.ErrConflict)
					return
				}
				mu.Lock()
				wins = append(wins, res)
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		require.Len(t, wins, 1, "one resume wins")
		if wins[0].Status == flow.StatusCompleted {
			final = wins[0]
		}
	}
	assert.Nil(t, team.SessionOf(final.Context).Pending("a"))
	assert.Nil(t, team.SessionOf(final.Context).Pending("b"))
	assert.Contains(t, final.Context.Value(team.AnswerKey("pair")), "a removed /a")
	assert.Contains(t, final.Context.Value(team.AnswerKey("pair")), "b removed /b")
	assert.ElementsMatch(t, []string{`remove:{"path":"/a"}`, `remove:{"path":"/b"}`}, box.Calls(), "each approved call ran once")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A supervisor team called as a sub-graph (Task): its member's resumed run fails
// after the approved batch, which fails the call. The resume of the flow run calls
// the team's graph again from its start, where the supervisor is asked again; routed
// this time with another task, the member takes that task in a new run instead of
// going on with the run the failed call left waiting (whose answer would then count
// as this task's).
func TestSupervisorRetriedCallRoutesAnotherTask(t *testing.T) {
	box, model, bot := flakyRemover(t, testkit.Reply("checked /b"))
	sup := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("s1", team.RouteToolName, `{"to":"bot","task":"remove /a"}`)),
		testkit.CallTools(testkit.ToolCall("s2", team.RouteToolName, `{"to":"bot","task":"check /b"}`)),
		testkit.Reply("FINISH"))
	tm, err := team.NewTeam("desk", team.WithMembers(bot), team.WithProtocol(team.Supervisor()),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("desk")
	spec.Activity("desk").Do(tm.Task()).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100))
	fc := flow.NewContextWith("ops-2", map[string]any{"prompt": "tidy up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	require.Equal(t, 3, model.Calls())
	assert.Contains(t, model.Requests()[2].LastUserMessage(), "check /b", "the member takes its new task")
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
	assert.Nil(t, team.SessionOf(fc).Pending("bot"))
}

// A swarm hands over a → b → a, and a's second turn waits for a decision. Resumed
// from the session's JSON, a goes on with that run: the approved call runs once, the
// team finishes with a's answer, and every tool_start of both streams has its
// tool_end, in order.
func TestSwarmHandoffBackToWaitingMember(t *testing.T) {
	box := &toolbox{}
	am := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("t1", team.TransferToolName, `{"to":"b","reason":"b checks"}`)),
		testkit.Reply("over to b"),
		testkit.CallTools(testkit.ToolCall("r1", "remove", `{"path":"/a"}`)),
		testkit.Reply("a removed /a"))
	a, err := team.NewReActAgent("a", am, team.WithTools(team.TransferTool(), box.remove()))
	require.NoError(t, err)
	b, err := team.NewReActAgent("b", testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("t2", team.TransferToolName, `{"to":"a","reason":"a removes"}`)),
		testkit.Reply("over to a")), team.WithTools(team.TransferTool()))
	require.NoError(t, err)
	tm, err := team.NewTeam("sw", team.WithProtocol(team.Swarm()), team.WithMembers(a, b))
	require.NoError(t, err)
	collect := func(prompt string, sess *team.AgentSession) []team.Event {
		var evs []team.Event
		for ev, err := range team.Stream(context.Background(), tm, prompt, sess) {
			require.NoError(t, err)
			evs = append(evs, ev)
		}
		return evs
	}
	sess := team.NewSession("sw-back")
	first := collect("clean up", sess)
	p := sess.Pending("a")
	require.NotNil(t, p)
	require.Equal(t, []string{"r1"}, p.IDs())
	data, err := team.MarshalSession(sess)
	require.NoError(t, err)
	sess, err = team.UnmarshalSession(data)
	require.NoError(t, err)
	require.NoError(t, sess.Decide("a", team.Approve("r1")))
	second := collect("", sess)

	tr := tm.Trace(sess.Context())
	require.NotNil(t, tr)
	assert.Equal(t, "a removed /a", tr.FinalAnswer)
	assert.Equal(t, []string{"a", "b", "a"}, tr.Route)
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
	assert.Equal(t, 4, am.Calls())
	assert.Nil(t, sess.Pending("a"))
	for _, evs := range [][]team.Event{first, second} {
		open := map[string]bool{}
		for _, ev := range evs {
			switch ev.Kind {
			case team.EventToolStart:
				require.NotNil(t, ev.Call)
				assert.False(t, open[ev.Call.ID], "tool %s started twice", ev.Call.ID)
				open[ev.Call.ID] = true
			case team.EventToolEnd:
				require.NotNil(t, ev.Call)
				assert.True(t, open[ev.Call.ID], "tool %s ended before it started", ev.Call.ID)
				delete(open, ev.Call.ID)
			}
		}
		assert.Empty(t, open, "every tool_start has its tool_end")
	}
	var removes int
	for _, ev := range append(first, second...) {
		if ev.Kind == team.EventToolStart && ev.Call.Name == "remove" {
			removes++
		}
	}
	assert.Equal(t, 1, removes)
}

// A member waits inside a nested team called in a loop's body, once per iteration.
// Each step runs in a new process (teams and engine built again over the same memory
// store, the run saved as JSON in between): each resume goes on with the waiting
// iteration's run, each approved call runs once, the second iteration asks its own
// question, and the completed instance leaves nothing pending.
func TestNestedTeamMemberWaitsInLoopAcrossProcesses(t *testing.T) {
	var store session.Store
	ctx := context.Background()
	box := &toolbox{}
	var models []*testkit.ScriptedModel
	build := func(turns ...testkit.Turn) *session.Runner {
		model := testkit.NewScriptedModel(turns...).When(testkit.LastIsToolResult("remove"), testkit.Reply("done"))
		models = append(models, model)
		bot, err := team.NewReActAgent("bot", model, team.WithTools(box.remove()))
		require.NoError(t, err)
		inner, err := team.NewTeam("inner", team.WithMembers(bot))
		require.NoError(t, err)
		outer, err := team.NewTeam("outer", team.WithMembers(inner))
		require.NoError(t, err)
		g, err := flow.LoadGraph("clean-loop.yml", []byte(`id: cleanLoop
layout:
  - {id: start, type: start, link: each}
  - {id: each, type: loop, meta: {$for: dir, $in: dirs}, link: ask}
  - {id: ask, task: 'context.put("prompt", "clean " + dir)', link: crew}
  - {id: crew, task: "#team.outer", link: close}
  - {id: close, type: loop, link: end}
  - {id: end, type: end}
`))
		require.NoError(t, err)
		eng := outer.Engine()
		require.NoError(t, eng.Register(g))
		return session.NewRunner(eng, store)
	}
	store = session.NewMemoryStore()
	remove := func(path string) testkit.Turn {
		return testkit.CallTools(testkit.ToolCall("d-"+path, "remove", `{"path":"`+path+`"}`))
	}
	res, err := build(remove("/a")).Run(ctx, "cleanLoop", flow.NewContextWith("loop-1", map[string]any{"dirs": []any{"/a", "/b"}}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	for i, path := range []string{"/a", "/b"} {
		var turns []testkit.Turn
		if i == 0 {
			turns = append(turns, remove("/b"))
		}
		runner := build(turns...)
		snap, err := runner.Load(ctx, "loop-1")
		require.NoError(t, err)
		p := team.PendingIn(snap.Vars, "bot")
		require.NotNil(t, p)
		require.Equal(t, []string{"d-" + path}, p.IDs())
		updates, err := team.DecideIn(snap.Vars, "bot", team.Approve("d-"+path))
		require.NoError(t, err)
		res, err = runner.Resume(ctx, "loop-1", updates)
		require.NoError(t, err)
	}
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{`remove:{"path":"/a"}`, `remove:{"path":"/b"}`}, box.Calls(), "each approved call ran once")
	assert.Equal(t, "clean /b", models[1].Requests()[1].LastUserMessage(), "the second iteration asks its own question")
	assert.Nil(t, team.SessionOf(res.Context).Pending("bot"))
}

// A team called as a sub-graph by a node with a retry policy: the member's resumed
// run fails after the approved batch, which fails the call, and the node retries it
// (a fresh call of the team's graph): the team retries its failed run, the member
// goes on, the approved call runs once and nobody is asked again.
func TestTeamCallNodeRetryContinuesMember(t *testing.T) {
	box, model, bot := flakyRemover(t, afterRemove("cleaned"))
	tm, err := team.NewTeam("crew", team.WithMembers(bot))
	require.NoError(t, err)
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("crew")
	spec.Activity("crew").Do(tm.Task()).SetRetry(flow.RetryPolicy{Max: 2}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100))
	fc := flow.NewContextWith("ops-3", map[string]any{"prompt": "clean up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 1, res.Retries)
	assert.Equal(t, "cleaned", fc.Value(team.AnswerKey("crew")))
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
	assert.Equal(t, 3, model.Calls(), "nobody is asked again")
	assert.Nil(t, team.SessionOf(fc).Pending("bot"))
}

// A parallel team whose branches continue past a failure: a member that is a nested
// team fails (its member's resumed run fails after the approved batch), its branch is
// withdrawn and the merge reports the gap. Through session.Runner (which discards
// nothing itself), the completed instance holds no pending entry for the nested
// member.
func TestParallelWithdrawnNestedMemberLeavesNoPending(t *testing.T) {
	ctx := context.Background()
	box, _, bot := flakyRemover(t)
	inner, err := team.NewTeam("inner", team.WithMembers(bot))
	require.NoError(t, err)
	tm, err := team.NewTeam("fan", team.WithMembers(inner, testkit.NewFixedAgent("writer", "report")),
		team.WithProtocol(team.Parallel(team.ParallelBranchPolicy(flow.ContinueOnError))))
	require.NoError(t, err)
	runner := session.NewRunner(tm.Engine(), session.NewMemoryStore())
	res, err := runner.Run(ctx, tm.Graph().ID, flow.NewContextWith("fan-1", map[string]any{tm.InputKey(): "clean up"}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	snap, err := runner.Load(ctx, "fan-1")
	require.NoError(t, err)
	updates, err := team.DecideIn(snap.Vars, "bot", team.Approve("d1"))
	require.NoError(t, err)
	res, err = runner.Resume(ctx, "fan-1", updates)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Contains(t, res.Context.Value(team.AnswerKey("fan")), "[inner] failed")
	assert.Nil(t, team.SessionOf(res.Context).Pending("bot"))
	snap, err = runner.Load(ctx, "fan-1")
	require.NoError(t, err)
	assert.Nil(t, team.PendingIn(snap.Vars, "bot"))
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
}

// A member node with a retry policy (a graph adjuster's): the member waits for a
// decision; on the resume its approved call runs and the model call after it fails;
// the node's retry goes on with the run: the call runs once, nobody is asked again.
// A rejected call in the next run never runs, and that run asks its own question.
func TestMemberRetryPolicyAfterApprovalThenRejection(t *testing.T) {
	box, model, bot := flakyRemover(t, afterRemove("cleaned"),
		testkit.CallTools(testkit.ToolCall("d2", "remove", `{"path":"/b"}`)), testkit.Reply("left /b alone"))
	tm, err := team.NewTeam("crew", team.WithMembers(bot), team.WithGraphAdjuster(func(s *flow.GraphSpec) {
		s.NodeByID("bot").SetRetry(flow.RetryPolicy{Max: 2})
	}))
	require.NoError(t, err)
	sess := team.NewSession("crew-retry")
	ans, err := tm.Call(context.Background(), "clean /a", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))
	ans, err = tm.Call(context.Background(), "", sess)
	require.NoError(t, err)
	require.Nil(t, ans.Pending, "nobody is asked again")
	assert.Equal(t, "cleaned", ans.Content)
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
	assert.Equal(t, 3, model.Calls())

	ans, err = tm.Call(context.Background(), "clean /b", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	assert.Equal(t, "clean /b", model.Requests()[3].LastUserMessage())
	require.NoError(t, sess.Decide("bot", team.Reject("d2", "keep /b")))
	ans, err = tm.Call(context.Background(), "", sess)
	require.NoError(t, err)
	assert.Equal(t, "left /b alone", ans.Content)
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the rejected call never ran")
	assert.Nil(t, sess.Pending("bot"))
}

// A team run with Task on an engine without the team's Interceptor: a member waiting
// for a decision still resumes at its place (the resume re-enters the call), its
// approved call runs once, and a recovered failure of the call afterwards leaves the
// member's run in Pending with nothing to decide, as the documentation says, until
// ResumeFlow sees the flow run complete.
func TestTeamTaskWithoutInterceptor(t *testing.T) {
	box, _, bot := flakyRemover(t)
	tm, err := team.NewTeam("crew", team.WithMembers(bot))
	require.NoError(t, err)
	spec := flow.NewSpec("ops")
	spec.Start("s").LinkTo("crew")
	spec.Activity("crew").Do(tm.Task()).LinkTo("approve")
	spec.Activity("approve").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if ok, _ := c.GetBool("approved"); !ok {
			c.Suspend("waiting for a manager")
		}
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(recoverNode("crew"))
	sess := team.NewSession("ops-plain")
	sess.Context().Set("prompt", "clean up")
	res, err := sess.RunFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))
	res, err = sess.ResumeFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status, "at the approval node")
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
	p := sess.Pending("bot")
	require.NotNil(t, p, "nothing discards the recovered run without the Interceptor")
	assert.Empty(t, p.Calls)
	sess.Context().Set("approved", true)
	res, err = sess.ResumeFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Nil(t, sess.Pending("bot"))
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls())
}

// As TestTeamTaskRetryAfterFailedCall's resume, with the member's prompt set on its
// node (a graph adjuster's prompt template): the member's run asked the node's
// question, which the retried team asks again, so the member goes on with the run.
func TestTeamTaskRetryMemberWithNodePrompt(t *testing.T) {
	box, model, bot := flakyRemover(t, afterRemove("cleaned"))
	tm, err := team.NewTeam("crew", team.WithMembers(bot), team.WithGraphAdjuster(func(s *flow.GraphSpec) {
		s.NodeByID("bot").SetMeta(team.MetaPrompt, `please {{var "prompt"}}`)
	}))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-5", map[string]any{"prompt": "clean up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.Equal(t, "please clean up", model.Requests()[0].LastUserMessage())
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
	assert.Equal(t, 3, model.Calls(), "nobody is asked again")
}

// A team run with Task whose member is a nested team: the nested member's resumed
// run fails after its approved batch, failing the call. The resume calls the outer
// team's graph again from its start (the team retries its run, under a new run id),
// which calls the nested team again: the member goes on with its run.
func TestTaskTeamWithNestedTeamRetryAfterFailedCall(t *testing.T) {
	box, model, bot := flakyRemover(t, afterRemove("cleaned"))
	inner, err := team.NewTeam("inner", team.WithMembers(bot))
	require.NoError(t, err)
	tm, err := team.NewTeam("crew", team.WithMembers(inner))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	require.NoError(t, eng.Register(inner.Graph())) // the nested team's call: "#team.inner"
	fc := flow.NewContextWith("ops-6", map[string]any{"prompt": "clean up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "cleaned", fc.Value(team.AnswerKey("crew")))
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
	assert.Equal(t, 3, model.Calls(), "nobody is asked again")
}

// A supervisor routes twice to the same member, which waits for a decision each time:
// each resume goes on with the waiting turn's run, each approved call runs once, and
// the second turn asks its own task.
func TestSupervisorRoutesTwiceToWaitingMember(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(removeA(), testkit.Reply("removed /a"),
		testkit.CallTools(testkit.ToolCall("d2", "remove", `{"path":"/b"}`)), testkit.Reply("removed /b"))
	bot, err := team.NewReActAgent("bot", model, team.WithTools(box.remove()))
	require.NoError(t, err)
	sup := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("s1", team.RouteToolName, `{"to":"bot","task":"remove /a"}`)),
		testkit.CallTools(testkit.ToolCall("s2", team.RouteToolName, `{"to":"bot","task":"remove /b"}`)),
		testkit.Reply("FINISH"))
	tm, err := team.NewTeam("desk", team.WithMembers(bot), team.WithProtocol(team.Supervisor()),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	sess := team.NewSession("desk-twice")
	ans, err := tm.Call(context.Background(), "tidy up", sess)
	require.NoError(t, err)
	require.Equal(t, []string{"d1"}, ans.Pending.IDs())
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))
	ans, err = tm.Call(context.Background(), "", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.Equal(t, []string{"d2"}, ans.Pending.IDs())
	assert.Contains(t, model.Requests()[2].LastUserMessage(), "remove /b")
	require.NoError(t, sess.Decide("bot", team.Approve("d2")))
	ans, err = tm.Call(context.Background(), "", sess)
	require.NoError(t, err)
	require.Nil(t, ans.Pending)
	assert.Equal(t, []string{`remove:{"path":"/a"}`, `remove:{"path":"/b"}`}, box.Calls())
	assert.Equal(t, 4, model.Calls())
	assert.Equal(t, []string{"bot", "bot"}, ans.Trace.(*team.TeamTrace).Route)
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
			desk, err := team.NewTeam("desk", team.WithMembers(worker), team.WithProtocol(team.Supervisor()),
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
			itr := team.TraceIn(sess.Context(), "inner")
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
	itr := team.TraceIn(sess.Context(), "inner")
	assert.Equal(t, []string{"a", "w"}, itr.Route)
	assert.Equal(t, "a first", itr.Records[0].Content)
}
