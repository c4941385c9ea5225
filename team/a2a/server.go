package a2a

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	spec "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/flowteam/flowteam/team"
)

// Server exposes a team.Agent as an A2A agent: an a2asrv.AgentExecutor whose
// Handler serves the agent card and the JSON-RPC transport. Each task is one run of
// the agent in a fresh session named by the task's A2A context id.
type Server struct {
	agent      team.Agent
	structured bool
	deltas     bool
	timeout    time.Duration
	url        string
	handlerOps []a2asrv.RequestHandlerOption

	base   context.Context // cancelled by Close: ends the runs in flight
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ a2asrv.AgentExecutor = (*Server)(nil)

// ServerOption configures a Server.
type ServerOption func(*Server)

// WithStructuredErrors turns the structured fields of a failed task (ErrorMetadata)
// on or off; they are on by default. Off, a failed task carries only the text.
func WithStructuredErrors(on bool) ServerOption { return func(s *Server) { s.structured = on } }

// WithRunTimeout bounds each run; a run that outlives it fails with a timeout.
func WithRunTimeout(d time.Duration) ServerOption { return func(s *Server) { s.timeout = d } }

// WithDeltas makes the server forward the agent's ReasonDelta events (streamed
// model text) as status updates too; by default they are left out, since every
// update is kept in the task's history and ReasonEnd carries the whole text.
func WithDeltas(on bool) ServerOption { return func(s *Server) { s.deltas = on } }

// WithURL sets the JSON-RPC endpoint the agent card advertises; by default it is the
// root of the host the card was asked from.
func WithURL(url string) ServerOption { return func(s *Server) { s.url = url } }

// WithHandlerOptions passes options (a task store, a logger, interceptors) to the
// SDK's request handler.
func WithHandlerOptions(opts ...a2asrv.RequestHandlerOption) ServerOption {
	return func(s *Server) { s.handlerOps = append(s.handlerOps, opts...) }
}

// NewServer returns a server running agent.
func NewServer(agent team.Agent, opts ...ServerOption) *Server {
	s := &Server{agent: agent, structured: true}
	for _, o := range opts {
		o(s)
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	return s
}

// Card returns the agent card: the agent's name, its role as description, one skill,
// streaming, and the JSON-RPC endpoint url.
func (s *Server) Card(url string) *spec.AgentCard {
	return &spec.AgentCard{
		Name:               s.agent.Name(),
		Description:        s.agent.Role(),
		URL:                url,
		PreferredTransport: spec.TransportProtocolJSONRPC,
		ProtocolVersion:    "0.3.0",
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Capabilities:       spec.AgentCapabilities{Streaming: true},
		Skills: []spec.AgentSkill{{ID: s.agent.Name(), Name: s.agent.Name(),
			Description: s.agent.Role(), Tags: []string{"flowteam"}}},
	}
}

// Handler returns the HTTP handler of the server: the agent card at
// a2asrv.WellKnownAgentCardPath and the JSON-RPC transport at every other path.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(s, s.handlerOps...)))
	if s.url != "" {
		mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(s.Card(s.url)))
		return mux
	}
	mux.HandleFunc(a2asrv.WellKnownAgentCardPath, func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		// The SDK's handler (GET and CORS preflight) on the card of the host asked.
		a2asrv.NewStaticAgentCardHandler(s.Card(scheme+"://"+r.Host+"/")).ServeHTTP(w, r)
	})
	return mux
}

// Close cancels the runs in flight and any started later (their tasks fail as
// cancelled) and waits for the runs to end.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

