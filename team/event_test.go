package team_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/flow/solonscript"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The events of one ReAct run, in order: the model streams its reasoning and its
// answer, one tool call runs in between.
func TestReActEventOrder(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("w1", "weather", `{"city":"Rome"}`)).WithReasoning("check first").WithUsage(testkit.Tokens(10, 5, 2, 0)),
		testkit.Reply("It is warm").WithUsage(testkit.Tokens(20, 3, 0, 10)),
	)
	agent, err := team.NewReActAgent("guide", model, team.WithTools(box.weather()))
	require.NoError(t, err)

	var evs []team.Event
	for ev, err := range team.Stream(context.Background(), agent, "Weather in Rome?", team.NewSession("i-1")) {
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	assert.Equal(t, []team.EventKind{
		team.EventRunStart,
		team.EventReasonStart, team.EventReasonDelta, team.EventReasonEnd,
		team.EventActionStart, team.EventToolStart, team.EventToolEnd, team.EventActionEnd,
		team.EventReasonStart, team.EventReasonDelta, team.EventReasonDelta, team.EventReasonDelta, team.EventReasonEnd,
		team.EventRunEnd,
	}, kinds(evs))

	runID := evs[0].RunID
	require.NotEmpty(t, runID)
	for _, e := range evs {
		assert.Equal(t, runID, e.RunID, e.String())
		assert.Equal(t, "guide", e.Agent)
		assert.Equal(t, "i-1", e.Instance)
		assert.False(t, e.Time.IsZero())
	}
	assert.Equal(t, "Weather in Rome?", evs[0].Prompt)
	assert.Equal(t, "check first", evs[2].Reasoning)
	assert.Equal(t, 1, evs[3].Step)
	assert.Equal(t, []team.ToolCall{testkit.ToolCall("w1", "weather", `{"city":"Rome"}`)}, evs[3].ToolCalls)
	assert.Equal(t, &team.Usage{PromptTokens: 10, CompletionTokens: 5, ReasoningTokens: 2, TotalTokens: 15}, evs[3].Usage)
	assert.Equal(t, "w1", evs[5].Call.ID)
	assert.Equal(t, "weather", evs[6].Call.Name)
	assert.JSONEq(t, `{"city":"Rome"}`, string(evs[6].Call.Args))
	require.NotNil(t, evs[6].Observation)
	assert.JSONEq(t, `{"city":"Rome","tempC":21}`, string(evs[6].Observation.Result))
	var text string
	for _, e := range evs[9:12] {
		text += e.Delta
	}
	assert.Equal(t, "It is warm", text)
	assert.Equal(t, "It is warm", evs[12].Content)
	assert.Equal(t, 2, evs[12].Step)
	end := evs[13]
	assert.Equal(t, team.RunCompleted, end.Status)
	assert.Equal(t, "It is warm", end.Content)
	assert.Equal(t, int64(38), end.Usage.TotalTokens)
	assert.Equal(t, "It is warm", end.Answer.Content)
	for _, i := range []int{3, 6, 7, 12, 13} {
		assert.Positive(t, evs[i].Duration, evs[i].String())
	}
}

// Breaking the loop cancels the run and waits for it: no goroutine is left, even when
// the model (or the agent) was blocked.
func TestStreamBreakCancels(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	block := make(chan struct{}) // never closed
	model := testkit.NewScriptedModel(testkit.Turn{Wait: block, Content: "never"})
	agent, err := team.NewReActAgent("a", model)
	require.NoError(t, err)
	sess := team.NewSession("s")
	var got []team.EventKind
	for ev, err := range team.Stream(context.Background(), agent, "hi", sess) {
		require.NoError(t, err)
		got = append(got, ev.Kind)
		if ev.Kind == team.EventReasonStart {
			break
		}
	}
	assert.Equal(t, []team.EventKind{team.EventRunStart, team.EventReasonStart}, got)
	// The cancelled run ended and recorded why.
	tr := sess.ReActTrace("a")
	require.NotNil(t, tr)
	assert.Equal(t, team.TypeCancelled, tr.Error.Type)

	slow := testkit.NewSlowAgent("slow", "late")
	for ev := range team.Stream(context.Background(), slow, "x", nil) {
		if ev.Kind == team.EventRunStart {
			break
		}
	}
}

