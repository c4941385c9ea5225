package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/workflow"
)

var admin = workflow.As("role", "admin")

// Solon's JumpFlowTest (test2) and JumpFlowTest2 case1 (test3): an administrator
// jumps forward to n3, then back to n1.
func TestJumpForwardThenBack(t *testing.T) {
	for _, graph := range []string{"test2", "test3"} {
		t.Run(graph, func(t *testing.T) {
			eachRepository(t, func(t *testing.T, repo workflow.Repository) {
				x := roleAdmin(t, repo)
				ctx := context.Background()
				submit(t, x, graph, "i1", workflow.Submit{Node: "n3", Action: workflow.ForwardJump, Actor: admin})
				task := claim(t, x, graph, "i1", admin)
				require.NotNil(t, task)
				assert.Equal(t, "n3", task.ID())
				assert.Equal(t, workflow.Waiting, task.State)
				for _, n := range []string{"n0", "n1", "n2"} {
					st, err := x.State(ctx, graph, "i1", n)
					require.NoError(t, err)
					assert.Equal(t, workflow.Completed, st, n)
				}

				submit(t, x, graph, "i1", workflow.Submit{Node: "n1", Action: workflow.BackJump, Actor: admin})
				task = claim(t, x, graph, "i1", admin)
				require.NotNil(t, task)
				assert.Equal(t, "n1", task.ID())
				assert.Equal(t, workflow.Waiting, task.State)
				for n, want := range map[string]workflow.TaskState{"n0": workflow.Completed, "n2": workflow.Unknown, "n3": workflow.Unknown} {
					st, err := x.State(ctx, graph, "i1", n)
					require.NoError(t, err)
					assert.Equal(t, want, st, n)
				}
			})
		})
	}
}

// Solon's JumpFlowTest2 case2: forwarding the same task twice leaves the instance
// where the first forward left it.
func TestForwardTwice(t *testing.T) {
	eachRepository(t, func(t *testing.T, repo workflow.Repository) {
		x := roleAdmin(t, repo)
		task := claim(t, x, "test3", "i2", admin)
		require.Equal(t, "n0", task.ID())
		submit(t, x, "test3", "i2", workflow.Submit{Node: task.ID(), Action: workflow.Forward, Actor: admin})
		task2 := claim(t, x, "test3", "i2", admin)
		submit(t, x, "test3", "i2", workflow.Submit{Node: task.ID(), Action: workflow.Forward, Actor: admin})
		task3 := claim(t, x, "test3", "i2", admin)
		assert.Equal(t, "n1", task2.ID())
		assert.Equal(t, task2.ID(), task3.ID())
	})
}

// Solon's ActorStateFlowTest on test1: employee, team lead, then the inclusive
// countersign: with 900000 all three managers sign, the join waits for all three,
// and the mail script runs once the last one signed.
func TestInclusiveCountersign(t *testing.T) {
	cases := []struct {
		amount   int
		managers []string
	}{
		{900000, []string{"n2", "n3", "n4"}},
		{500000, []string{"n2", "n3"}},
		{100000, []string{"n2"}},
	}
	for _, c := range cases {
		eachRepository(t, func(t *testing.T, repo workflow.Repository) {
			ctx := context.Background()
			x := workflow.NewExecutor(engine(t, nil), workflow.NewActorController("role"), repo)
			task, err := x.ClaimTask(ctx, "test1", "c1", workflow.As("role", "employee"), map[string]any{"amount": c.amount})
			require.NoError(t, err)
			require.Equal(t, "n0", task.ID())
			assert.Equal(t, workflow.Waiting, task.State)
			submit(t, x, "test1", "c1", workflow.Submit{Node: "n0", Action: workflow.Forward, Actor: workflow.As("role", "employee")})

			tl := workflow.As("role", "tl")
			task = claim(t, x, "test1", "c1", tl)
			require.Equal(t, "n1", task.ID())
			submit(t, x, "test1", "c1", workflow.Submit{Node: "n1", Action: workflow.Forward, Actor: tl})

			dm := workflow.As("role", "dm")
			tasks, err := x.FindNextTasks(ctx, "test1", "c1", dm)
			require.NoError(t, err)
			ids, waiting := taskIDs(tasks)
			require.Equal(t, c.managers, ids)
			assert.Equal(t, len(c.managers), waiting)
			for i, n := range c.managers {
				out := submit(t, x, "test1", "c1", workflow.Submit{Node: n, Action: workflow.Forward, Actor: dm})
				inst, err := x.Instance(ctx, "c1")
				require.NoError(t, err)
				if i < len(c.managers)-1 {
					assert.Equal(t, workflow.Running, out.Status, "the join waits for %v", c.managers[i+1:])
					assert.Nil(t, inst.Vars["mailed"])
					continue
				}
				assert.Equal(t, workflow.Done, out.Status)
				assert.Equal(t, true, inst.Vars["mailed"])
			}
			task = claim(t, x, "test1", "c1", workflow.As("role", "oa"))
			assert.Nil(t, task, "the instance reached its end")
		})
	}
}

