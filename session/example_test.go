package session_test

import (
	"context"
	"fmt"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// A leave request suspends at the manager's approval; later (in this example the same
// process, in practice another one) the manager's decision resumes it from the store.
func ExampleRunner() {
	ctx := context.Background()
	spec := flow.NewSpec("leave")
	spec.Start("s").LinkTo("manager")
	spec.Activity("manager").SetTask(`approved == nil ? context.suspend("waiting for the manager") : context.put("status", approved ? "approved" : "rejected")`).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		panic(err)
	}
	eng := flow.NewEngine()
	if err := eng.Register(g); err != nil {
		panic(err)
	}
	store := session.NewMemoryStore() // or NewFileStore(dir), NewRedisStore(client)
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))

	res, err := r.Run(ctx, "leave", flow.NewContextWith("leave-42", map[string]any{"days": 5}))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Reason)

	res, err = r.Resume(ctx, "leave-42", map[string]any{"approved": true})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Context.Value("status"))

	_, err = r.Resume(ctx, "leave-42", nil)
	fmt.Println(err)
	// Output:
	// suspended waiting for the manager
	// completed approved
	// session: resume "leave-42": version conflict: instance already completed (version 7)
}
