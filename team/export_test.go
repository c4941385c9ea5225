package team

import (
	"context"
	"encoding/json"

	"github.com/flowteam/flowteam/flow"
)

// ParseObservation lets the external tests read the observations models were sent.
var ParseObservation = parseObservation

// AlwaysAllowed returns the tools the agent may call without a decision in s.
func AlwaysAllowed(s *AgentSession, agent string) []string { return s.state(agent).AlwaysAllow }

// HasRun reports whether the agent has a run waiting in s.
func HasRun(s *AgentSession, agent string) bool { return s.state(agent).Run != nil }

// AsTaskOnAnswer is AsTask with a hook on every answer, as a team's member nodes have.
func AsTaskOnAnswer(a Agent, fn func(context.Context, *flow.Context, *flow.Node, *Answer) error) flow.Task {
	return asTask(a, onAnswer(fn))
}

// ValidateArgs checks arguments against a tool's schema as the agent does before a call.
func ValidateArgs(t Tool, args string) error {
	if t.err != nil {
		return t.err
	}
	rs, err := t.Schema.Resolve(nil)
	if err != nil {
		return err
	}
	return validateArgs(rs, json.RawMessage(args))
}
