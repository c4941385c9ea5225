package team_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ttTeam builds a team whose engine records the path.
func ttTeam(t *testing.T, name string, opts ...team.Option) (*team.TeamAgent, *testkit.PathRecorder) {
	t.Helper()
	rec := testkit.NewPathRecorder()
	tm, err := team.NewTeam(name, append(opts, team.WithEngineOptions(flow.WithInterceptor(rec, 0)))...)
	require.NoError(t, err)
	return tm, rec
}

func ttDecisions(tr *team.TeamTrace) []string {
	out := make([]string, len(tr.Decisions))
	for i, d := range tr.Decisions {
		s := d.Action + ":" + d.To + "/" + d.Source
		if d.Reason != "" {
			s += "/" + d.Reason
		}
		if d.Unresolved {
			s += "/unresolved"
		}
		out[i] = s
	}
	return out
}

func ttRouteTo(id, member string) testkit.Turn {
	return testkit.CallTools(testkit.ToolCall(id, team.RouteToolName, `{"to":"`+member+`"}`))
}

// Sequential: each member once, in order, seeing the answers before it; no model.
func TestTeamSequentialOrder(t *testing.T) {
	a := testkit.NewFixedAgent("analyst", "HIGH").WithRole("rates risk")
	b := testkit.NewFixedAgent("writer", "Risk is HIGH.").WithRole("writes")
	tm, rec := ttTeam(t, "seq", team.WithMembers(a, b))
	sess := team.NewSession("seq-1")
	ans, err := tm.Call(context.Background(), "Assess the loan", sess)
	require.NoError(t, err)

	assert.Equal(t, "Risk is HIGH.", ans.Content)
	testkit.AssertPath(t, rec, "start", "analyst", "writer", "end")
	assert.Equal(t, []string{"Assess the loan"}, a.Prompts())
	assert.Equal(t, []string{"Assess the loan\n\nWork so far:\n[analyst] HIGH"}, b.Prompts())
	tr := tm.Trace(sess.Context())
	require.NotNil(t, tr)
	assert.Equal(t, team.TeamCompleted, tr.Status)
	assert.Equal(t, "sequential", tr.Protocol)
	assert.Equal(t, []string{"analyst", "writer"}, tr.Route)
	assert.Equal(t, 2, tr.Turns)
	assert.Equal(t, "rates risk", tr.Records[0].Role)
	assert.Equal(t, "Risk is HIGH.", sess.Context().Value(team.AnswerKey("seq")))
	assert.Equal(t, "HIGH", sess.Context().Value("analyst.answer"))
}

// Max turns applies to the sequential protocol too (Solon skips it there): the
// members after the limit do not run, and one decision says why.
func TestTeamSequentialMaxTurns(t *testing.T) {
	models := map[string]*testkit.ScriptedModel{}
	var members []team.Agent
	for _, name := range []string{"a", "b", "c"} {
		models[name] = testkit.NewScriptedModel(testkit.Reply(strings.ToUpper(name)).WithUsage(testkit.Tokens(10, 1, 1, 0)))
		m, err := team.NewSimpleAgent(name, models[name])
		require.NoError(t, err)
		members = append(members, m)
	}
	tm, _ := ttTeam(t, "seq", team.WithMembers(members...), team.WithMaxTurns(2))
	sess := team.NewSession("seq-2")
	ans, err := tm.Call(context.Background(), "go", sess)
	require.NoError(t, err)
	assert.Equal(t, "B", ans.Content)
	assert.Equal(t, 0, models["c"].Calls())
	assert.Equal(t, int64(2), ans.Metrics.ThinkTokens)
	tr := tm.Trace(sess.Context())
	assert.Equal(t, []string{"a", "b"}, tr.Route)
	assert.Equal(t, 2, tr.Turns)
	assert.Equal(t, []string{"finish:/rule/max_turns"}, ttDecisions(tr))
	assert.Equal(t, team.ReasonMaxTurns, tr.State.Halt)
	last := tr.Records[len(tr.Records)-1]
	assert.Equal(t, "c", last.Source)
	assert.Equal(t, team.RecordSkipped, last.Status)
}

