// Package workflow runs approval flows on flow graphs: tasks that people claim and
// submit, in the style of Solon Flow's WorkflowExecutor.
//
// A graph's activity nodes name who operates them in their meta (actor: tl). An
// Executor keeps, per instance, the state of every task (unknown, waiting, completed,
// terminated), the business variables and a history of submits, in a Repository:
//
//	eng := flow.NewEngine()
//	eng.Load("leave.yml")
//	x := workflow.NewExecutor(eng, workflow.NewActorController(), workflow.NewMemoryRepository())
//	task, err := x.ClaimTask(ctx, "leave", "req-1", workflow.As("actor", "tl"), nil)
//	// task.ID() == "approve", task.State == workflow.Waiting
//	_, err = x.SubmitTask(ctx, "leave", "req-1", workflow.Submit{
//		Node: task.ID(), Action: workflow.Forward, Actor: workflow.As("actor", "tl")})
//
// # Where an instance stands
//
// Nothing runs in the background: every call walks the graph from its start over the
// completed tasks, with the engine's rules for gateways and its compiled conditions.
// An exclusive gateway takes its first true link; an inclusive split takes every
// true link and its join waits for exactly those branches; a parallel split makes
// every branch a task of its own, so several tasks wait at once. A node the
// controller lets move on by itself (with ActorController: no actor key in its meta)
// runs its task and completes as the walk reaches it; a person's task runs its
// script when it is submitted forward. A node whose task is "#graph" calls that
// graph: its nodes are tasks of the instance too, named "graph:node".
//
// # Actions
//
// Forward completes a task; back sends it to the step before; forward_jump and
// back_jump move the instance to a target node; restart clears every task;
// terminate stops the instance until a restart. Unlike Solon, SubmitTask checks the
// Controller: forward and back need an actor who may operate the node, the others
// an administrator. The actor is given per call and never stored as a variable.
//
// # Storage
//
// StoreRepository keeps an instance as a session snapshot in any session.Store
// (memory, file, Redis), with its version check: of two submits of one task at
// the same moment one wins and the other gets ErrConflict. MemoryRepository does the
// same in this process, without encoding. StoreRepository.WithRedactor saves the
// secrets masked (the variables declared secret or under a sensitive key, and their
// values wherever the instance quotes them), as a session.Runner saves a run.
//
// # Audit
//
// WithObserver reports every claim that found a task and every saved submit (node,
// action, actor, comment, the instance's status). To keep them in the audit log
// beside the runs' records, hand them to interceptor.Audit.Task, which writes a
// task record per event (see the interceptor package); "flowteam task claim|submit
// --audit FILE" does so.
//
// # Limits
//
// Graphs with cycles cannot be walked this way (a completed task is never run
// again): send work back with the back action instead. Loop nodes are not
// supported. A sub-graph called from two nodes shares its task states, which are
// keyed "graph:node" as in Solon.
package workflow