// Execute runs the agent for one task: the task is submitted, then working; the
// run's events become working status updates, its answer an artifact named "answer"
// and the completed status; a failure becomes a failed status (see
// WithStructuredErrors), a run waiting for human decisions an input-required one.
func (s *Server) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	s.wg.Add(1)
	defer s.wg.Done()
	if rc.StoredTask == nil {
		if err := q.Write(ctx, spec.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
	}
	if err := q.Write(ctx, spec.NewStatusUpdateEvent(rc, spec.TaskStateWorking, nil)); err != nil {
		return err
	}
	runCtx, cancel := s.runContext(ctx)
	defer cancel()
	var top topRun
	runCtx = team.WithSink(runCtx, func(e team.Event) {
		top.see(e)
		if e.Kind == team.EventReasonDelta && !s.deltas {
			return
		}
		// A write fails only once the task is final (cancelled): the events of a run
		// being cut short have nowhere to go.
		_ = q.Write(ctx, eventUpdate(rc, e))
	})
	ans, err := s.agent.Call(runCtx, promptOf(rc.Message), team.NewSession(rc.ContextID))
	if ctx.Err() != nil {
		return nil // the task was cancelled through A2A: Cancel wrote its final status
	}
	if err != nil {
		return q.Write(ctx, s.failure(rc, spec.TaskStateFailed, err, top.id()))
	}
	if ans.Pending != nil {
		msg := agentMessage(rc, ans.RunID, "the agent waits for human decisions")
		ev := spec.NewStatusUpdateEvent(rc, spec.TaskStateInputRequired, msg)
		ev.Final = true
		return q.Write(ctx, ev)
	}
	art := spec.NewArtifactEvent(rc, spec.TextPart{Text: ans.Content})
	art.Artifact.Name, art.LastChunk = answerArtifact, true
	if err := q.Write(ctx, art); err != nil {
		return err
	}
	ev := spec.NewStatusUpdateEvent(rc, spec.TaskStateCompleted, agentMessage(rc, ans.RunID, ans.Content))
	ev.Final, ev.Metadata = true, map[string]any{KeyResponseID: ans.RunID}
	return q.Write(ctx, ev)
}

// Cancel ends a task a client cancelled: its canceled status stops the run (the SDK
// cancels the context of Execute once the status is applied).
func (s *Server) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	err := team.NewError(team.TypeCancelled, "the task was cancelled by a client")
	return q.Write(ctx, s.failure(rc, spec.TaskStateCanceled, err, ""))
}

// runContext returns the context of one run: ended by Close and by the run timeout.
func (s *Server) runContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.base, cancel)
	if s.timeout > 0 {
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeout(ctx, s.timeout)
		return ctx, func() { cancelT(); stop(); cancel() }
	}
	return ctx, func() { stop(); cancel() }
}

// failure returns the final status update of a task that ended in state because of
// err: the text in the message's parts and, unless turned off, the structured fields
// on the update (which the SDK merges into the task's metadata) and on the message.
func (s *Server) failure(rc *a2asrv.RequestContext, state spec.TaskState, err error, runID string) *spec.TaskStatusUpdateEvent {
	e := team.AsError(err, team.TypeAgentFailed)
	msg := agentMessage(rc, runID, messageOf(e))
	ev := spec.NewStatusUpdateEvent(rc, state, msg)
	ev.Final = true
	if s.structured {
		ev.Metadata = ErrorMetadata(err, state, runID)
		msg.Metadata = maps.Clone(ev.Metadata) // the task's and the message's maps are not shared
	}
	return ev
}

// answerArtifact names the artifact that holds a run's answer.
const answerArtifact = "answer"

// eventPart marks the data part of a status update that carries a team.Event.
const eventPart = "flowteam.event"

// eventUpdate returns the working status update carrying ev as a data part.
func eventUpdate(rc *a2asrv.RequestContext, ev team.Event) *spec.TaskStatusUpdateEvent {
	var data map[string]any
	if b, err := json.Marshal(ev); err == nil {
		_ = json.Unmarshal(b, &data)
	}
	msg := spec.NewMessageForTask(spec.MessageRoleAgent, rc,
		spec.DataPart{Data: data, Metadata: map[string]any{"kind": eventPart}})
	return spec.NewStatusUpdateEvent(rc, spec.TaskStateWorking, msg)
}

// agentMessage returns the agent's text message of the task; its id is the run's.
func agentMessage(rc *a2asrv.RequestContext, runID, text string) *spec.Message {
	msg := spec.NewMessageForTask(spec.MessageRoleAgent, rc, spec.TextPart{Text: text})
	if runID != "" {
		msg.ID = runID
	}
	return msg
}

// promptOf returns the text of a message: its text parts, and its data parts as
// JSON, one per line.
func promptOf(m *spec.Message) string {
	if m == nil {
		return ""
	}
	var parts []string
	for _, p := range m.Parts {
		switch p := p.(type) {
		case spec.TextPart:
			parts = append(parts, p.Text)
		case spec.DataPart:
			if b, err := json.Marshal(p.Data); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	return strings.Join(parts, "\n")
}

// topRun remembers the id of the first top-level run of a call (the agent's own),
// the response id of a failure.
type topRun struct {
	mu    sync.Mutex
	runID string
}

func (t *topRun) see(e team.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runID == "" && e.ParentRunID == "" && e.RunID != "" {
		t.runID = e.RunID
	}
}

func (t *topRun) id() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.runID
}
