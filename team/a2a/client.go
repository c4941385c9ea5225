package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	spec "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/trace"
)

// Client is a team.Agent that runs each call as a task of a remote A2A agent. A task
// that ends failed, rejected or canceled is returned as the *team.Error the Converter
// makes of it (by default: the structured fields of the task's metadata, else of its
// status message, else the state and the text); a transport failure is a retryable
// source_unavailable error, and the end of ctx a cancelled or timeout one.
type Client struct {
	client    *a2aclient.Client
	name      string
	role      string
	streaming bool
	convert   Converter
}

var _ team.Agent = (*Client)(nil)

// ClientOption configures a Client.
type ClientOption func(*clientConfig)

type clientConfig struct {
	http      *http.Client
	name      string
	streaming *bool
	convert   Converter
}

// WithHTTPClient sets the HTTP client of the card resolution and the transport
// (default: http.DefaultClient; a call is bounded by its context).
func WithHTTPClient(c *http.Client) ClientOption { return func(cc *clientConfig) { cc.http = c } }

// WithName names the agent (default: the card's name).
func WithName(name string) ClientOption { return func(cc *clientConfig) { cc.name = name } }

// WithStreaming chooses streaming (message/stream) or unary (message/send) calls;
// by default the client streams when the card says the agent can.
func WithStreaming(on bool) ClientOption { return func(cc *clientConfig) { cc.streaming = &on } }

// WithConverter sets the one place where a remote task's failure becomes a
// *team.Error: use it for a provider whose metadata differs from ErrorMetadata's.
func WithConverter(fn Converter) ClientOption { return func(cc *clientConfig) { cc.convert = fn } }

// NewClient resolves the agent card at baseURL and returns a client of that agent.
func NewClient(ctx context.Context, baseURL string, opts ...ClientOption) (*Client, error) {
	cc := newClientConfig(opts)
	card, err := agentcard.NewResolver(cc.http).Resolve(ctx, baseURL)
	if err != nil {
		return nil, fmt.Errorf("a2a: agent card at %s: %w", baseURL, err)
	}
	return newClient(ctx, card, cc)
}

// NewClientFromCard returns a client of the agent card describes.
func NewClientFromCard(ctx context.Context, card *spec.AgentCard, opts ...ClientOption) (*Client, error) {
	return newClient(ctx, card, newClientConfig(opts))
}

func newClientConfig(opts []ClientOption) clientConfig {
	cc := clientConfig{http: http.DefaultClient}
	for _, o := range opts {
		o(&cc)
	}
	return cc
}

func newClient(ctx context.Context, card *spec.AgentCard, cc clientConfig) (*Client, error) {
	ac, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(cc.http))
	if err != nil {
		return nil, fmt.Errorf("a2a: client of %q: %w", card.Name, err)
	}
	c := &Client{client: ac, name: card.Name, role: card.Description,
		streaming: card.Capabilities.Streaming, convert: cc.convert}
	if cc.name != "" {
		c.name = cc.name
	}
	if cc.streaming != nil {
		c.streaming = *cc.streaming
	}
	if c.convert == nil {
		c.convert = DefaultConverter
	}
	return c, nil
}

// Name returns the agent's name.
func (c *Client) Name() string { return c.name }

// Role returns the card's description.
func (c *Client) Role() string { return c.role }

// Close releases the transport.
func (c *Client) Close() error { return c.client.Destroy() }

// Call runs prompt as a remote task. The remote run's events are emitted in ctx as
// nested in this run (streaming: as they come; unary: once the task ended); a
// terminal failure ends the call at once, so no answer follows it. When ctx ends
// while a task runs, the client asks the server to cancel it.
func (c *Client) Call(ctx context.Context, prompt string, sess *team.AgentSession) (*team.Answer, error) {
	began := time.Now()
	ri := team.NewRunInfo(ctx, c.name, sess)
	start := ri.Event(team.EventRunStart)
	start.Prompt = prompt
	team.Emit(ctx, start)
	params := &spec.MessageSendParams{Message: spec.NewMessage(spec.MessageRoleUser, spec.TextPart{Text: prompt})}
	var (
		content string
		err     error
	)
	if c.streaming {
		content, err = c.stream(ctx, ri, params)
	} else {
		content, err = c.send(ctx, ri, params)
	}
	end := ri.Event(team.EventRunEnd)
	end.Duration = time.Since(began)
	if err != nil {
		end.Status, end.Error = team.RunFailed, team.AsError(err, team.TypeAgentFailed)
		team.Emit(ctx, end)
		return nil, err
	}
	ans := &team.Answer{Agent: c.name, RunID: ri.RunID, Content: content, Metrics: trace.Metrics{Duration: end.Duration}}
	end.Status, end.Content, end.Answer = team.RunCompleted, content, ans
	team.Emit(ctx, end)
	return ans, nil
}

// send makes a unary call.
func (c *Client) send(ctx context.Context, ri team.RunInfo, params *spec.MessageSendParams) (string, error) {
	res, err := c.client.SendMessage(ctx, params)
	if err != nil {
		return "", c.transportError(ctx, "", err)
	}
	switch r := res.(type) {
	case *spec.Message:
		return textOf(r.Parts), nil
	case *spec.Task:
		for _, m := range r.History {
			emitRemote(ctx, ri, m)
		}
		return c.outcome(r.ID, r.Status, r.Metadata, r.Artifacts)
	}
	return "", &team.Error{Type: team.TypeBadResponse, Message: fmt.Sprintf("a2a: unexpected result %T", res)}
}

