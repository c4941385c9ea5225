package team_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ttSupervisorTeam(t *testing.T) *team.TeamAgent {
	t.Helper()
	research, err := team.NewTeam("research", team.WithProtocol(team.Parallel),
		team.WithMembers(testkit.NewFixedAgent("web", "w"), testkit.NewFixedAgent("papers", "p")))
	require.NoError(t, err)
	tm, err := team.NewTeam("desk", team.WithMembers(research, testkit.NewFixedAgent("writer", "done").WithRole("writes")),
		team.WithProtocol(team.Supervisor), team.WithSupervisorModel(testkit.NewScriptedModel()))
	require.NoError(t, err)
	return tm
}

// The team's graph is a graph like any other: every writer renders it, and the
// document form (with the task namer) reads back into the same shape.
func TestTeamGraphExports(t *testing.T) {
	tm := ttSupervisorTeam(t)
	g := tm.Graph()
	assert.Equal(t, "team.desk", g.ID)
	assert.Equal(t, "supervisor", g.Meta[team.MetaProtocol])
	ids := []string{}
	for _, n := range g.Nodes() {
		ids = append(ids, n.ID)
	}
	assert.Equal(t, []string{"start", "supervisor", "route", "research", "writer", "end"}, ids)
	assert.Equal(t, "#team.research", g.Node("research").Task)
	assert.Equal(t, []string{"team.research"}, g.Calls())

	uml, err := export.PlantUML(g)
	require.NoError(t, err)
	for _, want := range []string{"supervisor", "<<choice>>", "#team.research", "writer (writes)", "_team.desk.next", ": finish"} {
		assert.Contains(t, string(uml), want)
	}
	for _, f := range export.Formats() {
		var b strings.Builder
		require.NoError(t, export.Write(&b, g, f, export.WithTaskNamer(tm.TaskNamer)), "format %s", f)
		assert.NotEmpty(t, b.String())
	}
	_, err = export.YAML(g)
	assert.ErrorIs(t, err, export.ErrNoTextualForm, "Go tasks need the namer in a document")

	doc, err := export.YAML(g, export.WithTaskNamer(tm.TaskNamer))
	require.NoError(t, err)
	assert.Contains(t, string(doc), "'@desk.supervisor'")
	spec, err := flow.ParseDefinition("desk.yml", doc)
	require.NoError(t, err)
	back, err := spec.Build()
	require.NoError(t, err)
	assert.Len(t, back.Nodes(), len(g.Nodes()))
	assert.Equal(t, "@desk.writer", back.Node("writer").Task)
	assert.Equal(t, g.Node("route").Links()[0].When, back.Node("route").Links()[0].When)

	// The production checklist has nothing to say about a generated graph.
	research, ok := tm.Engine().Graph("team.research")
	require.True(t, ok)
	findings := export.Validate(g, export.WithRegistered(research))
	assert.False(t, export.HasErrors(findings), "%v", findings)
}

