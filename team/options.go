package team

import (
	"errors"
	"fmt"
	"text/template"
)

// Option configures an agent (SimpleAgent, ReActAgent) or a team (NewTeam). WithRole,
// WithInstruction, WithChatOptions and WithInterceptor apply to both (a team's
// instruction and chat options are its supervisor's); the others to one kind, and
// the other kind refuses them.
type Option func(*config)

type config struct {
	role         string
	instruction  string
	icpts        hooks
	options      ChatOptions
	agentOnly    string // the first agent option given, which a team refuses
	teamOnly     string // the first team option given, which an agent refuses
	tools        []Tool
	maxSteps     int
	permission   Permission
	historyLimit int
	noStream     bool
	teamConfig
}

// agentOption marks an option that only agents take.
func agentOption(name string, fn func(c *config)) Option {
	return func(c *config) {
		if c.agentOnly == "" {
			c.agentOnly = name
		}
		fn(c)
	}
}

// teamOption marks an option that only teams take.
func teamOption(name string, fn func(c *teamConfig)) Option {
	return func(c *config) {
		if c.teamOnly == "" {
			c.teamOnly = name
		}
		fn(&c.teamConfig)
	}
}

// defaultMaxSteps bounds the model calls of one ReAct run.
const defaultMaxSteps = 10

// WithRole sets the agent's or the team's role (a short description, as a team's
// supervisor sees it).
func WithRole(role string) Option { return func(c *config) { c.role = role } }

// WithInstruction sets the system instruction: a text/template rendered over the
// FlowContext for every call ({{.customer}}), failing on a missing key. Functions:
// var "name" reads any variable, dotted names and loop items included, and fails
// when it is unset; has "name" tells whether it is set; prompt is the call's prompt;
// json encodes a value.
func WithInstruction(tmpl string) Option { return func(c *config) { c.instruction = tmpl } }

// WithTools gives a ReAct agent tools.
func WithTools(tools ...Tool) Option {
	return agentOption("WithTools", func(c *config) { c.tools = append(c.tools, tools...) })
}

// WithMaxSteps bounds the model calls of one ReAct run (default 10).
func WithMaxSteps(n int) Option {
	return agentOption("WithMaxSteps", func(c *config) { c.maxSteps = n })
}

// WithPermission sets the code that allows or refuses each tool call (see
// Permission).
func WithPermission(p Permission) Option {
	return agentOption("WithPermission", func(c *config) { c.permission = p })
}

// WithInterceptor adds an interceptor: of an agent's runs (its agent, model and tool
// hooks), or of a team's (its team hooks, and as a flow interceptor on the team's
// engine, after the team's own). Interceptors run in the order added.
func WithInterceptor(i TeamInterceptor) Option {
	return func(c *config) { c.icpts = append(c.icpts, i) }
}

// WithChatOptions sets the model options of every request.
func WithChatOptions(o ChatOptions) Option { return func(c *config) { c.options = o } }

// WithHistoryLimit keeps only the last n messages of the conversation history in the
// session (0, the default, keeps everything), starting at a prompt: with an odd n, an
// answer whose prompt fell out goes too.
func WithHistoryLimit(n int) Option {
	return agentOption("WithHistoryLimit", func(c *config) { c.historyLimit = n })
}

// WithoutStreaming makes the agent call Chat even when the model can stream and
// someone listens for events (no ReasonDelta events then).
func WithoutStreaming() Option {
	return agentOption("WithoutStreaming", func(c *config) { c.noStream = true })
}

func buildConfig(name string, model ChatModel, opts []Option) (*config, *template.Template, error) {
	if name == "" {
		return nil, nil, errors.New("agent needs a name")
	}
	if model == nil {
		return nil, nil, fmt.Errorf("agent %q: no chat model", name)
	}
	c := &config{maxSteps: defaultMaxSteps}
	for _, o := range opts {
		o(c)
	}
	if c.teamOnly != "" {
		return nil, nil, fmt.Errorf("agent %q: %s is an option of teams", name, c.teamOnly)
	}
	var tmpl *template.Template
	if c.instruction != "" {
		var err error
		if tmpl, err = parseTemplate(name, c.instruction); err != nil {
			return nil, nil, fmt.Errorf("agent %q: instruction: %w", name, err)
		}
	}
	return c, tmpl, nil
}

// trimHistory keeps the last historyLimit messages, from a prompt on: an odd limit
// would otherwise keep an answer without the prompt it answered.
func (c *config) trimHistory(h []Message) []Message {
	if c.historyLimit > 0 && len(h) > c.historyLimit {
		h = h[len(h)-c.historyLimit:]
		for len(h) > 0 && h[0].Role != RoleUser {
			h = h[1:]
		}
	}
	return h
}
