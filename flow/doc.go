// Package flow runs graph workflows in the style of Solon Flow: graphs built in Go
// (GraphSpec) or read from Solon's YAML and JSON definitions, run by an Engine over a
// Context of variables, with gateways, loops, sub-graphs and interceptors, and runs
// that stop, suspend and resume from the exact place they left.
//
// A graph from a definition document, run once:
//
//	g, err := flow.LoadGraph("leave.yml", []byte(`
//	id: leave
//	layout:
//	  - {type: start}
//	  - {type: exclusive, link: [{nextId: auto, when: "day <= 3"}, manager]}
//	  - {id: auto, task: 'context.put("approved", true)', link: end}
//	  - {id: manager, task: "@askManager", link: end}
//	  - {id: end, type: end}
//	`))
//	if err != nil {
//		return err // a *DefinitionError names the file and line
//	}
//	askManager := func(ctx context.Context, c *flow.Context, n *flow.Node) error {
//		c.Set("approved", c.Value("day").(int) <= 10)
//		return nil
//	}
//	e := flow.NewEngine(flow.WithTaskFunc("askManager", askManager))
//	fc := flow.NewContextWith("leave-42", map[string]any{"day": 2})
//	res, err := e.EvalGraph(ctx, g, fc)
//	fmt.Println(res.Status, fc.Value("approved")) // completed true
//
// The package example runs this as a test; ExampleNewSpec builds a graph in Go and
// ExampleEngine_Resume suspends a run and resumes it.
//
// # Graphs
//
// A GraphSpec is the editable description (NewSpec, or ParseDefinition and
// ReadDefinitionFile for documents); Build validates it and returns an immutable Graph
// that any number of runs and engines share. An Engine compiles a graph once, when it
// is registered or first run, against its tasks (WithTask, "@name" in a document), its
// conditions (WithCondition) and its Evaluator (expr by default; WithNamedEvaluator
// for a document that names one, "evaluator: solon"): an unknown name, a
// script that does not compile or a malformed meta is an error then, naming the file,
// line and node, never in the middle of a run. Engine.LoadFiles loads a batch of
// documents and checks the sub-graphs they call ("#graph").
//
// Node types follow Solon: start, end, activity, exclusive, inclusive, parallel and
// loop. A node's when guards its task only. Links sort by priority, higher first,
// keeping document order among equals; an empty when is true.
//
// # Gateways and joins
//
// An exclusive gateway takes its first link whose condition holds, or else its link
// without a condition (the default); an inclusive one every link whose condition
// holds; a parallel one every link, ignoring conditions. A split's branches meet at a join (a
// parallel or inclusive node with several incoming links), which waits for exactly the
// branches that split activation started; a branch that ends elsewhere is withdrawn
// from it. Branches run on goroutines (WithMaxConcurrency). A failing branch follows
// the BranchPolicy: FailFast (the default) or ContinueOnError, set with
// WithBranchPolicy or meta branchPolicy on the node or the graph.
//
// # Stopping, suspending and resuming
//
// A task ends the run with Context.Stop, its branch with Context.Interrupt, or halts
// the run until a decision arrives with Context.Suspend. Eval returns a Result:
// completed, suspended, stopped or failed, with the step count, the last node per call
// path, every execution error and, unless the run completed, the Frontier to resume
// from. Frontier.State and Engine.RestoreFrontier turn it into plain data and back, for
// a store; Engine.Resume continues from it without replaying what completed.
//
// # Checkpoints and effects
//
// WithCheckpoint hands the run's state to a function after every completed node, so
// a process that dies resumes from its last saved checkpoint (package session saves
// them). A task's writes outside the instance (a counter in Redis, a message to
// send) are made exactly once when the task queues them with Context.Effect instead
// of making them: they travel in the Checkpoint of the node's completion, and the
// receiver makes them in the step that saves it. A node that dies, fails or suspends
// before that queued nothing that lasts; it runs again and queues them again.
//
// # Errors
//
// A node failure becomes a *NodeError with a stable code and an ExecutionError record
// in the Context (ExecutionErrors reads them). The ErrorPolicy decides: a recoverable
// error lets the run go on, along the node's links or to a goto node; a fatal one
// applies the fallback state and ends the branch, the sub-graph call or the run. An
// idempotent node with a RetryPolicy retries retryable errors with backoff. In a
// document, node meta says the same, and scripts fail with raise("CODE", "message"):
//
//	meta:
//	  onError: {goto: fallback_lookup, recover: [SOFT_TIMEOUT], fallback: {status: fallback}}
//	  retry: {max: 3, backoff: 10ms, maxBackoff: 1s}
//	  idempotent: true
//
// # Where flowteam differs from Solon
//
//   - An exclusive gateway with no true link and no default fails with ErrNoRoute;
//     Solon ends the branch silently.
//   - A condition that cannot be evaluated is an error (code condition_error), never a
//     silent false. An unset variable reads as nil.
//   - Joins count per split activation, and withdrawn branches stop being waited for;
//     Solon's inclusive counter never resets.
//   - Resume continues from the stored frontier; Solon replays from the start node.
//   - A loop's $for variable belongs to the branch that iterates, and scripts run with
//     the variables locked, so parallel context.put calls never lose an update. (A
//     ScriptTask, such as a Java script of package solonscript, locks each access, not
//     the whole script.)
//   - Scalars in documents follow YAML 1.2 (see ParseDefinition).
//
// # Performance
//
// A run allocates once, for itself and its Result; WithResult reuses a Result, and a
// run of a graph whose nodes are scripts and conditions only reuses its state
// (recycle.go says why that is safe). The default evaluator compiles the usual
// expressions to closures, held to expr by a differential test and a fuzz target.
// bench_test.go has the benchmarks.
package flow
