package team_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
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
	for ev, err := range agent.Stream(context.Background(), "Weather in Rome?", team.NewSession("i-1")) {
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
	for ev, err := range agent.Stream(context.Background(), "hi", sess) {
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
		for ev, err := range agent.Stream(context.Background(), "hi", sess) {
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
	_, err := team.Events(ctx, testkit.NewSlowAgent("slow", "late"), "x", nil)
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
	evs, err := team.Events(context.Background(), agent, "go", nil)
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
