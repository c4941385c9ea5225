package testkit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

func TestAnalyst(t *testing.T) {
	a := testkit.Analyst()
	assert.Equal(t, "analyst", a.Name())
	assert.Equal(t, "analyst", a.Role())
	sess := team.NewSession("case-1")
	evs, err := testkit.Events(context.Background(), a, "assess", sess)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, team.EventRunStart, evs[0].Kind)
	assert.Equal(t, "assess", evs[0].Prompt)
	assert.Equal(t, team.EventRunEnd, evs[1].Kind)
	assert.Equal(t, "HIGH", evs[1].Answer.Content)
	assert.Equal(t, "HIGH", sess.Context().Value("analysis.result"))
	assert.Equal(t, []string{"assess"}, a.Prompts())

	// A nil session is a throw-away one.
	ans, err := testkit.NewFixedAgent("x", "y").Call(context.Background(), "p", nil)
	require.NoError(t, err)
	assert.Equal(t, "y", ans.Content)
}

func TestFailingAgent(t *testing.T) {
	a := testkit.FailingWith("search", team.TypeTimeout, "patent db did not answer")
	_, err := a.Call(context.Background(), "q", nil)
	require.ErrorIs(t, err, team.ErrTimeout)
	assert.True(t, team.AsError(err, "").Retryable())
	assert.Equal(t, "failing", a.Role())

	plain := errors.New("boom")
	_, err = testkit.NewFailingAgent("b", plain).Call(context.Background(), "q", nil)
	assert.Same(t, plain, err)
}

func TestSlowAgent(t *testing.T) {
	a := testkit.NewSlowAgent("slow", "done")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := a.Call(ctx, "x", nil)
		errc <- err
	}()
	<-a.Started()
	cancel()
	require.ErrorIs(t, <-errc, team.ErrCancelled)

	go func() {
		ans, err := a.Call(context.Background(), "x", nil)
		if err == nil && ans.Content != "done" {
			err = errors.New("wrong answer " + ans.Content)
		}
		errc <- err
	}()
	<-a.Started()
	a.Release()
	require.NoError(t, <-errc)

	ans, err := testkit.NewSlowAgent("s", "soon").WithDelay(time.Millisecond).Call(context.Background(), "x", nil)
	require.NoError(t, err)
	assert.Equal(t, "soon", ans.Content)
}

// A FixedAgent writes the same values on every call: a task that edits a written map
// or list in place changes what the next call writes no more than a fresh value would.
func TestFixedAgentWritesFreshValues(t *testing.T) {
	a := testkit.NewFixedAgent("a", "ok").Write("result", map[string]any{"score": 1, "tags": []any{"x"}})
	first := team.NewSession("1")
	_, err := a.Call(context.Background(), "p", first)
	require.NoError(t, err)
	m := first.Context().Value("result").(map[string]any)
	m["score"] = 2
	m["tags"].([]any)[0] = "changed"

	second := team.NewSession("2")
	_, err = a.Call(context.Background(), "p", second)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"score": 1, "tags": []any{"x"}}, second.Context().Value("result"))
}

// Started signals every call, however many started before anyone read the channel:
// a test that waits for its hundredth call must not hang on a signal dropped for
// want of room, and a test that never reads it must not block the calls.
func TestSlowAgentSignalsEveryStart(t *testing.T) {
	const calls = 200
	a := testkit.NewSlowAgent("slow", "done")
	a.Release()
	for range calls {
		_, err := a.Call(context.Background(), "x", nil)
		require.NoError(t, err)
	}
	assert.Len(t, a.Started(), calls)
}

// A SlowAgent and a ScriptedModel cancelled with a cause keep the context's error in
// their error's chain, as team's agents do: flow recognises the cut by it (the node
// is interrupted, not failed), and the cause alone hid it.
func TestCancelledWithACauseKeepsTheContextError(t *testing.T) {
	stop := errors.New("shutting down")
	a := testkit.NewSlowAgent("slow", "done")
	ctx, cancel := context.WithCancelCause(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := a.Call(ctx, "x", nil)
		errc <- err
	}()
	<-a.Started()
	cancel(stop)
	err := <-errc
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, stop)

	_, err = testkit.NewScriptedModel(testkit.Reply("hi")).Chat(ctx, &team.ChatRequest{})
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, stop)
}
