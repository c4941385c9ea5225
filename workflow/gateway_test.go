package workflow_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/workflow"
)

// executorFor registers one graph read from YAML.
func executorFor(t *testing.T, yml string, opts ...workflow.Option) *workflow.Executor {
	t.Helper()
	g, err := flow.LoadGraph("g.yml", []byte(yml))
	require.NoError(t, err)
	eng := flow.NewEngine()
	require.NoError(t, eng.Register(g))
	ctrl := workflow.NewActorController().WithAdmins("admin")
	return workflow.NewExecutor(eng, ctrl, workflow.NewMemoryRepository(), opts...)
}

const parallelYML = `id: par
layout:
  - {id: s, type: start, link: a}
  - {id: a, meta: {actor: x}, link: p}
  - {id: p, type: parallel, link: [b1, b2]}
  - {id: b1, meta: {actor: y}, link: j}
  - {id: b2, meta: {actor: z}, link: j}
  - {id: j, type: parallel, link: c}
  - {id: c, meta: {actor: x}, link: e}
  - {id: e, type: end}
`

func forward(t *testing.T, x *workflow.Executor, graph, id, node, actor string) *workflow.Outcome {
	t.Helper()
	return submit(t, x, graph, id, workflow.Submit{Node: node, Action: workflow.Forward, Actor: workflow.As("actor", actor)})
}

func next(t *testing.T, x *workflow.Executor, graph, id string) []string {
	t.Helper()
	tasks, err := x.FindNextTasks(context.Background(), graph, id, nil)
	require.NoError(t, err)
	ids, _ := taskIDs(tasks)
	return ids
}

// The parallel join waits for both branches; back from after the join opens both
// branches again, back from a branch goes to the step before the split.
func TestParallelJoinAndBack(t *testing.T) {
	x := executorFor(t, parallelYML)
	forward(t, x, "par", "i", "a", "x")
	assert.Equal(t, []string{"b1", "b2"}, next(t, x, "par", "i"))
	forward(t, x, "par", "i", "b2", "z")
	assert.Equal(t, []string{"b1"}, next(t, x, "par", "i"), "the join waits for b1")
	forward(t, x, "par", "i", "b1", "y")
	assert.Equal(t, []string{"c"}, next(t, x, "par", "i"))

	submit(t, x, "par", "i", workflow.Submit{Node: "c", Action: workflow.Back, Actor: workflow.As("actor", "x")})
	assert.Equal(t, []string{"b1", "b2"}, next(t, x, "par", "i"))
	submit(t, x, "par", "i", workflow.Submit{Node: "b1", Action: workflow.Back, Actor: workflow.As("actor", "y")})
	assert.Equal(t, []string{"a"}, next(t, x, "par", "i"))
}

// A terminated branch stops the whole instance.
func TestTerminateInABranch(t *testing.T) {
	x := executorFor(t, parallelYML)
	forward(t, x, "par", "t", "a", "x")
	out := submit(t, x, "par", "t", workflow.Submit{Node: "b2", Action: workflow.Terminate, Actor: workflow.As("actor", "admin")})
	assert.Equal(t, workflow.Stopped, out.Status)
	assert.Nil(t, claim(t, x, "par", "t", workflow.As("actor", "y")))
	task, err := x.FindTask(context.Background(), "par", "t")
	require.NoError(t, err)
	assert.Equal(t, "b2", task.ID())
	assert.Equal(t, workflow.Terminated, task.State)
}

// With 50000 no manager's link holds: the inclusive split takes no branch, its join
// never runs, and the instance is completed without the mail.
func TestInclusiveSplitWithNoBranch(t *testing.T) {
	x := workflow.NewExecutor(engine(t, nil), workflow.NewActorController("role"), workflow.NewMemoryRepository())
	ctx := context.Background()
	_, err := x.ClaimTask(ctx, "test1", "small", workflow.As("role", "employee"), map[string]any{"amount": 50000})
	require.NoError(t, err)
	submit(t, x, "test1", "small", workflow.Submit{Node: "n0", Action: workflow.Forward, Actor: workflow.As("role", "employee")})
	out := submit(t, x, "test1", "small", workflow.Submit{Node: "n1", Action: workflow.Forward, Actor: workflow.As("role", "tl")})
	assert.Equal(t, workflow.Done, out.Status)
	inst, err := x.Instance(ctx, "small")
	require.NoError(t, err)
	assert.Nil(t, inst.Vars["mailed"])
}

const exclusiveYML = `id: ex
layout:
  - {id: s, type: start, link: file}
  - {id: file, meta: {actor: employee}, link: notify}
  - {id: notify, task: 'context.put("notified", (notified ?? 0) + 1)', link: lead}
  - {id: lead, meta: {actor: lead}, link: route}
  - id: route
    type: exclusive
    link:
      - {nextId: director, when: "days > 5"}
      - {nextId: hr, when: "days > 2"}
  - {id: director, meta: {actor: director}, link: e}
  - {id: hr, meta: {actor: hr}, link: e}
  - {id: e, type: end}
`

