package team

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"
)

// runner holds what one agent run needs to report itself.
type runner struct {
	cfg   *config
	model ChatModel
	info  RunInfo
}

func (r *runner) emit(ctx context.Context, ev Event) {
	ev.RunID, ev.ParentRunID, ev.Agent = r.info.RunID, r.info.ParentRunID, r.info.Agent
	ev.Instance, ev.Node, ev.Branch = r.info.Instance, r.info.Node, r.info.Branch
	Emit(ctx, ev)
}

// reason makes one model call, streaming it when the model can and someone listens,
// and reports it (events and interceptors).
func (r *runner) reason(ctx context.Context, step int, req *ChatRequest) (*ChatResponse, time.Duration, error) {
	r.emit(ctx, Event{Kind: EventReasonStart, Step: step})
	r.cfg.icpts.modelStart(ctx, r.info, req)
	began := time.Now()
	resp, err := r.chat(ctx, step, req)
	d := time.Since(began)
	ev := Event{Kind: EventReasonEnd, Step: step, Duration: d}
	if err != nil {
		if ctx.Err() != nil {
			err = ContextError(ctx)
		}
		e := AsError(err, TypeAgentFailed)
		err, ev.Error = e, e
	} else {
		u := resp.Usage
		ev.Content, ev.Reasoning, ev.ToolCalls, ev.Usage = resp.Message.Content, resp.Message.Reasoning, resp.Message.ToolCalls, &u
	}
	r.emit(ctx, ev)
	r.cfg.icpts.modelEnd(ctx, r.info, resp, err, d)
	return resp, d, err
}

func (r *runner) start(ctx context.Context, prompt string) {
	r.emit(ctx, Event{Kind: EventRunStart, Prompt: prompt})
	r.cfg.icpts.agentStart(ctx, r.info, prompt)
}

func (r *runner) end(ctx context.Context, ans *Answer, err error, d time.Duration) {
	ev := Event{Kind: EventRunEnd, Answer: ans, Duration: d}
	if ans != nil {
		u := usageOf(ans.Metrics)
		ev.Content, ev.Usage = ans.Content, &u
		ev.Status = RunCompleted
		if ans.Pending != nil {
			ev.Status = RunPending
		}
	}
	if err != nil {
		ev.Error = AsError(err, TypeAgentFailed)
		if ans == nil || ans.Pending == nil { // a run that waits again is not failed
			ev.Status = RunFailed
		}
	}
	r.emit(ctx, ev)
	r.cfg.icpts.agentEnd(ctx, r.info, ans, err)
}

// chat makes the model call, streamed when the model can and someone listens. A
// panicking model fails the call with an agent_failed error, as a panicking tool fails
// its call, so the run still records and reports how it ended; the panic's stack is in
// the error's cause.
func (r *runner) chat(ctx context.Context, step int, req *ChatRequest) (resp *ChatResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, &Error{Type: TypeAgentFailed, Message: fmt.Sprintf("model %q panicked: %v", r.info.Agent, p),
				Err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}
		}
	}()
	if sm, ok := r.model.(StreamingModel); ok && !r.cfg.noStream && sinkFrom(ctx) != nil {
		var acc accumulator
		for d, derr := range sm.ChatStream(ctx, req) {
			if derr != nil {
				err = derr
				break
			}
			acc.add(d)
			if d.Content != "" || d.Reasoning != "" {
				r.emit(ctx, Event{Kind: EventReasonDelta, Step: step, Delta: d.Content, Reasoning: d.Reasoning})
			}
		}
		if err == nil {
			resp = acc.response()
		}
	} else {
		resp, err = r.model.Chat(ctx, req)
	}
	if resp == nil && err == nil {
		// Every caller reads the response; a model that breaks the contract fails the
		// call instead of taking the run down with a nil dereference.
		err = &Error{Type: TypeBadResponse, Message: fmt.Sprintf("model of %q returned neither a response nor an error", r.info.Agent)}
	}
	return resp, err
}
