package testkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/flowteam/flowteam/team"
)

// ErrScriptExhausted is returned by a ScriptedModel asked for more turns than its
// script has.
var ErrScriptExhausted = errors.New("scripted model: no turn left for this request")

// Turn is one scripted model answer: text, reasoning and tool calls with usage, or a
// failure. Respond, when set, computes the answer from the request instead. Wait, when
// set, makes the model block until it is closed (or the request's context ends), to
// test cancellation without sleeping.
type Turn struct {
	Content   string
	Reasoning string
	ToolCalls []team.ToolCall
	Usage     team.Usage
	Err       error
	Respond   func(req *team.ChatRequest) (*team.ChatResponse, error)
	Wait      <-chan struct{}
}

// Reply returns a turn that answers with text.
func Reply(content string) Turn { return Turn{Content: content} }

// CallTools returns a turn that asks for tool calls (one batch).
func CallTools(calls ...team.ToolCall) Turn { return Turn{ToolCalls: calls} }

// ToolCall returns a tool call with the given id, tool name and JSON arguments.
func ToolCall(id, name, args string) team.ToolCall {
	return team.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// Fail returns a turn that fails with err.
func Fail(err error) Turn { return Turn{Err: err} }

// FailWith returns a turn that fails with a structured error of the given type
// (retryable as the type usually is).
func FailWith(t team.ErrorType) Turn {
	return Turn{Err: team.NewError(t, "scripted %s", t)}
}

// WithUsage returns the turn with the given token usage.
func (t Turn) WithUsage(u team.Usage) Turn { t.Usage = u; return t }

// WithReasoning returns the turn with reasoning (thinking) text.
func (t Turn) WithReasoning(r string) Turn { t.Reasoning = r; return t }

// Tokens is a short way to write a usage: prompt, completion, think (reasoning) and
// cached tokens; the total is prompt + completion.
func Tokens(prompt, completion, think, cached int64) team.Usage {
	return team.Usage{PromptTokens: prompt, CompletionTokens: completion, ReasoningTokens: think, CachedTokens: cached,
		TotalTokens: prompt + completion}
}

type rule struct {
	match func(*team.ChatRequest) bool
	turn  Turn
}

// ScriptedModel is a team.ChatModel (and team.StreamingModel) that answers from a
// script: rules added with When answer every request they match, in the order added;
// other requests take the script's turns in order. It records every request for
// assertions. It is safe for concurrent use.
type ScriptedModel struct {
	mu       sync.Mutex
	rules    []rule
	turns    []Turn
	next     int
	requests []team.ChatRequest
}

var _ team.StreamingModel = (*ScriptedModel)(nil)

// NewScriptedModel returns a model that answers with the given turns, in order.
func NewScriptedModel(turns ...Turn) *ScriptedModel { return &ScriptedModel{turns: turns} }

// Then appends turns to the script.
func (m *ScriptedModel) Then(turns ...Turn) *ScriptedModel {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turns = append(m.turns, turns...)
	return m
}

// When adds a rule: every request match accepts is answered with turn (the script's
// position does not move).
func (m *ScriptedModel) When(match func(*team.ChatRequest) bool, turn Turn) *ScriptedModel {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules = append(m.rules, rule{match, turn})
	return m
}

// Requests returns copies of the requests received, in order.
func (m *ScriptedModel) Requests() []team.ChatRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]team.ChatRequest, len(m.requests))
	for i := range m.requests {
		out[i] = cloneRequest(&m.requests[i])
	}
	return out
}

// Calls returns how many requests the model received.
func (m *ScriptedModel) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// Remaining returns how many script turns are left.
func (m *ScriptedModel) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.turns) - m.next
}

// pick records the request and chooses its turn.
func (m *ScriptedModel) pick(req *team.ChatRequest) (Turn, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, cloneRequest(req))
	n := len(m.requests)
	for _, r := range m.rules {
		if r.match(req) {
			return r.turn, n, nil
		}
	}
	if m.next >= len(m.turns) {
		return Turn{}, n, fmt.Errorf("%w (request %d, script has %d turns; last user message %q)", ErrScriptExhausted, n, len(m.turns), LastUserMessage(*req))
	}
	t := m.turns[m.next]
	m.next++
	return t, n, nil
}