// A team is an Agent: as the task of a node of another graph it runs on a copy of the
// node's context and writes back what changed; as a sub-graph (Task) it shares the
// context and suspends with the enclosing flow.
func TestTeamInsideAnotherGraph(t *testing.T) {
	ctx := context.Background()
	tm, err := team.NewTeam("duo", team.WithMembers(testkit.NewFixedAgent("a", "A").Write("a.done", true), testkit.NewFixedAgent("b", "B")))
	require.NoError(t, err)

	t.Run("agent node", func(t *testing.T) {
		spec := flow.NewSpec("outer")
		spec.Start("s").LinkTo("duo")
		spec.Activity("duo").Do(team.AsTask(tm)).SetMeta(team.MetaPrompt, "Do {{.job}}").LinkTo("e")
		spec.End("e")
		g, err := spec.Build()
		require.NoError(t, err)
		fc := flow.NewContextWith("o-1", map[string]any{"job": "the thing"})
		res, err := flow.NewEngine().EvalGraph(ctx, g, fc)
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "B", fc.Value(team.AnswerKey("duo")))
		assert.Equal(t, true, fc.Value("a.done"))
		tr := team.TraceOf(fc.Vars(), "duo")
		require.NotNil(t, tr)
		assert.Equal(t, "Do the thing", tr.Prompt)
		assert.Equal(t, res.RunID(), tr.ParentRunID)
	})
	t.Run("sub-graph", func(t *testing.T) {
		spec := flow.NewSpec("outer2")
		spec.Start("s").LinkTo("duo")
		spec.Activity("duo").Do(tm.Task()).LinkTo("e")
		spec.End("e")
		g, err := spec.Build()
		require.NoError(t, err)
		fc := flow.NewContextWith("o-2", map[string]any{"prompt": "Do it"})
		var evs []team.Event
		eng := flow.NewEngine(flow.WithInterceptor(tm.Interceptor(), -100))
		res, err := eng.EvalGraph(team.WithSink(ctx, func(e team.Event) { evs = append(evs, e) }), g, fc)
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, "B", fc.Value(team.AnswerKey("duo")))
		ttCheckSymmetry(t, evs)
		tr := team.TraceOf(fc.Vars(), "duo")
		assert.Equal(t, "Do it", tr.Prompt)
		assert.Equal(t, "main/duo/team.duo", tr.Branch)
	})
	t.Run("suspends inside an agent node", func(t *testing.T) {
		ap := ttApprovalTeam(t)
		spec := flow.NewSpec("outer3")
		spec.Start("s").LinkTo("rel")
		spec.Activity("rel").Do(team.AsTask(ap)).LinkTo("e")
		spec.End("e")
		g, err := spec.Build()
		require.NoError(t, err)
		res, err := flow.NewEngine().EvalGraph(ctx, g, flow.NewContext("o-3"))
		require.Error(t, err)
		assert.Equal(t, flow.StatusFailed, res.Status)
		assert.ErrorIs(t, err, team.ErrTeamSuspendedInNode)
	})
}

// A team keeps its state in variables named from its name ("_team.<name>",
// "_team.<name>.input", "_team.<name>.next", "_team.<name>.prompt.<member>"): a name
// whose variables could be another team's is refused, naming the name and the clash.
// Names that merely look alike keep working.
func TestTeamNameCannotClash(t *testing.T) {
	member := func() team.Option { return team.WithMembers(testkit.NewFixedAgent("a", "A")) }
	for _, name := range []string{"crew.next", "crew.input", "crew.prompt", "crew.prompt.a", "x.prompt.a.input", "x.y.next"} {
		t.Run(name, func(t *testing.T) {
			_, err := team.NewTeam(name, member())
			require.Error(t, err)
			assert.Contains(t, err.Error(), `"`+name+`"`)
			assert.Contains(t, err.Error(), "another team")
		})
	}
	for _, name := range []string{"crew", "crew.nexts", "crew.inputs", "crew.prompter", "prompt.crew", "next", "input", "prompt", "crew.v2", "a.b.c"} {
		t.Run(name, func(t *testing.T) {
			_, err := team.NewTeam(name, member())
			assert.NoError(t, err)
		})
	}
}

// panicAgent panics in Call, as a buggy member agent would.
type panicAgent struct{ name string }

func (a panicAgent) Name() string { return a.name }
func (a panicAgent) Role() string { return "panics" }
func (a panicAgent) Call(context.Context, string, *team.AgentSession) (*team.Answer, error) {
	panic("member bug: nil map")
}

// finalEvent returns the last event, failing the test if there is none.
func finalEvent(t *testing.T, evs []team.Event) team.Event {
	t.Helper()
	require.NotEmpty(t, evs)
	return evs[len(evs)-1]
}

