package solonscript_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/flow/solonscript"
)

// runScript runs src as the task of a one-node graph and returns the context.
func runScript(t *testing.T, ev *solonscript.Evaluator, src string, vars map[string]any) (*flow.Context, *flow.Result, error) {
	t.Helper()
	spec := flow.NewSpec("g")
	spec.Start("s").LinkTo("t")
	spec.Activity("t").SetTask(src).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithEvaluator(ev))
	require.NoError(t, eng.Register(g))
	fc := flow.NewContextWith("", vars)
	res, err := eng.Eval(context.Background(), "g", fc)
	return fc, res, err
}

func TestJavaSubset(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		vars      map[string]any
		key       string
		want      any
	}{
		{"typed locals and if/else if/else", `int n = 7; String r;
			if (n < 5) { r = "low"; } else if (n < 10) { r = "mid"; } else { r = "high"; }
			context.put("r", r);`, nil, "r", "mid"},
		{"while, +=, ++", `long sum = 0; int i = 0; while (i < 5) { sum += i; i++; } context.put("sum", sum);`, nil, "sum", int64(10)},
		{"classic for", `double x = 0.5; for (int i = 0; i < 3; i++) { x = x * 2; } context.put("x", x);`, nil, "x", int64(4)},
		{"for each over a list", `int n = 0; for (Object o : items) { n += o; } context.put("n", n);`,
			map[string]any{"items": []any{1, 2, 3}}, "n", int64(6)},
		{"equals and == on strings", `boolean a = "x".equals(v); boolean b = v == "x"; context.put("r", a && b);`,
			map[string]any{"v": "x"}, "r", true},
		{"equals with a null", `context.put("r", "x".equals(missing));`, nil, "r", false},
		{"return ends the script", `context.put("r", 1); if (true) { return; } context.put("r", 2);`, nil, "r", int64(1)},
		{"map getters and setters", `s.setScore(s.getAmount() * 2); s.setOk(s.isActive());`,
			map[string]any{"s": map[string]any{"amount": 21, "active": true}}, "s", map[string]any{"amount": 21, "active": true, "score": int64(42), "ok": true}},
		{"map methods", `m.put("k", m.get("n") + m.size()); context.put("has", m.containsKey("k"));`,
			map[string]any{"m": map[string]any{"n": 1}}, "has", true},
		{"AtomicLong", `var c = new java.util.concurrent.atomic.AtomicLong(10L); c.addAndGet(5); context.put("c", c.get());`, nil, "c", int64(15)},
		{"HashMap and ArrayList", `Map<String, Object> m = new HashMap<>(); m.put("a", 1); List<Object> l = new ArrayList<>(); l.add(2);
			context.put("m", m); context.put("l", l);`, nil, "l", []any{int64(2)}},
		{"String length()", `context.put("n", name.length());`, map[string]any{"name": "solon"}, "n", int64(5)},
		{"Math", `context.put("n", Math.abs(-20) + Math.max(1, 2));`, nil, "n", int64(22)},
		{"final and a comment", "final int x = 1; // one\n/* two */ context.put(\"x\", x + 1);", nil, "x", int64(2)},
		{"context.incr", `context.incr("n"); context.incr("n", 4);`, map[string]any{"n": 1}, "n", int64(6)},
		{"context.incr of a restored number", `int d = 4; context.incr("n", d);`, map[string]any{"n": json.Number("1")}, "n", int64(5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc, res, err := runScript(t, solonscript.New(), tc.src, tc.vars)
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			assert.Equal(t, tc.want, fc.Value(tc.key))
		})
	}
}

// An expr script keeps the expr evaluator's meaning: the solon evaluator accepts all
// of it (here a builtin, `in` and a closure, which are not Java).
func TestExprScriptsRunUnchanged(t *testing.T) {
	fc, _, err := runScript(t, solonscript.New(), `context.put("r", len(filter(xs, # > 1)) + (2 in xs ? 10 : 0))`,
		map[string]any{"xs": []any{1, 2, 3}})
	require.NoError(t, err)
	assert.Equal(t, 12, fc.Value("r"))
}

// A script that holds no Java, such as context.suspendUntil("1h");, is expr's: it
// suspends its node until the time, recorded as flow.SuspendUntil records it.
func TestExprSuspendUntil(t *testing.T) {
	fc, res, err := runScript(t, solonscript.New(), `context.suspendUntil("1h");`, nil)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusSuspended, res.Status)
	at, ok := fc.GetInt(flow.WakeAtVar + "t")
	require.True(t, ok)
	assert.WithinDuration(t, time.Now().Add(time.Hour), time.UnixMilli(at), time.Minute)
}

