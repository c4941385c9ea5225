package flow_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// context.suspendUntil suspends the run with the due time recorded under
// flow.WakeAtVar + node id; a resume before that time suspends again at the same time,
// and one after it deletes the record, returns true and goes on.
func TestScriptSuspendUntilRecordsTheDueTime(t *testing.T) {
	e := flow.NewEngine()
	g := oneNode(t, `context.incr("x"); context.put("over", context.suspendUntil("80ms"))`)
	fc := flow.NewContext("i")
	before := time.Now()
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	at, ok := fc.GetInt(flow.WakeAtVar + "x")
	require.True(t, ok, "the due time is recorded")
	due := time.UnixMilli(at)
	assert.WithinDuration(t, before.Add(80*time.Millisecond), due, 50*time.Millisecond)
	assert.Equal(t, "until "+due.UTC().Format(time.RFC3339Nano), res.Reason)
	assert.Equal(t, false, fc.Value("over"))
	assert.Equal(t, []string{"sc:x"}, res.Frontier.Pending())

	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status, "resumed before its time")
	again, _ := fc.GetInt(flow.WakeAtVar + "x")
	assert.Equal(t, at, again, "the first recorded time stands")

	time.Sleep(time.Until(due))
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, true, fc.Value("over"))
	assert.Equal(t, int64(3), fc.Value("x"))
	assert.Equal(t, int64(1), fc.Value("next"))
	assert.NotContains(t, fc.Vars(), flow.WakeAtVar+"x")
}

// An RFC 3339 time is taken as it is: a past one does not suspend, a future one
// suspends until it; a time.Time or time.Duration value is taken as well.
func TestScriptSuspendUntilTime(t *testing.T) {
	e := flow.NewEngine()
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), oneNode(t, `context.suspendUntil("2001-02-03T04:05:06Z")`), fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)

	fc = flow.NewContext("i")
	res, err = e.EvalGraph(context.Background(), oneNode(t, `context.suspendUntil("2999-06-01T09:00:00Z")`), fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, "until 2999-06-01T09:00:00Z", res.Reason)
	at, _ := fc.GetInt(flow.WakeAtVar + "x")
	assert.Equal(t, time.Date(2999, 6, 1, 9, 0, 0, 0, time.UTC).UnixMilli(), at)

	// expr's own time values are taken too.
	for _, arg := range []string{`duration("1h")`, `now() + duration("1h")`} {
		fc = flow.NewContext("i")
		res, err = e.EvalGraph(context.Background(), oneNode(t, `context.suspendUntil(`+arg+`)`), fc)
		require.NoError(t, err, arg)
		assert.Equal(t, flow.StatusSuspended, res.Status, arg)
		at, _ = fc.GetInt(flow.WakeAtVar + "x")
		assert.WithinDuration(t, time.Now().Add(time.Hour), time.UnixMilli(at), time.Minute, arg)
	}
}

// An argument that is neither a time nor a duration fails the node with a script error
// naming it; a wrong number of arguments fails at load time.
func TestScriptSuspendUntilBadArgument(t *testing.T) {
	e := flow.NewEngine()
	for _, arg := range []string{`"tomorrow"`, `42`, `nil`} {
		fc := flow.NewContext("i")
		_, err := e.EvalGraph(context.Background(), oneNode(t, `context.suspendUntil(`+arg+`)`), fc)
		require.Error(t, err, arg)
		assert.True(t, errors.Is(err, flow.ErrSuspendUntil), "%s: %v", arg, err)
		var ne *flow.NodeError
		require.True(t, errors.As(err, &ne), arg)
		assert.Equal(t, "x", ne.Node)
		assert.Equal(t, flow.CodeScript, ne.Code)
		assert.Nil(t, fc.Value("next"))
	}
	_, err := flow.NewExprEvaluator().CompileScript(`context.suspendUntil()`)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "context.suspendUntil takes 1 to 1 arguments"), err.Error())
}

// flow.SuspendUntil is the same wait for a Go task.
func TestSuspendUntilFromATask(t *testing.T) {
	e := flow.NewEngine()
	e.RegisterTask("pause", flow.TaskFunc(func(_ context.Context, c *flow.Context, n *flow.Node) error {
		if flow.SuspendUntil(c, n, time.Now().Add(time.Hour)) {
			c.Set("over", true)
		}
		return nil
	}))
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), oneNode(t, "@pause"), fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusSuspended, res.Status)
	assert.True(t, strings.HasPrefix(res.Reason, "until "), res.Reason)
	fc.Set(flow.WakeAtVar+"x", time.Now().Add(-time.Second).UnixMilli()) // as if the hour had passed
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, true, fc.Value("over"))
}
