package a2a_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	spec "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/a2a"
	"github.com/flowteam/flowteam/testkit"
)

func TestServerCard(t *testing.T) {
	hs := serve(t, testkit.Analyst())
	card, err := sdkClient(t, hs).GetAgentCard(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "analyst", card.Name)
	assert.Equal(t, "analyst", card.Description)
	assert.Equal(t, hs.URL+"/", card.URL)
	assert.True(t, card.Capabilities.Streaming)
	require.Len(t, card.Skills, 1)
}

func TestServerCompletedTaskCarriesTheAnswer(t *testing.T) {
	hs := serve(t, testkit.Analyst())
	res, err := sdkClient(t, hs).SendMessage(context.Background(), userMessage("rate it"))
	require.NoError(t, err)
	task, ok := res.(*spec.Task)
	require.True(t, ok, "%T", res)
	assert.Equal(t, spec.TaskStateCompleted, task.Status.State)
	require.Len(t, task.Artifacts, 1)
	assert.Equal(t, "answer", task.Artifacts[0].Name)
	assert.Equal(t, spec.ContentParts{spec.TextPart{Text: "HIGH"}}, task.Artifacts[0].Parts)
	assert.NotContains(t, task.Metadata, a2a.KeyObjectType)
	assert.NotEmpty(t, task.Metadata[a2a.KeyResponseID])
}

// A failed run is a failed task whose metadata carries the structured fields, which
// status.message.metadata mirrors, with the text for people in the message's parts.
func TestServerFailedTaskCarriesTheStructuredError(t *testing.T) {
	hs := serve(t, testkit.NewFailingAgent("validator", codedError{}))
	res, err := sdkClient(t, hs).SendMessage(context.Background(), userMessage("check it"))
	require.NoError(t, err)
	task := res.(*spec.Task)
	assert.Equal(t, spec.TaskStateFailed, task.Status.State)
	md := task.Metadata
	assert.Equal(t, "error", md[a2a.KeyObjectType])
	assert.Equal(t, "invalid_query", md[a2a.KeyErrorType])
	assert.Equal(t, "REMOTE_VALIDATION_FAILED", md[a2a.KeyErrorCode])
	assert.Equal(t, "validation failed", md[a2a.KeyErrorMessage])
	assert.Equal(t, false, md[a2a.KeyRetryable])
	assert.Equal(t, "failed", md[a2a.KeyTaskState])
	require.NotEmpty(t, md[a2a.KeyResponseID])
	msg := task.Status.Message
	require.NotNil(t, msg)
	assert.Equal(t, md[a2a.KeyResponseID], msg.ID)
	for _, k := range []string{a2a.KeyObjectType, a2a.KeyErrorType, a2a.KeyErrorCode, a2a.KeyErrorMessage,
		a2a.KeyRetryable, a2a.KeyTaskState, a2a.KeyResponseID} {
		assert.Equal(t, md[k], msg.Metadata[k], k)
	}
	assert.Equal(t, spec.ContentParts{spec.TextPart{Text: "validation failed"}}, msg.Parts)
}

func TestServerStructuredErrorsOff(t *testing.T) {
	hs := serve(t, testkit.FailingWith("search", team.TypeRateLimited, "quota used"), a2a.WithStructuredErrors(false))
	res, err := sdkClient(t, hs).SendMessage(context.Background(), userMessage("look"))
	require.NoError(t, err)
	task := res.(*spec.Task)
	assert.Equal(t, spec.TaskStateFailed, task.Status.State)
	assert.NotContains(t, task.Metadata, a2a.KeyObjectType)
	assert.Empty(t, task.Status.Message.Metadata)
	assert.Equal(t, spec.ContentParts{spec.TextPart{Text: "quota used"}}, task.Status.Message.Parts)

	// The client then knows only the state and the text.
	_, err = dial(t, hs, a2a.WithStreaming(false)).Call(context.Background(), "look", nil)
	var e *team.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, team.TypeAgentFailed, e.Type)
	assert.Equal(t, "quota used", e.Message)
}

