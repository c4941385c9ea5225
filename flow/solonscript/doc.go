// Package solonscript is a flow.Evaluator for the Java statements Solon Flow's default
// script engine runs, so that Solon definitions whose scripts are Java load and run
// unchanged:
//
//	eng := flow.NewEngine(
//		flow.WithEvaluator(solonscript.New()), // the default of this engine, or only
//		flow.WithNamedEvaluator(solonscript.Name, solonscript.New()), // for "evaluator: solon" files
//	)
//	// layout:
//	//   - task: 'if (s.amount > 100 && s.amount <= 500) { s.setScore(100); }'
//	//   - task: 'context.put("demo", new java.util.concurrent.atomic.AtomicInteger(0));'
//	//     link: [{nextId: n1, when: 'demo.incrementAndGet() < 5'}]
//
// On the command line: flowteam run --evaluator solon FILE, or "evaluator: solon" at
// the top of the file.
//
// # What a script may write
//
// Everything the expr evaluator accepts, with its meaning and speed: a script that
// uses no Java (no keyword of it, no method call other than context.put and the other
// expr context methods) is compiled by flow.ExprEvaluator. Other scripts are
// translated to JavaScript by a token-level rewrite (translate.go lists its rules) and
// run by github.com/dop251/goja, compiled once per graph.
//
// The subset: blocks, if/else if/else, while, do-while, classic for and for (T x :
// list), break, continue, return, typed local declarations (int, long, double, String,
// boolean, var, Object, ...: the type is checked loosely), +=, ++, ==, "a".equals(b),
// s.length(), Math; on a map in the context s.amount, s.getAmount(), s.isActive(),
// s.setScore(1), get, put, containsKey, size; on a list size(), get(i), isEmpty(),
// contains(x); new AtomicInteger / AtomicLong (a *Counter in the context), HashMap,
// ArrayList.
//
// The run and its context: it.hasNext() and it.next() on an Iterator a Go task put;
// System.out.println (the evaluator's slog logger); context.put, get, getOrDefault,
// containsKey, remove, incr, stop, interrupt, suspend, suspendUntil("10m" or an RFC
// 3339 time: a duration counts from the node's first run; it returns whether the wait
// is over, see flow.SuspendUntil), runTask("@name") (the engine's Go task, in the
// script's branch) and eventBus().send(topic, payload)
// (flow.Context.Publish: every flow.EventInterceptor of the run sees it). An unset
// variable reads as null.
//
// What the subset does not accept fails at load with the line and what to write
// instead: lambdas, casts, regular expressions, other classes, System members but
// out, err and currentTimeMillis. Java's semantics are not all kept: numbers are JavaScript's
// (7 / 2 is 3.5; write Math.floor), and a string == compares values.
//
// # Sandbox and limits
//
// A script reaches nothing outside its run: its global names are the JavaScript
// builtins listed in machine.go, the objects above and the run's variables; no Go
// value is handed to goja's reflection (maps, lists, counters and iterators are shown
// through objects of this package, other values are opaque). Builtins are frozen, so
// a script cannot change them for the next. Each execution is bounded: its time
// (WithTimeout, not counting the Go tasks it runs), its loop iterations
// (WithMaxLoopSteps), the strings it builds at once or gives the run (WithMaxString)
// and the bytes allocated while it runs (WithMaxAlloc, sampled: the process's count).
// Past a limit the script fails with ErrTimeout, ErrLoopLimit, ErrStringLimit or
// ErrMemoryLimit in a *ScriptError, and the engine's error names the node.
//
// # Concurrency and atomicity
//
// A goja runtime is not safe for concurrent use: each execution takes a runtime from
// the evaluator's pool, so parallel branches run on separate runtimes. A Java task
// script runs as a Go task does (flow.ScriptTask), not under the run's variable lock,
// so that it can run tasks: each variable access is atomic, the script as a whole is
// not. Use a counter or context.incr for what parallel branches update.
//
// A stored session keeps a *Counter as its number: after a resume the variable holds
// a number, on which incrementAndGet fails; an Iterator is not stored at all.
package solonscript
