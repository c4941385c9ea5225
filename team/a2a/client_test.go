package a2a_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	spec "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/a2a"
	"github.com/flowteam/flowteam/testkit"
)

func TestClientAnswers(t *testing.T) {
	hs := serve(t, testkit.Analyst())
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			c := dial(t, hs, a2a.WithStreaming(m.streaming))
			assert.Equal(t, "analyst", c.Name())
			evs, err := testkit.Events(context.Background(), c, "rate it", team.NewSession("s-1"))
			require.NoError(t, err)
			require.Len(t, evs, 4)
			local, remote := evs[0], evs[1]
			assert.Equal(t, team.EventRunStart, local.Kind)
			assert.Equal(t, team.EventRunStart, remote.Kind)
			assert.Equal(t, "rate it", remote.Prompt)
			assert.Equal(t, local.RunID, remote.ParentRunID, "the remote run is nested in the client's")
			assert.NotEqual(t, local.RunID, remote.RunID)
			assert.Equal(t, team.EventRunEnd, evs[2].Kind)
			end := evs[3]
			assert.Equal(t, team.EventRunEnd, end.Kind)
			assert.Equal(t, team.RunCompleted, end.Status)
			require.NotNil(t, end.Answer)
			assert.Equal(t, "HIGH", end.Answer.Content)
			assert.Equal(t, local.RunID, end.Answer.RunID)
		})
	}
}

// A remote fatal error is the same structured error as in process: errors.As and
// errors.Is work, the code and the retryable flag are kept; streaming, no answer
// follows it.
func TestClientRemoteFatalErrorKeepsItsCode(t *testing.T) {
	validator := serve(t, testkit.NewFailingAgent("validator", codedError{}))
	limited := serve(t, testkit.NewFailingAgent("search",
		&team.Error{Type: team.TypeRateLimited, Retry: true, Code: "429-QUOTA", Message: "quota used"}))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			evs, err := testkit.Events(context.Background(), dial(t, validator, a2a.WithStreaming(m.streaming)), "check", nil)
			var e *team.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, team.TypeInvalidQuery, e.Type)
			assert.Equal(t, "REMOTE_VALIDATION_FAILED", e.Code)
			assert.Equal(t, "validation failed", e.Message)
			assert.False(t, e.Retryable())
			var te *a2a.TaskError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, spec.TaskStateFailed, te.State)
			last := evs[len(evs)-1]
			assert.Equal(t, team.EventRunEnd, last.Kind)
			assert.Equal(t, team.RunFailed, last.Status)
			for _, ev := range evs {
				assert.NotEqual(t, team.RunCompleted, ev.Status, "no answer after a terminal failure: %v", ev)
			}

			_, err = dial(t, limited, a2a.WithStreaming(m.streaming)).Call(context.Background(), "look", nil)
			assert.ErrorIs(t, err, team.ErrRateLimited)
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "429-QUOTA", e.Code)
			assert.True(t, e.Retryable())
		})
	}
}

func TestClientRemoteTimeout(t *testing.T) {
	t.Run("server run timeout", func(t *testing.T) {
		hs := serve(t, testkit.NewSlowAgent("slow", "late"), a2a.WithRunTimeout(20*time.Millisecond))
		for _, m := range modes {
			_, err := dial(t, hs, a2a.WithStreaming(m.streaming)).Call(context.Background(), "wait", nil)
			var e *team.Error
			require.ErrorAs(t, err, &e, m.name)
			assert.Equal(t, team.TypeTimeout, e.Type, m.name)
			assert.True(t, e.Retryable(), m.name)
		}
	})
	// The caller's deadline ends the call with a timeout; once the client knows the
	// remote task (it got the task's first event), it cancels it, so the remote run
	// does not go on.
	t.Run("client deadline", func(t *testing.T) {
		slow := testkit.NewSlowAgent("slow", "late")
		ids := make(taskIDs, 2)
		hs := serve(t, slow, a2a.WithHandlerOptions(a2asrv.WithRequestContextInterceptor(ids)))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ctx = team.WithSink(ctx, func(e team.Event) {
			if e.Agent == "slow" && e.Kind == team.EventRunStart && e.ParentRunID != "" {
				cancel() // the remote run started: the client has seen its task
			}
		})
		_, err := dial(t, hs).Call(ctx, "wait", nil)
		assert.ErrorIs(t, err, team.ErrCancelled)
		assert.ErrorIs(t, err, context.Canceled)
		task := awaitState(t, hs, ids.next(t), spec.TaskStateCanceled)
		assert.Equal(t, "cancelled", task.Metadata[a2a.KeyErrorType])

		dl, cancelDL := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancelDL()
		_, err = dial(t, hs).Call(dl, "wait", nil)
		var e *team.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, team.TypeTimeout, e.Type)
		assert.True(t, e.Retryable())
	})
}

