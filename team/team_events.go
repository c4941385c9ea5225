package team

import (
	"context"
	"time"
)

// Team event kinds. A team run emits TeamStart first and TeamEnd last (also when it
// fails, is interrupted or suspends; a resumed run starts with a TeamStart whose
// Status is "resumed"). Each member turn is framed by NodeStart and NodeEnd (Agent is
// the member, Node its node), and between them come the member's own events (run
// start/end, reasoning, tools, HITL). The supervisor's model calls emit ReasonStart,
// ReasonDelta and ReasonEnd with the team's name as Agent and the supervisor node as
// Node, and every routing decision emits a Decision event carrying the
// RouteDecision. A nested team emits its own TeamStart and TeamEnd inside its
// parent's NodeStart/NodeEnd (Solon emits no end event for a nested team).
const (
	EventTeamStart EventKind = "team_start"
	EventTeamEnd   EventKind = "team_end"
	EventNodeStart EventKind = "node_start"
	EventNodeEnd   EventKind = "node_end"
	EventDecision  EventKind = "team_decision"
)

// TeamStart statuses.
const (
	TeamStarted = "started"
	TeamResumed = "resumed"
)

// teamEvent returns an event of the team run described by tr: RunID is the team's run
// id, ParentRunID the run the team runs in.
func teamEvent(kind EventKind, tr *TeamTrace) Event {
	return Event{Kind: kind, Time: time.Now(), RunID: tr.RunID, ParentRunID: tr.ParentRunID, Agent: tr.Team,
		Instance: tr.Instance, Branch: tr.Branch}
}

// nodeEvent returns a NodeStart/NodeEnd event of a member node of the team run.
func nodeEvent(kind EventKind, tr *TeamTrace, member, node, branch string) Event {
	ev := teamEvent(kind, tr)
	ev.Agent, ev.Node, ev.Branch = member, node, branch
	return ev
}

// withMemberRun makes the member runs started under ctx report the team run as their
// parent: the engine gives an agent node the flow's run id, but inside a team the run a
// member belongs to is the team's.
func withMemberRun(ctx context.Context, flowRun, teamRun string) context.Context {
	s := sinkFrom(ctx)
	if s == nil || flowRun == "" || flowRun == teamRun {
		return ctx
	}
	return context.WithValue(ctx, sinkKey{}, Sink(func(e Event) {
		if e.ParentRunID == flowRun && e.Kind != EventNodeStart && e.Kind != EventNodeEnd {
			e.ParentRunID = teamRun
		}
		s(e)
	}))
}