// The supervisor routes from a tool call and from its text, finishes with the marker,
// and the trace aggregates the metrics of the supervisor and of every member, think
// tokens included.
func TestTeamSupervisorRouting(t *testing.T) {
	sup := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("s1", team.RouteToolName, `{"to":"researcher","task":"find the market size"}`)).
			WithUsage(testkit.Tokens(100, 10, 4, 0)),
		testkit.Reply("writer").WithUsage(testkit.Tokens(120, 2, 0, 0)),
		testkit.Reply("All done: FINISH").WithUsage(testkit.Tokens(130, 1, 0, 0)),
	)
	resModel := testkit.NewScriptedModel(testkit.Reply("The market is 3bn.").WithUsage(testkit.Tokens(50, 20, 7, 10)))
	researcher, err := team.NewSimpleAgent("researcher", resModel, team.WithRole("finds facts"))
	require.NoError(t, err)
	writer := testkit.NewFixedAgent("writer", "Report: the market is 3bn.").WithRole("writes reports")
	tm, rec := ttTeam(t, "desk", team.WithMembers(researcher, writer), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup))
	sess := team.NewSession("desk-1")
	ans, err := tm.Call(context.Background(), "Size the market", sess)
	require.NoError(t, err)

	assert.Equal(t, "Report: the market is 3bn.", ans.Content)
	testkit.AssertPath(t, rec, "start", "supervisor", "route", "researcher", "supervisor", "route", "writer", "supervisor", "route", "end")
	tr := tm.Trace(sess.Context())
	assert.Equal(t, []string{"researcher", "writer"}, tr.Route)
	assert.Equal(t, []string{"route:researcher/tool", "route:writer/text", "finish:/text/finish_marker"}, ttDecisions(tr))
	assert.Equal(t, "find the market size", tr.Decisions[0].Task)
	assert.Equal(t, 2, tr.Turns)
	require.NotNil(t, tr.LastDecision)
	assert.Equal(t, team.ActionFinish, tr.LastDecision.Action)

	// The researcher got its task; the supervisor saw the work so far.
	assert.Contains(t, testkit.LastUserMessage(resModel.Requests()[0]), "Your task: find the market size")
	reqs := sup.Requests()
	require.Len(t, reqs, 3)
	assert.Contains(t, testkit.LastUserMessage(reqs[1]), "[researcher] The market is 3bn.")
	assert.Contains(t, reqs[0].Messages[0].Content, "- writer: writes reports")
	require.Len(t, reqs[0].Tools, 1)
	assert.Equal(t, team.RouteToolName, reqs[0].Tools[0].Name)

	// Metrics: supervisor 3 calls, researcher 1; think tokens from both.
	assert.Equal(t, 3, tr.Supervisor.ModelCalls)
	assert.Equal(t, int64(350), tr.Supervisor.PromptTokens)
	assert.Equal(t, 4, tr.Metrics.ModelCalls)
	assert.Equal(t, int64(400), tr.Metrics.PromptTokens)
	assert.Equal(t, int64(33), tr.Metrics.CompletionTokens)
	assert.Equal(t, int64(11), tr.Metrics.ThinkTokens)
	assert.Equal(t, int64(10), tr.Metrics.CachedTokens)
	assert.Equal(t, int64(7), tr.Members["researcher"].ThinkTokens)
	assert.Equal(t, tr.Metrics, ans.Metrics)
	assert.Equal(t, int64(7), tr.Records[1].Usage.ReasoningTokens)
	assert.Equal(t, team.RecordSupervisor, tr.Records[0].Kind)
}

