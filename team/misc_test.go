package team_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/trace"
)

func TestOnAnswer(t *testing.T) {
	var got []string
	hook := team.OnAnswer(func(_ context.Context, c *flow.Context, n *flow.Node, ans *team.Answer) error {
		got = append(got, n.ID+"="+ans.Content+"/"+c.BranchID())
		return nil
	})
	s := flow.NewSpec("g")
	s.Start("a").Do(team.AsTask(testkit.NewFixedAgent("x", "X"), hook)).LinkTo("b")
	s.End("b").Do(team.AsTask(testkit.NewFixedAgent("y", "Y"), hook))
	g, err := s.Build()
	require.NoError(t, err)
	_, err = flow.NewEngine().EvalGraph(context.Background(), g, flow.NewContext("i"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a=X/main", "b=Y/main"}, got)
}

func TestRegisterAgentsOnEngine(t *testing.T) {
	eng := flow.NewEngine()
	team.RegisterAgents(eng, testkit.NewFixedAgent("a", "A"))
	g, err := flow.LoadGraph("g.yml", []byte("id: g\nlayout:\n  - {id: a, type: start, task: \"@a\"}\n"))
	require.NoError(t, err)
	fc := flow.NewContext("i")
	_, err = eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, "A", fc.Value("a.answer"))
}

// Two sinks both receive events; options reach the model; history is bounded.
func TestSimpleAgentOptionsAndSinks(t *testing.T) {
	model := testkit.NewScriptedModel(testkit.Reply("one"), testkit.Reply("two"), testkit.Reply("three"))
	temp := 0.1
	agent, err := team.NewSimpleAgent("s", model, team.WithRole("helper"), team.WithHistoryLimit(2),
		team.WithChatOptions(team.ChatOptions{Model: "m-2", Temperature: &temp}))
	require.NoError(t, err)
	assert.Equal(t, "helper", agent.Role())

	var mu sync.Mutex
	var a, b int
	ctx := team.WithSink(context.Background(), func(team.Event) { mu.Lock(); a++; mu.Unlock() })
	ctx = team.WithSink(ctx, func(team.Event) { mu.Lock(); b++; mu.Unlock() })
	sess := team.NewSession("h")
	for _, p := range []string{"p1", "p2", "p3"} {
		_, err := agent.Call(ctx, p, sess)
		require.NoError(t, err)
	}
	assert.Equal(t, a, b)
	assert.Positive(t, a)
	assert.Equal(t, []team.Message{team.UserMessage("p3"), team.AssistantMessage("three")}, sess.History("s"))
	last := model.Requests()[2]
	assert.Equal(t, "m-2", last.Options.Model)
	assert.Equal(t, []team.Message{team.UserMessage("p2"), team.AssistantMessage("two"), team.UserMessage("p3")}, last.Messages)

	// A model failure fails the call and is recorded in the trace.
	failing, err := team.NewSimpleAgent("f", testkit.NewScriptedModel(testkit.FailWith(team.TypeSourceUnavailable)))
	require.NoError(t, err)
	var kindsSeen []team.EventKind
	var last2 error
	for ev, err := range failing.Stream(context.Background(), "x", sess) {
		if err != nil {
			last2 = err
			continue
		}
		kindsSeen = append(kindsSeen, ev.Kind)
	}
	require.ErrorIs(t, last2, team.ErrSourceUnavailable)
	assert.Equal(t, []team.EventKind{team.EventRunStart, team.EventReasonStart, team.EventReasonEnd, team.EventRunEnd}, kindsSeen)
	assert.Equal(t, team.RunFailed, sess.SimpleTrace("f").Status)
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
