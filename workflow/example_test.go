package workflow_test

import (
	"context"
	"fmt"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/workflow"
)

func Example() {
	spec := flow.NewSpec("leave")
	spec.Start("start").LinkTo("file")
	spec.Activity("file").SetMeta("actor", "employee").LinkTo("approve")
	spec.Activity("approve").SetMeta("actor", "lead").LinkTo("end")
	spec.End("end")
	g, _ := spec.Build()
	eng := flow.NewEngine()
	_ = eng.Register(g)

	ctx := context.Background()
	x := workflow.NewExecutor(eng, workflow.NewActorController(), workflow.NewMemoryRepository())
	for _, who := range []string{"employee", "lead"} {
		actor := workflow.As("actor", who)
		task, _ := x.ClaimTask(ctx, "leave", "req-1", actor, map[string]any{"days": 3})
		out, _ := x.SubmitTask(ctx, "leave", "req-1", workflow.Submit{Node: task.ID(), Action: workflow.Forward, Actor: actor})
		fmt.Println(who, task.ID(), out.Status)
	}
	// Output:
	// employee file running
	// lead approve completed
}
