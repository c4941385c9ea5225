package team

import (
	"context"
	"time"

	"github.com/flowteam/flowteam/flow"
)

// TeamInterceptor observes agents and teams: a team's start and end, the
// supervisor's continue check and decisions, each member's continue check, every
// agent run's start and end, its model calls and its tool calls; and, being a
// flow.Interceptor, every graph evaluation and node execution of a team's graph.
// Register it on a team, a SimpleAgent or a ReActAgent with WithInterceptor. Embed
// NopTeamInterceptor to implement only some hooks. The names follow Solon's
// TeamInterceptor.
//
// Team hooks get a copy of the TeamTrace as it stands (changing it changes nothing);
// agent hooks (agent, model, tool) get the RunInfo of the run. Hooks run on the
// goroutine of the node or agent that triggers them (members of a parallel team
// concurrently) and must not block. Only the two Should hooks change what happens:
// ShouldSupervisorContinue returning false makes the supervisor finish with the last
// answer; ShouldAgentContinue returning false skips the member's turn (a "skipped"
// record). To change a model's or a tool's behaviour, wrap the model or the tool.
type TeamInterceptor interface {
	flow.Interceptor
	// OnTeamStart is called when a team run starts and when a suspended run
	// resumes; OnTeamEnd when it completes, fails, is interrupted, stops or suspends
	// (tr.Status says which; an interrupted run's err is the cancellation that cut it
	// short), so each process sees its starts and ends paired.
	OnTeamStart(ctx context.Context, tr *TeamTrace)
	OnTeamEnd(ctx context.Context, tr *TeamTrace, err error)
	ShouldSupervisorContinue(ctx context.Context, tr *TeamTrace) bool
	OnSupervisorDecision(ctx context.Context, tr *TeamTrace, d RouteDecision)
	ShouldAgentContinue(ctx context.Context, tr *TeamTrace, member Agent) bool
	// OnAgentStart and OnAgentEnd frame an agent run. On a team they frame each
	// segment of a member's turn (run.ParentRunID is the team's run; run.RunID the
	// member's on OnAgentEnd when it answered): a turn suspended for decisions, or cut
	// short by a halt elsewhere, ends, and starts again when the resume goes on with
	// it. ans is nil when err is set.
	OnAgentStart(ctx context.Context, run RunInfo, prompt string)
	OnAgentEnd(ctx context.Context, run RunInfo, ans *Answer, err error)
	// OnModelStart and OnModelEnd frame a model call of an agent or of a team's
	// supervisor (run.Agent is then the team); resp is nil when err is set.
	OnModelStart(ctx context.Context, run RunInfo, req *ChatRequest)
	OnModelEnd(ctx context.Context, run RunInfo, resp *ChatResponse, err error, d time.Duration)
	// OnToolStart and OnToolEnd frame one tool call of a ReAct agent, in the
	// model's order. A team calls neither: to see its members' model and tool
	// calls, give the interceptor to the member agents too.
	OnToolStart(ctx context.Context, run RunInfo, call ToolCall)
	OnToolEnd(ctx context.Context, run RunInfo, call ToolCall, obs Observation, d time.Duration)
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

// OnSupervisorDecision does nothing.
func (NopTeamInterceptor) OnSupervisorDecision(context.Context, *TeamTrace, RouteDecision) {}

// ShouldAgentContinue returns true.
func (NopTeamInterceptor) ShouldAgentContinue(context.Context, *TeamTrace, Agent) bool { return true }

// OnAgentStart does nothing.
func (NopTeamInterceptor) OnAgentStart(context.Context, RunInfo, string) {}

// OnAgentEnd does nothing.
func (NopTeamInterceptor) OnAgentEnd(context.Context, RunInfo, *Answer, error) {}

// OnModelStart does nothing.
func (NopTeamInterceptor) OnModelStart(context.Context, RunInfo, *ChatRequest) {}

// OnModelEnd does nothing.
func (NopTeamInterceptor) OnModelEnd(context.Context, RunInfo, *ChatResponse, error, time.Duration) {
}

// OnToolStart does nothing.
func (NopTeamInterceptor) OnToolStart(context.Context, RunInfo, ToolCall) {}

// OnToolEnd does nothing.
func (NopTeamInterceptor) OnToolEnd(context.Context, RunInfo, ToolCall, Observation, time.Duration) {
}

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

func (h hooks) decision(ctx context.Context, tr *TeamTrace, d RouteDecision) {
	for _, i := range h {
		i.OnSupervisorDecision(ctx, tr.clone(), d)
	}
}

// memberRun is the RunInfo of a member's turn in the team run tr.
func memberRun(tr *TeamTrace, m Agent) RunInfo {
	return RunInfo{ParentRunID: tr.RunID, Agent: m.Name(), Instance: tr.Instance, Branch: tr.Branch}
}

func (h hooks) memberStart(ctx context.Context, tr *TeamTrace, m Agent, prompt string) {
	h.agentStart(ctx, memberRun(tr, m), prompt)
}

func (h hooks) memberEnd(ctx context.Context, tr *TeamTrace, m Agent, ans *Answer, err error) {
	run := memberRun(tr, m)
	if ans != nil {
		run.RunID = ans.RunID
	}
	h.agentEnd(ctx, run, ans, err)
}

func (h hooks) agentStart(ctx context.Context, run RunInfo, prompt string) {
	for _, i := range h {
		i.OnAgentStart(ctx, run, prompt)
	}
}

func (h hooks) agentEnd(ctx context.Context, run RunInfo, ans *Answer, err error) {
	for _, i := range h {
		i.OnAgentEnd(ctx, run, ans, err)
	}
}

func (h hooks) modelStart(ctx context.Context, run RunInfo, req *ChatRequest) {
	for _, i := range h {
		i.OnModelStart(ctx, run, req)
	}
}

func (h hooks) modelEnd(ctx context.Context, run RunInfo, resp *ChatResponse, err error, d time.Duration) {
	for _, i := range h {
		i.OnModelEnd(ctx, run, resp, err, d)
	}
}

func (h hooks) toolStart(ctx context.Context, run RunInfo, call ToolCall) {
	for _, i := range h {
		i.OnToolStart(ctx, run, call)
	}
}

func (h hooks) toolEnd(ctx context.Context, run RunInfo, call ToolCall, obs Observation, d time.Duration) {
	for _, i := range h {
		i.OnToolEnd(ctx, run, call, obs, d)
	}
}
