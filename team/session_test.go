package team_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The team resume tests run their second half in a new process: the test binary
// re-executed to run only TestTeamChildProcess, with the mode and the store's location
// in the environment.
const (
	ttChildMode  = "FLOWTEAM_TEAMAGENT_CHILD"
	ttChildDir   = "FLOWTEAM_TEAMAGENT_DIR"
	ttChildRedis = "FLOWTEAM_TEAMAGENT_REDIS"
)

// ttReport is what the second process did.
type ttReport struct {
	Pending []string        `json:"pending"`
	Status  string          `json:"status"`
	Answer  string          `json:"answer"`
	Paid    []string        `json:"paid"`
	Trace   *team.TeamTrace `json:"trace"`
}

// ttPayTeam is a supervisor team whose payer asks a human before paying more than 1000
// (when sensitive). Both processes build it the same way; the models hold what is left
// of the script.
func ttPayTeam(t testing.TB, sup, payerModel team.ChatModel, sensitive bool, paid *[]string) *team.TeamAgent {
	type payArgs struct {
		Amount int `json:"amount"`
	}
	pay := team.NewTool("pay", "Pay an invoice", nil,
		func(_ context.Context, a payArgs) (map[string]any, error) {
			*paid = append(*paid, fmt.Sprint(a.Amount))
			return map[string]any{"ok": true}, nil
		})
	if sensitive {
		pay.Sensitive = func(raw json.RawMessage) (bool, string) {
			var a payArgs
			_ = json.Unmarshal(raw, &a)
			return a.Amount > 1000, "payments above 1000 EUR need approval"
		}
	}
	payer, err := team.NewReActAgent("payer", payerModel, team.WithRole("pays invoices"), team.WithTools(pay))
	require.NoError(t, err)
	checker := testkit.NewFixedAgent("checker", "payment checked").WithRole("checks payments")
	tm, err := team.NewTeam("payments", team.WithMembers(payer, checker), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup))
	require.NoError(t, err)
	return tm
}

func ttSupScript() []testkit.Turn {
	return []testkit.Turn{
		testkit.CallTools(testkit.ToolCall("s1", team.RouteToolName, `{"to":"payer","task":"pay invoice 7"}`)).WithUsage(testkit.Tokens(20, 4, 2, 0)),
		ttRouteTo("s2", "checker").WithUsage(testkit.Tokens(30, 4, 0, 0)),
		testkit.Reply("FINISH").WithUsage(testkit.Tokens(40, 1, 0, 0)),
	}
}

func ttPayerScript() []testkit.Turn {
	return []testkit.Turn{
		testkit.CallTools(testkit.ToolCall("p1", "pay", `{"amount":5000}`)).WithUsage(testkit.Tokens(15, 5, 3, 0)),
		testkit.Reply("paid 5000").WithUsage(testkit.Tokens(25, 3, 0, 5)),
	}
}

// ttApprovalTeam is a sequential team with a human approval node added by a graph
// adjuster: it suspends until the variable "approved" is true.
func ttApprovalTeam(t testing.TB) *team.TeamAgent {
	tm, err := team.NewTeam("release", team.WithMembers(
		testkit.NewFixedAgent("drafter", "release notes v2").WithRole("drafts"),
		testkit.NewFixedAgent("reviewer", "notes reviewed").WithRole("reviews")),
		team.WithGraphAdjuster(func(s *flow.GraphSpec) {
			r := s.NodeByID("reviewer")
			r.Links = nil
			r.LinkTo("approve")
			s.Activity("approve").SetTitle("manager approval").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
				if ok, _ := c.GetBool("approved"); !ok {
					c.Suspend("waiting for a manager's approval")
				}
				return nil
			}).LinkTo(team.TeamNodeEnd)
		}))
	require.NoError(t, err)
	return tm
}