// A panic in the loop's body ends the stream like a break: the call is cancelled and
// awaited before the panic goes on up, so its goroutine does not block for ever on its
// next event and the session records the cancelled run.
func TestStreamBodyPanicCancels(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	block := make(chan struct{}) // never closed
	model := testkit.NewScriptedModel(testkit.Turn{Wait: block, Content: "never"})
	agent, err := team.NewReActAgent("a", model)
	require.NoError(t, err)
	sess := team.NewSession("s")
	p := func() (p any) {
		defer func() { p = recover() }()
		for ev, err := range team.Stream(context.Background(), agent, "hi", sess) {
			require.NoError(t, err)
			if ev.Kind == team.EventReasonStart {
				panic("consumer bug")
			}
		}
		return nil
	}()
	assert.Equal(t, "consumer bug", p, "the body's panic reaches the caller")
	tr := sess.ReActTrace("a")
	require.NotNil(t, tr, "the call returned before the panic left the loop")
	require.NotNil(t, tr.Error)
	assert.Equal(t, team.TypeCancelled, tr.Error.Type)
}

// lateEmitter's call starts a goroutine that reports an event after the call
// returned (as a fire-and-forget helper of a tool might).
type lateEmitter struct{ late, emitted chan struct{} }

func (lateEmitter) Name() string { return "late" }
func (lateEmitter) Role() string { return "" }
func (l lateEmitter) Call(ctx context.Context, _ string, _ *team.AgentSession) (*team.Answer, error) {
	go func() {
		defer close(l.emitted)
		<-l.late
		team.Emit(ctx, team.Event{Kind: team.EventToolEnd, Agent: "late"})
	}()
	return &team.Answer{Agent: "late", Content: "ok"}, nil
}

// An event emitted after the streamed call returned, once the stream is over, is
// dropped: it must not panic (a send on the stream's closed channel) nor block.
func TestStreamEventAfterCallReturned(t *testing.T) {
	l := lateEmitter{late: make(chan struct{}), emitted: make(chan struct{})}
	for _, err := range team.Stream(context.Background(), l, "x", nil) {
		require.NoError(t, err)
	}
	close(l.late)
	<-l.emitted
}

// A failed call yields its RunEnd and then the error.
func TestStreamError(t *testing.T) {
	agent := testkit.FailingWith("f", team.TypeNotFound, "no such index")
	var kindsSeen []team.EventKind
	var last error
	for ev, err := range team.Stream(context.Background(), agent, "x", nil) {
		if err != nil {
			last = err
			continue
		}
		kindsSeen = append(kindsSeen, ev.Kind)
	}
	assert.Equal(t, []team.EventKind{team.EventRunStart, team.EventRunEnd}, kindsSeen)
	require.ErrorIs(t, last, team.ErrNotFound)

	// A deadline reaches a slow agent, which fails with a timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := testkit.Events(ctx, testkit.NewSlowAgent("slow", "late"), "x", nil)
	require.ErrorIs(t, err, team.ErrTimeout)
}

// Agents in parallel branches report their own branch ids and the flow run.
func TestEventsInParallelBranches(t *testing.T) {
	s := flow.NewSpec("par")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("left").LinkTo("right")
	s.Activity("left").SetTask("@left").LinkTo("j")
	s.Activity("right").SetTask("@right").LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(team.WithAgents(testkit.NewFixedAgent("left", "L"), testkit.NewFixedAgent("right", "R")))

	var mu sync.Mutex
	byAgent := map[string][]team.Event{}
	ctx := team.WithSink(context.Background(), func(e team.Event) {
		mu.Lock()
		byAgent[e.Agent] = append(byAgent[e.Agent], e)
		mu.Unlock()
	})
	fc := flow.NewContext("par-1")
	res, err := eng.EvalGraph(ctx, g, fc)
	require.NoError(t, err)
	require.Len(t, byAgent, 2)
	branches := map[string]bool{}
	for name, evs := range byAgent {
		require.Len(t, evs, 2, name)
		assert.Equal(t, []team.EventKind{team.EventRunStart, team.EventRunEnd}, kinds(evs))
		assert.Equal(t, name, evs[0].Node)
		assert.Equal(t, res.RunID(), evs[0].ParentRunID)
		assert.NotEqual(t, "main", evs[0].Branch)
		branches[evs[0].Branch] = true
	}
	assert.Len(t, branches, 2, "each branch has its own id")
	assert.Equal(t, "L", fc.Value("left.answer"))
	assert.Equal(t, "R", fc.Value("right.answer"))
}