// A supervisor that keeps naming a stranger, with a default member to fall back to,
// would route forever: max turns ends it, with the decisions saying so.
func TestSupervisorStrangerForeverEndsAtMaxTurns(t *testing.T) {
	sup := testkit.NewScriptedModel().When(func(*team.ChatRequest) bool { return true },
		testkit.CallTools(testkit.ToolCall("s", team.RouteToolName, `{"to":"ghost"}`)))
	b := testkit.NewFixedAgent("b", "B")
	tm, _ := ttTeam(t, "stranger", team.WithMembers(testkit.NewFixedAgent("a", "A"), b),
		team.WithProtocol(team.Supervisor), team.WithSupervisorModel(sup), team.WithDefaultMember("b"),
		team.WithMaxTurns(3))
	sess := team.NewSession("stranger-1")
	ans, err := tm.Call(context.Background(), "go", sess)
	require.NoError(t, err)
	assert.Equal(t, "B", ans.Content)
	tr := tm.Trace(sess.Context())
	assert.Equal(t, []string{"b", "b", "b"}, tr.Route)
	assert.Equal(t, 3, tr.Turns)
	assert.Equal(t, 3, sup.Calls(), "the supervisor is not asked once max turns is reached")
	require.NotNil(t, tr.LastDecision)
	assert.Equal(t, "finish:/rule/max_turns", ttDecisions(tr)[len(tr.Decisions)-1])
	for _, d := range tr.Decisions[:3] {
		assert.True(t, d.Unresolved, "every stranger is recorded as unresolved: %+v", d)
		assert.Contains(t, d.Raw, "ghost")
	}
}

// A team whose max turns exceed the engine's step limit is ended by the step limit,
// with an error callers can branch on, and a failed TeamEnd closes the stream.
func TestSupervisorStepLimitEndsRun(t *testing.T) {
	sup := testkit.NewScriptedModel().When(func(*team.ChatRequest) bool { return true }, ttRouteTo("s", "a"))
	tm, _ := ttTeam(t, "endless", team.WithMembers(testkit.NewFixedAgent("a", "A")),
		team.WithProtocol(team.Supervisor), team.WithSupervisorModel(sup), team.WithMaxTurns(1000),
		team.WithEngineOptions(flow.WithMaxSteps(20)))
	sess := team.NewSession("endless-1")
	evs, err := testkit.Events(context.Background(), tm, "go", sess)
	require.Error(t, err)
	assert.ErrorIs(t, err, flow.ErrStepLimit)
	last := finalEvent(t, evs)
	assert.Equal(t, team.EventTeamEnd, last.Kind)
	assert.Equal(t, team.TeamFailed, last.Status)
	tr := tm.Trace(sess.Context())
	assert.Equal(t, team.TeamFailed, tr.Status)
	assert.Less(t, tr.Turns, 1000)
}

// Two swarm members that hand the conversation to each other forever: the handoffs
// are bounded and the team finishes with the last answer.
func TestSwarmHandoffCycle(t *testing.T) {
	a := testkit.NewFixedAgent("a", "not mine\ntransfer_to: b")
	b := testkit.NewFixedAgent("b", "not mine either\ntransfer_to: a")
	tm, _ := ttTeam(t, "ping", team.WithMembers(a, b), team.WithProtocol(team.Swarm), team.WithMaxTurns(4))
	sess := team.NewSession("ping-1")
	evs, err := testkit.Events(context.Background(), tm, "who owns this?", sess)
	require.NoError(t, err)
	tr := tm.Trace(sess.Context())
	assert.Equal(t, []string{"a", "b", "a", "b"}, tr.Route)
	assert.Equal(t, 3, tr.State.Transfers)
	assert.Equal(t, team.ReasonMaxTurns, tr.State.Halt)
	assert.Equal(t, "finish:/rule/max_turns", ttDecisions(tr)[len(tr.Decisions)-1])
	last := finalEvent(t, evs)
	assert.Equal(t, team.EventTeamEnd, last.Kind)
	assert.Equal(t, team.TeamCompleted, last.Status)
	ttCheckSymmetry(t, evs)

	// Without WithMaxTurns, the default (10) bounds the cycle.
	tm2, _ := ttTeam(t, "ping2", team.WithMembers(a, b), team.WithProtocol(team.Swarm))
	sess2 := team.NewSession("ping-2")
	_, err = tm2.Call(context.Background(), "who owns this?", sess2)
	require.NoError(t, err)
	tr2 := tm2.Trace(sess2.Context())
	assert.Len(t, tr2.Route, 10)
	assert.Equal(t, team.ReasonMaxTurns, tr2.State.Halt)
}

