package team

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// Agent is anything that answers a prompt in a session: a SimpleAgent, a ReActAgent, a
// TeamAgent, or a deterministic stand-in from testkit. Call must honour
// ctx. It returns an Answer whose Pending is set when the agent waits for human
// decisions (the session then holds the waiting run; Decide and call again).
//
// An agent reads and writes business data through sess.Context(), and reports what it
// does through Emit (the agents of this package do so already).
type Agent interface {
	// Name identifies the agent: its task name ("@name"), its state in the session and
	// the Agent of its events.
	Name() string
	// Role says what the agent does; a supervisor reads it to choose a member.
	Role() string
	// Call answers prompt.
	Call(ctx context.Context, prompt string, sess *AgentSession) (*Answer, error)
}

// Answer is the outcome of an agent call.
type Answer struct {
	Agent   string `json:"agent"`
	RunID   string `json:"runId"`
	Content string `json:"content"`
	// Reasoning is the final model turn's thinking text, when the model sends it.
	Reasoning string `json:"reasoning,omitempty"`
	// Pending is set when the run waits for human decisions; Content is then empty.
	Pending *Pending `json:"pending,omitempty"`
	// Metrics are the run's duration, model and tool calls and tokens.
	Metrics trace.Metrics `json:"metrics"`
	// Trace is the run's execution record (*SimpleTrace, *ReActTrace, *TeamTrace or
	// an agent's own type), if any.
	Trace any `json:"-"`
}

// defaultPromptKey is the context variable an agent task reads its prompt from when
// neither the node nor the task options say otherwise.
const defaultPromptKey = "prompt"

// AnswerKey returns the context variable an agent task writes the answer of agent to
// by default: "<name>.answer".
func AnswerKey(agent string) string { return agent + ".answer" }

// taskOption configures the flow task asTask makes of an agent.
type taskOption func(*agentTask)

// withPromptKey makes the task read its prompt from the given context variable
// when the node's meta names none (a team member reads its team's prompt for it).
func withPromptKey(key string) taskOption { return func(t *agentTask) { t.promptKey = key } }

// onAnswer calls fn with every answer the agent gives as the node's task, pending ones
// included, after the answer was written (a team keeps its member records and metrics
// so). fn runs on the node's goroutine; an error fails the node.
func onAnswer(fn func(ctx context.Context, c *flow.Context, n *flow.Node, ans *Answer) error) taskOption {
	return func(t *agentTask) { t.onAnswer = append(t.onAnswer, fn) }
}

// AsTask adapts an agent to a flow task. When the node runs, the task takes the prompt
// from the node's meta (MetaPrompt: a text/template over the FlowContext with the
// functions WithInstruction describes, prompt excepted; MetaPromptKey: a variable),
// else from the context variable "prompt" (empty if unset); calls the agent in the
// session of the flow instance (the node and branch are known to the agent and its
// events); and writes the answer to the node's meta MetaAnswerKey, else to
// AnswerKey(name).
//
// When the agent waits for human decisions the task suspends the run (the node runs
// again on resume and the agent applies the decisions given with
// SessionOf(fc).Decide). The node continues the run of its agent waiting in the
// context, with that run's prompt, only when that run waits at this node and branch
// and this execution of the node resumes the halted flow run (flow.Context.Resumed)
// or retries the node (flow.Context.Attempt above 1), or when the run was started
// outside a graph. Otherwise (a new evaluation, another node, another pass of this
// node) it discards the waiting run and asks its own question. An agent failure fails
// the node with the agent's structured error: its type is the node error's code, and a
// retryable one is retried by the node's retry policy.
func AsTask(a Agent) flow.Task { return asTask(a) }

func asTask(a Agent, opts ...taskOption) *agentTask {
	t := &agentTask{a: a}
	for _, o := range opts {
		o(t)
	}
	return t
}

type agentTask struct {
	a         Agent
	promptKey string
	onAnswer  []func(context.Context, *flow.Context, *flow.Node, *Answer) error
	kept      func(context.Context, *flow.Context) (string, bool) // a team member: its team's prompt for the turn, if its start node kept the runs
	tmpls     sync.Map                                            // template text -> *template.Template or error
}