// A Java script's context.suspendUntil is expr's: a duration counts from the node's
// first run, whose due time is recorded as flow.SuspendUntil records it; a resume
// before it suspends again at the same time, and one after it goes on, the call
// returning true. An RFC 3339 time is taken as it is.
func TestJavaSuspendUntil(t *testing.T) {
	spec := flow.NewSpec("g")
	spec.Start("s").LinkTo("t")
	spec.Activity("t").SetTask(`int n = context.incr("runs");
		if (!context.suspendUntil(wait)) { return; }
		context.put("over", true);`).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithEvaluator(solonscript.New()))
	require.NoError(t, eng.Register(g))
	ctx := context.Background()

	fc := flow.NewContextWith("i", map[string]any{"wait": "10m"})
	res, err := eng.Eval(ctx, "g", fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	at, ok := fc.GetInt(flow.WakeAtVar + "t")
	require.True(t, ok, "the due time is recorded")
	due := time.UnixMilli(at)
	assert.WithinDuration(t, time.Now().Add(10*time.Minute), due, time.Minute)
	assert.Equal(t, "until "+due.UTC().Format(time.RFC3339Nano), res.Reason)
	assert.Nil(t, fc.Value("over"))

	fc.Set("wait", "1h") // a later run's argument does not move the recorded time
	res, err = eng.Resume(ctx, res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status, "resumed before its time")
	again, _ := fc.GetInt(flow.WakeAtVar + "t")
	assert.Equal(t, at, again)

	fc.Set(flow.WakeAtVar+"t", time.Now().Add(-time.Millisecond).UnixMilli()) // the time has passed
	res, err = eng.Resume(ctx, res.Frontier, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, true, fc.Value("over"))
	assert.Equal(t, int64(3), fc.Value("runs"))
	assert.NotContains(t, fc.Vars(), flow.WakeAtVar+"t")

	for wait, want := range map[string]flow.Status{"2001-02-03T04:05:06Z": flow.StatusCompleted, "2999-06-01T09:00:00Z": flow.StatusSuspended} {
		fc = flow.NewContextWith("i", map[string]any{"wait": wait})
		res, err = eng.Eval(ctx, "g", fc)
		require.NoError(t, err)
		assert.Equal(t, want, res.Status, wait)
		if want == flow.StatusSuspended {
			assert.Equal(t, "until "+wait, res.Reason)
		}
	}

	fc = flow.NewContextWith("i", map[string]any{"wait": "soon"})
	_, err = eng.Eval(ctx, "g", fc)
	require.ErrorIs(t, err, flow.ErrSuspendUntil)
	assert.Contains(t, err.Error(), `"soon" is neither an RFC 3339 time nor a duration`)
}

func TestConditions(t *testing.T) {
	ev := solonscript.New()
	for _, tc := range []struct {
		src  string
		vars map[string]any
		want bool
	}{
		{`"type1".equals(dataType)`, map[string]any{"dataType": "type1"}, true},
		{`"type1".equals(dataType);`, map[string]any{"dataType": "type2"}, false},
		{`s.getAmount() > 100 && s.amount <= 500`, map[string]any{"s": map[string]any{"amount": 300}}, true},
		{`a > b`, map[string]any{"a": 3, "b": 4}, false},
	} {
		x, err := ev.CompileCondition(tc.src)
		require.NoError(t, err, tc.src)
		v, err := x.Eval(vars(tc.vars))
		require.NoError(t, err, tc.src)
		assert.Equal(t, tc.want, v, tc.src)
	}
}

// vars is a Scope over a map, for conditions evaluated outside an engine.
type vars map[string]any

func (v vars) Get(k string) (any, bool) { x, ok := v[k]; return x, ok }
func (v vars) Put(k string, x any)      { v[k] = x }
func (v vars) Remove(k string)          { delete(v, k) }
func (v vars) Stop()                    {}
func (v vars) Interrupt()               {}
func (v vars) Suspend(string)           {}