// Max turns stops a supervisor that never finishes, without another model call.
func TestTeamSupervisorMaxTurns(t *testing.T) {
	sup := testkit.NewScriptedModel().When(func(*team.ChatRequest) bool { return true }, ttRouteTo("s", "a"))
	a := testkit.NewFixedAgent("a", "again")
	tm, rec := ttTeam(t, "loop", team.WithMembers(a, testkit.NewFixedAgent("b", "B")), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup), team.WithMaxTurns(3))
	sess := team.NewSession("loop-1")
	ans, err := tm.Call(context.Background(), "go", sess)
	require.NoError(t, err)
	assert.Equal(t, "again", ans.Content)
	assert.Equal(t, 3, sup.Calls())
	testkit.AssertVisitedTimes(t, rec, "a", 3)
	tr := tm.Trace(sess.Context())
	assert.Equal(t, []string{"a", "a", "a"}, tr.Route)
	assert.Equal(t, "finish:/rule/max_turns", ttDecisions(tr)[3])
	assert.Equal(t, team.ReasonMaxTurns, tr.State.Halt)
}

// The loop detector stops A-B-A-B before the second B runs.
func TestTeamSupervisorLoopDetector(t *testing.T) {
	sup := testkit.NewScriptedModel(ttRouteTo("1", "a"), ttRouteTo("2", "b"), ttRouteTo("3", "a"), ttRouteTo("4", "b"))
	tm, rec := ttTeam(t, "pingpong", team.WithMembers(testkit.NewFixedAgent("a", "A"), testkit.NewFixedAgent("b", "B")),
		team.WithProtocol(team.Supervisor), team.WithSupervisorModel(sup), team.WithLoopDetection(2))
	sess := team.NewSession("pp-1")
	ans, err := tm.Call(context.Background(), "go", sess)
	require.NoError(t, err)
	assert.Equal(t, "A", ans.Content)
	testkit.AssertVisitedTimes(t, rec, "b", 1)
	tr := tm.Trace(sess.Context())
	assert.Equal(t, []string{"a", "b", "a"}, tr.Route)
	d := tr.Decisions[3]
	assert.Equal(t, team.ActionFinish, d.Action)
	assert.Equal(t, team.ReasonLoop, d.Reason)
	assert.Equal(t, "b", d.Raw)
}

// An unresolvable decision is recorded with what the model said, and replaced by the
// fallback: finish with the last answer, or route to the default member.
func TestTeamSupervisorUnresolved(t *testing.T) {
	t.Run("finish", func(t *testing.T) {
		sup := testkit.NewScriptedModel(ttRouteTo("1", "a"), testkit.Reply("Either a or b could help."))
		tm, _ := ttTeam(t, "u", team.WithMembers(testkit.NewFixedAgent("a", "A"), testkit.NewFixedAgent("b", "B")),
			team.WithProtocol(team.Supervisor), team.WithSupervisorModel(sup))
		sess := team.NewSession("u-1")
		ans, err := tm.Call(context.Background(), "go", sess)
		require.NoError(t, err)
		assert.Equal(t, "A", ans.Content)
		tr := tm.Trace(sess.Context())
		assert.Equal(t, []string{"route:a/tool", "finish:/fallback/unresolved/unresolved"}, ttDecisions(tr))
		assert.Equal(t, "Either a or b could help.", tr.LastDecision.Raw)
	})
	t.Run("default member", func(t *testing.T) {
		sup := testkit.NewScriptedModel(
			testkit.CallTools(testkit.ToolCall("1", team.RouteToolName, `{"to":"carol"}`)),
			testkit.Reply("FINISH"))
		b := testkit.NewFixedAgent("b", "B")
		tm, _ := ttTeam(t, "u", team.WithMembers(testkit.NewFixedAgent("a", "A"), b),
			team.WithProtocol(team.Supervisor), team.WithSupervisorModel(sup), team.WithDefaultMember("b"))
		sess := team.NewSession("u-2")
		ans, err := tm.Call(context.Background(), "go", sess)
		require.NoError(t, err)
		assert.Equal(t, "B", ans.Content)
		tr := tm.Trace(sess.Context())
		assert.Equal(t, []string{"route:b/fallback/unresolved/unresolved", "finish:/text/finish_marker"}, ttDecisions(tr))
		assert.Contains(t, tr.Decisions[0].Raw, "carol")
	})
	t.Run("finish with answer", func(t *testing.T) {
		sup := testkit.NewScriptedModel(ttRouteTo("1", "a"),
			testkit.CallTools(testkit.ToolCall("2", team.RouteToolName, `{"to":"FINISH","answer":"A, checked"}`)))
		tm, _ := ttTeam(t, "u", team.WithMembers(testkit.NewFixedAgent("a", "A")),
			team.WithProtocol(team.Supervisor), team.WithSupervisorModel(sup))
		ans, err := tm.Call(context.Background(), "go", team.NewSession("u-3"))
		require.NoError(t, err)
		assert.Equal(t, "A, checked", ans.Content)
	})
}