// recorder is a TeamInterceptor that writes down its hooks.
type recorder struct {
	team.NopTeamInterceptor
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) { r.mu.Lock(); r.log = append(r.log, s); r.mu.Unlock() }

func (r *recorder) OnAgentStart(_ context.Context, run team.RunInfo, prompt string) {
	r.add("agent start " + run.Agent + " " + prompt)
}
func (r *recorder) OnAgentEnd(_ context.Context, _ team.RunInfo, ans *team.Answer, err error) {
	r.add(fmt.Sprintf("agent end %q %v", ans.Content, err))
}
func (r *recorder) OnModelStart(_ context.Context, _ team.RunInfo, req *team.ChatRequest) {
	r.add(fmt.Sprintf("model start (%d messages)", len(req.Messages)))
}
func (r *recorder) OnModelEnd(_ context.Context, _ team.RunInfo, resp *team.ChatResponse, err error, _ time.Duration) {
	r.add(fmt.Sprintf("model end %d calls %v", len(resp.Message.ToolCalls), err))
}
func (r *recorder) OnToolStart(_ context.Context, _ team.RunInfo, c team.ToolCall) {
	r.add("tool start " + c.ID)
}
func (r *recorder) OnToolEnd(_ context.Context, _ team.RunInfo, c team.ToolCall, o team.Observation, _ time.Duration) {
	r.add("tool end " + c.ID + " " + o.Status)
}

func TestInterceptorHooksOfReActAgent(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("a", "weather", `{"city":"Rome"}`), testkit.ToolCall("b", "broken", `{}`)),
		testkit.Reply("ok"))
	rec := &recorder{}
	agent, err := team.NewReActAgent("guide", model, team.WithTools(box.weather(), box.broken()), team.WithInterceptor(rec),
		team.WithoutStreaming())
	require.NoError(t, err)
	evs, err := testkit.Events(context.Background(), agent, "go", nil)
	require.NoError(t, err)
	assert.NotContains(t, kinds(evs), team.EventReasonDelta, "WithoutStreaming sends no deltas")
	assert.Equal(t, []string{
		"agent start guide go",
		"model start (1 messages)",
		"model end 2 calls <nil>",
		"tool start a", "tool end a success",
		"tool start b", "tool end b error",
		"model start (4 messages)",
		"model end 0 calls <nil>",
		`agent end "ok" <nil>`,
	}, rec.log)
}

// ttCheckSymmetry checks that every start event has its end: team start/end by run id,
// member node start/end by run id, node and branch, agent run start/end by run id; and
// that every event says who and where.
func ttCheckSymmetry(t *testing.T, evs []team.Event) {
	t.Helper()
	open := map[string]int{}
	key := func(e team.Event) string {
		switch e.Kind {
		case team.EventTeamStart, team.EventTeamEnd:
			return "team " + e.RunID
		case team.EventNodeStart, team.EventNodeEnd:
			return "node " + e.RunID + " " + e.Node + " " + e.Branch
		case team.EventRunStart, team.EventRunEnd:
			return "run " + e.RunID
		case team.EventReasonStart, team.EventReasonEnd:
			return fmt.Sprintf("reason %s %s %d", e.RunID, e.Node, e.Step)
		}
		return ""
	}
	for i, e := range evs {
		assert.NotEmpty(t, e.RunID, "event %d %s has no run id", i, e)
		assert.NotEmpty(t, e.Agent, "event %d %s has no agent", i, e)
		assert.NotEmpty(t, e.Branch, "event %d %s has no branch", i, e)
		assert.NotEmpty(t, e.ParentRunID, "event %d %s has no parent run id", i, e)
		k := key(e)
		switch e.Kind {
		case team.EventTeamStart, team.EventNodeStart, team.EventRunStart, team.EventReasonStart:
			open[k]++
		case team.EventTeamEnd, team.EventNodeEnd, team.EventRunEnd, team.EventReasonEnd:
			if open[k] == 0 {
				t.Errorf("event %d %s (%s) ends what did not start", i, e, k)
				continue
			}
			open[k]--
		}
	}
	for k, n := range open {
		assert.Zero(t, n, "%s started without an end", k)
	}
}