// An exclusive gateway takes its first true link; none true and no default is the
// engine's ErrNoRoute, and the submit that led there saves nothing.
func TestExclusiveRoutes(t *testing.T) {
	ctx := context.Background()
	for days, want := range map[int]string{8: "director", 3: "hr"} {
		x := executorFor(t, exclusiveYML)
		submit(t, x, "ex", "r", workflow.Submit{Node: "file", Action: workflow.Forward, Actor: workflow.As("actor", "employee"), Vars: map[string]any{"days": days}})
		forward(t, x, "ex", "r", "lead", "lead")
		task, err := x.FindTask(ctx, "ex", "r")
		require.NoError(t, err)
		assert.Equal(t, want, task.ID(), "days=%d", days)
	}
	x := executorFor(t, exclusiveYML)
	submit(t, x, "ex", "r", workflow.Submit{Node: "file", Action: workflow.Forward, Actor: workflow.As("actor", "employee"), Vars: map[string]any{"days": 1}})
	_, err := x.SubmitTask(ctx, "ex", "r", workflow.Submit{Node: "lead", Action: workflow.Forward, Actor: workflow.As("actor", "lead")})
	require.ErrorIs(t, err, flow.ErrNoRoute)
	st, err := x.State(ctx, "ex", "r", "lead")
	require.NoError(t, err)
	assert.Equal(t, workflow.Unknown, st)
}

// Back passes a node that moves on by itself, back to the previous person's step;
// the node's script runs again when the instance passes it again.
func TestBackPassesAutomaticNodes(t *testing.T) {
	ctx := context.Background()
	var events []workflow.Event
	x := executorFor(t, exclusiveYML, workflow.WithObserver(func(_ context.Context, ev workflow.Event) { events = append(events, ev) }))
	employee := workflow.As("actor", "employee")
	submit(t, x, "ex", "b", workflow.Submit{Node: "file", Action: workflow.Forward, Actor: employee, Vars: map[string]any{"days": 3}})
	require.Equal(t, "lead", claim(t, x, "ex", "b", workflow.As("actor", "lead")).ID())
	submit(t, x, "ex", "b", workflow.Submit{Node: "lead", Action: workflow.Back, Actor: workflow.As("actor", "lead"), Comment: "which dates?"})
	task, err := x.FindTask(ctx, "ex", "b")
	require.NoError(t, err)
	assert.Equal(t, "file", task.ID())
	forward(t, x, "ex", "b", "file", "employee")
	inst, err := x.Instance(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, int64(2), inst.Vars["notified"])

	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, ev.Kind+":"+ev.Node+":"+string(ev.Action))
	}
	assert.Equal(t, []string{"submit:file:forward", "claim:lead:", "submit:lead:back", "submit:file:forward"}, kinds)
	assert.Equal(t, workflow.As("actor", "lead"), events[2].Actor)
	assert.Equal(t, "which dates?", events[2].Comment)
	assert.Empty(t, events[0].Comment)
	assert.Equal(t, workflow.Running, events[2].Status)
}

// Claims of two branches at once both land: a claim that lost the race with the
// other loads the instance again.
func TestConcurrentClaimsOfTwoBranches(t *testing.T) {
	eachRepository(t, func(t *testing.T, repo workflow.Repository) {
		ctx := context.Background()
		g, err := flow.LoadGraph("g.yml", []byte(parallelYML))
		require.NoError(t, err)
		eng := flow.NewEngine()
		require.NoError(t, eng.Register(g))
		x := workflow.NewExecutor(eng, workflow.NewActorController(), repo)
		forward(t, x, "par", "cc", "a", "x")
		got := make(chan string, 2)
		for _, who := range []string{"y", "z"} {
			go func() {
				task, err := x.ClaimTask(ctx, "par", "cc", workflow.As("actor", who), nil)
				if err != nil || task == nil {
					got <- fmt.Sprint(err)
					return
				}
				got <- task.ID()
			}()
		}
		ids := []string{<-got, <-got}
		assert.ElementsMatch(t, []string{"b1", "b2"}, ids)
		for _, n := range []string{"b1", "b2"} {
			st, err := x.State(ctx, "par", "cc", n)
			require.NoError(t, err)
			assert.Equal(t, workflow.Waiting, st, n)
		}
	})
}

// A graph that cycles back over completed tasks is an error, not a walk without end.
func TestCycleIsAnError(t *testing.T) {
	x := executorFor(t, `id: cyc
layout:
  - {id: s, type: start, link: a}
  - {id: a, meta: {actor: x}, link: g}
  - id: g
    type: exclusive
    link:
      - {nextId: a, when: "again == true"}
      - {nextId: e}
  - {id: e, type: end}
`, workflow.WithMaxSteps(50))
	_, err := x.SubmitTask(context.Background(), "cyc", "c", workflow.Submit{Node: "a", Action: workflow.Forward,
		Actor: workflow.As("actor", "x"), Vars: map[string]any{"again": true}})
	require.ErrorContains(t, err, "a cycle through completed tasks")
}