// cloneRequest copies a request so that it shares no slice or map with the original:
// an agent may edit its history, or the tool arguments it got, in place. (A JSON round
// trip would not do: it rewrites the arguments, and fails on arguments a model cut
// short.)
func cloneRequest(req *team.ChatRequest) team.ChatRequest {
	c := *req
	c.Messages = slices.Clone(req.Messages)
	for i := range c.Messages {
		c.Messages[i].ToolCalls = cloneToolCalls(c.Messages[i].ToolCalls)
	}
	c.Tools = slices.Clone(req.Tools)
	c.Options.Stop = slices.Clone(req.Options.Stop)
	c.Options.Extra = maps.Clone(req.Options.Extra)
	return c
}

// cloneToolCalls copies calls and their arguments.
func cloneToolCalls(calls []team.ToolCall) []team.ToolCall {
	out := slices.Clone(calls)
	for i := range out {
		out[i].Args = slices.Clone(out[i].Args)
	}
	return out
}

// Chat answers with the next turn.
func (m *ScriptedModel) Chat(ctx context.Context, req *team.ChatRequest) (*team.ChatResponse, error) {
	t, _, err := m.pick(req)
	if err != nil {
		return nil, err
	}
	if t.Wait != nil {
		select {
		case <-t.Wait:
		case <-ctx.Done():
			return nil, team.ContextError(ctx)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, team.ContextError(ctx)
	}
	if t.Respond != nil {
		return t.Respond(req)
	}
	if t.Err != nil {
		return nil, t.Err
	}
	finish := "stop"
	if len(t.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	return &team.ChatResponse{
		Message: team.Message{Role: team.RoleAssistant, Content: t.Content, Reasoning: t.Reasoning, ToolCalls: cloneToolCalls(t.ToolCalls)},
		Usage:   t.Usage, FinishReason: finish, Model: "scripted",
	}, nil
}

// ChatStream answers with the next turn as a stream: the reasoning, then the content
// word by word, then each tool call as one fragment, then the usage.
func (m *ScriptedModel) ChatStream(ctx context.Context, req *team.ChatRequest) iter.Seq2[team.Delta, error] {
	return func(yield func(team.Delta, error) bool) {
		resp, err := m.Chat(ctx, req)
		if err != nil {
			yield(team.Delta{}, err)
			return
		}
		msg := resp.Message
		if msg.Reasoning != "" && !yield(team.Delta{Reasoning: msg.Reasoning}, nil) {
			return
		}
		for _, w := range splitWords(msg.Content) {
			if !yield(team.Delta{Content: w}, nil) {
				return
			}
		}
		for i, c := range msg.ToolCalls {
			if !yield(team.Delta{ToolCalls: []team.ToolCallDelta{{Index: i, ID: c.ID, Name: c.Name, Args: string(c.Args)}}}, nil) {
				return
			}
		}
		u := resp.Usage
		yield(team.Delta{Usage: &u, FinishReason: resp.FinishReason, Model: resp.Model}, nil)
	}
}

// splitWords splits s after each space, so the pieces join back into s.
func splitWords(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// LastUserIs matches requests whose last user message is text.
func LastUserIs(text string) func(*team.ChatRequest) bool {
	return func(r *team.ChatRequest) bool { return LastUserMessage(*r) == text }
}

// LastIsToolResult matches requests whose last message is the result of the named tool.
func LastIsToolResult(tool string) func(*team.ChatRequest) bool {
	return func(r *team.ChatRequest) bool {
		n := len(r.Messages)
		return n > 0 && r.Messages[n-1].Role == team.RoleTool && r.Messages[n-1].Name == tool
	}
}

// LastUserMessage returns the content of the request's last user message ("" if none).
func LastUserMessage(r team.ChatRequest) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == team.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}
