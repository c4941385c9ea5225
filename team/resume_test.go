package team_test

import (
	"context"
	"maps"
	"sync"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		team.WithProtocol(team.Parallel))
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
			p := team.SessionOf(flow.NewContextWith("", vars)).Pending(name)
			if p == nil || len(p.Calls) == 0 {
				continue
			}
			u, err := team.DecideIn(vars, name, team.Approve(callIDs(p)[0]))
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
	tm, err := team.NewTeam("desk", team.WithMembers(bot), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	eng, g := opsGraph(t, tm)
	fc := flow.NewContextWith("ops-2", map[string]any{"prompt": "tidy up"})
	res := failedAfterApproval(t, eng, g, fc, "bot", "d1")

	resumeCompleted(context.Background(), t, eng, fc, res)
	require.Equal(t, 3, model.Calls())
	assert.Contains(t, testkit.LastUserMessage(model.Requests()[2]), "check /b", "the member takes its new task")
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
	tm, err := team.NewTeam("sw", team.WithProtocol(team.Swarm), team.WithMembers(a, b))
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
	require.Equal(t, []string{"r1"}, callIDs(p))
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
		p := team.SessionOf(flow.NewContextWith("", snap.Vars)).Pending("bot")
		require.NotNil(t, p)
		require.Equal(t, []string{"d-" + path}, callIDs(p))
		updates, err := team.DecideIn(snap.Vars, "bot", team.Approve("d-"+path))
		require.NoError(t, err)
		res, err = runner.Resume(ctx, "loop-1", updates)
		require.NoError(t, err)
	}
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{`remove:{"path":"/a"}`, `remove:{"path":"/b"}`}, box.Calls(), "each approved call ran once")
	assert.Equal(t, "clean /b", testkit.LastUserMessage(models[1].Requests()[1]), "the second iteration asks its own question")
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
	eng, g := retriedOpsGraph(t, tm, flow.RetryPolicy{Max: 2})
	fc := flow.NewContextWith("ops-3", map[string]any{"prompt": "clean up"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	res, err = approveAndResume(t, eng, fc, res, "bot", "d1")
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
		team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError))
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
	assert.Nil(t, team.SessionOf(flow.NewContextWith("", snap.Vars)).Pending("bot"))
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
	assert.Equal(t, "clean /b", testkit.LastUserMessage(model.Requests()[3]))
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
	res, err := runFlowApproved(t, sess, eng, g, "bot", "d1")
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
	require.Equal(t, "please clean up", testkit.LastUserMessage(model.Requests()[0]))
	require.NoError(t, team.SessionOf(fc).Decide("bot", team.Approve("d1")))
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)

	resumeCompleted(context.Background(), t, eng, fc, res)
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
	res := failedAfterApproval(t, eng, g, fc, "bot", "d1")

	resumeCompleted(context.Background(), t, eng, fc, res)
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
	tm, err := team.NewTeam("desk", team.WithMembers(bot), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	sess := team.NewSession("desk-twice")
	ans, err := tm.Call(context.Background(), "tidy up", sess)
	require.NoError(t, err)
	require.Equal(t, []string{"d1"}, callIDs(ans.Pending))
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))
	ans, err = tm.Call(context.Background(), "", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.Equal(t, []string{"d2"}, callIDs(ans.Pending))
	assert.Contains(t, testkit.LastUserMessage(model.Requests()[2]), "remove /b")
	require.NoError(t, sess.Decide("bot", team.Approve("d2")))
	ans, err = tm.Call(context.Background(), "", sess)
	require.NoError(t, err)
	require.Nil(t, ans.Pending)
	assert.Equal(t, []string{`remove:{"path":"/a"}`, `remove:{"path":"/b"}`}, box.Calls())
	assert.Equal(t, 4, model.Calls())
	assert.Equal(t, []string{"bot", "bot"}, ans.Trace.(*team.TeamTrace).Route)
}
