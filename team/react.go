package team

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"text/template"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/flowteam/flowteam/trace"
)

// ReActAgent answers by reasoning and acting in a loop: the model either answers or
// asks for tool calls; the agent validates each call's arguments against the tool's
// schema, checks the permission code, holds the batch for human decisions when a
// sensitive call has none, runs the calls and shows the model a structured observation
// of each; then the model reasons again, up to the number of model calls WithMaxSteps
// allows (default 10; then the run fails with step_limit).
type ReActAgent struct {
	name  string
	model ChatModel
	cfg   *config
	tmpl  *template.Template
	tools map[string]*Tool
	// schemas holds each tool's resolved schema, resolved once here, not per call.
	schemas map[string]*jsonschema.Resolved
	defs    []ToolDef
}

var _ Agent = (*ReActAgent)(nil)

// NewReActAgent returns a ReActAgent. Tool names must be unique and every tool needs a
// function.
func NewReActAgent(name string, model ChatModel, opts ...Option) (*ReActAgent, error) {
	cfg, tmpl, err := buildConfig(name, model, opts)
	if err != nil {
		return nil, err
	}
	if cfg.maxSteps < 1 {
		return nil, fmt.Errorf("agent %q: max steps must be at least 1", name)
	}
	a := &ReActAgent{name: name, model: model, cfg: cfg, tmpl: tmpl, tools: make(map[string]*Tool), schemas: make(map[string]*jsonschema.Resolved)}
	for i := range cfg.tools {
		t := &cfg.tools[i]
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("agent %q: tool %d has no name", name, i)
		case t.Func == nil:
			return nil, fmt.Errorf("agent %q, tool %q: %w", name, t.Name, errNoFunc)
		case a.tools[t.Name] != nil:
			return nil, fmt.Errorf("agent %q: two tools named %q", name, t.Name)
		case t.err != nil:
			return nil, fmt.Errorf("agent %q, tool %q: schema: %w", name, t.Name, t.err)
		}
		if t.Schema != nil {
			rs, err := t.Schema.Resolve(nil)
			if err != nil {
				return nil, fmt.Errorf("agent %q, tool %q: schema: %w", name, t.Name, err)
			}
			a.schemas[t.Name] = rs
		}
		a.tools[t.Name] = t
		a.defs = append(a.defs, t.def())
	}
	return a, nil
}

// Name returns the agent's name.
func (a *ReActAgent) Name() string { return a.name }

// Role returns the agent's role.
func (a *ReActAgent) Role() string { return a.cfg.role }

// Resume continues the agent's run waiting in sess with the decisions given with
// Decide; it is Call with the run's own prompt. It fails with ErrNoPending when no run
// of the agent waits in sess, including when another call resumed it first: a waiting
// run is resumed once, so an approved call never runs twice. When ctx ends, or a
// model call fails (a 5xx after the client's retries, a bad response), before the
// run has its answer, the run does not fail: it waits again with its decisions and
// the observations of the calls that ran, and the call returns that error (cancelled,
// timeout, the model's). The next Resume (or Call with the run's prompt, or a retry
// of the node) goes on from there, asking the model again if need be, never asking
// the human again nor running an approved call twice. Discard gives such a run up.
func (a *ReActAgent) Resume(ctx context.Context, sess *AgentSession) (*Answer, error) {
	if sess == nil {
		return nil, fmt.Errorf("agent %q: %w", a.name, ErrNoPending)
	}
	return a.call(ctx, "", sess, true)
}

// Call answers prompt. If the session holds a run of this agent waiting for decisions,
// Call resumes it (prompt must then be empty or the run's prompt, else ErrPending):
// the decided batch runs first, with no model call before it. If some calls still
// have no decision, the answer is pending again and nothing runs. A nil session means
// a throw-away one (and a pending answer cannot be resumed).
//
// Resuming takes the waiting run out of the session at once (atomically): while it
// runs, nothing waits, Decide fails with ErrNoPending and a second resume finds
// nothing to resume, so two calls resuming one run at the same time cannot both run
// its approved batch.
func (a *ReActAgent) Call(ctx context.Context, prompt string, sess *AgentSession) (*Answer, error) {
	if sess == nil {
		sess = NewSession("")
	}
	return a.call(ctx, prompt, sess, false)
}