// stream makes a streaming call. It reads until the task's final status, and stops
// at the first terminal one.
func (c *Client) stream(ctx context.Context, ri team.RunInfo, params *spec.MessageSendParams) (string, error) {
	var (
		taskID    spec.TaskID
		artifacts []*spec.Artifact
		metadata  = map[string]any{}
	)
	for ev, err := range c.client.SendStreamingMessage(ctx, params) {
		if err != nil {
			return "", c.transportError(ctx, taskID, err)
		}
		switch e := ev.(type) {
		case *spec.Message:
			return textOf(e.Parts), nil
		case *spec.Task:
			taskID, artifacts = e.ID, append(artifacts, e.Artifacts...)
			maps.Copy(metadata, e.Metadata)
			if e.Status.State.Terminal() || e.Status.State == spec.TaskStateInputRequired {
				return c.outcome(e.ID, e.Status, metadata, artifacts)
			}
		case *spec.TaskArtifactUpdateEvent:
			taskID, artifacts = e.TaskID, addArtifact(artifacts, e)
		case *spec.TaskStatusUpdateEvent:
			taskID = e.TaskID
			maps.Copy(metadata, e.Metadata)
			if e.Final || e.Status.State.Terminal() {
				return c.outcome(e.TaskID, e.Status, metadata, artifacts)
			}
			emitRemote(ctx, ri, e.Status.Message)
		}
	}
	if ctx.Err() != nil {
		return "", c.transportError(ctx, taskID, ctx.Err())
	}
	return "", &team.Error{Type: team.TypeSourceUnavailable, Retry: true,
		Message: "a2a: the stream ended before the task did"}
}

// outcome returns the answer of a task in its final status, or its failure.
func (c *Client) outcome(id spec.TaskID, st spec.TaskStatus, md map[string]any, arts []*spec.Artifact) (string, error) {
	switch st.State {
	case spec.TaskStateCompleted:
		for _, a := range arts {
			if a.Name == answerArtifact {
				return textOf(a.Parts), nil
			}
		}
		if st.Message != nil {
			return textOf(st.Message.Parts), nil
		}
		return "", nil
	case spec.TaskStateFailed, spec.TaskStateCanceled, spec.TaskStateRejected:
		f := Failure{TaskID: string(id), State: st.State, Metadata: md, Message: st.Message}
		e := c.convert(f)
		if e == nil {
			e = DefaultConverter(f)
		}
		return "", e
	}
	text := ""
	if st.Message != nil {
		text = textOf(st.Message.Parts)
	}
	return "", &team.Error{Type: team.TypeAgentFailed,
		Message: fmt.Sprintf("a2a: remote task %s ended %s: %s", id, st.State, text),
		Err:     &TaskError{TaskID: string(id), State: st.State}}
}

// transportError classifies a failed exchange. When ctx ended, the remote task (if
// known) is cancelled on a short context of its own, since ctx can no longer carry
// the request.
func (c *Client) transportError(ctx context.Context, taskID spec.TaskID, err error) error {
	if ctx.Err() != nil {
		if taskID != "" {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
			_, _ = c.client.CancelTask(cctx, &spec.TaskIDParams{ID: taskID})
			cancel()
		}
		return team.ContextError(ctx)
	}
	if errors.Is(err, spec.ErrInvalidParams) || errors.Is(err, spec.ErrInvalidRequest) ||
		errors.Is(err, spec.ErrMethodNotFound) || errors.Is(err, spec.ErrUnsupportedOperation) {
		return &team.Error{Type: team.TypeInvalidQuery, Message: "a2a: " + err.Error(), Err: err}
	}
	return &team.Error{Type: team.TypeSourceUnavailable, Retry: true, Message: "a2a: " + err.Error(), Err: err}
}

// cancelTimeout bounds the request that cancels a remote task when a call is cut.
const cancelTimeout = 5 * time.Second

// emitRemote emits the team.Event a status message carries (see eventUpdate), as
// nested in the client's run.
func emitRemote(ctx context.Context, ri team.RunInfo, m *spec.Message) {
	if m == nil {
		return
	}
	for _, p := range m.Parts {
		dp, ok := p.(spec.DataPart)
		if !ok || dp.Metadata["kind"] != eventPart {
			continue
		}
		b, err := json.Marshal(dp.Data)
		if err != nil {
			continue
		}
		var ev team.Event
		if json.Unmarshal(b, &ev) != nil {
			continue
		}
		if ev.ParentRunID == "" {
			ev.ParentRunID = ri.RunID
		}
		team.Emit(ctx, ev)
	}
}

// addArtifact applies an artifact update to the list.
func addArtifact(arts []*spec.Artifact, e *spec.TaskArtifactUpdateEvent) []*spec.Artifact {
	if e.Artifact == nil {
		return arts
	}
	for _, a := range arts {
		if a.ID == e.Artifact.ID {
			if e.Append {
				a.Parts = append(a.Parts, e.Artifact.Parts...)
			} else {
				*a = *e.Artifact
			}
			return arts
		}
	}
	cp := *e.Artifact
	return append(arts, &cp)
}

// textOf joins the text parts.
func textOf(parts spec.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if t, ok := p.(spec.TextPart); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
