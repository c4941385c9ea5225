// Package desk is the editorial desk of the team examples: a supervisor that directs a
// researcher (a ReAct agent with a lookup tool), a writer and a reviewer. The
// team-supervisor example runs it on scripted models, the team-openai example on an
// OpenAI-compatible API: the team is built here, the same way for both.
package desk

import (
	"context"
	"strings"

	"github.com/flowteam/flowteam/team"
)

// Name is the team's name; its graph is "team.desk".
const Name = "desk"

// Models are the chat models of the supervisor and of each member (one model may
// serve them all).
type Models struct {
	Supervisor, Researcher, Writer, Reviewer team.ChatModel
}

// Same returns Models that use m everywhere.
func Same(m team.ChatModel) Models { return Models{m, m, m, m} }

// Facts is the researcher's reference data: what the lookup tool can find.
var Facts = map[string]string{
	"e-bike market":     "Europe's e-bike market was worth about 20bn EUR in 2024, growing 9% a year.",
	"e-bike regulation": "EU rules cap pedal assistance at 25 km/h and 250 W; faster bikes are mopeds.",
	"e-bike buyers":     "Commuters aged 30-55 buy 60% of e-bikes; cargo bikes are the fastest-growing segment.",
}

type lookupArgs struct {
	Topic string `json:"topic" jsonschema:"what to look up, e.g. 'e-bike market'"`
}

// Lookup is the researcher's tool: it returns the facts whose topic contains the
// query (an empty list when none does, which is a valid answer).
func Lookup() team.Tool {
	return team.NewTool("lookup", "Look up facts on a topic in the desk's reference data.",
		nil,
		func(_ context.Context, a lookupArgs) ([]string, error) {
			q := strings.ToLower(strings.TrimSpace(a.Topic))
			out := []string{}
			for topic, fact := range Facts {
				if strings.Contains(topic, q) || strings.Contains(q, topic) {
					out = append(out, fact)
				}
			}
			return out, nil
		})
}

// New builds the desk. opts are added to the team's own (an audit on the engine, an
// interceptor, max turns...).
func New(m Models, opts ...team.Option) (*team.TeamAgent, error) {
	researcher, err := team.NewReActAgent("researcher", m.Researcher,
		team.WithRole("finds facts with the lookup tool"),
		team.WithInstruction("You are a researcher. Use the lookup tool, then report the facts you found, briefly."),
		team.WithTools(Lookup()), team.WithMaxSteps(4))
	if err != nil {
		return nil, err
	}
	writer, err := team.NewSimpleAgent("writer", m.Writer,
		team.WithRole("writes a short brief from the research"),
		team.WithInstruction("You are a writer. Write a brief of at most five sentences from the work so far."))
	if err != nil {
		return nil, err
	}
	reviewer, err := team.NewSimpleAgent("reviewer", m.Reviewer,
		team.WithRole("checks the brief against the facts"),
		team.WithInstruction("You are a reviewer. Answer APPROVED if the brief matches the research, else list the problems."))
	if err != nil {
		return nil, err
	}
	base := []team.Option{
		team.WithMembers(researcher, writer, reviewer),
		team.WithProtocol(team.Supervisor),
		team.WithSupervisorModel(m.Supervisor),
		team.WithInstruction("You run an editorial desk: research first, then writing, then review; finish once the reviewer approved."),
		team.WithMaxTurns(6),
		team.WithLoopDetection(3),
		team.WithAnswerFrom("writer"),
	}
	return team.NewTeam(Name, append(base, opts...)...)
}
