package team

// ParseObservation lets the external tests read the observations models were sent.
var ParseObservation = parseObservation

// AlwaysAllowed returns the tools the agent may call without a decision in s.
func AlwaysAllowed(s *AgentSession, agent string) []string { return s.state(agent).AlwaysAllow }

// HasRun reports whether the agent has a run waiting in s.
func HasRun(s *AgentSession, agent string) bool { return s.state(agent).Run != nil }