// A member that panics fails the team like a member that returns an error: the run
// fails with an error naming the panic, the trace records the failed turn, the
// member's node start has its end and the stream ends with a failed TeamEnd.
func TestMemberPanics(t *testing.T) {
	for _, proto := range []team.Protocol{team.Sequential, team.Parallel} {
		t.Run(string(proto), func(t *testing.T) {
			opts := []team.Option{team.WithProtocol(proto),
				team.WithMembers(testkit.NewFixedAgent("a", "A"), panicAgent{"p"}, testkit.NewFixedAgent("c", "C"))}
			if proto == team.Parallel {
				opts = append(opts, team.WithBranchPolicy(flow.ContinueOnError))
			}
			tm, _ := ttTeam(t, "buggy", opts...)
			sess := team.NewSession("buggy-" + string(proto))
			evs, err := testkit.Events(context.Background(), tm, "go", sess)
			tr := tm.Trace(sess.Context())
			require.NotNil(t, tr)
			var rec *team.TeamRecord
			for i := range tr.Records {
				if tr.Records[i].Source == "p" {
					rec = &tr.Records[i]
				}
			}
			require.NotNil(t, rec, "the panicking member's turn is recorded: %+v", tr.Records)
			assert.Equal(t, team.RunFailed, rec.Status)
			require.NotNil(t, rec.Error)
			assert.Contains(t, rec.Error.Message, "panic")
			if proto == team.Sequential {
				require.Error(t, err)
				assert.ErrorIs(t, err, flow.ErrTaskPanic, "the engine reports the panic as any task panic")
				assert.Equal(t, team.TeamFailed, tr.Status)
				last := finalEvent(t, evs)
				assert.Equal(t, team.EventTeamEnd, last.Kind)
				assert.Equal(t, team.TeamFailed, last.Status)
			} else {
				require.NoError(t, err)
				assert.Contains(t, tr.FinalAnswer, "[p] failed:")
			}
			ttCheckSymmetry(t, evs)
		})
	}
}

// A member failing mid-team with a fatal error: the error reaches the caller with its
// type, the execution error record names the member's node, the fallback state a
// policy declares is in the context, and the stream ends with a failed TeamEnd.
func TestMemberFailsWithFallbackState(t *testing.T) {
	policy := func(_ context.Context, _ *flow.Context, n *flow.Node, _ error, def flow.ErrorDecision) flow.ErrorDecision {
		if n.ID == "checker" {
			def.Fallback = map[string]any{"check.status": "fallback"}
		}
		return def
	}
	c := testkit.NewFixedAgent("c", "C")
	tm, _ := ttTeam(t, "fatal", team.WithMembers(testkit.NewFixedAgent("a", "A"),
		testkit.FailingWith("checker", team.TypeAuthDenied, "token expired"), c),
		team.WithEngineOptions(flow.WithErrorPolicy(policy)))
	sess := team.NewSession("fatal-1")
	evs, err := testkit.Events(context.Background(), tm, "go", sess)
	require.Error(t, err)
	assert.ErrorIs(t, err, team.ErrAuthDenied)
	assert.Empty(t, c.Prompts(), "the member after a fatal failure does not run")
	assert.Equal(t, "fallback", sess.Context().Value("check.status"))
	recs := flow.ExecutionErrors(sess.Context(), flow.DefaultErrorKey)
	require.Len(t, recs, 1)
	assert.Equal(t, "checker", recs[0].NodeID)
	assert.Equal(t, string(team.TypeAuthDenied), recs[0].Error.Code)
	last := finalEvent(t, evs)
	assert.Equal(t, team.EventTeamEnd, last.Kind)
	assert.Equal(t, team.TeamFailed, last.Status)
	require.NotNil(t, last.Error)
	assert.Equal(t, team.TypeAuthDenied, last.Error.Type)
	ttCheckSymmetry(t, evs)
}

