package team

import (
	"context"

	"github.com/flowteam/flowteam/flow"
)

// FlowEvents returns a flow interceptor that puts the events a graph's tasks publish
// (flow.Context.Publish, a Solon script's context.eventBus().send) on the event
// stream of the run's context (Stream, WithSink) as EventFlow events, with the
// flow run's id, the instance, the node and the branch. A team does this by itself
// for its own graph (FlowEvents among its WithEngineOptions would send each event
// twice); register FlowEvents on an engine whose graphs run agents, so
// that a caller streaming the run sees the scripts' events among the agents':
//
//	eng := flow.NewEngine(team.WithAgents(writer), flow.WithInterceptor(team.FlowEvents(), 0))
//	ctx = team.WithSink(ctx, func(ev team.Event) { ... })
//	eng.Eval(ctx, "report", fc)
func FlowEvents() flow.Interceptor { return flowEvents{} }

type flowEvents struct{ flow.NopInterceptor }

var _ flow.EventInterceptor = flowEvents{}

// OnEvent emits the published event to the sink of ctx, if any.
func (flowEvents) OnEvent(ctx context.Context, c *flow.Context, n *flow.Node, topic string, payload any) {
	Emit(ctx, flowEvent(c, n, topic, payload))
}

// flowEvent returns the EventFlow event of a publish from node n.
func flowEvent(c *flow.Context, n *flow.Node, topic string, payload any) Event {
	ev := Event{Kind: EventFlow, RunID: c.RunID(), Instance: c.InstanceID(), Branch: c.BranchID(),
		Topic: topic, Payload: payload}
	if n != nil {
		ev.Node = n.ID
	}
	return ev
}

// OnEvent puts an event a task of a team's graph published on the team's event
// stream, as the team run's (see EventFlow); one from another graph the team's
// engine runs (a member's sub-graph) as FlowEvents does.
func (o *observer) OnEvent(ctx context.Context, c *flow.Context, n *flow.Node, topic string, payload any) {
	ev := flowEvent(c, n, topic, payload)
	if n != nil {
		if t := o.teamOf(n.Graph()); t != nil {
			if tr := traceIn(c, t.name); tr != nil {
				ev.RunID, ev.ParentRunID, ev.Agent = tr.RunID, tr.ParentRunID, t.name
			}
		}
	}
	Emit(ctx, ev)
}