// A nested team emits its own end event (Solon does not), every start has its end,
// and the events of parallel members can be grouped by branch id.
func TestTeamNestedEventSymmetry(t *testing.T) {
	research, err := team.NewTeam("research", team.WithRole("researches in parallel"), team.WithProtocol(team.Parallel),
		team.WithMembers(testkit.NewFixedAgent("web", "web says 3bn"), testkit.NewFixedAgent("papers", "papers say 3.2bn")))
	require.NoError(t, err)
	writerModel := testkit.NewScriptedModel(testkit.Reply("The market is about 3bn.").WithUsage(testkit.Tokens(30, 8, 2, 0)))
	writer, err := team.NewSimpleAgent("writer", writerModel, team.WithRole("writes"))
	require.NoError(t, err)
	sup := testkit.NewScriptedModel(ttRouteTo("1", "research").WithUsage(testkit.Tokens(10, 1, 1, 0)),
		testkit.Reply("writer").WithUsage(testkit.Tokens(10, 1, 0, 0)), testkit.Reply("FINISH"))
	desk, rec := ttTeam(t, "desk", team.WithMembers(research, writer), team.WithProtocol(team.Supervisor), team.WithSupervisorModel(sup))

	sess := team.NewSession("nest-1")
	evs, err := testkit.Events(context.Background(), desk, "Size the market", sess)
	require.NoError(t, err)
	ttCheckSymmetry(t, evs)

	// Two teams, each started and ended; the nested one inside the outer one, inside
	// its member node.
	var starts, ends []team.Event
	for _, e := range evs {
		switch e.Kind {
		case team.EventTeamStart:
			starts = append(starts, e)
		case team.EventTeamEnd:
			ends = append(ends, e)
		}
	}
	require.Len(t, starts, 2)
	require.Len(t, ends, 2)
	assert.Equal(t, "desk", starts[0].Agent)
	assert.Equal(t, "research", starts[1].Agent)
	assert.Equal(t, "research", ends[0].Agent)
	assert.Equal(t, team.TeamCompleted, ends[0].Status)
	assert.Equal(t, "desk", ends[1].Agent)
	assert.Equal(t, evs[len(evs)-1], ends[1])
	assert.Equal(t, starts[0].RunID, starts[1].ParentRunID, "the nested team runs inside the outer team")
	assert.Equal(t, "[web] web says 3bn\n\n[papers] papers say 3.2bn", ends[0].Content)
	assert.Equal(t, "The market is about 3bn.", ends[1].Content)
	require.NotNil(t, ends[1].Answer)
	outer, ok := ends[1].Answer.Trace.(*team.TeamTrace)
	require.True(t, ok)

	// The research node frames the nested team.
	idx := func(pred func(team.Event) bool) int { return slices.IndexFunc(evs, pred) }
	nodeStart := idx(func(e team.Event) bool { return e.Kind == team.EventNodeStart && e.Node == "research" })
	nodeEnd := idx(func(e team.Event) bool { return e.Kind == team.EventNodeEnd && e.Node == "research" })
	innerStart := idx(func(e team.Event) bool { return e.Kind == team.EventTeamStart && e.Agent == "research" })
	innerEnd := idx(func(e team.Event) bool { return e.Kind == team.EventTeamEnd && e.Agent == "research" })
	assert.True(t, nodeStart < innerStart && innerStart < innerEnd && innerEnd < nodeEnd, "node %d, team %d..%d, node end %d", nodeStart, innerStart, innerEnd, nodeEnd)
	assert.Equal(t, team.RunCompleted, evs[nodeEnd].Status)
	assert.Equal(t, starts[0].RunID, evs[nodeEnd].RunID)

	// Parallel members' events grouped by branch: each branch tells its own story.
	byBranch := map[string][]string{}
	for _, e := range evs {
		if strings.Contains(e.Branch, "fork:") {
			byBranch[e.Branch] = append(byBranch[e.Branch], string(e.Kind)+"/"+e.Agent)
		}
	}
	require.Len(t, byBranch, 2)
	for b, seq := range byBranch {
		member := b[strings.LastIndex(b, ":")+1:]
		assert.Equal(t, []string{"node_start/" + member, "run_start/" + member, "run_end/" + member, "node_end/" + member}, seq, b)
	}

	// Member runs report the team run as their parent; supervisor deltas stream.
	for _, e := range evs {
		if e.Kind == team.EventRunStart && e.Agent == "web" {
			assert.Equal(t, starts[1].RunID, e.ParentRunID)
		}
		if e.Kind == team.EventRunStart && e.Agent == "writer" {
			assert.Equal(t, starts[0].RunID, e.ParentRunID)
		}
	}
	assert.True(t, slices.ContainsFunc(evs, func(e team.Event) bool {
		return e.Kind == team.EventReasonDelta && e.Agent == "desk" && e.Node == team.TeamNodeSupervisor
	}))
	decisions := 0
	for _, e := range evs {
		if e.Kind == team.EventDecision && e.Agent == "desk" {
			require.NotNil(t, e.Route)
			decisions++
		}
	}
	assert.Equal(t, 3, decisions)

	// The outer trace counts the nested team as one member turn with its metrics.
	assert.Equal(t, []string{"research", "writer"}, outer.Route)
	assert.Equal(t, "[web] web says 3bn\n\n[papers] papers say 3.2bn", outer.Records[1].Content)
	assert.Equal(t, int64(2+1), outer.Metrics.ThinkTokens)
	inner := team.TraceOf(sess.Context().Vars(), "research")
	require.NotNil(t, inner)
	assert.Equal(t, starts[0].RunID, inner.ParentRunID)
	assert.Equal(t, team.Usage{PromptTokens: inner.Metrics.PromptTokens, CompletionTokens: inner.Metrics.CompletionTokens, ReasoningTokens: inner.Metrics.ThinkTokens, CachedTokens: inner.Metrics.CachedTokens, TotalTokens: inner.Metrics.TotalTokens}, outer.Records[1].Usage)

	// The flow ran the nested team as a sub-graph of the outer graph.
	assert.Contains(t, rec.QualifiedPath(), "team.desk/research/team.research:merge")
}