// A recoverable failure of a swarm member must not make the swarm call the same
// failing member again and again: the failed turn counts, and the swarm finishes.
func TestSwarmMemberRecoverableFailure(t *testing.T) {
	bad := testkit.NewFailingAgent("b", flow.MarkRecoverable(errors.New("flaky backend")))
	a := testkit.NewFixedAgent("a", "transfer_to: b")
	tm, _ := ttTeam(t, "sw", team.WithMembers(a, bad), team.WithProtocol(team.Swarm), team.WithMaxTurns(6))
	sess := team.NewSession("sw-1")
	evs, err := testkit.Events(context.Background(), tm, "go", sess)
	require.NoError(t, err)
	tr := tm.Trace(sess.Context())
	failed := 0
	for _, r := range tr.Records {
		if r.Source == "b" && r.Status == team.RunFailed {
			failed++
		}
	}
	assert.Equal(t, 1, failed, "a recovered failure ends the holder's turn; it is not retried by routing")
	assert.Equal(t, []string{"a", "b"}, tr.Route)
	assert.Equal(t, []string{"route:a/protocol", "route:b/text", "finish:/rule/member_failed"}, ttDecisions(tr))
	assert.Equal(t, team.TeamCompleted, tr.Status)
	assert.Equal(t, "transfer_to: b\n\n[b] failed: agent_error: flaky backend", tr.FinalAnswer,
		"the last answer stands, with a note that the member holding the conversation failed")
	ttCheckSymmetry(t, evs)
}

// Cancelling the context while a member works fails the team with a cancellation
// error and still ends the stream with a failed TeamEnd.
func TestCancelMidTeam(t *testing.T) {
	slow := testkit.NewSlowAgent("slow", "never")
	after := testkit.NewFixedAgent("after", "X")
	tm, _ := ttTeam(t, "cancel", team.WithMembers(testkit.NewFixedAgent("a", "A"), slow, after))
	sess := team.NewSession("cancel-1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-slow.Started()
		cancel()
	}()
	var evs []team.Event
	var runErr error
	for ev, err := range team.Stream(ctx, tm, "go", sess) {
		if err != nil {
			runErr = err
			continue
		}
		evs = append(evs, ev)
	}
	require.Error(t, runErr)
	assert.True(t, errors.Is(runErr, context.Canceled) || errors.Is(runErr, team.ErrCancelled), "got %v", runErr)
	assert.Empty(t, after.Prompts())
	last := finalEvent(t, evs)
	assert.Equal(t, team.EventTeamEnd, last.Kind)
	assert.Equal(t, team.TeamFailed, last.Status)
	tr := tm.Trace(sess.Context())
	assert.Equal(t, team.TeamFailed, tr.Status)
	ttCheckSymmetry(t, evs)
}

// Breaking out of a parallel team's stream while members are running cancels them;
// nothing is left running (goleak checks) and nothing deadlocks.
func TestStreamBreakParallel(t *testing.T) {
	s1, s2 := testkit.NewSlowAgent("s1", "one"), testkit.NewSlowAgent("s2", "two")
	tm, _ := ttTeam(t, "par", team.WithProtocol(team.Parallel), team.WithMembers(s1, s2, testkit.NewFixedAgent("f", "F")))
	for _, stopAt := range []team.EventKind{team.EventTeamStart, team.EventNodeStart, team.EventRunStart} {
		n := 0
		for ev, err := range team.Stream(context.Background(), tm, "go", team.NewSession("par-"+string(stopAt))) {
			require.NoError(t, err)
			n++
			if ev.Kind == stopAt {
				break
			}
		}
		assert.Positive(t, n)
	}
}

// The error of a failed team names the team and keeps the member's structured error.
func TestTeamErrorKeepsMemberType(t *testing.T) {
	tm, _ := ttTeam(t, "wrap", team.WithMembers(testkit.FailingWith("m", team.TypeRateLimited, "slow down")))
	_, err := tm.Call(context.Background(), "go", team.NewSession("wrap-1"))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `team "wrap"`), err.Error())
	var e *team.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, team.TypeRateLimited, e.Type)
	assert.True(t, e.Retryable())
}

