package team

import (
	"context"
	"time"
)

// ReActInterceptor observes agent runs: the agent's start and end, each model call
// (reason), each batch of tool calls (action) and each tool call. SimpleAgent calls the
// agent and reason hooks; ReActAgent all of them. Hooks run on the agent's goroutine
// and must not block; they observe only (to change behaviour, wrap the model or the
// tools). OnAgentEnd gets a nil answer and OnReasonEnd a nil response when err is set.
// Embed NopReActInterceptor to implement only some of them.
type ReActInterceptor interface {
	OnAgentStart(ctx context.Context, run RunInfo, prompt string)
	OnAgentEnd(ctx context.Context, run RunInfo, ans *Answer, err error)
	OnReasonStart(ctx context.Context, run RunInfo, step int, req *ChatRequest)
	OnReasonEnd(ctx context.Context, run RunInfo, step int, resp *ChatResponse, err error, d time.Duration)
	OnActionStart(ctx context.Context, run RunInfo, step int, calls []ToolCall)
	OnActionEnd(ctx context.Context, run RunInfo, step int, obs []Observation, d time.Duration)
	OnToolStart(ctx context.Context, run RunInfo, call ToolCall)
	OnToolEnd(ctx context.Context, run RunInfo, call ToolCall, obs Observation, d time.Duration)
}

// NopReActInterceptor implements ReActInterceptor with hooks that do nothing.
type NopReActInterceptor struct{}

// OnAgentStart does nothing.
func (NopReActInterceptor) OnAgentStart(context.Context, RunInfo, string) {}

// OnAgentEnd does nothing.
func (NopReActInterceptor) OnAgentEnd(context.Context, RunInfo, *Answer, error) {}

// OnReasonStart does nothing.
func (NopReActInterceptor) OnReasonStart(context.Context, RunInfo, int, *ChatRequest) {}

// OnReasonEnd does nothing.
func (NopReActInterceptor) OnReasonEnd(context.Context, RunInfo, int, *ChatResponse, error, time.Duration) {
}

// OnActionStart does nothing.
func (NopReActInterceptor) OnActionStart(context.Context, RunInfo, int, []ToolCall) {}

// OnActionEnd does nothing.
func (NopReActInterceptor) OnActionEnd(context.Context, RunInfo, int, []Observation, time.Duration) {}

// OnToolStart does nothing.
func (NopReActInterceptor) OnToolStart(context.Context, RunInfo, ToolCall) {}

// OnToolEnd does nothing.
func (NopReActInterceptor) OnToolEnd(context.Context, RunInfo, ToolCall, Observation, time.Duration) {
}
