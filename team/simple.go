package team

import (
	"context"
	"fmt"
	"text/template"
	"time"
)

// SimpleAgent answers with one model call: the instruction (a template over the
// FlowContext) as the system message, the agent's conversation history in the
// session, and the prompt.
type SimpleAgent struct {
	name  string
	model ChatModel
	cfg   *config
	tmpl  *template.Template
}

var _ Agent = (*SimpleAgent)(nil)

// NewSimpleAgent returns a SimpleAgent. Tools are not allowed (use a ReActAgent); an
// instruction that does not parse is an error.
func NewSimpleAgent(name string, model ChatModel, opts ...Option) (*SimpleAgent, error) {
	cfg, tmpl, err := buildConfig(name, model, opts)
	if err != nil {
		return nil, err
	}
	if len(cfg.tools) > 0 {
		return nil, fmt.Errorf("agent %q: a SimpleAgent has no tools (use NewReActAgent)", name)
	}
	return &SimpleAgent{name: name, model: model, cfg: cfg, tmpl: tmpl}, nil
}

// Name returns the agent's name.
func (a *SimpleAgent) Name() string { return a.name }

// Role returns the agent's role.
func (a *SimpleAgent) Role() string { return a.cfg.role }

// Call answers prompt. A nil session means a throw-away one.
func (a *SimpleAgent) Call(ctx context.Context, prompt string, sess *AgentSession) (ans *Answer, err error) {
	if sess == nil {
		sess = NewSession("")
	}
	began := time.Now()
	r := &runner{cfg: a.cfg, model: a.model, info: NewRunInfo(ctx, a.name, sess)}
	ctx = withParent(ctx, r.info.RunID)
	r.start(ctx, prompt)
	tr := &SimpleTrace{RunID: r.info.RunID, Agent: a.name, Prompt: prompt, Started: began}
	st := sess.callState(a.name)
	defer func() {
		tr.Metrics.Duration = time.Since(began)
		if err != nil {
			tr.Status, tr.Error = RunFailed, AsError(err, TypeAgentFailed)
			err = fmt.Errorf("agent %q: %w", a.name, err)
		}
		st.Simple = tr
		sess.setState(a.name, st)
		r.end(ctx, ans, err, tr.Metrics.Duration)
	}()

	var msgs []Message
	if a.tmpl != nil {
		instr, err := renderTemplate(a.tmpl, sess.Context(), prompt)
		if err != nil {
			return nil, &Error{Type: TypeInvalidQuery, Message: "instruction: " + err.Error(), Err: err}
		}
		tr.Instruction = instr
		msgs = append(msgs, SystemMessage(instr))
	}
	msgs = append(msgs, st.History...)
	msgs = append(msgs, UserMessage(prompt))
	resp, _, err := r.reason(ctx, 1, &ChatRequest{Messages: msgs, Options: a.cfg.options})
	if err != nil {
		return nil, err
	}
	addUsage(&tr.Metrics, resp.Usage)
	tr.Usage, tr.Answer, tr.Reasoning, tr.Status = resp.Usage, resp.Message.Content, resp.Message.Reasoning, RunCompleted
	st.History = a.cfg.trimHistory(append(st.History, UserMessage(prompt), AssistantMessage(resp.Message.Content)))
	tr.Metrics.Duration = time.Since(began)
	return &Answer{Agent: a.name, RunID: r.info.RunID, Content: resp.Message.Content, Reasoning: resp.Message.Reasoning,
		Metrics: tr.Metrics, Trace: tr}, nil
}