// Solon's NotBlockStateFlowTest: with the not-block controller a claim runs the
// whole graph, scripts included, and finds no task.
func TestNotBlockRunsToTheEnd(t *testing.T) {
	eachRepository(t, func(t *testing.T, repo workflow.Repository) {
		ctx := context.Background()
		x := workflow.NewExecutor(engine(t, nil), workflow.NotBlockController{}, repo)
		task, err := x.ClaimTask(ctx, "test1", "nb", nil, map[string]any{"amount": 900000})
		require.NoError(t, err)
		assert.Nil(t, task)
		inst, err := x.Instance(ctx, "nb")
		require.NoError(t, err)
		assert.Equal(t, workflow.Done, inst.Status)
		assert.Equal(t, true, inst.Vars["mailed"])
		for _, n := range []string{"n0", "n1", "n2", "n3", "n4"} {
			assert.NotContains(t, inst.States, "test1:"+n, "a node without a task keeps no record")
		}
		assert.Equal(t, workflow.Completed, inst.States["test1:n5"])
	})
}

// The block controller makes every activity wait, for anyone.
func TestBlockWaitsAtEveryActivity(t *testing.T) {
	x := workflow.NewExecutor(engine(t, nil), workflow.BlockController{}, workflow.NewMemoryRepository())
	var got []string
	for range 6 {
		task := claim(t, x, "test2", "b", nil)
		require.NotNil(t, task)
		got = append(got, task.ID())
		submit(t, x, "test2", "b", workflow.Submit{Node: task.ID(), Action: workflow.Forward})
	}
	assert.Equal(t, []string{"n0", "n1", "n2", "n3", "n4", "n5"}, got)
	assert.Nil(t, claim(t, x, "test2", "b", nil))
}