func (a *ReActAgent) call(ctx context.Context, prompt string, sess *AgentSession, resumeOnly bool) (*Answer, error) {
	st, err := sess.claim(a.name, prompt)
	if err != nil {
		return nil, fmt.Errorf("agent %q in session %q: %w", a.name, sess.id(), err)
	}
	if resumeOnly && st.Run == nil {
		return nil, fmt.Errorf("agent %q in session %q: %w", a.name, sess.id(), ErrNoPending)
	}
	fresh := NewRunInfo(ctx, a.name, sess)
	run := st.Run
	st.Run = nil // claimed: finish puts it back if it waits again
	resumed := run != nil
	if run != nil {
		// The same run goes on, perhaps at another node, branch or flow run.
		fresh.RunID = run.Info.RunID
		run.Info = fresh
	} else {
		run = &pendingRun{Info: fresh, Prompt: prompt,
			Trace: &ReActTrace{RunID: fresh.RunID, Agent: a.name, Prompt: prompt, Started: time.Now()}}
	}
	x := &reactRun{a: a, sess: sess, st: &st, run: run, resumed: resumed,
		runner: runner{cfg: a.cfg, model: a.model, info: run.Info}, began: time.Now()}
	ctx = withParent(ctx, run.Info.RunID)
	x.start(ctx, run.Prompt)
	ans, err := x.loop(ctx)
	return x.finish(ctx, ans, err)
}

// reactRun is one call of a ReActAgent.
type reactRun struct {
	runner
	a     *ReActAgent
	sess  *AgentSession
	st    *agentState
	run   *pendingRun
	began time.Time
	// resumed holds when the call continues a run held for decisions: the end of ctx
	// or a failed model call then keeps the run waiting instead of failing it, so the
	// human's decisions (and the calls they let run, and every call after them)
	// survive. A run that failed would start afresh on a retry, ask the human again
	// and could run an approved call twice.
	resumed bool
	// modelFailed holds once a model call of this call failed.
	modelFailed bool
}

func (x *reactRun) loop(ctx context.Context) (*Answer, error) {
	run, tr := x.run, x.run.Trace
	if run.Messages == nil {
		if x.a.tmpl != nil {
			instr, err := renderTemplate(x.a.tmpl, x.sess.Context(), run.Prompt)
			if err != nil {
				return nil, &Error{Type: TypeInvalidQuery, Message: "instruction: " + err.Error(), Err: err}
			}
			run.Messages = append(run.Messages, SystemMessage(instr))
		}
		run.Messages = append(run.Messages, x.st.History...)
		run.Messages = append(run.Messages, UserMessage(run.Prompt))
	}
	if run.Batch != nil {
		// Resuming a held batch: the same calls run, without asking the model again.
		if undecided := run.undecided(); len(undecided) > 0 {
			return x.hold(ctx, undecided), nil
		}
		x.act(ctx, len(tr.stepsOf(StepReason)), run.Batch, run.Decisions)
		if run.Batch != nil {
			return nil, ContextError(ctx) // the context ended part-way: the rest waits
		}
	}
	for {
		step := len(tr.stepsOf(StepReason)) + 1
		if step > x.a.cfg.maxSteps {
			return nil, &Error{Type: TypeStepLimit, Message: fmt.Sprintf("no answer after %d model calls", x.a.cfg.maxSteps)}
		}
		if err := ctx.Err(); err != nil {
			return nil, ContextError(ctx)
		}
		began := time.Now()
		resp, d, err := x.reason(ctx, step, &ChatRequest{Messages: cloneMessages(run.Messages), Tools: x.a.defs, Options: x.a.cfg.options})
		if err != nil {
			x.modelFailed = true
			return nil, fmt.Errorf("step %d: %w", step, err)
		}
		msg := resp.Message
		msg.Role = RoleAssistant
		msg.ToolCalls = slices.Clone(msg.ToolCalls)
		seen := make(map[string]bool, len(msg.ToolCalls))
		for i := range msg.ToolCalls {
			tc := &msg.ToolCalls[i]
			tc.Args = rawArgs(tc.Args)
			// Decisions, observations and events are keyed by the id: it must be
			// there and unique in the batch.
			if tc.ID == "" || seen[tc.ID] {
				tc.ID = fmt.Sprintf("%s-%d-%d", run.Info.RunID, step, i+1)
			}
			seen[tc.ID] = true
		}
		u := resp.Usage
		tr.Steps = append(tr.Steps, TraceStep{Kind: StepReason, Turn: step, Started: began, Duration: d,
			Content: msg.Content, Reasoning: msg.Reasoning, ToolCalls: slices.Clone(msg.ToolCalls), Usage: &u})
		addUsage(&tr.Metrics, u)
		run.Messages = append(run.Messages, msg)
		if len(msg.ToolCalls) == 0 {
			tr.Answer = msg.Content
			return &Answer{Agent: x.a.name, RunID: run.Info.RunID, Content: msg.Content, Reasoning: msg.Reasoning}, nil
		}
		run.Batch, run.Decisions = msg.ToolCalls, nil
		run.Pending = x.needsDecision(ctx, msg.ToolCalls)
		if len(run.Pending) > 0 {
			return x.hold(ctx, run.Pending), nil
		}
		x.act(ctx, step, msg.ToolCalls, nil)
	}
}