// Swarm: members hand over with the transfer tool or a transfer line; the member that
// answers without handing over finishes.
func TestTeamSwarmHandoffs(t *testing.T) {
	triageModel := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("t0", team.TransferToolName, `{"to":"accounts"}`)),
		testkit.CallTools(testkit.ToolCall("t1", team.TransferToolName, `{"to":"billing","reason":"refund request"}`)),
		testkit.Reply("Passing you to billing."),
	)
	triage, err := team.NewReActAgent("triage", triageModel, team.WithTools(team.TransferTool()))
	require.NoError(t, err)
	billing := testkit.NewFixedAgent("billing", "This is for refunds.\ntransfer_to: refunds")
	refunds := testkit.NewFixedAgent("refunds", "Refund issued.")
	tm, rec := ttTeam(t, "support", team.WithMembers(triage, billing, refunds), team.WithProtocol(team.Swarm))
	sess := team.NewSession("sw-1")
	ans, err := tm.Call(context.Background(), "I want my money back", sess)
	require.NoError(t, err)
	assert.Equal(t, "Refund issued.", ans.Content)
	testkit.AssertPath(t, rec, "start", "route", "triage", "route", "billing", "route", "refunds", "route", "end")
	tr := tm.Trace(sess.Context())
	assert.Equal(t, []string{"triage", "billing", "refunds"}, tr.Route)
	assert.Equal(t, []string{"route:triage/protocol", "route:billing/tool", "route:refunds/text", "finish:/protocol/no_handoff"}, ttDecisions(tr))
	assert.Equal(t, "triage", tr.Decisions[1].From)
	assert.Equal(t, "refund request", tr.Decisions[1].Task)
	assert.Equal(t, 2, tr.State.Transfers)
	assert.Contains(t, billing.Prompts()[0], "Your task: refund request")

	// The transfer tool refuses strangers, as an observation the model can correct.
	reqs := triageModel.Requests()
	require.Len(t, reqs, 3)
	obs := observation(t, reqs[1].Messages[len(reqs[1].Messages)-1])
	require.False(t, obs.OK())
	assert.Equal(t, team.TypeInvalidArguments, obs.Error.Type)
	assert.Contains(t, obs.Error.Message, "members: triage, billing, refunds")
	assert.True(t, observation(t, reqs[2].Messages[len(reqs[2].Messages)-1]).OK())
}

