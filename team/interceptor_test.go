package team_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// ttHooks records the team hooks it sees, and the flow hooks of member nodes.
type ttHooks struct {
	team.NopTeamInterceptor
	mu          sync.Mutex
	log         []string
	refuse      string // member refused by ShouldAgentContinue
	stopAfter   int    // ShouldSupervisorContinue refuses once this many turns were taken (0: never)
	sawTurnsEnd int
}

func (h *ttHooks) add(s string) {
	h.mu.Lock()
	h.log = append(h.log, s)
	h.mu.Unlock()
}

func (h *ttHooks) Log() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

func (h *ttHooks) OnTeamStart(_ context.Context, tr *team.TeamTrace) {
	h.add("team_start:" + tr.Team + ":" + tr.Status)
}
func (h *ttHooks) OnTeamEnd(_ context.Context, tr *team.TeamTrace, err error) {
	h.add(fmt.Sprintf("team_end:%s:%s:%v", tr.Team, tr.Status, err != nil))
	h.sawTurnsEnd = tr.Turns
}
func (h *ttHooks) ShouldSupervisorContinue(_ context.Context, tr *team.TeamTrace) bool {
	h.add("supervisor_continue")
	return h.stopAfter == 0 || tr.Turns < h.stopAfter
}
func (h *ttHooks) OnModelStart(_ context.Context, _ team.RunInfo, req *team.ChatRequest) {
	h.add(fmt.Sprintf("model_start:%d", len(req.Messages)))
}
func (h *ttHooks) OnModelEnd(_ context.Context, _ team.RunInfo, resp *team.ChatResponse, err error, _ time.Duration) {
	h.add(fmt.Sprintf("model_end:%v", resp != nil && err == nil))
}
func (h *ttHooks) OnSupervisorDecision(_ context.Context, _ *team.TeamTrace, d team.RouteDecision) {
	h.add("decision:" + d.Action + ":" + d.To + d.Reason)
}
func (h *ttHooks) ShouldAgentContinue(_ context.Context, _ *team.TeamTrace, m team.Agent) bool {
	h.add("agent_continue:" + m.Name())
	return m.Name() != h.refuse
}
func (h *ttHooks) OnAgentStart(_ context.Context, run team.RunInfo, prompt string) {
	h.add("member_start:" + run.Agent + ":" + strings.SplitN(prompt, "\n", 2)[0])
}
func (h *ttHooks) OnAgentEnd(_ context.Context, run team.RunInfo, ans *team.Answer, err error) {
	content := ""
	if ans != nil {
		content = ans.Content
	}
	h.add(fmt.Sprintf("member_end:%s:%s:%v", run.Agent, content, err != nil))
}
func (h *ttHooks) OnNodeStart(_ context.Context, _ *flow.Context, n *flow.Node) {
	if n.MetaString(team.MetaAgent) != "" && n.Type == flow.Activity {
		h.add("node:" + n.ID)
	}
}

func TestTeamInterceptorHooksSupervisor(t *testing.T) {
	h := &ttHooks{}
	sup := testkit.NewScriptedModel(ttRouteTo("1", "a"), testkit.Reply("FINISH"))
	tm, err := team.NewTeam("desk", team.WithMembers(testkit.NewFixedAgent("a", "A")), team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(sup), team.WithInterceptor(h))
	require.NoError(t, err)
	_, err = tm.Call(context.Background(), "go", team.NewSession("h-1"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"team_start:desk:running",
		"node:supervisor", "supervisor_continue", "model_start:2", "model_end:true", "decision:route:a",
		"node:a", "agent_continue:a", "member_start:a:go", "member_end:a:A:false",
		"node:supervisor", "supervisor_continue", "model_start:2", "model_end:true", "decision:finish:finish_marker",
		"team_end:desk:completed:false",
	}, h.Log())
}