// Run calls the agent.
func (t *agentTask) Run(ctx context.Context, c *flow.Context, n *flow.Node) error {
	name := t.a.Name()
	sess := nodeSession(c, n)
	var prompt string
	run := sess.waitingRun(name)
	if run != nil && !t.continues(ctx, run, c, n) {
		// Another node's run, another pass of this node (a loop's earlier iteration),
		// or a run an earlier evaluation left here: nobody continues it, and resumed
		// here it would answer that question, approved calls included, as this one.
		sess.Discard(name)
		run = nil
	}
	if run != nil {
		prompt = run.Prompt // resuming: the same question, whatever the variables say now
	} else {
		var err error
		if prompt, err = t.prompt(c, n); err != nil {
			return fmt.Errorf("agent %q: prompt: %w", name, err)
		}
	}
	ans, err := t.a.Call(ctx, prompt, sess)
	if err != nil {
		return err // the node error names the node; the agents of this package name themselves
	}
	if ans.Pending != nil {
		c.Suspend(ans.Pending.reason())
	} else {
		c.Set(t.answerKeyAt(n), ans.Content)
	}
	for _, fn := range t.onAnswer {
		if err := fn(ctx, c, n, ans); err != nil {
			return err
		}
	}
	return nil
}

// continues reports whether the node continues the agent's waiting run. A run
// started outside a graph waits anywhere. A run waiting at this node and branch is
// continued by the execution that resumes the halted run (Resume) or retries the
// node, never by a new evaluation that merely finds it in the variables: flow alone
// knows which one this is. A team's member also continues the run its team's start
// node kept to retry the team's failed run: flow may have called the team's graph
// afresh to do so (a failed sub-graph call is made again from its start), so the
// member's execution is not a resumed one; its turn must ask the run's question.
func (t *agentTask) continues(ctx context.Context, run *pendingRun, c *flow.Context, n *flow.Node) bool {
	if run.Info.Node == "" {
		return true
	}
	if !run.waitsAt(c, n) {
		return false
	}
	if c.Resumed() || c.Attempt() > 1 {
		return true
	}
	if t.kept == nil {
		return false
	}
	want, ok := t.kept(ctx, c)
	if !ok {
		return false
	}
	want, err := t.question(c, n, want)
	return err == nil && run.Prompt == want
}

// answerKeyAt returns the variable the agent's answer at node n is written to.
func (t *agentTask) answerKeyAt(n *flow.Node) string {
	if key := n.MetaString(MetaAnswerKey); key != "" {
		return key
	}
	return AnswerKey(t.a.Name())
}

// question returns the prompt the agent at node n is asked when teamPrompt is its
// team's prompt for the turn: the node's own prompt overrides it.
func (t *agentTask) question(c *flow.Context, n *flow.Node, teamPrompt string) (string, error) {
	if n.MetaString(MetaPrompt) != "" || n.MetaString(MetaPromptKey) != "" {
		return t.prompt(c, n)
	}
	return teamPrompt, nil
}

func (t *agentTask) prompt(c *flow.Context, n *flow.Node) (string, error) {
	if text := n.MetaString(MetaPrompt); text != "" {
		return t.render(text, c)
	}
	key := n.MetaString(MetaPromptKey)
	if key == "" {
		key = t.promptKey
	}
	if key == "" {
		key = defaultPromptKey
	}
	v, ok := c.Get(key)
	if !ok || v == nil {
		return "", nil
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v), nil
	}
	return string(b), nil
}

func (t *agentTask) render(text string, c *flow.Context) (string, error) {
	v, ok := t.tmpls.Load(text)
	if !ok {
		tm, err := parseTemplate("prompt", text)
		if err != nil {
			v = err
		} else {
			v = tm
		}
		t.tmpls.Store(text, v)
	}
	if err, ok := v.(error); ok {
		return "", err
	}
	return renderTemplate(v.(*template.Template), c, "")
}

// withAgent registers an agent on an engine as the task "@name".
func withAgent(a Agent) flow.Option { return flow.WithTask(a.Name(), AsTask(a)) }

// WithAgents registers agents on an engine, each as the task "@name":
//
//	eng := flow.NewEngine(team.WithAgents(analyst, writer))
func WithAgents(agents ...Agent) flow.Option {
	return func(e *flow.Engine) {
		for _, a := range agents {
			withAgent(a)(e)
		}
	}
}

// Template functions available to prompts and instructions.
var templateFuncs = template.FuncMap{
	"var":    func(string) (any, error) { return nil, nil },
	"has":    func(string) bool { return false },
	"prompt": func() string { return "" },
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

func parseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").Funcs(templateFuncs).Parse(text)
}

// renderTemplate executes t over the variables of c; var and has read any variable
// (dotted names and loop items included), prompt returns the prompt.
func renderTemplate(t *template.Template, c *flow.Context, prompt string) (string, error) {
	t, err := t.Clone()
	if err != nil {
		return "", err
	}
	t.Funcs(template.FuncMap{
		"var": func(key string) (any, error) {
			v, ok := c.Get(key)
			if !ok {
				return nil, fmt.Errorf("no variable %q", key)
			}
			return v, nil
		},
		"has":    func(key string) bool { _, ok := c.Get(key); return ok },
		"prompt": func() string { return prompt },
	})
	var b strings.Builder
	if err := t.Execute(&b, c.Vars()); err != nil {
		return "", err
	}
	return b.String(), nil
}