// Streaming, the node errors a team recovers from are ordinary events before the
// final status, and only the terminal failure is a failed status.
func TestServerStreamsEventsThenOneTerminalFailure(t *testing.T) {
	hs := serve(t, testkit.FailingWith("search", team.TypeTimeout, "too slow"))
	var states []spec.TaskState
	var events []string
	for ev, err := range sdkClient(t, hs).SendStreamingMessage(context.Background(), userMessage("look")) {
		require.NoError(t, err)
		switch e := ev.(type) {
		case *spec.Task:
			states = append(states, e.Status.State)
		case *spec.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
			if e.Status.State == spec.TaskStateWorking && e.Status.Message != nil {
				dp := e.Status.Message.Parts[0].(spec.DataPart)
				events = append(events, dp.Data["kind"].(string))
			}
			if e.Final {
				assert.Equal(t, "timeout", e.Metadata[a2a.KeyErrorType])
				assert.Equal(t, true, e.Metadata[a2a.KeyRetryable])
			}
		}
	}
	assert.Equal(t, []spec.TaskState{"submitted", "working", "working", "working", "failed"}, states)
	assert.Equal(t, []string{"run_start", "run_end"}, events)
}

// A member failure the team continues after is an ordinary event of a completed
// task, not a failed task.
func TestServerKeepsRecoveredNodeErrorsAsEvents(t *testing.T) {
	research, err := team.NewTeam("research",
		team.WithMembers(testkit.NewFixedAgent("market", "20bn EUR"), testkit.FailingWith("patents", team.TypeTimeout, "too slow")),
		team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError))
	require.NoError(t, err)
	hs := serve(t, research)
	for _, m := range modes {
		evs, err := testkit.Events(context.Background(), dial(t, hs, a2a.WithStreaming(m.streaming)), "e-bikes", nil)
		require.NoError(t, err, m.name)
		var failed *team.Event
		for i, ev := range evs {
			if ev.Agent == "patents" && ev.Kind == team.EventRunEnd {
				failed = &evs[i]
			}
		}
		require.NotNil(t, failed, m.name)
		assert.Equal(t, team.RunFailed, failed.Status, m.name)
		require.NotNil(t, failed.Error, m.name)
		assert.Equal(t, team.TypeTimeout, failed.Error.Type, m.name)
		last := evs[len(evs)-1]
		assert.Equal(t, team.RunCompleted, last.Status, m.name)
		assert.Contains(t, last.Answer.Content, "20bn EUR", m.name)
	}
}

// A run that waits for human decisions ends its task as input-required, which the
// client reports as an agent failure: decisions do not cross A2A.
func TestServerPendingRunIsInputRequired(t *testing.T) {
	refund := team.NewTool("refund", "Refund an order",
		nil,
		func(context.Context, struct {
			Order string `json:"order"`
		}) (string, error) {
			return "done", nil
		})
	refund.Sensitive = team.Always("refunds need a person")
	ask := testkit.CallTools(testkit.ToolCall("c1", "refund", `{"order":"A-1"}`))
	model := testkit.NewScriptedModel(ask, ask)
	clerk, err := team.NewReActAgent("clerk", model, team.WithTools(refund))
	require.NoError(t, err)
	hs := serve(t, clerk)
	res, err := sdkClient(t, hs).SendMessage(context.Background(), userMessage("refund A-1"))
	require.NoError(t, err)
	assert.Equal(t, spec.TaskStateInputRequired, res.(*spec.Task).Status.State)

	_, err = dial(t, hs).Call(context.Background(), "refund A-1", nil)
	var e *team.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, team.TypeAgentFailed, e.Type)
	var te *a2a.TaskError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, spec.TaskStateInputRequired, te.State)
}

// The message of a provider failure without its own message is its cause's, without
// the type and the HTTP status that Error() puts before it.
func TestErrorMetadataMessageOfAStatusFailure(t *testing.T) {
	err := &team.Error{Type: team.TypeSourceUnavailable, Status: 502, Err: errors.New("bad gateway")}
	md := a2a.ErrorMetadata(err, spec.TaskStateFailed, "")
	assert.Equal(t, "bad gateway", md[a2a.KeyErrorMessage])
	md = a2a.ErrorMetadata(team.NewError(team.TypeTimeout, ""), spec.TaskStateFailed, "")
	assert.Equal(t, "timeout", md[a2a.KeyErrorMessage])
}

// The card is served as the SDK serves one: GET, a CORS preflight, nothing else.
func TestServerCardMethods(t *testing.T) {
	hs := serve(t, testkit.Analyst())
	do := func(method string) *http.Response {
		req, err := http.NewRequest(method, hs.URL+a2asrv.WellKnownAgentCardPath, nil)
		require.NoError(t, err)
		res, err := hs.Client().Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		return res
	}
	res := do(http.MethodOptions)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, res.Header.Get("Access-Control-Allow-Methods"), "GET")
	assert.Equal(t, http.StatusMethodNotAllowed, do(http.MethodPost).StatusCode)
	res = do(http.MethodGet)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
}