func TestTeamSwarmBounds(t *testing.T) {
	ping := testkit.NewFixedAgent("a", "transfer_to: b")
	pong := testkit.NewFixedAgent("b", "transfer_to: a")
	t.Run("max turns", func(t *testing.T) {
		tm, _ := ttTeam(t, "pp", team.WithMembers(ping, pong), team.WithMaxTurns(3),
			team.WithProtocol(team.Swarm), team.WithEntryMember("b"))
		sess := team.NewSession("pp-2")
		ans, err := tm.Call(context.Background(), "go", sess)
		require.NoError(t, err)
		assert.Equal(t, "transfer_to: a", ans.Content)
		tr := tm.Trace(sess.Context())
		assert.Equal(t, []string{"b", "a", "b"}, tr.Route)
		assert.Equal(t, team.ReasonMaxTurns, tr.LastDecision.Reason)
		assert.Equal(t, team.ReasonMaxTurns, tr.State.Halt)
	})
	t.Run("unresolved", func(t *testing.T) {
		lost := testkit.NewFixedAgent("a", "transfer_to: nobody")
		tm, _ := ttTeam(t, "pp", team.WithMembers(lost, pong), team.WithProtocol(team.Swarm))
		sess := team.NewSession("pp-3")
		ans, err := tm.Call(context.Background(), "go", sess)
		require.NoError(t, err)
		assert.Equal(t, "transfer_to: nobody", ans.Content)
		tr := tm.Trace(sess.Context())
		assert.Equal(t, []string{"route:a/protocol", "finish:/fallback/unresolved/unresolved"}, ttDecisions(tr))
		assert.Equal(t, "transfer_to: nobody", tr.LastDecision.Raw)
	})
}

// Parallel: members run on a parallel gateway; the coordinator merges in member order.
func TestTeamParallelMerge(t *testing.T) {
	tm, rec := ttTeam(t, "fan", team.WithProtocol(team.Parallel), team.WithMembers(
		testkit.NewFixedAgent("market", "3bn"), testkit.NewFixedAgent("legal", "no issues"), testkit.NewFixedAgent("tech", "feasible")))
	sess := team.NewSession("fan-1")
	ans, err := tm.Call(context.Background(), "Evaluate", sess)
	require.NoError(t, err)
	assert.Equal(t, "[market] 3bn\n\n[legal] no issues\n\n[tech] feasible", ans.Content)
	testkit.Expect(t, rec).InOrder("start", "fork", "market", "join", "merge", "end").InOrder("fork", "legal", "join").InOrder("fork", "tech", "join")
	tr := tm.Trace(sess.Context())
	assert.ElementsMatch(t, []string{"market", "legal", "tech"}, tr.Route)
	branches := map[string]bool{}
	for _, r := range tr.MemberRecords() {
		branches[r.Branch] = true
	}
	assert.Len(t, branches, 3, "each member on its own branch")
	assert.Equal(t, team.RecordCoordinator, tr.Records[len(tr.Records)-1].Kind)
}

