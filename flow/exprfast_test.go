package flow

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// exprVerified is the expr version the closure compiler was last held to by the
// differential tests and FuzzExprFast (go.mod pins it).
const exprVerified = "v1.17.8"

// An expr upgrade must rerun the differential tests and the fuzz target before
// exprVerified (and the pin in go.mod) moves. go.mod holds the version the build selects:
// go mod tidy raises it there when another module needs a newer expr.
func TestExprVersionIsTheVerifiedOne(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*github\.com/expr-lang/expr (\S+)`).FindSubmatch(mod)
	require.NotNil(t, m, "go.mod requires expr")
	if got := string(m[1]); got != exprVerified {
		t.Fatalf("go.mod has expr %s, exprfast.go was verified against %s: run the differential tests and FuzzExprFast, then update exprVerified", got, exprVerified)
	}
}

// mapScope is a Scope over a plain map that records the run controls.
type mapScope struct {
	vars     map[string]any
	controls []string
}

func (m *mapScope) Get(k string) (any, bool) { v, ok := m.vars[k]; return v, ok }
func (m *mapScope) Put(k string, v any)      { m.vars[k] = v }
func (m *mapScope) Remove(k string)          { delete(m.vars, k) }
func (m *mapScope) Stop()                    { m.controls = append(m.controls, "stop") }
func (m *mapScope) Interrupt()               { m.controls = append(m.controls, "interrupt") }
func (m *mapScope) Suspend(r string)         { m.controls = append(m.controls, "suspend:"+r) }

// exprGen builds random expressions over the grammar scripts use, plus constructs the
// closure compiler leaves to expr, so both sides of the split are exercised.
type exprGen struct{ r *rand.Rand }

var (
	genVars     = []string{"a", "b", "c", "s", "t", "f", "p", "m", "l", "unset"}
	genLiterals = []string{"0", "1", "3", "-2", "300", "1.5", "-0.5", `"x"`, `""`, "true", "false", "nil"}
	genBinary   = []string{"==", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "%", "**", "^", "&&", "||", "and", "or", "??", "in", "contains"}
)

func (g exprGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g exprGen) expr(depth int) string {
	if depth <= 0 {
		if g.r.IntN(2) == 0 {
			return g.pick(genVars)
		}
		return g.pick(genLiterals)
	}
	switch g.r.IntN(12) {
	case 0, 1, 2, 3:
		return "(" + g.expr(depth-1) + " " + g.pick(genBinary) + " " + g.expr(depth-1) + ")"
	case 4:
		return g.pick([]string{"!", "not ", "-", "+"}) + "(" + g.expr(depth-1) + ")"
	case 5:
		return "(" + g.expr(depth-1) + " ? " + g.expr(depth-1) + " : " + g.expr(depth-1) + ")"
	case 6:
		return fmt.Sprintf(`context.put(%q, %s)`, g.pick([]string{"a", "out", "s"}), g.expr(depth-1))
	case 7:
		return g.pick([]string{`context.get("a")`, `context.containsKey("unset")`, `context.incr("n")`, `context.incr("s")`,
			`context.remove("b")`, `context.getOrDefault("unset", 4)`, `context.put(a, 1)`, `context.suspend("why")`,
			`context.stop()`, `context.interrupt()`, `context.incr("n", 2.5)`})
	case 8:
		return g.expr(depth-1) + "; " + g.expr(depth-1)
	case 9:
		return g.pick([]string{`raise("E1", "boom")`, `raise("E2", a, true)`, `raise("E3")`, `len(s)`, `let x = 2; x * a`, `l[0]`, `m.k`})
	}
	return g.expr(0)
}

func genValues(r *rand.Rand) map[string]any {
	five := 5
	pool := []any{0, 1, 3, -4, 300, 2.5, 0.0, "x", "abc", true, false, nil, int64(7), &five, uint8(2), []any{1, "x"}, map[string]any{"k": 1}}
	vars := map[string]any{"n": 1}
	for _, k := range genVars {
		if k != "unset" {
			vars[k] = pool[r.IntN(len(pool))]
		}
	}
	return vars
}

// outcome renders a result for comparison; %#v tells 1 from 1.0 and int from int64,
// and NaN prints the same on both sides. Zero is printed without its sign: expr keeps
// one constant for 0.0 and -0.0 (they are equal map keys), so in "-.0*a*0." its 0.0 is
// -0.0, which the closures do not reproduce.
func outcome(v any, err error, s *mapScope) string {
	unsign := func(v any) any {
		if f, ok := v.(float64); ok && f == 0 {
			return 0.0
		}
		return v
	}
	v = unsign(v)
	e := "<nil>"
	if err != nil {
		e = err.Error()
		if code := errorCode(err); code != "" {
			e += " code=" + code
		}
	}
	var vars []string
	for _, k := range slices.Sorted(maps.Keys(s.vars)) {
		vars = append(vars, fmt.Sprintf("%s=%#v", k, unsign(s.vars[k])))
	}
	return fmt.Sprintf("value=%#v err=%s vars=[%s] controls=%v", v, e, strings.Join(vars, " "), s.controls)
}

// evalSame evaluates the closures fx and expr's program sx of src over copies of vars
// and fails unless they agree.
func evalSame(t *testing.T, src string, fx, sx Expression, vars map[string]any) {
	t.Helper()
	fs := &mapScope{vars: maps.Clone(vars)}
	ss := &mapScope{vars: maps.Clone(vars)}
	fv, ferr := fx.Eval(fs)
	sv, serr := sx.Eval(ss)
	if got, want := outcome(fv, ferr, fs), outcome(sv, serr, ss); got != want {
		t.Fatalf("%q with %v\nfast: %s\nexpr: %s", src, vars, got, want)
	}
}

// TestFastExprMatchesExpr compiles generated expressions with the closure compiler and
// with expr alone, and checks that they agree on compile errors, values, runtime errors
// (message and code), the variables they leave, and the run controls they call.
func TestFastExprMatchesExpr(t *testing.T) {
	e := NewExprEvaluator()
	r := rand.New(rand.NewPCG(7, 11))
	g := exprGen{r}
	var fast, compiled, failedCompile int
	for i := range 6000 {
		src := g.expr(1 + i%4)
		fx, ferr := e.compileWith(src, true)
		sx, serr := e.compileWith(src, false)
		if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
			t.Fatalf("%s\ncompile: fast %v\nexpr %v", src, ferr, serr)
		}
		if ferr != nil {
			failedCompile++
			continue
		}
		compiled++
		if _, ok := fx.(fastExpr); !ok {
			continue
		}
		fast++
		for range 4 {
			evalSame(t, src, fx, sx, genValues(r))
		}
	}
	t.Logf("%d expressions compiled (%d by the closure compiler), %d rejected at compile time", compiled, fast, failedCompile)
	if fast < compiled/3 || failedCompile == 0 {
		t.Fatalf("generator no longer exercises both paths: %d fast of %d, %d compile errors", fast, compiled, failedCompile)
	}
}

// TestFastExprCoversSolonScripts checks that the scripts and conditions of rule graphs
// take the closure path.
func TestFastExprCoversSolonScripts(t *testing.T) {
	e := NewExprEvaluator()
	for _, src := range []string{
		`a > b`, `context.put("result", a + b);`, `approved != true`, `day >= 3 && role == "manager"`,
		`context.put("level", day > 3 ? "high" : "low"); context.incr("count")`, `!(a == b) || c < -1`,
		`raise("LIMIT", "over the limit")`, `context.suspend("waiting for approval")`,
	} {
		x, err := e.compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if _, ok := x.(fastExpr); !ok {
			t.Errorf("%s: compiled by expr, not by the closure compiler", src)
		}
	}
}

func BenchmarkExprCondition(b *testing.B) {
	e := NewExprEvaluator()
	s := &mapScope{vars: map[string]any{"a": 3, "b": 4}}
	for _, fast := range []bool{true, false} {
		x, err := e.compileWith(`a > b && b != 0`, fast)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("fast=%v", fast), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := x.Eval(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzExprFast holds the closure compiler to expr on arbitrary sources: both accept or
// reject a source alike, and agree on every evaluation over a fixed set of variables.
func FuzzExprFast(f *testing.F) {
	for _, s := range []string{`a > b`, `context.put("result", a + b);`, `!(a == b) || c < -1`, `x ? 1 : "y"`,
		`context.incr("n", 2); n * 3 % 2`, `raise("E", s)`, `a ?? b`, `not t and f`, `-p + 1.5 ** 2`, `l == nil`} {
		f.Add(s)
	}
	e := NewExprEvaluator()
	five := 5
	values := []map[string]any{
		{"a": 3, "b": 4, "c": 2.5, "s": "x", "t": true, "f": false, "p": &five, "l": []any{1}, "m": map[string]any{"k": 1}, "n": 7},
		{"a": "x", "b": nil, "c": int64(-9), "s": 300, "t": 0, "f": 1.0, "p": nil, "l": "", "n": "z"},
		{},
	}
	f.Fuzz(func(t *testing.T, src string) {
		fx, ferr := e.compileWith(src, true)
		sx, serr := e.compileWith(src, false)
		if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
			t.Fatalf("%q compile: fast %v, expr %v", src, ferr, serr)
		}
		if ferr != nil {
			return
		}
		for _, vars := range values {
			evalSame(t, src, fx, sx, vars)
		}
	})
}

// Small ints come from a table of boxed values and larger ones are boxed as usual:
// either way the value and its type are what int arithmetic gives, and the table's
// range allocates nothing.
func TestBoxedIntArithmetic(t *testing.T) {
	for _, n := range []int{boxedMin - 1, boxedMin, -1, 0, 255, 256, boxedMax - 1, boxedMax, 1 << 40, -1 << 40} {
		v := boxInt(n)
		if got, ok := v.(int); !ok || got != n {
			t.Fatalf("boxInt(%d) = %#v", n, v)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = boxInt(-1) }); allocs != 0 {
		t.Fatalf("boxInt(-1) allocates %v times", allocs)
	}
	for _, c := range []struct {
		a, b int
		op   string
		want int
	}{{3, 4, "-", -1}, {-256, -1, "+", -257}, {1000, 24, "+", 1024}, {-3, 400, "*", -1200}, {7, 8, "*", 56}} {
		got := intOps[c.op](c.a, c.b)
		if g, ok := got.(int); !ok || g != c.want {
			t.Fatalf("%d %s %d = %#v, want %d", c.a, c.op, c.b, got, c.want)
		}
	}
}
