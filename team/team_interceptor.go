package team

import (
	"context"
	"time"

	"github.com/flowteam/flowteam/flow"
)

// TeamInterceptor observes a team run: the team's start and end, the supervisor's
// continue check, its model calls and decisions, each member's continue check, start
// and end; and, being a flow.Interceptor, every graph evaluation and node execution of
// the team's graph. Register it with WithTeamInterceptor.
//
// The team hooks get a copy of the TeamTrace as it stands (changing it changes
// nothing). They run on the goroutine of the node that triggers them (members of a
// parallel team concurrently) and must not block. The two Should hooks are the only
// ones that change what happens: ShouldSupervisorContinue returning false makes the
// supervisor finish with the last answer; ShouldAgentContinue returning false skips
// the member's turn (a "skipped" record).
//
// The names follow Solon's TeamInterceptor (onTeamStart, onTeamEnd,
// shouldSupervisorContinue, onModelStart, onModelEnd, onSupervisorDecision,
// shouldAgentContinue, onAgentStart, onAgentEnd); the agent hooks are called
// OnMemberStart and OnMemberEnd so that one type can be both a TeamInterceptor and a
// ReActInterceptor. Embed NopTeamInterceptor to implement only some of them.
//
// OnTeamStart is called when a run starts and when a suspended run resumes; OnTeamEnd
// when the run completes, fails, is interrupted, stops or suspends (tr.Status says
// which; an interrupted run's err is the cancellation that cut it short), so each
// process sees its starts and ends paired. OnMemberStart and OnMemberEnd frame each
// segment of a member's turn: a turn suspended for decisions, or cut short by a halt
// elsewhere (its node interrupted), ends, and starts again when the resume goes on
// with it. A nested team's turn is framed so too when a halt elsewhere cuts it short
// (its run interrupted or stopped); while it waits for its own members' decisions it
// is one turn, from its start to its end.
type TeamInterceptor interface {
	flow.Interceptor
	OnTeamStart(ctx context.Context, tr *TeamTrace)
	OnTeamEnd(ctx context.Context, tr *TeamTrace, err error)
	ShouldSupervisorContinue(ctx context.Context, tr *TeamTrace) bool
	OnModelStart(ctx context.Context, tr *TeamTrace, req *ChatRequest)
	OnModelEnd(ctx context.Context, tr *TeamTrace, resp *ChatResponse, err error, d time.Duration)
	OnSupervisorDecision(ctx context.Context, tr *TeamTrace, d RouteDecision)
	ShouldAgentContinue(ctx context.Context, tr *TeamTrace, member Agent) bool
	OnMemberStart(ctx context.Context, tr *TeamTrace, member Agent, prompt string)
	OnMemberEnd(ctx context.Context, tr *TeamTrace, member Agent, ans *Answer, err error)
}

// NopTeamInterceptor implements TeamInterceptor with hooks that do nothing (and
// checks that let the team go on). Embed it to implement only some hooks.
type NopTeamInterceptor struct{ flow.NopInterceptor }

var _ TeamInterceptor = NopTeamInterceptor{}

// OnTeamStart does nothing.
func (NopTeamInterceptor) OnTeamStart(context.Context, *TeamTrace) {}

// OnTeamEnd does nothing.
func (NopTeamInterceptor) OnTeamEnd(context.Context, *TeamTrace, error) {}

// ShouldSupervisorContinue returns true.
func (NopTeamInterceptor) ShouldSupervisorContinue(context.Context, *TeamTrace) bool { return true }

// OnModelStart does nothing.
func (NopTeamInterceptor) OnModelStart(context.Context, *TeamTrace, *ChatRequest) {}

// OnModelEnd does nothing.
func (NopTeamInterceptor) OnModelEnd(context.Context, *TeamTrace, *ChatResponse, error, time.Duration) {
}

// OnSupervisorDecision does nothing.
func (NopTeamInterceptor) OnSupervisorDecision(context.Context, *TeamTrace, RouteDecision) {}

// ShouldAgentContinue returns true.
func (NopTeamInterceptor) ShouldAgentContinue(context.Context, *TeamTrace, Agent) bool { return true }

// OnMemberStart does nothing.
func (NopTeamInterceptor) OnMemberStart(context.Context, *TeamTrace, Agent, string) {}

// OnMemberEnd does nothing.
func (NopTeamInterceptor) OnMemberEnd(context.Context, *TeamTrace, Agent, *Answer, error) {}

// hooks are a team's interceptors in index order.
type hooks []TeamInterceptor

func (h hooks) teamStart(ctx context.Context, tr *TeamTrace) {
	for _, i := range h {
		i.OnTeamStart(ctx, tr.clone())
	}
}

func (h hooks) teamEnd(ctx context.Context, tr *TeamTrace, err error) {
	for _, i := range h {
		i.OnTeamEnd(ctx, tr.clone(), err)
	}
}

func (h hooks) supervisorContinue(ctx context.Context, tr *TeamTrace) bool {
	for _, i := range h {
		if !i.ShouldSupervisorContinue(ctx, tr.clone()) {
			return false
		}
	}
	return true
}

func (h hooks) agentContinue(ctx context.Context, tr *TeamTrace, m Agent) bool {
	for _, i := range h {
		if !i.ShouldAgentContinue(ctx, tr.clone(), m) {
			return false
		}
	}
	return true
}

func (h hooks) modelStart(ctx context.Context, tr *TeamTrace, req *ChatRequest) {
	for _, i := range h {
		i.OnModelStart(ctx, tr.clone(), req)
	}
}

func (h hooks) modelEnd(ctx context.Context, tr *TeamTrace, resp *ChatResponse, err error, d time.Duration) {
	for _, i := range h {
		i.OnModelEnd(ctx, tr.clone(), resp, err, d)
	}
}

func (h hooks) decision(ctx context.Context, tr *TeamTrace, d RouteDecision) {
	for _, i := range h {
		i.OnSupervisorDecision(ctx, tr.clone(), d)
	}
}

func (h hooks) memberStart(ctx context.Context, tr *TeamTrace, m Agent, prompt string) {
	for _, i := range h {
		i.OnMemberStart(ctx, tr.clone(), m, prompt)
	}
}

func (h hooks) memberEnd(ctx context.Context, tr *TeamTrace, m Agent, ans *Answer, err error) {
	for _, i := range h {
		i.OnMemberEnd(ctx, tr.clone(), m, ans, err)
	}
}
