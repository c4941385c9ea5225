package team

import (
	"context"
	"encoding/json"
	"iter"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Role is who wrote a message.
type Role string

// Message roles, as chat-completion APIs name them.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one message of a conversation. An assistant message may carry tool calls
// (and reasoning text from a thinking model); a tool message answers one tool call
// and names it in ToolCallID.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	// Name is the tool's name on a tool message.
	Name string `json:"name,omitempty"`
}

// SystemMessage returns a system message.
func SystemMessage(content string) Message { return Message{Role: RoleSystem, Content: content} }

// UserMessage returns a user message.
func UserMessage(content string) Message { return Message{Role: RoleUser, Content: content} }

// AssistantMessage returns an assistant message without tool calls.
func AssistantMessage(content string) Message { return Message{Role: RoleAssistant, Content: content} }

// clone returns a copy of m that shares no slices with it.
func (m Message) clone() Message {
	m.ToolCalls = slices.Clone(m.ToolCalls)
	for i := range m.ToolCalls {
		m.ToolCalls[i].Args = slices.Clone(m.ToolCalls[i].Args)
	}
	return m
}

func cloneMessages(ms []Message) []Message {
	if ms == nil {
		return nil
	}
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = m.clone()
	}
	return out
}

// ToolCall is a model's request to call a tool. ID is the model's id for the call: the
// tool's answer, an approval decision and every event about the call refer to it.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// ToolDef is what a model is told about a tool: its name, what it does and the JSON
// schema of its arguments.
type ToolDef struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	Parameters  *jsonschema.Schema `json:"parameters,omitempty"`
}

// ChatOptions are the per-request model settings. Zero values leave the provider's
// defaults.
type ChatOptions struct {
	// Model overrides the client's model.
	Model       string   `json:"model,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"topP,omitempty"`
	MaxTokens   int      `json:"maxTokens,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	// ToolChoice is "auto", "none", "required" or a tool name; empty leaves it unset.
	ToolChoice string `json:"toolChoice,omitempty"`
	// Extra fields are copied into the provider's request body as they are.
	Extra map[string]any `json:"extra,omitempty"`
}

// ChatRequest is one request to a chat model.
type ChatRequest struct {
	Messages []Message   `json:"messages"`
	Tools    []ToolDef   `json:"tools,omitempty"`
	Options  ChatOptions `json:"options,omitzero"`
}

// Usage is the token accounting of one model call. ReasoningTokens (think tokens) and
// CachedTokens are parts of CompletionTokens and PromptTokens respectively, as the
// providers report them.
type Usage struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	ReasoningTokens  int64 `json:"reasoningTokens,omitempty"`
	CachedTokens     int64 `json:"cachedTokens,omitempty"`
	TotalTokens      int64 `json:"totalTokens"`
}

// ChatResponse is a model's answer: an assistant message (content, reasoning, tool
// calls), the token usage and why the model stopped.
type ChatResponse struct {
	Message      Message `json:"message"`
	Usage        Usage   `json:"usage"`
	FinishReason string  `json:"finishReason,omitempty"`
	Model        string  `json:"model,omitempty"`
}

// ChatModel is a chat-completion model. Chat must honour ctx and return a *Error for
// failures a caller may branch on (rate limits, timeouts, denied access).
type ChatModel interface {
	Chat(ctx context.Context, req *ChatRequest) (*ChatResponse, error)
}

// StreamingModel is implemented by models that can stream their answer. The sequence
// yields deltas until the answer is complete; a failure is yielded once, as the last
// element. Breaking the loop early abandons the request.
type StreamingModel interface {
	ChatModel
	ChatStream(ctx context.Context, req *ChatRequest) iter.Seq2[Delta, error]
}

// Delta is one piece of a streamed answer. Tool calls arrive in fragments: the first
// fragment of a call has its Index, ID and Name, later ones add to its arguments. A
// fragment with an ID other than that of the call at its Index starts a new call.
// Usage and FinishReason come with the last deltas.
type Delta struct {
	Content      string          `json:"content,omitempty"`
	Reasoning    string          `json:"reasoning,omitempty"`
	ToolCalls    []ToolCallDelta `json:"toolCalls,omitempty"`
	Usage        *Usage          `json:"usage,omitempty"`
	FinishReason string          `json:"finishReason,omitempty"`
	Model        string          `json:"model,omitempty"`
}

// ToolCallDelta is a fragment of a streamed tool call.
type ToolCallDelta struct {
	Index int    `json:"index"`
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Args  string `json:"args,omitempty"`
}

// accumulator assembles streamed deltas into a ChatResponse. The zero value is ready.
type accumulator struct {
	content, reasoning []byte
	calls              []ToolCall
	args               [][]byte
	index              map[int]int
	resp               ChatResponse
}

// add folds one delta into the response.
func (a *accumulator) add(d Delta) {
	a.content = append(a.content, d.Content...)
	a.reasoning = append(a.reasoning, d.Reasoning...)
	for _, tc := range d.ToolCalls {
		if a.index == nil {
			a.index = make(map[int]int)
		}
		i, ok := a.index[tc.Index]
		if ok && tc.ID != "" && a.calls[i].ID != "" && tc.ID != a.calls[i].ID {
			// Another call's first fragment at an index already taken: providers that
			// number every call 0 (or send no index) would otherwise merge the calls'
			// names and arguments into one call no tool answers to.
			ok = false
		}
		if !ok {
			i = len(a.calls)
			a.index[tc.Index] = i
			a.calls = append(a.calls, ToolCall{})
			a.args = append(a.args, nil)
		}
		if tc.ID != "" {
			a.calls[i].ID = tc.ID
		}
		a.calls[i].Name += tc.Name
		a.args[i] = append(a.args[i], tc.Args...)
	}
	if d.Usage != nil {
		a.resp.Usage = *d.Usage
	}
	if d.FinishReason != "" {
		a.resp.FinishReason = d.FinishReason
	}
	if d.Model != "" {
		a.resp.Model = d.Model
	}
}

// response returns the response assembled so far.
func (a *accumulator) response() *ChatResponse {
	r := a.resp
	r.Message = Message{Role: RoleAssistant, Content: string(a.content), Reasoning: string(a.reasoning)}
	for i, c := range a.calls {
		c.Args = rawArgs(slices.Clone(a.args[i]))
		r.Message.ToolCalls = append(r.Message.ToolCalls, c)
	}
	return &r
}

// Collect drains a stream into a response. It returns the first error of the stream.
func Collect(seq iter.Seq2[Delta, error]) (*ChatResponse, error) {
	var a accumulator
	for d, err := range seq {
		if err != nil {
			return nil, err
		}
		a.add(d)
	}
	return a.response(), nil
}

// rawArgs turns a model's argument text into a RawMessage that is always valid JSON:
// text that does not parse is kept as a JSON string, so it reaches the schema check
// (and fails there, visibly) instead of breaking every encoder downstream.
func rawArgs(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(string(b))
	return json.RawMessage(s)
}