// Solon's OaFlowTest on sf1: Go tasks on the way, a parallel split whose branches
// wait at once for two different people.
func TestParallelBranchesWaitForTheirActors(t *testing.T) {
	eachRepository(t, func(t *testing.T, repo workflow.Repository) {
		ctx := context.Background()
		var mu sync.Mutex
		var ran []string
		cc := flow.TaskFunc(func(_ context.Context, _ *flow.Context, n *flow.Node) error {
			mu.Lock()
			defer mu.Unlock()
			ran = append(ran, n.ID)
			return nil
		})
		x := workflow.NewExecutor(engine(t, map[string]flow.Task{"OaMetaProcessCom": cc}), workflow.NewActorController(), repo)
		who := func(name string) workflow.Actor { return workflow.As("actor", name) }

		task := claim(t, x, "sf1", "oa", who("刘涛"))
		require.Equal(t, "step1", task.ID())
		submit(t, x, "sf1", "oa", workflow.Submit{Node: "step1", Action: workflow.Forward, Actor: who("刘涛"), Vars: map[string]any{"oaState": 2}})
		for range 2 { // a second claim finds the same task
			task = claim(t, x, "sf1", "oa", who("陈鑫"))
			require.NotNil(t, task)
			assert.Equal(t, "step3", task.ID())
			assert.Equal(t, workflow.Waiting, task.State)
		}
		assert.Equal(t, []string{"step2"}, ran, "the copy step moved on by itself")
		submit(t, x, "sf1", "oa", workflow.Submit{Node: "step3", Action: workflow.Forward, Actor: who("陈鑫")})
		assert.Equal(t, []string{"step2", "step3"}, ran, "step3's task ran when it was forwarded")

		tasks, err := x.FindNextTasks(ctx, "sf1", "oa", nil)
		require.NoError(t, err)
		ids, waiting := taskIDs(tasks)
		assert.Equal(t, []string{"step4_1", "step4_2"}, ids)
		assert.Zero(t, waiting)
		tasks, err = x.FindNextTasks(ctx, "sf1", "oa", who("陈宇"))
		require.NoError(t, err)
		_, waiting = taskIDs(tasks)
		assert.Equal(t, 1, waiting)
		loadedInst, err := x.Instance(ctx, "oa")
		require.NoError(t, err)
		loaded, err := x.NextTasksOf(ctx, loadedInst, who("陈宇"))
		require.NoError(t, err)
		assert.Equal(t, tasks, loaded, "NextTasksOf on the loaded instance finds the same")
		assert.Nil(t, claim(t, x, "sf1", "oa", who("陈鑫")), "nothing left for 陈鑫")

		task = claim(t, x, "sf1", "oa", who("陈宇"))
		require.Equal(t, "step4_1", task.ID())
		submit(t, x, "sf1", "oa", workflow.Submit{Node: "step4_1", Action: workflow.Forward, Actor: who("陈宇")})
		task = claim(t, x, "sf1", "oa", who("吕方"))
		require.Equal(t, "step4_2", task.ID())
		out := submit(t, x, "sf1", "oa", workflow.Submit{Node: "step4_2", Action: workflow.Forward, Actor: who("吕方")})
		assert.Equal(t, workflow.Done, out.Status)
		assert.Nil(t, claim(t, x, "sf1", "oa", who("吕方")))
		assert.Equal(t, []string{"step2", "step3", "step5"}, ran)
		inst, err := x.Instance(ctx, "oa")
		require.NoError(t, err)
		assert.Equal(t, int64(2), inst.Vars["oaState"])
		assert.Len(t, inst.History, 4)
	})
}

// Solon's test3 with n5 calling test3_sub: the sub-graph's nodes are tasks of the
// instance, named graph:node.
func TestSubGraphTasks(t *testing.T) {
	eachRepository(t, func(t *testing.T, repo workflow.Repository) {
		x := roleAdmin(t, repo)
		var got []string
		for {
			task := claim(t, x, "test3call", "sub", admin)
			if task == nil {
				break
			}
			got = append(got, task.ID())
			submit(t, x, "test3call", "sub", workflow.Submit{Node: task.ID(), Action: workflow.Forward, Actor: admin})
		}
		assert.Equal(t, []string{"n0", "n1", "n2", "n3", "n4",
			"test3_sub:n0", "test3_sub:n1", "test3_sub:n2", "test3_sub:n3", "test3_sub:n4"}, got)
		inst, err := x.Instance(context.Background(), "sub")
		require.NoError(t, err)
		assert.Equal(t, workflow.Done, inst.Status)
	})
}

// A "#graph" task names its graph as the engine reads it, spaces around the id
// ignored.
func TestSubGraphReferenceWithSpaces(t *testing.T) {
	sub := flow.NewSpec("sub")
	sub.Start("s").LinkTo("sign")
	sub.Activity("sign").SetMeta("actor", "a").LinkTo("e")
	sub.End("e")
	parent := flow.NewSpec("parent")
	parent.Start("s").LinkTo("call")
	parent.Activity("call").SetTask("# sub ").LinkTo("e")
	parent.End("e")
	eng := flow.NewEngine()
	for _, spec := range []*flow.GraphSpec{sub, parent} {
		g, err := spec.Build()
		require.NoError(t, err)
		require.NoError(t, eng.Register(g))
	}
	x := workflow.NewExecutor(eng, workflow.NewActorController(), workflow.NewMemoryRepository())
	task := claim(t, x, "parent", "p-1", workflow.As("actor", "a"))
	require.NotNil(t, task)
	assert.Equal(t, "sub:sign", task.ID())
}

