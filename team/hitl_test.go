package team_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batchTurn asks for four calls in one turn: two of them (c2, c3) are sensitive.
func batchTurn() testkit.Turn {
	return testkit.CallTools(
		testkit.ToolCall("c1", "weather", `{"city":"Oslo"}`),
		testkit.ToolCall("c2", "transfer", `{"to":"acme","amount":5000}`),
		testkit.ToolCall("c3", "remove", `{"path":"/tmp/a"}`),
		testkit.ToolCall("c4", "transfer", `{"to":"cafe","amount":10}`),
	)
}

func hitlAgent(t *testing.T, box *toolbox, model team.ChatModel) *team.ReActAgent {
	t.Helper()
	a, err := team.NewReActAgent("assistant", model, team.WithTools(box.weather(), box.transfer(), box.remove()))
	require.NoError(t, err)
	return a
}

// A batch with a sensitive call and no decision runs nothing: the agent returns the
// pending calls, emits a pending event and keeps the batch in the session.
func TestHITLBatchSuspension(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(batchTurn())
	agent := hitlAgent(t, box, model)
	sess := team.NewSession("pay-1")

	evs, err := testkit.Events(context.Background(), agent, "Pay the bills", sess)
	require.NoError(t, err)
	assert.Empty(t, box.Calls(), "no tool of the batch may run")
	assert.Equal(t, 1, model.Calls())

	end := evs[len(evs)-1]
	require.Equal(t, team.EventRunEnd, end.Kind)
	assert.Equal(t, team.RunPending, end.Status)
	ans := end.Answer
	require.NotNil(t, ans.Pending)
	assert.Equal(t, []string{"c2", "c3"}, callIDs(ans.Pending))
	assert.Equal(t, team.PendingCall{ID: "c2", Name: "transfer", Args: json.RawMessage(`{"to":"acme","amount":5000}`),
		Comment: "transfers above 1000 EUR need approval"}, ans.Pending.Calls[0])
	assert.Equal(t, "deleting files needs approval", ans.Pending.Calls[1].Comment)
	assert.Len(t, ans.Pending.Batch, 4)

	pending := evs[len(evs)-2]
	require.Equal(t, team.EventHITLPending, pending.Kind)
	assert.Equal(t, ans.Pending.Calls, pending.Pending)
	assert.Equal(t, ans.RunID, pending.RunID)
	assert.Equal(t, "assistant", pending.Agent)
	assert.Equal(t, "pay-1", pending.Instance)

	assert.Equal(t, ans.Pending, sess.Pending("assistant"))
	assert.Equal(t, team.RunPending, sess.ReActTrace("assistant").Status)

	// Decisions are checked against the pending batch.
	require.ErrorIs(t, sess.Decide("assistant", team.Approve("c1")), team.ErrUnknownCall)
	require.ErrorIs(t, sess.Decide("nobody", team.Approve("c2")), team.ErrNoPending)
	require.ErrorContains(t, sess.Decide("assistant", team.Decision{CallID: "c2", Kind: "maybe"}), "unknown kind")
	// A different prompt while a run waits is refused.
	_, err = agent.Call(context.Background(), "Something else", sess)
	require.ErrorIs(t, err, team.ErrPending)

	// With only one decision the batch still waits, and still nothing runs.
	require.NoError(t, sess.Decide("assistant", team.Approve("c2")))
	ans, err = agent.Resume(context.Background(), sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	assert.Equal(t, []string{"c3"}, callIDs(ans.Pending))
	assert.Empty(t, box.Calls())
	assert.Equal(t, 1, model.Calls())

	// Discard drops the waiting run.
	sess.Discard("assistant")
	assert.Nil(t, sess.Pending("assistant"))
}

// Decisions apply to the same tool calls of the held batch, in batch order, with no
// model call before the batch runs: approve, approve with modified arguments, reject
// with a comment, skip with a substitute result.
func TestHITLDecisions(t *testing.T) {
	cases := []struct {
		name      string
		decisions []team.Decision
		calls     []string
		c2, c3    string // the observations the model sees
	}{
		{
			name:      "approve",
			decisions: []team.Decision{team.Approve("c2"), team.Approve("c3")},
			calls: []string{`weather:{"city":"Oslo"}`, `transfer:{"to":"acme","amount":5000}`, `remove:{"path":"/tmp/a"}`,
				`transfer:{"to":"cafe","amount":10}`},
			c2: `{"status":"success","result":{"amount":5000,"ok":true}}`,
			c3: `{"status":"success","result":null}`,
		},
		{
			name:      "modify",
			decisions: []team.Decision{team.ApproveWithArgs("c2", json.RawMessage(`{"to":"acme","amount":900}`)), team.Approve("c3")},
			calls: []string{`weather:{"city":"Oslo"}`, `transfer:{"to":"acme","amount":900}`, `remove:{"path":"/tmp/a"}`,
				`transfer:{"to":"cafe","amount":10}`},
			c2: `{"status":"success","result":{"amount":900,"ok":true}}`,
			c3: `{"status":"success","result":null}`,
		},
		{
			name:      "reject",
			decisions: []team.Decision{team.Reject("c2", "over the monthly limit"), team.Approve("c3")},
			calls:     []string{`weather:{"city":"Oslo"}`, `remove:{"path":"/tmp/a"}`, `transfer:{"to":"cafe","amount":10}`},
			c2:        `{"status":"error","error":{"type":"rejected","retryable":false,"message":"over the monthly limit"}}`,
			c3:        `{"status":"success","result":null}`,
		},
		{
			name:      "skip",
			decisions: []team.Decision{team.Skip("c2", map[string]any{"ok": false, "queued": true}), team.Skip("c3", nil)},
			calls:     []string{`weather:{"city":"Oslo"}`, `transfer:{"to":"cafe","amount":10}`},
			c2:        `{"status":"success","result":{"ok":false,"queued":true}}`,
			c3:        `{"status":"success","result":null}`,
		},
		{
			name:      "modified arguments are validated",
			decisions: []team.Decision{team.ApproveWithArgs("c2", json.RawMessage(`{"to":"acme","amount":"lots"}`)), team.Reject("c3", "")},
			calls:     []string{`weather:{"city":"Oslo"}`, `transfer:{"to":"cafe","amount":10}`},
			c2:        `{"status":"error","error":{"type":"invalid_arguments","retryable":false,"message":"arguments do not match the schema: validating root: validating /properties/amount: type: lots has type \"string\", want \"integer\""}}`,
			c3:        `{"status":"error","error":{"type":"rejected","retryable":false,"message":"a reviewer rejected the call"}}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			box := &toolbox{}
			model := testkit.NewScriptedModel(batchTurn(), testkit.Reply("done"))
			agent := hitlAgent(t, box, model)
			sess := team.NewSession("pay")
			ans, err := agent.Call(context.Background(), "Pay the bills", sess)
			require.NoError(t, err)
			require.NotNil(t, ans.Pending)

			require.NoError(t, sess.Decide("assistant", c.decisions...))
			evs, err := testkit.Events(context.Background(), agent, "", sess)
			require.NoError(t, err)
			ans = evs[len(evs)-1].Answer
			require.Nil(t, ans.Pending)
			assert.Equal(t, "done", ans.Content)
			assert.Equal(t, c.calls, box.Calls())

			// One model call after the first: the batch ran before it, on the same ids.
			reqs := model.Requests()
			require.Len(t, reqs, 2)
			msgs := reqs[1].Messages
			n := len(msgs)
			require.GreaterOrEqual(t, n, 5)
			assistant := msgs[n-5]
			assert.Equal(t, team.RoleAssistant, assistant.Role)
			assert.Equal(t, batchTurn().ToolCalls, assistant.ToolCalls)
			for i, id := range []string{"c1", "c2", "c3", "c4"} {
				assert.Equal(t, id, msgs[n-4+i].ToolCallID)
			}
			tm := toolMessages(reqs[1])
			assert.JSONEq(t, c.c2, tm["c2"].Content)
			assert.JSONEq(t, c.c3, tm["c3"].Content)

			// The resumed run keeps its id; decided events precede the decided calls.
			var decided []string
			for _, e := range evs {
				assert.Equal(t, ans.RunID, e.RunID)
				if e.Kind == team.EventHITLDecided {
					decided = append(decided, e.Call.ID+":"+string(e.Decision.Kind))
				}
			}
			assert.Equal(t, []string{"c2:" + string(c.decisions[0].Kind), "c3:" + string(c.decisions[1].Kind)}, decided)

			// The trace records the decisions on the action steps.
			tr := ans.Trace.(*team.ReActTrace)
			var withDecision int
			for _, s := range tr.Steps {
				if s.Kind == team.StepAction && s.Decision != nil {
					withDecision++
				}
			}
			assert.Equal(t, 2, withDecision)
			assert.Equal(t, team.RunCompleted, tr.Status)
			assert.Nil(t, sess.Pending("assistant"))
		})
	}
}

// Always-allow lets later calls of the tool run without asking, within the session.
func TestHITLAlwaysAllow(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("c1", "transfer", `{"to":"a","amount":2000}`)),
		testkit.CallTools(testkit.ToolCall("c2", "transfer", `{"to":"b","amount":3000}`)),
		testkit.Reply("both paid"),
	)
	agent := hitlAgent(t, box, model)
	sess := team.NewSession("s")
	ans, err := agent.Call(context.Background(), "pay", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.NoError(t, sess.Decide("assistant", team.ApproveAlways("c1")))
	ans, err = agent.Resume(context.Background(), sess)
	require.NoError(t, err)
	assert.Equal(t, "both paid", ans.Content)
	assert.Equal(t, []string{`transfer:{"to":"a","amount":2000}`, `transfer:{"to":"b","amount":3000}`}, box.Calls())
	assert.Equal(t, []string{"transfer"}, team.AlwaysAllowed(sess, "assistant"))
}

// payGraph: the assistant pays, then a script records that payment happened.
func payGraph(t testing.TB) *flow.Graph {
	g, err := flow.LoadGraph("pay.yml", []byte(payYAML))
	require.NoError(t, err)
	return g
}

// Inside a flow the agent node suspends the run; decisions given on the session of the
// flow context apply when the run resumes, in the same process.
func TestHITLInFlowSameProcess(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(batchTurn(), testkit.Reply("paid"))
	agent := hitlAgent(t, box, model)
	rec := testkit.NewPathRecorder()
	eng := flow.NewEngine(team.WithAgents(agent), flow.WithInterceptor(rec, 0))
	g := payGraph(t)
	fc := flow.NewContextWith("pay-7", map[string]any{"month": "May"})

	var events []team.Event
	ctx := team.WithSink(context.Background(), func(e team.Event) { events = append(events, e) })
	res, err := eng.EvalGraph(ctx, g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Contains(t, res.Reason, `agent "assistant" waits for decisions on transfer#c2, remove#c3`)
	assert.Empty(t, box.Calls())
	assert.Nil(t, fc.Value("after"))

	// Events inside a graph carry the node, the branch and the flow run as parent.
	for _, e := range events {
		assert.Equal(t, "assistant", e.Node)
		assert.Equal(t, "main", e.Branch)
		assert.Equal(t, res.RunID(), e.ParentRunID)
		assert.Equal(t, "pay-7", e.Instance)
	}

	sess := team.SessionOf(fc)
	all := sess.PendingAll()
	require.Len(t, all, 1)
	assert.Equal(t, "assistant", all[0].Node)
	assert.Equal(t, "Pay the bills of May", testkit.LastUserMessage(model.Requests()[0]))
	require.NoError(t, sess.Decide("assistant", team.Approve("c2"), team.Skip("c3", "kept")))

	fc.Set("month", "June") // the resumed node keeps its question
	resumeCompleted(context.Background(), t, eng, fc, res)
	assert.Equal(t, "paid", fc.Value("assistant.answer"))
	assert.Equal(t, true, fc.Value("after"))
	assert.Equal(t, 2, model.Calls())
	assert.Equal(t, []string{`weather:{"city":"Oslo"}`, `transfer:{"to":"acme","amount":5000}`, `transfer:{"to":"cafe","amount":10}`}, box.Calls())
	testkit.Expect(t, rec).Times("assistant", 2).Times("after", 1).InOrder("assistant", "assistant", "after")
}

// RunFlow and ResumeFlow keep the flow's frontier in the agent session, so the plain
// JSON of the session is enough to resume.
func TestHITLInFlowViaSessionState(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(batchTurn(), testkit.Reply("paid"))
	eng := flow.NewEngine(team.WithAgents(hitlAgent(t, box, model)))
	g := payGraph(t)
	sess := team.NewSession("pay-8")
	sess.Context().Set("month", "May")
	res, err := sess.RunFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	require.True(t, sess.Suspended())

	data, err := team.MarshalSession(sess)
	require.NoError(t, err)
	restored, err := team.UnmarshalSession(data)
	require.NoError(t, err)
	require.NoError(t, restored.Decide("assistant", team.Approve("c2"), team.Approve("c3")))
	res, err = restored.ResumeFlow(context.Background(), eng, g)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.False(t, restored.Suspended())
	assert.Equal(t, "paid", restored.Context().Value("assistant.answer"))
	assert.Len(t, box.Calls(), 4)

	// Resuming on a changed graph is refused.
	restored2, err := team.UnmarshalSession(data)
	require.NoError(t, err)
	other, err := flow.LoadGraph("pay.yml", []byte("id: pay\nlayout:\n  - {id: start, type: start, link: assistant}\n  - {id: assistant, task: \"@assistant\"}\n"))
	require.NoError(t, err)
	_, err = restored2.ResumeFlow(context.Background(), eng, other)
	require.ErrorIs(t, err, team.ErrGraphChanged)
}

type counter struct {
	mu sync.Mutex
	n  map[trace.Counter]int
}

func (c *counter) Count(k trace.Counter, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[trace.Counter]int{}
	}
	c.n[k] += n
}

// A human rejection is counted for the run's metrics.
func TestRejectionCounted(t *testing.T) {
	box := &toolbox{}
	agent := hitlAgent(t, box, testkit.NewScriptedModel(batchTurn(), testkit.Reply("ok")))
	sess := team.NewSession("r")
	_, err := agent.Call(context.Background(), "pay", sess)
	require.NoError(t, err)
	require.NoError(t, sess.Decide("assistant", team.Reject("c2", "no"), team.Skip("c3", nil)))
	c := &counter{}
	_, err = agent.Resume(trace.WithCounterSink(context.Background(), c), sess)
	require.NoError(t, err)
	assert.Equal(t, map[trace.Counter]int{trace.CountRejection: 1}, c.n)
}

// The loop items of a frontier read back from the session's JSON are numbers again
// when the resumed run takes the next one (flow's RestoreFrontier converts them).
func TestHITLInLoopViaSessionStateKeepsNumbers(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(batchTurn(), testkit.Reply("paid"), testkit.Reply("paid"))
	eng := flow.NewEngine(team.WithAgents(hitlAgent(t, box, model)))
	g, err := flow.LoadGraph("pay-months.yml", []byte(`
id: payMonths
layout:
  - {id: start, type: start, link: each}
  - {id: each, type: loop, meta: {$for: m, $in: months}, link: assistant}
  - {id: assistant, task: "@assistant", meta: {prompt: 'Pay the bills of month {{var "m"}}'}, link: after}
  - {id: after, task: 'context.put("next", m + 1)', link: close}
  - {id: close, type: loop, link: end}
  - {id: end, type: end}
`))
	require.NoError(t, err)
	sess := team.NewSession("pay-9")
	sess.Context().Set("months", []any{5, 7})
	res, err := sess.RunFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)

	data, err := team.MarshalSession(sess)
	require.NoError(t, err)
	restored, err := team.UnmarshalSession(data)
	require.NoError(t, err)
	require.NoError(t, restored.Decide("assistant", team.Approve("c2"), team.Approve("c3")))
	res, err = restored.ResumeFlow(context.Background(), eng, g)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.EqualValues(t, 8, restored.Context().Value("next"), "the second month is a number")
	assert.Equal(t, "Pay the bills of month 7", testkit.LastUserMessage(model.Requests()[2]))
}