// ttNormalize drops what differs between two runs of the same work: ids and times.
func ttNormalize(t testing.TB, tr *team.TeamTrace) *team.TeamTrace {
	t.Helper()
	require.NotNil(t, tr)
	data, err := json.Marshal(tr)
	require.NoError(t, err)
	var c team.TeamTrace
	require.NoError(t, json.Unmarshal(data, &c))
	c.RunID, c.ParentRunID, c.Instance = "", "", ""
	c.Started, c.Segment, c.Active = time.Time{}, time.Time{}, 0
	c.Metrics.Duration, c.Supervisor.Duration = 0, 0
	for k, m := range c.Members {
		m.Duration = 0
		c.Members[k] = m
	}
	for i := range c.Records {
		c.Records[i].Started, c.Records[i].Duration, c.Records[i].RunID = time.Time{}, 0, ""
	}
	return &c
}

func ttRunChild(t *testing.T, mode, dir string, env ...string) ttReport {
	t.Helper()
	return secondProcess[ttReport](t, "^TestTeamChildProcess$", dir, append([]string{ttChildMode + "=" + mode, ttChildDir + "=" + dir}, env...)...)
}

// TestTeamChildProcess is the second process of the resume tests; run on its own it
// does nothing.
func TestTeamChildProcess(t *testing.T) {
	mode := os.Getenv(ttChildMode)
	if mode == "" {
		t.Skip("only runs as the second process of a team resume test")
	}
	dir := os.Getenv(ttChildDir)
	ctx := context.Background()
	rep := ttReport{}
	switch mode {
	case "hitl-file":
		// A new process, new models: only the turns after the pause are scripted.
		sup := testkit.NewScriptedModel(ttSupScript()[1:]...)
		payer := testkit.NewScriptedModel(ttPayerScript()[1:]...)
		tm := ttPayTeam(t, sup, payer, true, &rep.Paid)
		store, err := session.NewFileStore(dir)
		require.NoError(t, err)
		runner := session.NewRunner(tm.Engine(), store)
		snap, err := runner.Load(ctx, "pay-7")
		require.NoError(t, err)
		p := team.SessionOf(flow.NewContextWith("", snap.Vars)).Pending("payer")
		require.NotNil(t, p)
		rep.Pending = callIDs(p)
		updates, err := team.DecideIn(snap.Vars, "payer", team.Approve("p1"))
		require.NoError(t, err)
		res, err := runner.Resume(ctx, "pay-7", updates)
		require.NoError(t, err)
		rep.Status = string(res.Status)
		rep.Trace = tm.Trace(res.Context)
		rep.Answer, _ = res.Context.GetString(team.AnswerKey("payments"))
	case "approval-redis":
		rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(ttChildRedis)})
		defer rdb.Close()
		tm := ttApprovalTeam(t)
		runner := session.NewRunner(tm.Engine(), session.NewRedisStore(rdb))
		snap, err := runner.Load(ctx, "rel-2")
		require.NoError(t, err)
		rep.Pending = []string{snap.Reason}
		res, err := runner.Resume(ctx, "rel-2", map[string]any{"approved": true})
		require.NoError(t, err)
		rep.Status = string(res.Status)
		rep.Trace = tm.Trace(res.Context)
		rep.Answer, _ = res.Context.GetString(team.AnswerKey("release"))
	default:
		t.Fatalf("unknown mode %q", mode)
	}
	data, err := json.Marshal(rep)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "report.json"), data, 0o600))
}