// Submits check the controller: forward and back need the node's actor, jumps,
// terminate and restart an administrator.
func TestSubmitChecksTheController(t *testing.T) {
	x := roleAdmin(t, workflow.NewMemoryRepository())
	ctx := context.Background()
	employee, tl := workflow.As("role", "employee"), workflow.As("role", "tl")
	claim(t, x, "test2", "p", employee)
	_, err := x.SubmitTask(ctx, "test2", "p", workflow.Submit{Node: "n0", Action: workflow.Forward, Actor: tl})
	require.ErrorIs(t, err, workflow.ErrNotPermitted)
	assert.Contains(t, err.Error(), `actor role=tl may not forward node "n0"`)
	for _, a := range []workflow.Action{workflow.ForwardJump, workflow.BackJump, workflow.Restart, workflow.Terminate} {
		_, err := x.SubmitTask(ctx, "test2", "p", workflow.Submit{Node: "n0", Action: a, Actor: employee})
		require.ErrorIs(t, err, workflow.ErrNotPermitted, a)
	}
	st, err := x.State(ctx, "test2", "p", "n0")
	require.NoError(t, err)
	assert.Equal(t, workflow.Waiting, st, "a refused submit changes nothing")
	_, err = x.SubmitTask(ctx, "test2", "p", workflow.Submit{Node: "n1", Action: workflow.Forward, Actor: tl})
	require.ErrorIs(t, err, workflow.ErrNotActive, "the team lead may not approve before the employee filed")
	require.ErrorIs(t, err, workflow.ErrConflict)
	submit(t, x, "test2", "p", workflow.Submit{Node: "n0", Action: workflow.Forward, Actor: employee})
	_, err = x.SubmitTask(ctx, "test2", "p", workflow.Submit{Node: "n0", Action: workflow.Forward, Actor: employee})
	require.ErrorIs(t, err, workflow.ErrNotActive, "a task done is not done again")
	_, err = x.SubmitTask(ctx, "test2", "p", workflow.Submit{Node: "n0", Action: workflow.Back, Actor: employee})
	require.ErrorIs(t, err, workflow.ErrNotActive, "nor taken back by its actor once the next step waits")
	_, err = x.SubmitTask(ctx, "test2", "p", workflow.Submit{Node: "n0", Action: "approve", Actor: employee})
	require.ErrorIs(t, err, workflow.ErrUnknownAction)
	_, err = x.SubmitTask(ctx, "test2", "p", workflow.Submit{Node: "nx", Action: workflow.Forward, Actor: employee})
	require.ErrorIs(t, err, workflow.ErrUnknownNode)
}

// Back makes the step before active again; terminate stops the instance until an
// administrator restarts it; every submit is in the history.
func TestBackTerminateRestart(t *testing.T) {
	eachRepository(t, func(t *testing.T, repo workflow.Repository) {
		ctx := context.Background()
		x := roleAdmin(t, repo)
		employee, tl := workflow.As("role", "employee"), workflow.As("role", "tl")
		claim(t, x, "test2", "btr", employee)
		submit(t, x, "test2", "btr", workflow.Submit{Node: "n0", Action: workflow.Forward, Actor: employee, Vars: map[string]any{"days": 3}})
		require.Equal(t, "n1", claim(t, x, "test2", "btr", tl).ID())
		submit(t, x, "test2", "btr", workflow.Submit{Node: "n1", Action: workflow.Back, Actor: tl, Comment: "too vague"})
		task, err := x.FindTask(ctx, "test2", "btr")
		require.NoError(t, err)
		assert.Equal(t, "n0", task.ID())
		assert.Nil(t, claim(t, x, "test2", "btr", tl), "the team lead waits for the employee again")

		out := submit(t, x, "test2", "btr", workflow.Submit{Node: "n0", Action: workflow.Terminate, Actor: admin})
		assert.Equal(t, workflow.Stopped, out.Status)
		task, err = x.FindTask(ctx, "test2", "btr")
		require.NoError(t, err)
		assert.Equal(t, workflow.Terminated, task.State)
		assert.Nil(t, claim(t, x, "test2", "btr", employee))
		_, err = x.SubmitTask(ctx, "test2", "btr", workflow.Submit{Node: "n0", Action: workflow.Forward, Actor: employee})
		require.ErrorIs(t, err, workflow.ErrTerminated)

		out = submit(t, x, "test2", "btr", workflow.Submit{Node: "n0", Action: workflow.Restart, Actor: admin})
		assert.Equal(t, workflow.Running, out.Status)
		assert.Equal(t, "n0", claim(t, x, "test2", "btr", employee).ID())

		inst, err := x.Instance(ctx, "btr")
		require.NoError(t, err)
		require.Len(t, inst.History, 4)
		assert.Equal(t, workflow.Back, inst.History[1].Action)
		assert.Equal(t, "too vague", inst.History[1].Comment)
		assert.Equal(t, tl, inst.History[1].Actor)
		assert.Equal(t, int64(3), inst.History[0].Vars["days"])
		assert.Equal(t, int64(3), inst.Vars["days"])
		assert.NotContains(t, inst.Vars, "role", "the actor is never a variable")
	})
}

