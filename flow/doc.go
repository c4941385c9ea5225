// Package flow is flowteam's graph engine: the graph model, graphs defined in Go code
// (GraphSpec) or read from Solon-style YAML/JSON documents, the Engine that runs them
// over a FlowContext, gateways, loops, sub-graphs, interceptors, stop/interrupt/suspend
// with an exact resumable frontier, and the execution-error model.
//
// # Model
//
// A GraphSpec is the editable description; Build validates it and returns an immutable
// Graph that any number of runs and engines share. Registering a graph on an Engine
// compiles it once against the engine's tasks, conditions and Evaluator: an unknown
// "@task", an unknown "@condition", a script or condition that does not compile, or a
// malformed loop, onError or retry meta is an error at that point, naming the file,
// line and node, never in the middle of a run. "#graph" references resolve at run time
// (LoadFiles checks them for the whole batch).
//
// Node types follow Solon: start, end, activity, exclusive, inclusive, parallel, loop;
// an unknown or missing type is an activity. Without a start node the first node no
// link enters is the start (as in Solon). A node's when guards its task only. Links
// sort by priority, higher first, keeping document order among equals; an empty when
// is true.
//
// # Where flowteam differs from Solon, on purpose
//
//   - An exclusive gateway with no matching link and no default link fails with
//     ErrNoRoute (code exclusive_no_match); Solon silently ends the branch.
//   - A condition that cannot be evaluated (a string compared with a number, a
//     missing variable used in arithmetic) is an error with code condition_error,
//     never a silent false. An unset variable reads as nil, so `approved != true`
//     holds before anyone approved.
//   - Joins count per split activation. Every fan-out (parallel, inclusive, or an
//     activity with several true links) opens a frame that knows how many branches it
//     started; the join waits for exactly those, and a cycle that passes the split
//     again opens a new frame. Solon never resets its inclusive counter. A join that
//     also has an incoming link from outside a split's branches (an activity fanning
//     out inside a parallel branch, all of whose branches meet at the parallel join)
//     counts that split's branches as arrivals of the enclosing split and runs once.
//   - A branch that ends without reaching the join (interrupted, reached an end node,
//     or had no true link) is withdrawn from its split, so the join stops waiting for
//     it instead of hanging. If no branch arrives, the join does not run.
//   - Resume continues from the exact stored frontier (pending tokens, join arrivals,
//     loop positions, sub-graph calls); Solon replays from the start node. A task
//     tells the node a resume runs again from a fresh evaluation that finds the old
//     state in the variables with Context.Resumed, and a retry with Context.Attempt.
//   - Loop items are branch-scoped: a loop's $for variable is visible to the branch
//     that iterates (and its sub-graph calls), never to concurrent branches, and it
//     is not left in the shared variables after the loop.
//   - Scripts run with the variables locked, so `context.put("n", n + 1)` from
//     parallel branches never loses an update.
//
// # Runs
//
// Eval and Resume return a Result: completed, suspended, stopped or failed, with the
// step count, the last node per call path (the FlowTrace), every execution error and,
// unless the run completed, the Frontier to resume from. Frontier.State and
// Engine.RestoreFrontier convert it to and from plain data for storage (through
// encoding/json, integral loop items come back as int64, not float64). Restoring
// checks every reference and every frame's pending count (the branches a split still
// waits for, a loop's one running iteration, a call's running units) against the
// tokens and frames inside that frame, so a corrupt or hand-edited state is rejected
// with ErrBadFrontier naming the frame, instead of making a join fire early or never.
//
// Context.Stop ends the whole run once the current node finishes (parents and
// sub-graphs alike); the nodes that would have run next stay in the frontier. A Stop
// that leaves nothing to run next (called in the end node, or in the last node of the
// last branch) makes the run complete, with no frontier, rather than report a stopped
// run that cannot be resumed: Solon, evaluating the stopped context again, finishes
// at once, which is the same outcome without a second call.
// Context.Interrupt ends only the current branch: in a loop body, the current
// iteration (the loop goes on with its next item, like continue); in a sub-graph, the
// child's branch (a child with no branch left has completed, and its caller goes on).
// Context.Suspend stops the run with a reason and makes the current node run again on
// resume, so a task can check for the decision it waited for. A step limit
// (WithMaxSteps, WithSteps) bounds every run; context.Context cancellation and
// deadlines fail the run (errors.Is tells which, the NodeError's code is cancelled):
// a node whose task, guard or link condition returns the context's error (errors.Is)
// is not failed but INTERRUPTED, its error policy is not asked (a cancellation
// recovered by a goto would skip the node on resume), and it runs again on resume (a
// node that goes on along its links after its policy recovered a failure decides
// them again instead), in every branch the
// cancellation cut short (a task that called Interrupt first has ended its branch: the
// run fails only if another node is left to run; one that called Suspend first has
// suspended its node). A node's own context (a
// NodeStarter's deadline for it) is not the run's, also inside the sub-graph the node
// calls, and neither is one an interceptor gives a sub-graph call: a task that fails
// because it ended fails its node, for the policies to decide. A panicking task becomes an error naming the node. A panicking interceptor hook fails the run and is raised again in
// the caller's goroutine (as a *BranchPanic when it happened in a branch's goroutine,
// which would otherwise end the process), once the root's branches have ended (before
// the panic passes back through the interceptors around the run); the
// Context is then free for another run. Inside a sub-graph call, a hook panicking on
// the calling goroutine is the calling node's error (the call is that node's task),
// raised once the call's other branches have ended. A parallel node takes every outgoing link and ignores their
// conditions, also when it has a single one (a join). Parallel branches run on
// goroutines bounded by WithMaxConcurrency (branches beyond it run inline); every
// goroutine ends before Eval returns. A failing parallel branch follows the branch
// policy (WithBranchPolicy, or meta branchPolicy on the node or the graph): FailFast
// fails the run and cancels the siblings; ContinueOnError withdraws the branch (a loop
// inside it takes no further item and does not pass its closing node; the other
// tokens of the branch, when the failure was inside an inclusive split or an
// activity's fan-out there, end before their next step, so neither the inner join nor
// the outer one runs for it, also after a restart; so do the tokens of a sub-graph
// call in the branch, whose calling node then ends INTERRUPTED, as the call did not
// reach its end (Context.CallOutcome says StatusInterrupted; a call that returned
// before the branch was withdrawn completed); a node already running finishes,
// as branches share no context.Context to cancel) and records it
// in Result.BranchFailures and under KeyBranchFailures (read it with
// BranchFailuresOf: a restored context holds it as plain JSON values); when no branch
// reaches the join and at least one failed, the split fails with all_branches_failed
// (ErrAllBranchesFailed). A frontier keeps such a split's failed branches
// (FrameState.Failed) and a join's arrivals (FrameState.Arrived, TokenState.Arrivals),
// so a resumed run still has them: a split whose last branch fails after the resume
// still fails with all of them, and a join whose task suspended still reports how many
// branches it waited for.
//
// # Errors
//
// A node failure (task, guard, routing) becomes a *NodeError with a stable code and an
// ExecutionError record in the context, under DefaultErrorKey or the key set with
// WithErrorKey (Context.ErrorKey says which; ExecutionErrors reads them). The
// ErrorPolicy decides:
// recoverable errors (Recoverable() bool, MarkRecoverable, NewRecoverableError, rules
// added with WithRecoverable, or the node's onError meta) are recorded and the run goes
// on, along the node's links or to the policy's goto node, after applying its update;
// fatal errors apply the fallback state, then end the branch (ContinueOnError split),
// the sub-graph call (whose calling node then fails, see Context.CallOutcome) or the run.
//
// A goto inside a loop body stays in the iteration when it goes to a node of the body
// (every node the opening loop node's links reach before its closing node, so a
// link never leaves the body), and leaves the loop otherwise, as a break would: the loop takes no
// further item and does not pass its closing node, and the flow goes on from the goto
// node once, in the loop's enclosing branch, without the loop item. (Staying in the
// iteration would run the flow after the goto node once per remaining item and once
// more after the loop.) Other branches of a split inside the iteration still finish
// it, and the closing node does not run for them either. A goto from outside a loop
// into its body opens no iteration: the body runs without the loop item, and the
// loop's closing node runs as an ordinary node (for an inner loop, one of the outer
// body, which goes on to the outer loop's own closing node); export.Validate warns
// about such a goto.
//
// A fatal failure inside a sub-graph call ends the call and becomes the calling
// node's failure, for the caller's policy to decide (recover, retry, withdraw a
// ContinueOnError branch, or fail): the call is one task of the calling node, and the
// call's other tokens are withdrawn as it ends (a sub-graph call among them ends its
// calling node INTERRUPTED, with CallOutcome StatusInterrupted), so its frames no
// longer describe a place to continue from. The frontier of a run that fails this way therefore holds
// the calling node, not the node that failed inside the call, and a resume calls the
// sub-graph again from its start: the child's nodes that completed before the
// failure run again, and so do its branches that were cancelled or had suspended. (A
// failure in the root graph, a step limit, a cancellation, a stop or a suspension
// inside a call keep the exact place instead; a retry of an idempotent calling node
// also makes a fresh call.) A child node that must not run twice checks the state it
// left, as a suspended node does, or the child recovers from the failure itself
// (onError inside the child), so that the call does not end.
//
// A node with a retry policy that is marked idempotent retries retryable errors with
// exponential backoff and jitter, each attempt visible to interceptors. A backoff
// that a cancellation cuts short (the caller's, or a fail-fast sibling's failure) puts
// the retry off: the attempt's end said it was retrying, the error policy does not
// decide on the failure, and the node runs again on resume (or ends with a sub-graph
// call a failure aborted).
//
// In YAML the same model is available through node meta:
//
//	meta:
//	  onError: { goto: fallback_lookup, recover: [SOFT_TIMEOUT], fallback: { status: fallback } }
//	  retry: { max: 3, backoff: 10ms, maxBackoff: 1s }
//	  idempotent: true
//
// and scripts can fail with a structured error: raise("CODE", "message", recoverable).
//
// # Definitions
//
// The YAML/JSON reader lives here (rather than in package export, which holds the
// writers) because the engine loads definition files itself and flow cannot import
// packages that build on it.
//
// A .json file that is not JSON but is YAML (unquoted keys, single quotes, a trailing
// comma, comments) loads, on purpose: Solon reads .json files with a lenient JSON
// parser, and its users' files may rely on that. The reader records the line of the
// first token JSON rejects (GraphSpec.LenientJSON), and export.Validate (flowteam
// validate) warns with code json.lenient, so the author learns that other JSON tools
// will reject the file.
//
// A script or condition that does not compile is reported at the line of the problem
// in the document when the script is a literal block ("task: |"), and at the line
// where it starts otherwise (a folded block ">" at the key's line): see ScriptPos.
//
// # Performance
//
// Two fast paths keep loading and running cheap without changing behaviour. The reader
// parses the subset of YAML definitions use by hand and falls back to yaml.v3 for the
// rest (so yaml.v3 alone decides errors), and the default evaluator compiles the usual
// conditions and scripts to closures that call expr's own operators, leaving the rest
// to expr. Both are held to their reference implementation by differential tests and
// fuzzing. A run makes one allocation for itself, its start token and its Result;
// Result.Last builds its map only when asked, and the run id is formatted only when
// something asks for it (an interceptor, Context.RunID or Result.RunID), from a
// sequence number drawn when the run starts. Script arithmetic on small ints (-256 to
// 1023) returns preboxed values, so a counter or a difference allocates nothing. When
// no code outside the engine can have kept a pointer into a finished run (a sealed
// graph: only scripts and expression conditions, the default evaluator, no
// sub-graphs, retries, error policy, interceptors or checkpoints; the run completed),
// the engine reuses that state for its next run and allocates only the Result
// (recycle.go says why that is safe, and a test checks that a recycled run holds
// nothing from its last run). A caller that reads each outcome before its next run can
// keep one Result and pass WithResult, so that such a run allocates nothing; that is
// also what a comparison with Solon, whose eval returns nothing, should measure.
// bench_test.go has the benchmarks; the README lists measured figures.
package flow