// What the subset refuses fails at load with the line and what to write instead.
func TestRefusedAtLoad(t *testing.T) {
	ev := solonscript.New()
	for _, tc := range []struct{ src, want string }{
		{"int n = 0;\nRuntime r = java.lang.Runtime.getRuntime();", "line 2: Runtime is not available: processes are not available"},
		{`java.lang.Runtime.getRuntime().exec("rm -rf /");`, "line 1: java is not available: Java classes are not available"},
		{`System.exit(0);`, "line 1: System.exit is not available: a script reaches nothing outside its run"},
		{`System.getenv("HOME");`, "System.getenv is not available"},
		{`Class.forName("java.lang.Runtime");`, "Class is not available: reflection is not available"},
		{`Object f = new java.io.File("/etc/passwd");`, "new java.io.File: a script can create only AtomicInteger"},
		{`"".constructor.constructor("return 1")();`, "constructor is not available"},
		{`items.forEach(x -> context.put("x", x));`, "lambdas are not part of the Java subset"},
		{`int n = (int) x;`, "casts such as (int) are not supported: write Math.floor(x)"},
		{`function f() {}`, "function is not available"},
		{`boolean b = /a+/.test(s);`, "regular expressions are not part of the Java subset"},
		{"int n = 1;\n\nn = ;", "line 3: Unexpected token ;"},
	} {
		_, err := ev.CompileScript(tc.src)
		require.Error(t, err, tc.src)
		assert.Contains(t, err.Error(), tc.want, tc.src)
	}
}

// A definition reports a problem on a script's later line at that line.
func TestLoadErrorLine(t *testing.T) {
	doc := "id: g\nevaluator: solon\nlayout:\n  - type: start\n  - task: |\n      int n = 0;\n      System.exit(n);\n  - type: end\n"
	eng := flow.NewEngine(flow.WithNamedEvaluator(solonscript.Name, solonscript.New()))
	g, err := flow.LoadGraph("g.yml", []byte(doc))
	require.NoError(t, err)
	err = eng.Register(g)
	var de *flow.DefinitionError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 7, de.Pos.Line)
	assert.Contains(t, err.Error(), "System.exit is not available")
}

func TestLimits(t *testing.T) {
	// Every limit but the time limit's is checked with a time limit a loaded machine
	// (or the race detector) does not reach first.
	steps := solonscript.New(solonscript.WithMaxLoopSteps(1000), solonscript.WithTimeout(time.Minute))
	roomy := solonscript.New(solonscript.WithTimeout(time.Minute))
	for _, tc := range []struct {
		name string
		ev   *solonscript.Evaluator
		src  string
		want error
	}{
		{"endless while", steps, `while (true) {}`, solonscript.ErrLoopLimit},
		{"endless for", steps, `for (;;) {}`, solonscript.ErrLoopLimit},
		{"endless do-while", steps, `int i = 0; do { i++; } while (i-->-1);`, solonscript.ErrLoopLimit},
		{"time", solonscript.New(solonscript.WithTimeout(20*time.Millisecond), solonscript.WithMaxLoopSteps(1<<40)),
			`while (true) {}`, solonscript.ErrTimeout},
		{"a 100 MB string at once", roomy, `String s = "x".repeat(100 * 1024 * 1024);`, solonscript.ErrStringLimit},
		{"a 100 MB string by padding", roomy, `String s = "".padEnd(100 * 1024 * 1024, "x");`, solonscript.ErrStringLimit},
		{"a string doubled without end", roomy, `String s = "x"; while (true) { s = s + s; }`, solonscript.ErrMemoryLimit},
		{"a 5 GB join", roomy, `String s = "x".repeat(1000000); List l = new ArrayList(); for (int i = 0; i < 5000; i++) { l.add(s); } String j = l.join("");`, solonscript.ErrStringLimit},
		{"a 1 TB replaceAll", roomy, `String s = "x".repeat(1000000); String t = s.replaceAll("x", s);`, solonscript.ErrStringLimit},
		{"a 2 MB string put in the context", roomy,
			`String s = "xxxxxxxxxxxxxxxx"; for (int i = 0; i < 17; i++) { s = s + s; } context.put("s", s);`, solonscript.ErrStringLimit},
		{"a string past WithMaxString", solonscript.New(solonscript.WithMaxString(10), solonscript.WithTimeout(time.Minute)), `String s = "x".repeat(11);`, solonscript.ErrStringLimit},
		{"allocations past WithMaxAlloc", solonscript.New(solonscript.WithMaxAlloc(1<<20), solonscript.WithMaxLoopSteps(1<<40), solonscript.WithTimeout(time.Minute)),
			`List l = new ArrayList(); while (true) { l.add("x".repeat(1000)); }`, solonscript.ErrMemoryLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, res, err := runScript(t, tc.ev, tc.src, nil)
			require.Error(t, err)
			assert.Equal(t, flow.StatusFailed, res.Status)
			assert.ErrorIs(t, err, tc.want)
			var ne *flow.NodeError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, "t", ne.Node)
			assert.Equal(t, flow.CodeScript, ne.Code)
			var se *solonscript.ScriptError
			require.ErrorAs(t, err, &se)
			assert.Positive(t, se.Line)
		})
	}
}