// A nested team that fails still ends (failed), and so does its member node and the
// outer team.
func TestTeamNestedFailureEvents(t *testing.T) {
	inner, err := team.NewTeam("inner", team.WithMembers(testkit.FailingWith("broken", team.TypeSourceUnavailable, "down")))
	require.NoError(t, err)
	outer, _ := ttTeam(t, "outer", team.WithMembers(testkit.NewFixedAgent("first", "ok"), inner))
	sess := team.NewSession("nf-1")
	evs, err := testkit.Events(context.Background(), outer, "go", sess)
	require.Error(t, err)
	assert.ErrorIs(t, err, team.ErrSourceUnavailable)
	ttCheckSymmetry(t, evs)
	var ends []string
	for _, e := range evs {
		if e.Kind == team.EventTeamEnd || e.Kind == team.EventNodeEnd {
			ends = append(ends, string(e.Kind)+"/"+e.Agent+"/"+e.Status)
		}
	}
	assert.Equal(t, []string{"node_end/first/completed", "node_end/broken/failed", "team_end/inner/failed", "node_end/inner/failed", "team_end/outer/failed"}, ends)
	tr := outer.Trace(sess.Context())
	assert.Equal(t, team.TeamFailed, tr.Status)
	assert.Equal(t, []string{"first", "inner"}, tr.Route)
	assert.Equal(t, team.RunFailed, tr.Records[1].Status)
}

