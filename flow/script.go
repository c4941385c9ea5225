package flow

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/parser/lexer"
	"github.com/expr-lang/expr/vm"
)

// Evaluator compiles the textual conditions and scripts of a graph. The engine compiles
// each one once, when the graph is registered, and runs the result for every run.
type Evaluator interface {
	// CompileCondition compiles a link or node condition; its result must be a bool.
	CompileCondition(src string) (Expression, error)
	// CompileScript compiles a script task; its result is ignored.
	CompileScript(src string) (Expression, error)
}

// Expression is a compiled condition or script. Eval is called with the run's variables
// locked (scope gives access to them and to the run controls); it must be safe for
// concurrent use.
type Expression interface {
	Eval(scope Scope) (any, error)
}

// ExprEvaluator is the default Evaluator, built on github.com/expr-lang/expr.
//
// Every identifier reads a context variable (an unset variable reads as nil, as in
// Solon, so `approved != true` holds before anyone approved). A script may hold several
// statements separated by ";" (a trailing ";" is allowed, so Solon scripts such as
// `context.put("result", a + b);` run unchanged) and may call these methods of
// `context`: put(key, value), get(key), getOrDefault(key, default), containsKey(key),
// remove(key), incr(key[, delta]), stop(), interrupt(), suspend(reason),
// suspendUntil(timeOrDuration) (see SuspendUntil). The function
// raise(code, message[, recoverable[, retryable]]) fails the script with a structured
// error (*Error).
//
// The usual conditions and scripts (comparisons, arithmetic, &&, ||, !, ternaries,
// sequences, context methods, raise) are compiled to Go closures that call expr's own
// operator functions, so they behave exactly as expr does (values, errors and their
// messages) without its type checker at load time or its VM's allocations at run time;
// everything else is compiled and run by expr.
type ExprEvaluator struct {
	vms sync.Pool

	// Building expr's configuration (its builtin table above all) costs more than
	// compiling a short script, so it is built once; mu serialises the compiles that
	// share it, since expr's checker caches types in it.
	mu   sync.Mutex
	base *conf.Config
}

// NewExprEvaluator returns the default evaluator.
func NewExprEvaluator() *ExprEvaluator {
	base := conf.CreateNew()
	for _, o := range []expr.Option{
		expr.Function("__get", scopeGet),
		expr.Function("__ctx", scopeCall),
		expr.Function("raise", raise),
	} {
		o(base)
	}
	return &ExprEvaluator{vms: sync.Pool{New: func() any { return new(vm.VM) }}, base: base}
}

// CompileCondition implements Evaluator.
func (e *ExprEvaluator) CompileCondition(src string) (Expression, error) {
	return e.compile(src)
}

// CompileScript implements Evaluator.
func (e *ExprEvaluator) CompileScript(src string) (Expression, error) {
	return e.compile(src)
}

type exprProgram struct {
	prog *vm.Program
	vms  *sync.Pool
}

func (p *exprProgram) Eval(scope Scope) (any, error) {
	m := p.vms.Get().(*vm.VM)
	v, err := m.Run(p.prog, scope)
	p.vms.Put(m)
	return v, err
}

var contextMethods = map[string]struct{ min, max int }{
	"put": {2, 2}, "get": {1, 1}, "getOrDefault": {2, 2}, "containsKey": {1, 1},
	"remove": {1, 1}, "incr": {1, 2}, "stop": {0, 0}, "interrupt": {0, 0}, "suspend": {0, 1},
	"suspendUntil": {1, 1},
}

// IsContextMethod reports whether the expr evaluator's scripts know context.name
// (put, get, getOrDefault, containsKey, remove, incr, stop, interrupt, suspend,
// suspendUntil), for an evaluator that hands the scripts calling only these to it.
func IsContextMethod(name string) bool { _, ok := contextMethods[name]; return ok }

func (e *ExprEvaluator) compile(src string) (Expression, error) {
	return e.compileWith(src, true)
}