// A script cannot change the builtins the next script on the same runtime sees.
func TestBuiltinsFrozen(t *testing.T) {
	ev := solonscript.New()
	_, _, err := runScript(t, ev, `Object.assign(Math, {abs: null});`, nil)
	require.Error(t, err)
	fc, _, err := runScript(t, ev, `context.put("n", Math.abs(-1));`, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(1), fc.Value("n"))
}

// Computed names cannot reach what the load refuses by name.
func TestNoCodeCompilation(t *testing.T) {
	for _, src := range []string{
		`Math.abs["const" + "ructor"]("while (true) {}")();`,
		`"aaaa".match("(a+)+b");`,
		`context.put("x", JSON.stringify(1));`,
		`context.put("x", Array(1000000000).fill(0));`,
	} {
		_, _, err := runScript(t, solonscript.New(), src, nil)
		var se *solonscript.ScriptError
		require.ErrorAs(t, err, &se, src)
		assert.Contains(t, se.Msg, "TypeError", src)
	}
}

// Parallel branches run their scripts on runtimes of their own; a counter shared
// through the context counts every branch.
func TestParallelBranchesShareCounter(t *testing.T) {
	const branches = 16
	var b strings.Builder
	b.WriteString("id: p\nevaluator: solon\nlayout:\n  - {id: s, type: start, task: 'context.put(\"n\", new AtomicInteger(0));'}\n  - {id: split, type: parallel, link: [")
	for i := range branches {
		fmt.Fprintf(&b, "b%d,", i)
	}
	b.WriteString("]}\n")
	for i := range branches {
		fmt.Fprintf(&b, "  - {id: b%d, task: 'for (int i = 0; i < 10; i++) { n.incrementAndGet(); }', link: join}\n", i)
	}
	b.WriteString("  - {id: join, type: parallel, link: e}\n  - {id: e, type: end}\n")
	g, err := flow.LoadGraph("p.yml", []byte(b.String()))
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithNamedEvaluator(solonscript.Name, solonscript.New()))
	require.NoError(t, eng.Register(g))
	fc := flow.NewContext("")
	_, err = eng.Eval(context.Background(), "p", fc)
	require.NoError(t, err)
	n, _ := flow.GetAs[*solonscript.Counter](fc, "n")
	assert.Equal(t, int64(branches*10), n.Get())
}

func TestUnknownEvaluatorName(t *testing.T) {
	g, err := flow.LoadGraph("g.yml", []byte("id: g\nevaluator: groovy\nlayout:\n  - type: start\n  - type: end\n"))
	require.NoError(t, err)
	err = flow.NewEngine(flow.WithNamedEvaluator(solonscript.Name, solonscript.New())).Register(g)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown evaluator "groovy" (this engine knows expr, solon`)
}

// A Go task's error fails the script that ran it, and keeps its identity.
func TestRunTaskError(t *testing.T) {
	boom := errors.New("boom")
	spec := flow.NewSpec("g")
	spec.Start("s").LinkTo("t")
	spec.Activity("t").SetTask(`context.put("a", 1);` + "\n" + `context.runTask("@fail");`).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	eng := flow.NewEngine(flow.WithEvaluator(solonscript.New()), flow.WithTaskFunc("fail",
		func(context.Context, *flow.Context, *flow.Node) error { return boom }))
	require.NoError(t, eng.Register(g))
	_, err = eng.Eval(context.Background(), "g", flow.NewContext(""))
	assert.ErrorIs(t, err, boom)
	var se *solonscript.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 2, se.Line)
}

// A run's context ending stops a script that is still running.
func TestCancelStopsScript(t *testing.T) {
	spec := flow.NewSpec("g")
	spec.Start("s").LinkTo("t")
	spec.Activity("t").SetTask(`while (true) {}`).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	ev := solonscript.New(solonscript.WithTimeout(time.Minute), solonscript.WithMaxLoopSteps(1<<40))
	eng := flow.NewEngine(flow.WithEvaluator(ev))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = eng.EvalGraph(ctx, g, flow.NewContext(""))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 10*time.Second)
}
