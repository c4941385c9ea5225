package testkit

import (
	"context"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/trace"
)

// FixedAgent is a deterministic team.Agent: it writes fixed values into the session's
// FlowContext and answers with a fixed text, whatever the prompt. It reports run start
// and end events like any agent and records the prompts it got. Use it to test a
// graph's topology without a model.
type FixedAgent struct {
	name, role, answer string
	writes             map[string]any

	mu      sync.Mutex
	prompts []string
}

var _ team.Agent = (*FixedAgent)(nil)

// NewFixedAgent returns an agent that answers answer.
func NewFixedAgent(name, answer string) *FixedAgent {
	return &FixedAgent{name: name, role: name, answer: answer}
}

// Analyst returns the seeds' deterministic analyst: it puts analysis.result = "HIGH"
// into the context and answers "HIGH".
func Analyst() *FixedAgent {
	return NewFixedAgent("analyst", "HIGH").WithRole("analyst").Write("analysis.result", "HIGH")
}

// Write adds a context write made on every call. Each call writes its own copy of the
// maps (map[string]any) and lists ([]any) in value.
func (a *FixedAgent) Write(key string, value any) *FixedAgent {
	if a.writes == nil {
		a.writes = make(map[string]any)
	}
	a.writes[key] = value
	return a
}

// WithRole sets the role.
func (a *FixedAgent) WithRole(role string) *FixedAgent { a.role = role; return a }

// Name returns the name.
func (a *FixedAgent) Name() string { return a.name }

// Role returns the role.
func (a *FixedAgent) Role() string { return a.role }

// Prompts returns the prompts of every call so far.
func (a *FixedAgent) Prompts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.prompts)
}

// Call writes the fixed values and answers.
func (a *FixedAgent) Call(ctx context.Context, prompt string, sess *team.AgentSession) (*team.Answer, error) {
	if sess == nil {
		sess = team.NewSession("")
	}
	a.mu.Lock()
	a.prompts = append(a.prompts, prompt)
	a.mu.Unlock()
	began := time.Now()
	ri := team.NewRunInfo(ctx, a.name, sess)
	ev := ri.Event(team.EventRunStart)
	ev.Prompt = prompt
	team.Emit(ctx, ev)
	for _, k := range slices.Sorted(maps.Keys(a.writes)) {
		sess.Context().Set(k, cloneValue(a.writes[k]))
	}
	ans := &team.Answer{Agent: a.name, RunID: ri.RunID, Content: a.answer, Metrics: trace.Metrics{Duration: time.Since(began)}}
	end := ri.Event(team.EventRunEnd)
	end.Status, end.Content, end.Answer, end.Duration = team.RunCompleted, a.answer, ans, ans.Metrics.Duration
	team.Emit(ctx, end)
	return ans, nil
}

// cloneValue copies the maps and lists (as JSON decodes them) inside v, so that what a
// call wrote can be edited in place without changing what the next call writes.
func cloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(t))
		for k, e := range t {
			c[k] = cloneValue(e)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = cloneValue(e)
		}
		return c
	}
	return v
}

// FailingAgent is a team.Agent that always fails with the same error.
type FailingAgent struct {
	name string
	err  error
}

var _ team.Agent = (*FailingAgent)(nil)

// NewFailingAgent returns an agent that fails with err.
func NewFailingAgent(name string, err error) *FailingAgent {
	return &FailingAgent{name: name, err: err}
}

// FailingWith returns an agent that fails with a structured error of the given type.
func FailingWith(name string, t team.ErrorType, message string) *FailingAgent {
	return NewFailingAgent(name, team.NewError(t, "%s", message))
}

// Name returns the name.
func (a *FailingAgent) Name() string { return a.name }

// Role returns "failing".
func (a *FailingAgent) Role() string { return "failing" }

// Call fails.
func (a *FailingAgent) Call(ctx context.Context, prompt string, sess *team.AgentSession) (*team.Answer, error) {
	ri := team.NewRunInfo(ctx, a.name, sess)
	ev := ri.Event(team.EventRunStart)
	ev.Prompt = prompt
	team.Emit(ctx, ev)
	end := ri.Event(team.EventRunEnd)
	end.Status, end.Error = team.RunFailed, team.AsError(a.err, team.TypeAgentFailed)
	team.Emit(ctx, end)
	return nil, a.err
}

// SlowAgent is a team.Agent that answers only when released (or after its delay, if
// one is set), and gives up when its context ends: use it to test cancellation,
// deadlines and stopped streams without sleeping.
type SlowAgent struct {
	name, answer string
	delay        time.Duration
	started      chan struct{}
	release      chan struct{}
	once         sync.Once
}

var _ team.Agent = (*SlowAgent)(nil)

// NewSlowAgent returns an agent that answers answer once released.
func NewSlowAgent(name, answer string) *SlowAgent {
	// A buffer of empty structs takes no memory whatever its capacity, so the channel
	// holds every start signal: a call never blocks on a test that does not read them,
	// and a test that does never misses one.
	return &SlowAgent{name: name, answer: answer, started: make(chan struct{}, math.MaxInt), release: make(chan struct{})}
}

// WithDelay makes the agent also answer on its own after d.
func (a *SlowAgent) WithDelay(d time.Duration) *SlowAgent { a.delay = d; return a }

// Started receives a value each time a call starts waiting. The signals are buffered
// without bound: a test may read them late, or not at all.
func (a *SlowAgent) Started() <-chan struct{} { return a.started }

// Release lets every waiting and future call answer.
func (a *SlowAgent) Release() { a.once.Do(func() { close(a.release) }) }

// Name returns the name.
func (a *SlowAgent) Name() string { return a.name }

// Role returns "slow".
func (a *SlowAgent) Role() string { return "slow" }

// Call waits for the release, the delay or the end of ctx. When ctx ends first it
// fails with a structured cancelled (or timeout) error.
func (a *SlowAgent) Call(ctx context.Context, prompt string, sess *team.AgentSession) (*team.Answer, error) {
	ri := team.NewRunInfo(ctx, a.name, sess)
	ev := ri.Event(team.EventRunStart)
	ev.Prompt = prompt
	team.Emit(ctx, ev)
	a.started <- struct{}{}
	var timer <-chan time.Time
	if a.delay > 0 {
		t := time.NewTimer(a.delay)
		defer t.Stop()
		timer = t.C
	}
	end := ri.Event(team.EventRunEnd)
	select {
	case <-a.release:
	case <-timer:
	case <-ctx.Done():
		err := team.ContextError(ctx)
		end.Status, end.Error = team.RunFailed, err
		team.Emit(ctx, end)
		return nil, err
	}
	ans := &team.Answer{Agent: a.name, RunID: ri.RunID, Content: a.answer}
	end.Status, end.Content, end.Answer = team.RunCompleted, a.answer, ans
	team.Emit(ctx, end)
	return ans, nil
}

// Events collects the events of a call (team.Stream) into a slice; the error is the
// call's.
func Events(ctx context.Context, agent team.Agent, prompt string, sess *team.AgentSession) ([]team.Event, error) {
	var evs []team.Event
	for ev, err := range team.Stream(ctx, agent, prompt, sess) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}