// compileWith compiles src; fast allows compiling it to closures (exprfast.go).
func (e *ExprEvaluator) compileWith(src string, fast bool) (Expression, error) {
	src = trimStatements(src)
	if src == "" {
		return nil, errors.New("empty expression")
	}
	p := &patcher{bound: bound{names: make(map[string]bool), callees: make(map[ast.Node]bool)}}
	e.mu.Lock()
	defer e.mu.Unlock()
	cfg := e.base
	tree, err := parser.ParseWithConfig(src, cfg)
	if err != nil {
		return nil, err
	}
	// The patchers are walked here rather than given to checker.ParseCheck, which type
	// checks the whole tree again before each of them.
	p.src = tree.Source
	ast.Walk(&tree.Node, p.bound)
	ast.Walk(&tree.Node, p)
	if p.err != nil {
		return nil, p.err
	}
	if fast {
		if x := compileFast(tree); x != nil {
			return x, nil
		}
	}
	if _, err := checker.Check(tree, cfg); err != nil {
		return nil, err
	}
	if err := optimizer.Optimize(&tree.Node, cfg); err != nil {
		return nil, err
	}
	prog, err := compiler.Compile(tree, cfg)
	if err != nil {
		return nil, err
	}
	return &exprProgram{prog: prog, vms: &e.vms}, nil
}

// trimStatements drops trailing semicolons and blank statements so Java-style scripts
// parse as expr sequences.
func trimStatements(src string) string {
	s := strings.TrimSpace(src)
	for strings.HasSuffix(s, ";") {
		s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	}
	return dropEmptyStatements(s)
}

// dropEmptyStatements blanks the semicolons of empty statements ("a;; b", "; a"),
// which Java accepts and expr's parser does not. Blanking keeps every other character
// where it was, so positions in error messages still point into the source.
func dropEmptyStatements(s string) string {
	if !mayHaveEmptyStatement(s) {
		return s
	}
	toks, err := lexer.Lex(file.NewSource(s))
	if err != nil {
		return s // the parser reports it
	}
	var runes []rune
	afterSemi := true // an empty statement can open the script too
	for _, t := range toks {
		if t.Kind == lexer.EOF {
			break
		}
		semi := t.Kind == lexer.Operator && t.Value == ";"
		if semi && afterSemi {
			if runes == nil {
				runes = []rune(s)
			}
			runes[t.From] = ' '
		}
		afterSemi = semi
	}
	if runes == nil {
		return s
	}
	return string(runes)
}

// mayHaveEmptyStatement reports whether s has a ';' with only blanks before it since
// the start or the previous ';' (strings included: the lexer then tells).
func mayHaveEmptyStatement(s string) bool {
	afterSemi := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ';':
			if afterSemi {
				return true
			}
			afterSemi = true
		case c != ' ' && c != '\t' && c != '\n' && c != '\r':
			afterSemi = false
		}
	}
	return false
}

// bound collects the identifiers that must not be read from the context: names bound
// with let, and function names in call position. It runs as a separate pass because
// ast.Walk visits a call's callee before the call itself.
type bound struct {
	names   map[string]bool
	callees map[ast.Node]bool
}

func (b bound) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.VariableDeclaratorNode:
		b.names[n.Name] = true
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok {
			b.callees[id] = true
		}
	}
}

// patcher rewrites identifiers into context reads and context.method(...) calls into
// calls of __ctx, both taking the run's scope ($env) as their first argument.
type patcher struct {
	bound
	err error
	src file.Source // for the position of err, as expr's own errors have one
}

func envNode() ast.Node { return &ast.IdentifierNode{Value: "$env"} }