// A team suspended by a member's HITL request is saved by session.Runner in a file
// store, resumed in a new process after the human's decision, and finishes with the
// trace it would have had without the pause.
func TestTeamHITLResumeInNewProcessFromFile(t *testing.T) {
	ctx := context.Background()
	// The same work without a pause: the payment is not sensitive.
	var paid0 []string
	base := ttPayTeam(t, testkit.NewScriptedModel(ttSupScript()...), testkit.NewScriptedModel(ttPayerScript()...), false, &paid0)
	sess0 := team.NewSession("pay-0")
	ans0, err := base.Call(ctx, "Pay invoice 7", sess0)
	require.NoError(t, err)
	require.Equal(t, "payment checked", ans0.Content)
	want := base.Trace(sess0.Context())

	// The first process: runs until the payer waits for a decision.
	dir := t.TempDir()
	var paid []string
	sup := testkit.NewScriptedModel(ttSupScript()[:1]...)
	tm := ttPayTeam(t, sup, testkit.NewScriptedModel(ttPayerScript()[:1]...), true, &paid)
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	runner := session.NewRunner(tm.Engine(), store)
	res, err := runner.Run(ctx, tm.Graph().ID, flow.NewContextWith("pay-7", map[string]any{tm.InputKey(): "Pay invoice 7"}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Empty(t, paid)
	mid := tm.Trace(res.Context)
	assert.Equal(t, team.TeamSuspended, mid.Status)
	assert.Equal(t, "payer", mid.State.Waiting)
	assert.Equal(t, 0, mid.Turns)

	rep := ttRunChild(t, "hitl-file", dir)
	assert.Equal(t, []string{"p1"}, rep.Pending)
	assert.Equal(t, "completed", rep.Status)
	assert.Equal(t, "payment checked", rep.Answer)
	assert.Equal(t, []string{"5000"}, rep.Paid)
	require.NotNil(t, rep.Trace)
	assert.Equal(t, mid.RunID, rep.Trace.RunID, "the run goes on under its id")
	assert.Equal(t, ttNormalize(t, want), ttNormalize(t, rep.Trace))
	assert.Equal(t, int64(5), rep.Trace.Metrics.ThinkTokens)

	snap, err := store.Load(ctx, "pay-7")
	require.NoError(t, err)
	assert.Equal(t, session.StatusCompleted, snap.Status)
}

// A team suspended by the approval node a graph adjuster added is saved in Redis and
// resumed in a new process with the approval; its trace is the unpaused one.
func TestTeamApprovalResumeInNewProcessFromRedis(t *testing.T) {
	ctx := context.Background()
	base := ttApprovalTeam(t)
	sess0 := team.NewSession("rel-1")
	sess0.Context().Set("approved", true)
	ans0, err := base.Call(ctx, "Release v2", sess0)
	require.NoError(t, err)
	require.Equal(t, "notes reviewed", ans0.Content)

	store, mr := testkit.MiniredisStore(t)
	tm := ttApprovalTeam(t)
	runner := session.NewRunner(tm.Engine(), store)
	var evs []team.Event
	sctx := team.WithSink(ctx, func(e team.Event) { evs = append(evs, e) })
	res, err := runner.Run(sctx, tm.Graph().ID, flow.NewContextWith("rel-2", map[string]any{tm.InputKey(): "Release v2"}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	assert.Equal(t, team.EventTeamEnd, last.Kind)
	assert.Equal(t, team.TeamSuspended, last.Status, "a suspended team ends its events too")

	rep := ttRunChild(t, "approval-redis", t.TempDir(), ttChildRedis+"="+mr.Addr())
	assert.Equal(t, []string{"waiting for a manager's approval"}, rep.Pending)
	assert.Equal(t, "completed", rep.Status)
	assert.Equal(t, "notes reviewed", rep.Answer)
	assert.Equal(t, ttNormalize(t, base.Trace(sess0.Context())), ttNormalize(t, rep.Trace))
}

// The same pause without a store: the AgentSession as JSON, decided and resumed with
// Call; the nested team's member waits, and each segment's events are paired.
func TestTeamNestedHITLResumeFromSessionJSON(t *testing.T) {
	ctx := context.Background()
	build := func(sensitive bool, sup []testkit.Turn, payer []testkit.Turn, paid *[]string) *team.TeamAgent {
		inner := ttPayTeam(t, testkit.NewScriptedModel(sup...), testkit.NewScriptedModel(payer...), sensitive, paid)
		outer, err := team.NewTeam("office", team.WithMembers(testkit.NewFixedAgent("clerk", "invoice 7 found"), inner))
		require.NoError(t, err)
		return outer
	}
	var paid0 []string
	base := build(false, ttSupScript(), ttPayerScript(), &paid0)
	sess0 := team.NewSession("off-0")
	_, err := base.Call(ctx, "Settle invoice 7", sess0)
	require.NoError(t, err)

	var paid []string
	first := build(true, ttSupScript()[:1], ttPayerScript()[:1], &paid)
	sess := team.NewSession("off-1")
	evs, err := testkit.Events(context.Background(), first, "Settle invoice 7", sess)
	require.NoError(t, err)
	ttCheckSymmetry(t, evs)
	ans := evs[len(evs)-1].Answer
	require.NotNil(t, ans)
	data, err := team.MarshalSession(sess)
	require.NoError(t, err)

	restored, err := team.UnmarshalSession(data)
	require.NoError(t, err)
	require.NoError(t, restored.Decide("payer", team.Approve("p1")))
	second := build(true, ttSupScript()[1:], ttPayerScript()[1:], &paid)
	_, err = second.Call(ctx, "something else", restored)
	assert.ErrorIs(t, err, team.ErrPending)
	evs2, err := testkit.Events(context.Background(), second, "", restored)
	require.NoError(t, err)
	ttCheckSymmetry(t, evs2)
	assert.Equal(t, team.EventTeamStart, evs2[0].Kind)
	assert.Equal(t, team.TeamResumed, evs2[0].Status)
	end := evs2[len(evs2)-1]
	assert.Equal(t, team.EventTeamEnd, end.Kind)
	assert.Equal(t, team.TeamCompleted, end.Status)
	assert.Equal(t, []string{"5000"}, paid)
	assert.Equal(t, ttNormalize(t, base.Trace(sess0.Context())), ttNormalize(t, second.Trace(restored.Context())))
	assert.Equal(t, ttNormalize(t, team.TraceOf(sess0.Context().Vars(), "payments")), ttNormalize(t, team.TraceOf(restored.Context().Vars(), "payments")))
}

// A suspended team answers with who waits: the member's calls, or the team itself for
// an approval node.
func TestTeamPendingAnswer(t *testing.T) {
	ctx := context.Background()
	var paid []string
	tm := ttPayTeam(t, testkit.NewScriptedModel(ttSupScript()[:1]...), testkit.NewScriptedModel(ttPayerScript()[:1]...), true, &paid)
	ans, err := tm.Call(ctx, "Pay", team.NewSession("pp-1"))
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	assert.Equal(t, "payer", ans.Pending.Agent)
	assert.Equal(t, []string{"p1"}, callIDs(ans.Pending))

	ap := ttApprovalTeam(t)
	ans, err = ap.Call(ctx, "Release", team.NewSession("pp-2"))
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	assert.Equal(t, "release", ans.Pending.Agent)
	assert.Equal(t, "team.release:approve", ans.Pending.Node)
	assert.Empty(t, ans.Pending.Calls)
	_, err = ap.Resume(ctx, team.NewSession("pp-3"))
	assert.True(t, errors.Is(err, flow.ErrNotResumable), "nothing to resume: %v", err)
}

// A suspended team answers with its own member's waiting calls: not those of an agent
// outside the team that waits in the same session (first in name order), and not a
// member whose calls are all decided while another member's still need a decision.
func TestTeamPendingAnswerNamesWhoMustDecide(t *testing.T) {
	ctx := context.Background()
	outsider := func(sess *team.AgentSession) {
		a := hitlAgent(t, &toolbox{}, testkit.NewScriptedModel(batchTurn()))
		ans, err := a.Call(ctx, "elsewhere", sess)
		require.NoError(t, err)
		require.NotNil(t, ans.Pending)
		require.Less(t, ans.Pending.Agent, "payer", "the outsider comes first in name order")
	}
	var paid []string
	tm := ttPayTeam(t, testkit.NewScriptedModel(ttSupScript()[:1]...), testkit.NewScriptedModel(ttPayerScript()[:1]...), true, &paid)
	sess := team.NewSession("pw-1")
	outsider(sess)
	ans, err := tm.Call(ctx, "Pay", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	assert.Equal(t, "payer", ans.Pending.Agent)
	assert.Equal(t, []string{"p1"}, callIDs(ans.Pending))

	// A member that delegates to an agent of another name: that agent waits at the
	// member's node.
	clerk := hitlAgent(t, &toolbox{}, testkit.NewScriptedModel(batchTurn()))
	desk, err := team.NewTeam("desk", team.WithMembers(delegate{name: "desk-member", to: clerk}))
	require.NoError(t, err)
	sess = team.NewSession("pw-4")
	box := &toolbox{}
	outsider2, err := team.NewReActAgent("aaa", testkit.NewScriptedModel(batchTurn()),
		team.WithTools(box.weather(), box.transfer(), box.remove()))
	require.NoError(t, err)
	_, err = outsider2.Call(ctx, "elsewhere", sess)
	require.NoError(t, err)
	ans, err = desk.Call(ctx, "file it", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	assert.Equal(t, "assistant", ans.Pending.Agent)
	assert.Equal(t, "desk-member", ans.Pending.Node)

	sess = team.NewSession("pw-2")
	outsider(sess)
	ans, err = ttApprovalTeam(t).Call(ctx, "Release", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	assert.Equal(t, "release", ans.Pending.Agent, "an approval node: the team itself waits")

	// Two parallel members ask for decisions; the first suspension stops the run, so
	// the other may not have asked yet. The one that waits is decided; resumed, the
	// other one asks, and whether the decided one ran before that suspension stopped
	// the run or not, the answer names the member that needs a decision.
	member := func(name string) team.Agent {
		m := testkit.NewScriptedModel(testkit.CallTools(testkit.ToolCall(name+"1", "remove", `{"path":"/`+name+`"}`))).
			When(testkit.LastIsToolResult("remove"), testkit.Reply(name+" done"))
		a, err := team.NewReActAgent(name, m, team.WithTools((&toolbox{}).remove()))
		require.NoError(t, err)
		return a
	}
	par, _ := ttTeam(t, "par", team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError),
		team.WithMembers(member("a"), member("b")))
	sess = team.NewSession("pw-3")
	ans, err = par.Call(ctx, "clean", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	first, other := ans.Pending.Agent, "b"
	if first == "b" {
		other = "a"
	}
	require.NoError(t, sess.Decide(first, team.Approve(first+"1")))
	ans, err = par.Call(ctx, "", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	assert.Equal(t, other, ans.Pending.Agent)
	assert.Equal(t, []string{other + "1"}, callIDs(ans.Pending))
}

// The last event of a suspended team's stream, its TeamEnd, carries the answer Call
// gives: who waits, with the calls to decide (or the approval node), and no content.
func TestTeamStreamSuspendedAnswer(t *testing.T) {
	ctx := context.Background()
	var paid []string
	sup, payer := ttSupScript()[:1], ttPayerScript()[:1]
	called, err := ttPayTeam(t, testkit.NewScriptedModel(sup...), testkit.NewScriptedModel(payer...), true, &paid).
		Call(ctx, "Pay", team.NewSession("sa-1"))
	require.NoError(t, err)
	evs, err := testkit.Events(ctx, ttPayTeam(t, testkit.NewScriptedModel(sup...), testkit.NewScriptedModel(payer...), true, &paid),
		"Pay", team.NewSession("sa-2"))
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.Equal(t, team.EventTeamEnd, last.Kind)
	assert.Equal(t, team.TeamSuspended, last.Status)
	require.NotNil(t, last.Answer)
	require.NotNil(t, last.Answer.Pending)
	assert.Empty(t, last.Answer.Content)
	assert.Equal(t, called.Pending.Agent, last.Answer.Pending.Agent)
	assert.Equal(t, callIDs(called.Pending), callIDs(last.Answer.Pending))

	called, err = ttApprovalTeam(t).Call(ctx, "Release", team.NewSession("sa-3"))
	require.NoError(t, err)
	evs, err = testkit.Events(ctx, ttApprovalTeam(t), "Release", team.NewSession("sa-4"))
	require.NoError(t, err)
	last = evs[len(evs)-1]
	require.Equal(t, team.EventTeamEnd, last.Kind)
	require.NotNil(t, last.Answer.Pending)
	assert.Equal(t, called.Pending.Agent, last.Answer.Pending.Agent)
	assert.Equal(t, called.Pending.Node, last.Answer.Pending.Node)
}

// delegate is a member that hands its prompt to another agent in its session.
type delegate struct {
	name string
	to   team.Agent
}

func (d delegate) Name() string { return d.name }
func (d delegate) Role() string { return "delegates" }
func (d delegate) Call(ctx context.Context, prompt string, sess *team.AgentSession) (*team.Answer, error) {
	return d.to.Call(ctx, prompt, sess)
}

// ttFlaky fails its first call, then answers.
type ttFlaky struct {
	calls int
}

func (f *ttFlaky) Name() string { return "flaky" }
func (f *ttFlaky) Role() string { return "fails once" }
func (f *ttFlaky) Call(_ context.Context, _ string, _ *team.AgentSession) (*team.Answer, error) {
	f.calls++
	if f.calls == 1 {
		return nil, team.NewError(team.TypeSourceUnavailable, "down for a moment")
	}
	return &team.Answer{Agent: "flaky", Content: "up again"}, nil
}

// A failed team run asked again with its prompt goes on from where it failed; another
// prompt starts afresh.
func TestTeamRetryAfterFailure(t *testing.T) {
	first := testkit.NewFixedAgent("first", "one")
	flaky := &ttFlaky{}
	tm, err := team.NewTeam("retry", team.WithMembers(first, flaky))
	require.NoError(t, err)
	sess := team.NewSession("r-1")
	_, err = tm.Call(context.Background(), "go", sess)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	failed := tm.Trace(sess.Context())
	assert.Equal(t, team.TeamFailed, failed.Status)

	ans, err := tm.Call(context.Background(), "go", sess)
	require.NoError(t, err)
	assert.Equal(t, "up again", ans.Content)
	assert.Len(t, first.Prompts(), 1, "the completed member does not run again")
	tr := tm.Trace(sess.Context())
	assert.Equal(t, failed.RunID, tr.RunID)
	assert.Equal(t, []string{"first", "flaky", "flaky"}, tr.Route)
	assert.Nil(t, tr.Error)

	ans, err = tm.Call(context.Background(), "again", sess)
	require.NoError(t, err)
	assert.Equal(t, "up again", ans.Content)
	assert.NotEqual(t, failed.RunID, tm.Trace(sess.Context()).RunID)
}

// An odd history limit never keeps an answer without the prompt it answered: the
// history starts at a prompt, so it holds at most the limit's messages.
func TestOddHistoryLimitKeepsWholeExchanges(t *testing.T) {
	model := testkit.NewScriptedModel(testkit.Reply("one"), testkit.Reply("two"), testkit.Reply("three"))
	agent, err := team.NewSimpleAgent("s", model, team.WithHistoryLimit(3))
	require.NoError(t, err)
	sess := team.NewSession("h")
	for _, p := range []string{"p1", "p2", "p3"} {
		_, err := agent.Call(context.Background(), p, sess)
		require.NoError(t, err)
	}
	assert.Equal(t, []team.Message{team.UserMessage("p3"), team.AssistantMessage("three")}, sess.History("s"))
	assert.Equal(t, []team.Message{team.UserMessage("p2"), team.AssistantMessage("two"), team.UserMessage("p3")},
		model.Requests()[2].Messages)
}

// A session's variables come back with a snapshot's numbers (session.UnmarshalVars):
// integers as int64, exact beyond float64's precision, other numbers as float64; a
// number no variable can hold is an error.
func TestUnmarshalSessionNumbers(t *testing.T) {
	sess := team.NewSession("nums")
	sess.Context().Set("n", 5)
	sess.Context().Set("id", int64(1)<<60+1)
	sess.Context().Set("rate", 2.5)
	sess.Context().Set("list", []any{1, map[string]any{"m": 2}})
	data, err := team.MarshalSession(sess)
	require.NoError(t, err)
	restored, err := team.UnmarshalSession(data)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"n": int64(5), "id": int64(1)<<60 + 1, "rate": 2.5,
		"list": []any{int64(1), map[string]any{"m": int64(2)}}}, restored.Context().Vars())

	_, err = team.UnmarshalSession([]byte(`{"format": 1, "id": "x", "vars": {"big": 1e999}}`))
	assert.EqualError(t, err, `decode session: variable "big": number 1e999 out of range`)
	restored, err = team.UnmarshalSession([]byte(`{"format": 1, "id": "x"}`))
	require.NoError(t, err)
	assert.Empty(t, restored.Context().Vars())
}