// hold keeps the run in the session for decisions and reports the pending calls.
func (x *reactRun) hold(ctx context.Context, calls []PendingCall) *Answer {
	x.run.Trace.Status = RunPending
	x.emit(ctx, Event{Kind: EventHITLPending, Step: len(x.run.Trace.stepsOf(StepReason)), Pending: calls,
		ToolCalls: x.run.Batch})
	return &Answer{Agent: x.a.name, RunID: x.run.Info.RunID, Pending: x.run.view(calls)}
}

// finish saves the session state and reports the end of the call.
func (x *reactRun) finish(ctx context.Context, ans *Answer, err error) (*Answer, error) {
	run, tr := x.run, x.run.Trace
	d := time.Since(x.began)
	tr.Metrics.Duration += d // active time only: a human's think time is not the agent's
	switch {
	case err != nil && x.resumed && (ctx.Err() != nil || x.modelFailed):
		// A resume whose caller went away, or whose model call failed, before the
		// run's answer: the run waits again, with the decisions not yet applied and
		// the observations of the calls that ran, so the next resume (or a retry of
		// the node) goes on from there without asking anyone again and without
		// running any call twice.
		tr.Status = RunPending
		x.st.Run = run
		ans = &Answer{Agent: x.a.name, RunID: run.Info.RunID, Pending: run.view(run.undecided())}
		err = fmt.Errorf("agent %q: %w", x.a.name, err)
	case err != nil:
		tr.Status, tr.Error = RunFailed, AsError(err, TypeAgentFailed)
		x.st.Run, x.st.ReAct = nil, tr
		err = fmt.Errorf("agent %q: %w", x.a.name, err)
	case ans.Pending != nil:
		x.st.Run = run
	default:
		tr.Status = RunCompleted
		x.st.Run, x.st.ReAct = nil, tr
		x.st.History = x.a.cfg.trimHistory(append(x.st.History, UserMessage(run.Prompt), AssistantMessage(ans.Content)))
	}
	if ans != nil {
		ans.Metrics, ans.Trace = tr.Metrics, tr
	}
	x.sess.setState(x.a.name, *x.st)
	x.end(ctx, ans, err, d)
	if err != nil {
		return nil, err
	}
	return ans, nil
}

// needsDecision returns the calls of a batch that must wait for a human: sensitive,
// not always-allowed, and otherwise runnable (a call that code refuses or whose
// arguments are invalid fails without asking anyone).
func (x *reactRun) needsDecision(ctx context.Context, batch []ToolCall) []PendingCall {
	var out []PendingCall
	for _, c := range batch {
		t, perr := x.precheck(ctx, c)
		if perr != nil || t.Sensitive == nil || slices.Contains(x.st.AlwaysAllow, t.Name) {
			continue
		}
		if ok, comment := t.Sensitive(c.Args); ok {
			out = append(out, PendingCall{ID: c.ID, Name: c.Name, Args: c.Args, Comment: comment})
		}
	}
	return out
}

// precheck finds the tool, checks the permission code and validates the arguments.
func (x *reactRun) precheck(ctx context.Context, c ToolCall) (*Tool, *Error) {
	t := x.a.tools[c.Name]
	if t == nil {
		return nil, &Error{Type: TypeUnknownTool, Message: fmt.Sprintf("no tool named %q (tools: %v)", c.Name, x.toolNames())}
	}
	if p := x.a.cfg.permission; p != nil {
		if err := p(ctx, x.info, c); err != nil {
			return nil, &Error{Type: TypePermissionDenied, Message: err.Error(), Err: err}
		}
	}
	if err := validateArgs(x.a.schemas[c.Name], c.Args); err != nil {
		return nil, &Error{Type: TypeInvalidArguments, Message: err.Error(), Err: err}
	}
	return t, nil
}