// One failing member under both branch policies: fail-fast fails the team; continue
// lets the others finish and the coordinator report the gap.
func TestTeamParallelOneFailing(t *testing.T) {
	members := func() []team.Agent {
		return []team.Agent{
			testkit.NewFixedAgent("market", "3bn"),
			testkit.FailingWith("patents", team.TypeTimeout, "patent office timed out"),
			testkit.NewFixedAgent("legal", "no issues"),
		}
	}
	t.Run("fail-fast", func(t *testing.T) {
		var evs []team.Event
		tm, _ := ttTeam(t, "fan", team.WithProtocol(team.Parallel), team.WithMembers(members()...))
		sess := team.NewSession("ff-1")
		var runErr error
		for ev, err := range team.Stream(context.Background(), tm, "Evaluate", sess) {
			if err != nil {
				runErr = err
				continue
			}
			evs = append(evs, ev)
		}
		require.Error(t, runErr)
		assert.ErrorIs(t, runErr, team.ErrTimeout)
		var ne *flow.NodeError
		require.ErrorAs(t, runErr, &ne)
		assert.Equal(t, "patents", ne.Node)
		tr := tm.Trace(sess.Context())
		assert.Equal(t, team.TeamFailed, tr.Status)
		require.NotNil(t, tr.Error)
		assert.Equal(t, team.TypeTimeout, tr.Error.Type)
		end := evs[len(evs)-1]
		assert.Equal(t, team.EventTeamEnd, end.Kind)
		assert.Equal(t, team.TeamFailed, end.Status)
	})
	t.Run("continue", func(t *testing.T) {
		tm, _ := ttTeam(t, "fan", team.WithMembers(members()...),
			team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError))
		sess := team.NewSession("ct-1")
		ans, err := tm.Call(context.Background(), "Evaluate", sess)
		require.NoError(t, err)
		assert.Equal(t, "[market] 3bn\n\n[patents] failed: timeout: patent office timed out\n\n[legal] no issues", ans.Content)
		tr := tm.Trace(sess.Context())
		assert.Equal(t, team.TeamCompleted, tr.Status)
		assert.Equal(t, 3, tr.Turns)
		fails, ok := flow.GetAs[[]flow.BranchFailure](sess.Context(), flow.KeyBranchFailures)
		require.True(t, ok)
		require.Len(t, fails, 1)
		assert.Equal(t, "patents", fails[0].Node)
	})
	t.Run("continue with a coordinator model", func(t *testing.T) {
		coord := testkit.NewScriptedModel(testkit.Reply("Market 3bn, no legal issues; patents unknown (timeout).").WithUsage(testkit.Tokens(40, 12, 3, 0)))
		tm, _ := ttTeam(t, "fan", team.WithMembers(members()...), team.WithSupervisorModel(coord),
			team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError))
		sess := team.NewSession("ct-2")
		ans, err := tm.Call(context.Background(), "Evaluate", sess)
		require.NoError(t, err)
		assert.Equal(t, "Market 3bn, no legal issues; patents unknown (timeout).", ans.Content)
		assert.Contains(t, testkit.LastUserMessage(coord.Requests()[0]), "[patents] failed: timeout")
		assert.Equal(t, int64(3), ans.Metrics.ThinkTokens)
	})
	t.Run("all fail", func(t *testing.T) {
		tm, _ := ttTeam(t, "fan", team.WithMembers(testkit.FailingWith("x", team.TypeNotFound, "gone"), testkit.FailingWith("y", team.TypeNotFound, "gone")),
			team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError))
		_, err := tm.Call(context.Background(), "Evaluate", team.NewSession("ct-3"))
		require.Error(t, err)
		assert.ErrorIs(t, err, flow.ErrAllBranchesFailed)
	})
}

// Max turns under Parallel admits the first members in member order.
func TestTeamParallelMaxTurns(t *testing.T) {
	c := testkit.NewFixedAgent("c", "C")
	tm, _ := ttTeam(t, "fan", team.WithProtocol(team.Parallel), team.WithMaxTurns(2),
		team.WithMembers(testkit.NewFixedAgent("a", "A"), testkit.NewFixedAgent("b", "B"), c))
	ans, err := tm.Call(context.Background(), "go", team.NewSession("pm-1"))
	require.NoError(t, err)
	assert.Empty(t, c.Prompts())
	assert.Equal(t, "[a] A\n\n[b] B\n\n[c] skipped (max_turns)", ans.Content)
}

func TestNewTeamErrors(t *testing.T) {
	a := testkit.NewFixedAgent("a", "A")
	for name, opts := range map[string][]team.Option{
		"no members":          nil,
		"duplicate member":    {team.WithMembers(a, testkit.NewFixedAgent("a", "again"))},
		"reserved name":       {team.WithMembers(testkit.NewFixedAgent("supervisor", "x"))},
		"bad name":            {team.WithMembers(testkit.NewFixedAgent(`a"b`, "x"))},
		"supervisor no model": {team.WithMembers(a), team.WithProtocol(team.Supervisor)},
		"unknown default":     {team.WithMembers(a), team.WithDefaultMember("zed")},
		"unknown entry":       {team.WithMembers(a), team.WithProtocol(team.Swarm), team.WithEntryMember("zed")},
		"bad adjuster": {team.WithMembers(a), team.WithGraphAdjuster(func(s *flow.GraphSpec) {
			s.NodeByID("a").LinkTo("nowhere")
		})},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := team.NewTeam("t", opts...)
			assert.Error(t, err)
		})
	}
}