// awaitState polls the task until it reaches state: the cancel request a client
// sends when its call is cut runs after the call returned.
func awaitState(t *testing.T, hs *httptest.Server, id spec.TaskID, state spec.TaskState) *spec.Task {
	t.Helper()
	c := sdkClient(t, hs)
	var task *spec.Task
	require.Eventually(t, func() bool {
		var err error
		task, err = c.GetTask(context.Background(), &spec.TaskQueryParams{ID: id})
		return err == nil && task.Status.State == state
	}, 5*time.Second, 5*time.Millisecond)
	return task
}

// A task another party cancels is a cancelled error.
func TestClientRemoteCancel(t *testing.T) {
	slow := testkit.NewSlowAgent("slow", "late")
	ids := make(taskIDs, 2)
	hs := serve(t, slow, a2a.WithHandlerOptions(a2asrv.WithRequestContextInterceptor(ids)))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			go func() {
				id := ids.next(t)
				<-slow.Started()
				// The run may start before the server stored its task: try until it has.
				c := sdkClient(t, hs)
				assert.Eventually(t, func() bool {
					_, err := c.CancelTask(context.Background(), &spec.TaskIDParams{ID: id})
					return err == nil
				}, 5*time.Second, 5*time.Millisecond)
			}()
			_, err := dial(t, hs, a2a.WithStreaming(m.streaming)).Call(context.Background(), "wait", nil)
			var e *team.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, team.TypeCancelled, e.Type)
			assert.Equal(t, "cancelled", e.Code)
			var te *a2a.TaskError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, spec.TaskStateCanceled, te.State)
		})
	}
}

func TestClientMalformedMetadata(t *testing.T) {
	good := map[string]any{"object_type": "error", "error_type": "auth_denied", "error_code": "NO_LICENCE",
		"error_message": "no licence for patent_db", "retryable": false, "task_state": "failed"}
	tests := []struct {
		name         string
		outer, inner map[string]any
		state        spec.TaskState
		want         team.ErrorType
		code, msg    string
	}{
		{"outer first", good, map[string]any{"object_type": "error", "error_type": "timeout"},
			spec.TaskStateFailed, team.TypeAuthDenied, "NO_LICENCE", "no licence for patent_db"},
		{"outer malformed, message used", map[string]any{"object_type": "error", "error_type": 42}, good,
			spec.TaskStateFailed, team.TypeAuthDenied, "NO_LICENCE", "no licence for patent_db"},
		{"both malformed", map[string]any{"object_type": "error", "error_type": "timeout", "retryable": "yes"},
			map[string]any{"object_type": "error", "error_code": []any{1}},
			spec.TaskStateFailed, team.TypeAgentFailed, "", "the text"},
		{"rejected without metadata", nil, nil, spec.TaskStateRejected, team.TypeRejected, "", "the text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := serveExec(t, finalExec{failedWith(tt.state, tt.outer, tt.inner, "the text")})
			for _, m := range modes {
				_, err := dial(t, hs, a2a.WithStreaming(m.streaming)).Call(context.Background(), "q", nil)
				var e *team.Error
				require.ErrorAs(t, err, &e, m.name)
				assert.Equal(t, tt.want, e.Type, m.name)
				assert.Equal(t, tt.code, e.Code, m.name)
				assert.Equal(t, tt.msg, e.Message, m.name)
			}
		})
	}
}

// A provider with metadata of its own is adapted in the converter.
func TestClientConverter(t *testing.T) {
	hs := serveExec(t, finalExec{failedWith(spec.TaskStateFailed,
		map[string]any{"errorKind": "QUOTA", "errorCode": 4291}, nil, "slow down")})
	quota := func(f a2a.Failure) *team.Error {
		if f.Metadata["errorKind"] != "QUOTA" {
			return nil
		}
		return &team.Error{Type: team.TypeRateLimited, Retry: true, Code: "4291", Message: "provider quota"}
	}
	_, err := dial(t, hs, a2a.WithConverter(quota)).Call(context.Background(), "q", nil)
	var e *team.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, team.TypeRateLimited, e.Type)
	assert.Equal(t, "4291", e.Code)
	assert.True(t, e.Retryable())
}

// A server that drops the connection is a retryable source_unavailable failure.
func TestClientDroppedConnection(t *testing.T) {
	var hs *httptest.Server
	card := a2a.NewServer(testkit.Analyst()).Card("")
	hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			c := *card
			c.URL = hs.URL + "/"
			writeJSON(w, &c)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"kind\":\"task\",\"id\":\"t1\",\"contextId\":\"c1\",\"status\":{\"state\":\"submitted\"}}}\n\n"))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // cut the connection mid-response
	}))
	t.Cleanup(hs.Close)
	for _, m := range modes {
		_, err := dial(t, hs, a2a.WithStreaming(m.streaming)).Call(context.Background(), "q", nil)
		var e *team.Error
		require.ErrorAs(t, err, &e, m.name)
		assert.Equal(t, team.TypeSourceUnavailable, e.Type, m.name)
		assert.True(t, e.Retryable(), m.name)
	}
	// Nobody listens any more.
	hs.Close()
	_, err := a2a.NewClient(context.Background(), hs.URL)
	assert.Error(t, err)
	var te *a2a.TaskError
	assert.False(t, errors.As(err, &te))
}