func (x *reactRun) toolNames() []string {
	names := make([]string, len(x.a.defs))
	for i, d := range x.a.defs {
		names[i] = d.Name
	}
	return names
}

// act runs a batch of tool calls in order, applying decisions, and appends each
// observation to the conversation.
func (x *reactRun) act(ctx context.Context, step int, batch []ToolCall, decisions map[string]Decision) {
	run, tr := x.run, x.run.Trace
	x.emit(ctx, Event{Kind: EventActionStart, Step: step, ToolCalls: batch})
	began := time.Now()
	obs := make([]Observation, 0, len(batch))
	for n, c := range batch {
		if x.resumed && ctx.Err() != nil {
			// A decided batch stops where the caller went away; the calls not yet
			// made keep their decisions for the next resume (see finish).
			run.Batch = batch[n:]
			run.Pending = slices.DeleteFunc(slices.Clone(run.Pending), func(p PendingCall) bool {
				return !slices.ContainsFunc(run.Batch, func(c ToolCall) bool { return c.ID == p.ID })
			})
			x.endAction(ctx, step, obs, began)
			return
		}
		var dec *Decision
		if d, ok := decisions[c.ID]; ok {
			dec = &d
			call := c
			x.emit(ctx, Event{Kind: EventHITLDecided, Step: step, Call: &call, Decision: dec})
			if d.Kind == DecisionApprove {
				if len(d.Args) > 0 {
					c.Args = d.Args
				}
				if d.AlwaysAllow && !slices.Contains(x.st.AlwaysAllow, c.Name) {
					x.st.AlwaysAllow = append(x.st.AlwaysAllow, c.Name)
				}
			}
		}
		o, d := x.call(ctx, step, c, dec)
		obs = append(obs, o)
		call := c
		tr.Steps = append(tr.Steps,
			TraceStep{Kind: StepAction, Turn: step, Started: time.Now().Add(-d), Duration: d, Call: &call, Decision: dec},
			TraceStep{Kind: StepObservation, Turn: step, Started: time.Now(), Call: &call, Observation: &o})
		run.Messages = append(run.Messages, Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: o.json()})
	}
	run.Batch, run.Pending, run.Decisions = nil, nil, nil
	x.endAction(ctx, step, obs, began)
}

func (x *reactRun) endAction(ctx context.Context, step int, obs []Observation, began time.Time) {
	d := time.Since(began)
	x.emit(ctx, Event{Kind: EventActionEnd, Step: step, Duration: d})
}

// call makes one tool call (or applies the decision that replaces it) and reports it.
func (x *reactRun) call(ctx context.Context, step int, c ToolCall, dec *Decision) (Observation, time.Duration) {
	call := c
	x.emit(ctx, Event{Kind: EventToolStart, Step: step, Call: &call})
	x.cfg.icpts.toolStart(ctx, x.info, c)
	began := time.Now()
	var o Observation
	if dec != nil && dec.Kind != DecisionApprove {
		if dec.Kind == DecisionReject {
			trace.Count(ctx, trace.CountRejection, 1) // for the run's metrics interceptor, if any
		}
		o = dec.observation()
	} else if t, perr := x.precheck(ctx, c); perr != nil {
		o = failure(perr)
	} else if ctx.Err() != nil {
		// The caller gave up (a resume that was cancelled, a call after one the
		// cancellation stopped): the run fails before the model sees anything, so a
		// tool run now would act for nobody; one that ignores ctx would still act.
		o = failure(ContextError(ctx))
	} else {
		x.run.Trace.Metrics.ToolCalls++
		o = invoke(ctx, t, c.Args)
	}
	d := time.Since(began)
	x.emit(ctx, Event{Kind: EventToolEnd, Step: step, Call: &call, Observation: &o, Duration: d, Decision: dec})
	x.cfg.icpts.toolEnd(ctx, x.info, c, o, d)
	return o, d
}

// invoke runs a tool's function; a panic is a tool error, not a crash (the model sees
// the panic value, never the stack).
func invoke(ctx context.Context, t *Tool, args json.RawMessage) (o Observation) {
	defer func() {
		if p := recover(); p != nil {
			o = failure(&Error{Type: TypeToolFailed, Message: fmt.Sprintf("tool %q panicked: %v", t.Name, p)})
		}
	}()
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	res, err := t.Func(ctx, args)
	if err != nil {
		return failure(toolError(err))
	}
	return Success(res)
}