// A model failure of the supervisor fails the team with the model's structured error.
func TestTeamSupervisorModelFailure(t *testing.T) {
	sup := testkit.NewScriptedModel(testkit.FailWith(team.TypeRateLimited))
	tm, _ := ttTeam(t, "desk", team.WithMembers(testkit.NewFixedAgent("a", "A")), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup))
	sess := team.NewSession("f-1")
	_, err := tm.Call(context.Background(), "go", sess)
	require.Error(t, err)
	assert.True(t, errors.Is(err, team.ErrRateLimited), err.Error())
	assert.True(t, strings.Contains(err.Error(), "supervisor"), err.Error())
	assert.Equal(t, team.TeamFailed, tm.Trace(sess.Context()).Status)
}

// WithAnswerFrom makes a member's last answer the team's, whoever spoke last.
func TestTeamAnswerFrom(t *testing.T) {
	tm, _ := ttTeam(t, "pub", team.WithMembers(testkit.NewFixedAgent("writer", "the brief"), testkit.NewFixedAgent("reviewer", "APPROVED")),
		team.WithAnswerFrom("writer"))
	ans, err := tm.Call(context.Background(), "go", team.NewSession("af-1"))
	require.NoError(t, err)
	assert.Equal(t, "the brief", ans.Content)
	_, err = team.NewTeam("pub", team.WithMembers(testkit.NewFixedAgent("writer", "x")), team.WithAnswerFrom("editor"))
	assert.Error(t, err)
}

// A sequential team whose answering member fails, the failure recovered by an error
// policy, completes; its answer says that member failed instead of passing an earlier
// member's answer off as the team's. A member that failed before the one that answers
// leaves the answer alone (the trace has its failed record).
func TestSequentialRecoveredFailureOfAnsweringMember(t *testing.T) {
	down := func(name string) *testkit.FailingAgent {
		return testkit.NewFailingAgent(name, flow.MarkRecoverable(errors.New("writer backend down")))
	}
	for _, tc := range []struct {
		name    string
		members []team.Agent
		opts    []team.Option
		want    string
	}{
		{"last member", []team.Agent{testkit.NewFixedAgent("a", "draft"), down("b")}, nil,
			"draft\n\n[b] failed: agent_error: writer backend down"},
		{"only member", []team.Agent{down("b")}, nil, "[b] failed: agent_error: writer backend down"},
		{"answer-from member", []team.Agent{down("a"), testkit.NewFixedAgent("b", "notes")},
			[]team.Option{team.WithAnswerFrom("a")}, "notes\n\n[a] failed: agent_error: writer backend down"},
		{"earlier member", []team.Agent{down("a"), testkit.NewFixedAgent("b", "final")}, nil, "final"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm, _ := ttTeam(t, "seq", append(tc.opts, team.WithMembers(tc.members...))...)
			sess := team.NewSession("seq-failed")
			evs, err := testkit.Events(context.Background(), tm, "write it", sess)
			require.NoError(t, err, "the error policy recovered the failure")
			tr := tm.Trace(sess.Context())
			assert.Equal(t, team.TeamCompleted, tr.Status)
			assert.Equal(t, tc.want, tr.FinalAnswer)
			last := finalEvent(t, evs)
			assert.Equal(t, team.EventTeamEnd, last.Kind)
			assert.Equal(t, tc.want, last.Content)
			ans, err := tm.Call(t.Context(), "write it", team.NewSession("seq-failed-call"))
			require.NoError(t, err)
			assert.Equal(t, tc.want, ans.Content)
		})
	}
}
