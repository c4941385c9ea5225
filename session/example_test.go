package session_test

import (
	"context"
	"errors"
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

// Every store checks versions: a save names the version it expects to replace (0: a
// new instance), so of two processes that loaded the same version only the first save
// succeeds and the other gets ErrConflict, having stored nothing. A Runner relies on
// this to claim an instance before it runs a node.
func ExampleStore() {
	ctx := context.Background()
	var store session.Store = session.NewMemoryStore() // or NewFileStore(dir), NewRedisStore(client)
	snap := &session.Snapshot{
		Format:   session.FormatVersion,
		Instance: "leave-42",
		Graph:    "leave",
		Hash:     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		Status:   session.StatusSuspended,
		Vars:     map[string]any{"days": 5},
	}
	if err := store.Save(ctx, snap, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("saved version", snap.Version)

	a, _ := store.Load(ctx, "leave-42") // two processes load version 1
	b, _ := store.Load(ctx, "leave-42")
	a.Status = session.StatusRunning
	fmt.Println("first:", store.Save(ctx, a, 1), a.Version)
	b.Status = session.StatusRunning
	err := store.Save(ctx, b, 1)
	fmt.Println("second conflicts:", errors.Is(err, session.ErrConflict))

	ids, _ := store.List(ctx, session.StatusRunning)
	fmt.Println("running:", ids)
	// Output:
	// saved version 1
	// first: <nil> 2
	// second conflicts: true
	// running: [leave-42]
}