// A jump whose target the instance does not reach saves nothing.
func TestJumpNotReached(t *testing.T) {
	ctx := context.Background()
	x := roleAdmin(t, workflow.NewMemoryRepository())
	claim(t, x, "test2", "j", admin)
	_, err := x.SubmitTask(ctx, "test2", "j", workflow.Submit{Node: "n3", Action: workflow.BackJump, Actor: admin})
	require.ErrorIs(t, err, workflow.ErrNotReached)
	task, err := x.FindTask(ctx, "test2", "j")
	require.NoError(t, err)
	assert.Equal(t, "n0", task.ID())
}

// Of many submits of one waiting task at once exactly one wins; the others get a
// conflict (the store's, or the task found done), and the history holds one entry.
func TestConcurrentSubmitsOneWins(t *testing.T) {
	for _, ifWaiting := range []bool{true, false} {
		t.Run(fmt.Sprintf("if-waiting=%v", ifWaiting), func(t *testing.T) {
			eachRepository(t, func(t *testing.T, repo workflow.Repository) {
				raceSubmits(t, repo, ifWaiting)
			})
		})
	}
}

func raceSubmits(t *testing.T, repo workflow.Repository, ifWaiting bool) {
	ctx := context.Background()
	x := roleAdmin(t, repo)
	employee := workflow.As("role", "employee")
	claim(t, x, "test2", "race", employee)
	submitFn := x.SubmitTask
	if ifWaiting {
		submitFn = x.SubmitTaskIfWaiting
	}
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = submitFn(ctx, "test2", "race", workflow.Submit{Node: "n0", Action: workflow.Forward, Actor: employee})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		require.ErrorIs(t, err, workflow.ErrConflict)
	}
	assert.Equal(t, 1, won)
	inst, err := x.Instance(ctx, "race")
	require.NoError(t, err)
	assert.Len(t, inst.History, 1)
	_, err = x.SubmitTaskIfWaiting(ctx, "test2", "race", workflow.Submit{Node: "n0", Action: workflow.Forward, Actor: employee})
	require.ErrorIs(t, err, workflow.ErrNotWaiting)
	assert.True(t, errors.Is(err, workflow.ErrConflict))
}

// An instance keeps the controller it was created with: a claim with other actor
// keys would take every node for one that moves on by itself.
func TestInstanceKeepsItsController(t *testing.T) {
	eachRepository(t, func(t *testing.T, repo workflow.Repository) {
		eng := engine(t, nil)
		byRole := workflow.NewExecutor(eng, workflow.NewActorController("role"), repo)
		claim(t, byRole, "test2", "k", workflow.As("role", "employee"))
		byActor := workflow.NewExecutor(eng, workflow.NewActorController(), repo)
		_, err := byActor.ClaimTask(context.Background(), "test2", "k", workflow.As("actor", "x"), nil)
		require.ErrorIs(t, err, workflow.ErrWrongController)
		assert.Contains(t, err.Error(), `"actor:role", not "actor:actor"`)
		st, err := byRole.State(context.Background(), "test2", "k", "n1")
		require.NoError(t, err)
		assert.Equal(t, workflow.Unknown, st)
	})
}