// Breaking the loop cancels the run: the slow member sees its context end, and no
// goroutine is left (goleak in TestMain).
func TestTeamStreamBreakCancels(t *testing.T) {
	slow := testkit.NewSlowAgent("slow", "never")
	tm, rec := ttTeam(t, "waiters", team.WithMembers(testkit.NewFixedAgent("quick", "done"), slow))
	sess := team.NewSession("br-1")
	var seen []team.EventKind
	for ev, err := range team.Stream(context.Background(), tm, "go", sess) {
		require.NoError(t, err)
		seen = append(seen, ev.Kind)
		if ev.Kind == team.EventRunStart && ev.Agent == "slow" {
			break
		}
	}
	assert.Equal(t, team.EventTeamStart, seen[0])
	tr := tm.Trace(sess.Context())
	assert.Equal(t, team.TeamFailed, tr.Status)
	assert.Equal(t, team.TypeCancelled, tr.Error.Type)
	steps := rec.Steps()
	assert.Equal(t, "slow", steps[len(steps)-1].Node)
	assert.NotEqual(t, flow.NodeStatus("COMPLETED"), steps[len(steps)-1].Status)
}

// A Solon script in a team's graph sends an event on context.eventBus(): the team's
// event stream carries it between the members' turns, as the team run's, with the
// topic, the payload, the node and the branch.
func TestTeamStreamCarriesScriptEvents(t *testing.T) {
	notify := func(s *flow.GraphSpec) {
		w := s.NodeByID("writer")
		w.Links = nil
		w.LinkTo("notify")
		s.Activity("notify").SetTask(`var m = new HashMap(); m.put("pages", 3); m.put("by", "writer");
			context.eventBus().send("draft.ready", m);`).LinkTo("editor")
	}
	tm, err := team.NewTeam("desk", team.WithMembers(testkit.NewFixedAgent("writer", "draft"), testkit.NewFixedAgent("editor", "ok")),
		team.WithGraphAdjuster(notify), team.WithEngineOptions(flow.WithEvaluator(solonscript.New())))
	require.NoError(t, err)
	evs, err := testkit.Events(context.Background(), tm, "write it", team.NewSession("s-1"))
	require.NoError(t, err)

	var order []string
	var published []team.Event
	for _, ev := range evs {
		if ev.Kind == team.EventNodeStart || ev.Kind == team.EventFlow {
			order = append(order, string(ev.Kind)+":"+ev.Node)
		}
		if ev.Kind == team.EventFlow {
			published = append(published, ev)
		}
	}
	assert.Equal(t, []string{"node_start:writer", "flow_event:notify", "node_start:editor"}, order)
	require.Len(t, published, 1)
	ev := published[0]
	assert.Equal(t, "draft.ready", ev.Topic)
	assert.Equal(t, map[string]any{"pages": int64(3), "by": "writer"}, ev.Payload)
	assert.Equal(t, evs[0].RunID, ev.RunID, "the team run's id")
	assert.Equal(t, "desk", ev.Agent)
	assert.Equal(t, "s-1", ev.Instance)
	assert.Equal(t, "main", ev.Branch)
	assert.Equal(t, "flow_event(draft.ready)", ev.String())
}

// FlowEvents puts what a graph's tasks publish on the stream of a plain flow run
// whose nodes are agents, among the agents' events.
func TestFlowEventsOnAnEngine(t *testing.T) {
	eng := flow.NewEngine(team.WithAgents(testkit.NewFixedAgent("writer", "draft")),
		flow.WithInterceptor(team.FlowEvents(), 0))
	s := flow.NewSpec("report")
	s.Start("s").LinkTo("write")
	s.Activity("write").SetTask("@writer").LinkTo("tell")
	s.Activity("tell").DoFunc(func(ctx context.Context, c *flow.Context, _ *flow.Node) error {
		answer, _ := c.Get("writer.answer")
		c.Publish(ctx, "report.done", answer)
		return nil
	}).LinkTo("e")
	s.End("e")
	g, err := s.Build()
	require.NoError(t, err)
	var evs []team.Event
	ctx := team.WithSink(context.Background(), func(ev team.Event) { evs = append(evs, ev) })
	res, err := eng.EvalGraph(ctx, g, flow.NewContext("r-1"))
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	assert.Equal(t, team.EventRunEnd, evs[len(evs)-2].Kind, "the agent's events come first")
	assert.Equal(t, team.Event{Kind: team.EventFlow, Time: last.Time, RunID: res.RunID(), Instance: "r-1", Node: "tell",
		Branch: "main", Topic: "report.done", Payload: "draft"}, last)
	assert.False(t, last.Time.IsZero())
}
