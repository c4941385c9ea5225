package otelflow

import (
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/redact"
)

// ScopeName is the instrumentation scope of the spans and instruments of this package.
const ScopeName = "github.com/flowteam/flowteam/interceptor/otelflow"

// Option configures a Tracing.
type Option func(*config)

type config struct {
	redact *redact.Redactor
	agent  func(c *flow.Context, n *flow.Node) string
}

func newConfig(opts []Option) config {
	c := config{redact: redact.New()}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithRedactor replaces the default redactor, redact.New(). A nil redactor disables
// redaction. Where a span gets text (an error message, a suspend reason), the
// redactor also masks the secret values of the node's variables
// (redact.Redactor.ForVars).
func WithRedactor(r *redact.Redactor) Option { return func(c *config) { c.redact = r } }

// WithRedactKeys adds sensitive keys to the redactor's: to the default ones, or to
// those of the redactor WithRedactor set before it.
func WithRedactKeys(keys ...string) Option {
	return func(c *config) { c.redact = c.redact.With(redact.Keys(keys...)) }
}

// WithAgentName sets how a node's agent name (the flow.agent attribute) is found;
// the default is interceptor.AgentName.
func WithAgentName(fn func(c *flow.Context, n *flow.Node) string) Option {
	return func(c *config) { c.agent = fn }
}

// redactor returns the configured redactor, also masking the secret values of fc's
// variables. It copies them: call it only where there is text to write.
func (c *config) redactor(fc *flow.Context) *redact.Redactor {
	if c.redact == nil || fc == nil {
		return nil
	}
	return c.redact.ForVars(fc.Vars())
}

func (c *config) agentOf(fc *flow.Context, n *flow.Node) string {
	if c.agent != nil {
		return c.agent(fc, n)
	}
	return interceptor.AgentName(n)
}
