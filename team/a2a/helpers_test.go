package a2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	spec "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/a2a"
)

// serve runs agent as an A2A server on an httptest server until the test ends.
func serve(t testing.TB, agent team.Agent, opts ...a2a.ServerOption) *httptest.Server {
	t.Helper()
	srv := a2a.NewServer(agent, opts...)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close() // ends runs a test left waiting, so the HTTP server's requests end
		hs.Close()
	})
	return hs
}

// dial returns a client of the agent served by hs.
func dial(t testing.TB, hs *httptest.Server, opts ...a2a.ClientOption) *a2a.Client {
	t.Helper()
	opts = append([]a2a.ClientOption{a2a.WithHTTPClient(hs.Client())}, opts...)
	c, err := a2a.NewClient(context.Background(), hs.URL, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// modes are the two ways a client calls.
var modes = []struct {
	name      string
	streaming bool
}{{"unary", false}, {"streaming", true}}

// codedError is an error of another library: a type and a code of its own.
type codedError struct{}

func (codedError) Error() string     { return "validation failed" }
func (codedError) ErrorType() string { return "invalid_query" }
func (codedError) ErrorCode() string { return "REMOTE_VALIDATION_FAILED" }

// finalExec is an A2A executor of another provider: each task ends with the status
// update final makes.
type finalExec struct {
	final func(rc *a2asrv.RequestContext) *spec.TaskStatusUpdateEvent
}

func (f finalExec) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if err := q.Write(ctx, spec.NewSubmittedTask(rc, rc.Message)); err != nil {
		return err
	}
	ev := f.final(rc)
	ev.Final = true
	return q.Write(ctx, ev)
}

func (finalExec) Cancel(context.Context, *a2asrv.RequestContext, eventqueue.Queue) error { return nil }

// serveExec serves exec, named "provider", with the SDK's own handlers.
func serveExec(t testing.TB, exec a2asrv.AgentExecutor) *httptest.Server {
	t.Helper()
	var hs *httptest.Server
	mux := http.NewServeMux()
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(exec)))
	mux.HandleFunc(a2asrv.WellKnownAgentCardPath, func(w http.ResponseWriter, r *http.Request) {
		card := &spec.AgentCard{Name: "provider", Description: "another provider", URL: hs.URL + "/",
			PreferredTransport: spec.TransportProtocolJSONRPC, Capabilities: spec.AgentCapabilities{Streaming: true}}
		_ = json.NewEncoder(w).Encode(card)
	})
	hs = httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs
}

// failedWith returns a final failed status whose task and message metadata are the
// given ones, with text in its parts.
func failedWith(state spec.TaskState, outer, inner map[string]any, text string) func(*a2asrv.RequestContext) *spec.TaskStatusUpdateEvent {
	return func(rc *a2asrv.RequestContext) *spec.TaskStatusUpdateEvent {
		msg := spec.NewMessageForTask(spec.MessageRoleAgent, rc, spec.TextPart{Text: text})
		msg.Metadata = inner
		ev := spec.NewStatusUpdateEvent(rc, state, msg)
		ev.Metadata = outer
		return ev
	}
}

// taskIDs records the id of every task a server starts.
type taskIDs chan spec.TaskID

func (ids taskIDs) Intercept(ctx context.Context, rc *a2asrv.RequestContext) (context.Context, error) {
	if rc.Message != nil {
		ids <- rc.TaskID
	}
	return ctx, nil
}

// next returns the id of the next task started.
func (ids taskIDs) next(t testing.TB) spec.TaskID {
	select {
	case id := <-ids:
		return id
	case <-time.After(5 * time.Second):
		t.Error("no task started")
		return ""
	}
}

// sdkClient returns the SDK's own client of the agent served by hs.
func sdkClient(t testing.TB, hs *httptest.Server) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.NewResolver(hs.Client()).Resolve(context.Background(), hs.URL)
	require.NoError(t, err)
	c, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(hs.Client()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// userMessage returns the parameters of a message/send with text.
func userMessage(text string) *spec.MessageSendParams {
	return &spec.MessageSendParams{Message: spec.NewMessage(spec.MessageRoleUser, spec.TextPart{Text: text})}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