// ShouldSupervisorContinue refusing finishes the team without a model call;
// ShouldAgentContinue refusing skips the member's turn.
func TestTeamInterceptorChecks(t *testing.T) {
	t.Run("supervisor", func(t *testing.T) {
		h := &ttHooks{stopAfter: 1}
		sup := testkit.NewScriptedModel(ttRouteTo("1", "a"))
		tm, err := team.NewTeam("desk", team.WithMembers(testkit.NewFixedAgent("a", "A")), team.WithProtocol(team.Supervisor),
			team.WithSupervisorModel(sup), team.WithInterceptor(h))
		require.NoError(t, err)
		sess := team.NewSession("h-2")
		ans, err := tm.Call(context.Background(), "go", sess)
		require.NoError(t, err)
		assert.Equal(t, "A", ans.Content)
		assert.Equal(t, 1, sup.Calls())
		assert.Equal(t, team.ReasonInterceptor, tm.Trace(sess.Context()).LastDecision.Reason)
	})
	t.Run("agent", func(t *testing.T) {
		h := &ttHooks{refuse: "b"}
		b := testkit.NewFixedAgent("b", "B")
		tm, err := team.NewTeam("seq", team.WithMembers(testkit.NewFixedAgent("a", "A"), b, testkit.NewFixedAgent("c", "C")),
			team.WithInterceptor(h))
		require.NoError(t, err)
		sess := team.NewSession("h-3")
		ans, err := tm.Call(context.Background(), "go", sess)
		require.NoError(t, err)
		assert.Equal(t, "C", ans.Content)
		assert.Empty(t, b.Prompts())
		tr := tm.Trace(sess.Context())
		assert.Equal(t, []string{"a", "c"}, tr.Route)
		assert.Equal(t, 3, tr.Turns, "a refused turn counts")
		assert.Equal(t, team.RecordSkipped, tr.Records[1].Status)
		assert.Equal(t, team.ReasonInterceptor, tr.Records[1].Content)
	})
	t.Run("nested team refused", func(t *testing.T) {
		h := &ttHooks{refuse: "inner"}
		x := testkit.NewFixedAgent("x", "X")
		inner, err := team.NewTeam("inner", team.WithMembers(x))
		require.NoError(t, err)
		tm, err := team.NewTeam("outer", team.WithMembers(inner, testkit.NewFixedAgent("after", "done")), team.WithInterceptor(h))
		require.NoError(t, err)
		sess := team.NewSession("h-4")
		evs, err := testkit.Events(context.Background(), tm, "go", sess)
		require.NoError(t, err)
		ttCheckSymmetry(t, evs)
		assert.Empty(t, x.Prompts())
		tr := tm.Trace(sess.Context())
		assert.Equal(t, []string{"after"}, tr.Route)
		assert.Equal(t, team.RecordSkipped, tr.Records[0].Status)
		assert.Equal(t, team.TeamSkipped, team.TraceOf(sess.Context().Vars(), "inner").Status)
	})
}

// runHooks records the RunInfo the agent hooks get.
type runHooks struct {
	team.NopTeamInterceptor
	mu   sync.Mutex
	runs []team.RunInfo
}

func (h *runHooks) OnAgentStart(_ context.Context, run team.RunInfo, _ string) {
	h.mu.Lock()
	h.runs = append(h.runs, run)
	h.mu.Unlock()
}

func (h *runHooks) OnAgentEnd(_ context.Context, run team.RunInfo, _ *team.Answer, _ error) {
	h.mu.Lock()
	h.runs = append(h.runs, run)
	h.mu.Unlock()
}

// On a team, the agent hooks frame each member turn: the run's parent is the team's
// run, and the end carries the member's own run id.
func TestTeamInterceptorAgentHooksOfMembers(t *testing.T) {
	h := &runHooks{}
	tm, err := team.NewTeam("duo", team.WithMembers(testkit.NewFixedAgent("a", "A")), team.WithInterceptor(h))
	require.NoError(t, err)
	sess := team.NewSession("duo-1")
	ans, err := tm.Call(context.Background(), "go", sess)
	require.NoError(t, err)
	tr := tm.Trace(sess.Context())
	require.Len(t, h.runs, 2)
	start, end := h.runs[0], h.runs[1]
	assert.Equal(t, "a", start.Agent)
	assert.Equal(t, tr.RunID, start.ParentRunID)
	assert.Equal(t, tr.RunID, end.ParentRunID)
	assert.Equal(t, tr.Records[0].RunID, end.RunID)
	assert.NotEmpty(t, end.RunID)
	assert.Equal(t, "A", ans.Content)
}