// Two resumes of one suspended team in one session at the same time: the member's
// approved call runs once, the member's model is not asked a second question, and the
// loser is told there is nothing to resume.
func TestTeamConcurrentResumeSameSession(t *testing.T) {
	payer, p := newBlockingPayer(t, "payer")
	tm, _ := ttTeam(t, "billing", team.WithMembers(payer, testkit.NewFixedAgent("after", "filed")))
	sess := team.NewSession("billing-1")
	ans, err := tm.Call(context.Background(), "pay the bill", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.NoError(t, sess.Decide("payer", team.Approve("p1")))

	var wg sync.WaitGroup
	errs := make([]error, 2)
	answers := make([]*team.Answer, 2)
	for i := range 2 {
		wg.Go(func() { answers[i], errs[i] = tm.Resume(context.Background(), sess) })
	}
	<-p.started
	close(p.release)
	wg.Wait()
	assert.EqualValues(t, 1, p.runs.Load(), "the approved call ran once")
	assert.Equal(t, 2, p.model.Calls(), "the member's model was asked once before and once after the call")
	wins := 0
	for i, err := range errs {
		if err == nil {
			wins++
			assert.Equal(t, "filed", answers[i].Content)
			continue
		}
		assert.ErrorIs(t, err, flow.ErrNotResumable)
	}
	assert.Equal(t, 1, wins)
	tr := tm.Trace(sess.Context())
	assert.Equal(t, team.TeamCompleted, tr.Status)
	assert.Equal(t, []string{"payer", "after"}, tr.Route)
}

// A member named like the finish marker could never be routed to (the supervisor's
// "finish" would always win): the team refuses to build.
func TestMemberNamedLikeFinishMarker(t *testing.T) {
	for _, tc := range []struct {
		member string
		opts   []team.Option
	}{
		{"FINISH", nil},
		{"finish", nil},
		{"DONE", []team.Option{team.WithFinishMarker("done")}},
	} {
		opts := append([]team.Option{team.WithMembers(testkit.NewFixedAgent(tc.member, "x")),
			team.WithProtocol(team.Supervisor), team.WithSupervisorModel(testkit.NewScriptedModel())}, tc.opts...)
		_, err := team.NewTeam("t", opts...)
		require.Error(t, err, tc.member)
		assert.Contains(t, err.Error(), "finish", tc.member)
	}
}

// A swarm member hands over with the transfer tool, then asks for a sensitive call
// and waits for a human. Resumed (in a session restored from JSON, as another process
// would), the member answers: the team goes to the member it handed over to, as it
// would have without the pause, instead of finishing with no_handoff. A transfer the
// human skipped hands over to nobody.
func TestSwarmHandoffSurvivesHITLPause(t *testing.T) {
	swarm := func(t *testing.T, transfer team.Tool, am team.ChatModel) *team.TeamAgent {
		a, err := team.NewReActAgent("a", am, team.WithTools(transfer, (&toolbox{}).remove()))
		require.NoError(t, err)
		b, err := team.NewReActAgent("b", testkit.NewScriptedModel(testkit.Reply("b answers")))
		require.NoError(t, err)
		tm, _ := ttTeam(t, "sw", team.WithProtocol(team.Swarm), team.WithMembers(a, b))
		return tm
	}
	t.Run("transferred before the pause", func(t *testing.T) {
		tm := swarm(t, team.TransferTool(), testkit.NewScriptedModel(
			testkit.CallTools(testkit.ToolCall("t1", team.TransferToolName, `{"to":"b","reason":"b knows"}`)),
			testkit.CallTools(testkit.ToolCall("r1", "remove", `{"path":"/tmp/x"}`)),
			testkit.Reply("over to b")))
		sess := team.NewSession("sw-1")
		ans, err := tm.Call(context.Background(), "go", sess)
		require.NoError(t, err)
		require.NotNil(t, ans.Pending)
		data, err := team.MarshalSession(sess)
		require.NoError(t, err)
		sess, err = team.UnmarshalSession(data)
		require.NoError(t, err)
		require.NoError(t, sess.Decide("a", team.Approve("r1")))
		ans, err = tm.Call(context.Background(), "", sess)
		require.NoError(t, err)
		tr := ans.Trace.(*team.TeamTrace)
		assert.Equal(t, "b answers", ans.Content)
		assert.Equal(t, []string{"a", "b"}, tr.Route)
		assert.Equal(t, []string{"route:a/protocol", "route:b/tool", "finish:/protocol/no_handoff"}, ttDecisions(tr))
		assert.Equal(t, "b knows", tr.Decisions[1].Task)
	})
	t.Run("transfer skipped", func(t *testing.T) {
		sensitive := team.TransferTool()
		sensitive.Sensitive = team.Always("handing over needs approval")
		tm := swarm(t, sensitive, testkit.NewScriptedModel(
			testkit.CallTools(testkit.ToolCall("t1", team.TransferToolName, `{"to":"b"}`)),
			testkit.Reply("I keep it")))
		sess := team.NewSession("sw-2")
		ans, err := tm.Call(context.Background(), "go", sess)
		require.NoError(t, err)
		require.NotNil(t, ans.Pending)
		require.NoError(t, sess.Decide("a", team.Skip("t1", map[string]any{"transferred_to": "b"})))
		ans, err = tm.Call(context.Background(), "", sess)
		require.NoError(t, err)
		assert.Equal(t, "I keep it", ans.Content)
		assert.Equal(t, []string{"a"}, ans.Trace.(*team.TeamTrace).Route)
	})
}

// A team resumed with a member's decisions, whose context has ended before the member
// could act on them, keeps the decisions: the next Resume pays once, without asking.
func TestTeamCancelledResumeKeepsDecisions(t *testing.T) {
	var paid []string
	tm := ttPayTeam(t, testkit.NewScriptedModel(ttSupScript()...), testkit.NewScriptedModel(ttPayerScript()...), true, &paid)
	sess := team.NewSession("team-cancel-resume")
	ans, err := tm.Call(context.Background(), "pay invoice 7", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.NoError(t, sess.Decide("payer", team.Approve("p1")))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = tm.Resume(ctx, sess)
	require.Error(t, err)
	assert.Empty(t, paid)
	if p := sess.Pending("payer"); assert.NotNil(t, p, "the payer still waits") {
		assert.Empty(t, p.Calls, "with its decision")
	}

	ans, err = tm.Resume(context.Background(), sess)
	require.NoError(t, err)
	assert.Nil(t, ans.Pending)
	assert.Equal(t, []string{"5000"}, paid)
}

// A supervisor's explicit "route: <member>" line decides, even when its prose also
// holds the finish marker as a word ("not finished yet", "finish the draft"):
// finishing there would end the team's work with a member's task undone.
func TestSupervisorRouteLineBeatsFinishWord(t *testing.T) {
	for name, text := range map[string]string{
		"finished in prose": "The research is not finished yet.\nroute: researcher",
		"finish in a task":  "next: researcher\nAsk them to finish the market numbers.",
	} {
		t.Run(name, func(t *testing.T) {
			sup := testkit.NewScriptedModel(testkit.Reply(text), testkit.Reply("FINISH"))
			researcher := testkit.NewFixedAgent("researcher", "3bn").WithRole("finds facts")
			writer := testkit.NewFixedAgent("writer", "report").WithRole("writes")
			tm, _ := ttTeam(t, "desk", team.WithMembers(researcher, writer), team.WithProtocol(team.Supervisor),
				team.WithSupervisorModel(sup))
			sess := team.NewSession("route-line")
			_, err := tm.Call(context.Background(), "Size the market", sess)
			require.NoError(t, err)
			tr := tm.Trace(sess.Context())
			assert.Equal(t, []string{"researcher"}, tr.Route)
			assert.Equal(t, []string{"route:researcher/text", "finish:/text/finish_marker"}, ttDecisions(tr))
		})
	}
}

// A new team run (another prompt after a failed run) starts its members afresh: a
// member run left waiting by the abandoned run (here: its resume was cancelled) is
// not resumed inside the new one, where its approved call would act for a task
// nobody asked for now.
func TestTeamNewRunDropsStaleMemberRun(t *testing.T) {
	var paid []string
	type payArgs struct {
		Amount int `json:"amount"`
	}
	pay := team.NewTool("pay", "Pay an invoice", nil,
		func(_ context.Context, a payArgs) (string, error) {
			paid = append(paid, fmt.Sprint(a.Amount))
			return "ok", nil
		})
	pay.Sensitive = team.Always("payments need approval")
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("p1", "pay", `{"amount":5000}`)),
		testkit.Reply("invoice 8 is already paid"),
	)
	payer, err := team.NewReActAgent("payer", model, team.WithTools(pay))
	require.NoError(t, err)
	tm, _ := ttTeam(t, "payments", team.WithMembers(payer))
	sess := team.NewSession("stale-member")
	ans, err := tm.Call(context.Background(), "pay invoice 7", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.NoError(t, sess.Decide("payer", team.Approve("p1")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = tm.Resume(ctx, sess)
	require.Error(t, err)
	require.Equal(t, team.TeamFailed, tm.Trace(sess.Context()).Status)

	ans, err = tm.Call(context.Background(), "pay invoice 8", sess)
	require.NoError(t, err)
	assert.Equal(t, "invoice 8 is already paid", ans.Content)
	assert.Empty(t, paid, "invoice 7's approved payment did not run in the run for invoice 8")
	reqs := model.Requests()
	assert.Contains(t, testkit.LastUserMessage(reqs[len(reqs)-1]), "pay invoice 8")
	assert.False(t, team.HasRun(sess, "payer"))
}

// A swarm member's answer that merely starts a line with a word like "Handoffs" or
// "Transferring" hands over to nobody: it finishes with no_handoff, and with a default
// member it is not routed there as if it had named a stranger.
func TestSwarmHandoffWordIsNotAHandoff(t *testing.T) {
	for _, text := range []string{"Handoffs are not needed: your refund is issued.", "Transfer tomorrow is fine: refund issued."} {
		t.Run(text, func(t *testing.T) {
			refunds := testkit.NewFixedAgent("refunds", text)
			billing := testkit.NewFixedAgent("billing", "billing here")
			tm, _ := ttTeam(t, "support", team.WithMembers(refunds, billing), team.WithProtocol(team.Swarm),
				team.WithDefaultMember("billing"))
			sess := team.NewSession("sw-word")
			ans, err := tm.Call(context.Background(), "refund", sess)
			require.NoError(t, err)
			assert.Equal(t, text, ans.Content)
			tr := tm.Trace(sess.Context())
			assert.Equal(t, []string{"refunds"}, tr.Route)
			assert.Equal(t, []string{"route:refunds/protocol", "finish:/protocol/no_handoff"}, ttDecisions(tr))
		})
	}
}

// One Option type configures agents and teams; an option of one kind is refused by
// the other.
func TestOptionsOfOneKindRefusedByTheOther(t *testing.T) {
	_, err := team.NewTeam("t", team.WithMembers(testkit.NewFixedAgent("a", "A")), team.WithMaxSteps(3))
	require.ErrorContains(t, err, "WithMaxSteps is an option of agents")
	_, err = team.NewReActAgent("r", testkit.NewScriptedModel(), team.WithMaxTurns(3))
	require.ErrorContains(t, err, "WithMaxTurns is an option of teams")
	tm, err := team.NewTeam("t", team.WithMembers(testkit.NewFixedAgent("a", "A")), team.WithRole("checks"))
	require.NoError(t, err)
	assert.Equal(t, "checks", tm.Role())
}

// A protocol's options are refused under another protocol, and an unknown protocol is
// refused.
func TestProtocolOptionsBelongToTheirProtocol(t *testing.T) {
	a := testkit.NewFixedAgent("a", "A")
	_, err := team.NewTeam("t", team.WithMembers(a), team.WithBranchPolicy(flow.ContinueOnError))
	require.ErrorContains(t, err, "options of the parallel protocol, not sequential")
	_, err = team.NewTeam("t", team.WithMembers(a), team.WithProtocol(team.Parallel), team.WithEntryMember("a"))
	require.ErrorContains(t, err, "an option of the swarm protocol, not parallel")
	_, err = team.NewTeam("t", team.WithMembers(a), team.WithProtocol("round-robin"))
	require.ErrorContains(t, err, `unknown protocol "round-robin"`)
}