func (p *patcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok {
			// Builtins parse as BuiltinNode; a plain call can only be one of ours.
			if id.Value != "__get" && id.Value != "__ctx" && id.Value != "raise" {
				p.fail(n, fmt.Sprintf("unknown function %q", id.Value))
			}
			return
		}
		m, ok := n.Callee.(*ast.MemberNode)
		if !ok {
			return
		}
		recv, ok := m.Node.(*ast.IdentifierNode)
		if !ok || recv.Value != "context" {
			return
		}
		name, _ := m.Property.(*ast.StringNode)
		if name == nil {
			p.fail(n, "context method must be named")
			return
		}
		arity, known := contextMethods[name.Value]
		if !known {
			p.fail(n, fmt.Sprintf("unknown context method %q", name.Value))
			return
		}
		if len(n.Arguments) < arity.min || len(n.Arguments) > arity.max {
			p.fail(n, fmt.Sprintf("context.%s takes %d to %d arguments, got %d", name.Value, arity.min, arity.max, len(n.Arguments)))
			return
		}
		args := append([]ast.Node{envNode(), &ast.StringNode{Value: name.Value}}, n.Arguments...)
		ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: "__ctx"}, Arguments: args})
	case *ast.IdentifierNode:
		switch {
		case n.Value == "$env" || n.Value == "__get" || n.Value == "__ctx" || p.names[n.Value] || p.callees[n]:
			return
		case n.Value == "context":
			// Left alone here; the enclosing call is rewritten when visited. A bare
			// `context` that is not called stays undefined and fails below.
			return
		}
		ast.Patch(node, &ast.CallNode{
			Callee:    &ast.IdentifierNode{Value: "__get"},
			Arguments: []ast.Node{envNode(), &ast.StringNode{Value: n.Value}},
		})
	}
}

// fail records the first problem, at node n: a definition loader reports a problem on
// a script's later line at that line (see ScriptPos.Locate).
func (p *patcher) fail(n ast.Node, msg string) {
	if p.err == nil {
		p.err = (&file.Error{Location: n.Location(), Message: msg}).Bind(p.src)
	}
}

// raise(code, message[, recoverable[, retryable]]) fails the script with a structured
// error, so rule graphs written in YAML can use the whole error model.
func raise(params ...any) (any, error) {
	if len(params) < 2 || len(params) > 4 {
		return nil, fmt.Errorf("raise(code, message[, recoverable[, retryable]]) takes 2 to 4 arguments, got %d", len(params))
	}
	e := &Error{Code: fmt.Sprint(params[0]), Message: fmt.Sprint(params[1])}
	if len(params) > 2 {
		e.Recover = isTrue(params[2])
	}
	if len(params) > 3 {
		e.Retry = isTrue(params[3])
	}
	return nil, e
}

func scopeGet(params ...any) (any, error) {
	s := params[0].(Scope)
	v, _ := s.Get(params[1].(string))
	return v, nil
}

func scopeCall(params ...any) (any, error) {
	return contextMethod(params[0].(Scope), params[1].(string), params[2:])
}

// contextMethod runs context.method(args...) of a script.
func contextMethod(s Scope, method string, args []any) (any, error) {
	switch method {
	case "stop":
		s.Stop()
		return nil, nil
	case "interrupt":
		s.Interrupt()
		return nil, nil
	case "suspend":
		reason := ""
		if len(args) == 1 {
			reason = fmt.Sprint(args[0])
		}
		s.Suspend(reason)
		return nil, nil
	case "suspendUntil":
		return scopeSuspendUntil(s, args[0])
	}
	k, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("context.%s: key must be a string, got %T", method, args[0])
	}
	switch method {
	case "put":
		s.Put(k, args[1])
		return nil, nil
	case "get":
		v, _ := s.Get(k)
		return v, nil
	case "getOrDefault":
		if v, ok := s.Get(k); ok && v != nil {
			return v, nil
		}
		return args[1], nil
	case "containsKey":
		_, ok := s.Get(k)
		return ok, nil
	case "remove":
		v, _ := s.Get(k)
		s.Remove(k)
		return v, nil
	case "incr":
		var delta int64 = 1
		if len(args) == 2 {
			d, ok := AsInt64(args[1])
			if !ok {
				return nil, fmt.Errorf("context.incr: delta must be an integer, got %T", args[1])
			}
			delta = d
		}
		old, _ := s.Get(k)
		n, ok := AsInt64(old)
		if old != nil && !ok {
			return nil, fmt.Errorf("context.incr: %q holds %T, not an integer", k, old)
		}
		n += delta
		s.Put(k, n)
		return n, nil
	}
	return nil, fmt.Errorf("unknown context method %q", method)
}

// WakeAtVar prefixes the variables a suspension until a time keeps the node's wake-up
// time in (Unix milliseconds), one per node: WakeAtVar + node id. A runtime that wakes
// suspended instances (package worker) reads them.
const WakeAtVar = "worker.wakeAt."

// SuspendUntil suspends the run until t, for the task of node n: the node runs again
// when the run is resumed. It reports whether the wait is over, so that a task reads
//
//	if !flow.SuspendUntil(c, n, t) {
//		return nil // suspended: the node runs again at t
//	}
//
// The first call records t in the instance (WakeAtVar + n.ID) and suspends with the
// reason "until " and t in RFC 3339; the calls of later runs of the node compare the
// clock with that recorded time, not with their own t, so a task may compute t as
// time.Now().Add(d). The wait being over, the record is deleted. A run resumed before
// t suspends again. Scripts call it as context.suspendUntil("2026-06-01T09:00:00Z")
// or context.suspendUntil("10m") (a duration from the node's first run).
func SuspendUntil(c *Context, n *Node, t time.Time) bool {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return suspendUntil((*lockedView)(c), n.ID, t)
}

// suspendUntil is SuspendUntil for a caller that holds the variable mutex.
func suspendUntil(s Scope, nodeID string, t time.Time) bool {
	key := WakeAtVar + nodeID
	t = time.UnixMilli(t.UnixMilli()) // the precision recorded, so that the reason says the same time
	if v, ok := s.Get(key); ok {
		if at, ok := AsInt64(v); ok {
			t = time.UnixMilli(at)
		}
	}
	if !time.Now().Before(t) {
		s.Remove(key)
		return true
	}
	s.Put(key, t.UnixMilli())
	s.Suspend("until " + t.UTC().Format(time.RFC3339Nano))
	return false
}

// nodeScope is a Scope that knows the node its script runs for.
type nodeScope interface {
	nodeID() string
}

func (l *lockedView) nodeID() string {
	if l.tok == nil || l.tok.node == nil {
		return ""
	}
	return l.tok.node.n.ID
}

// ErrSuspendUntil is the error of a context.suspendUntil call whose argument is
// neither an RFC 3339 time nor a duration, or that runs outside a node's script.
var ErrSuspendUntil = errors.New("context.suspendUntil")

// WakeTime returns the time a script's context.suspendUntil(s) waits for: s is an
// RFC 3339 time, or a Go duration ("10m") from now. Its error wraps ErrSuspendUntil.
func WakeTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q is neither an RFC 3339 time nor a duration", ErrSuspendUntil, s)
	}
	return time.Now().Add(d), nil
}

// scopeSuspendUntil runs context.suspendUntil(arg): arg is an RFC 3339 time or a Go
// duration ("10m") from now, as a string, a time.Time or a time.Duration.
func scopeSuspendUntil(s Scope, arg any) (any, error) {
	ns, ok := s.(nodeScope)
	id := ""
	if ok {
		id = ns.nodeID()
	}
	if id == "" {
		return nil, fmt.Errorf("%w: only a node's script can suspend until a time", ErrSuspendUntil)
	}
	var t time.Time
	switch x := arg.(type) {
	case time.Time:
		t = x
	case time.Duration:
		t = time.Now().Add(x)
	case string:
		var err error
		if t, err = WakeTime(x); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: want an RFC 3339 time or a duration, got %T", ErrSuspendUntil, arg)
	}
	return suspendUntil(s, id, t), nil
}
