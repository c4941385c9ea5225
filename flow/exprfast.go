package flow

import (
	"fmt"
	"reflect"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm/runtime"
)

// This file compiles the conditions and scripts that rule graphs are made of
// (comparisons, arithmetic, boolean logic, ternaries, context.put and friends) into Go
// closures instead of expr bytecode. Two costs motivate it: expr's type checker is most
// of the time it takes to load a definition, and its VM allocates the arguments of every
// function call, which every context read and context.put is after patching.
//
// The closures must behave exactly as expr does, so they are built to mirror it: the
// operators call expr's own runtime functions (runtime.Less, runtime.Add, ...), operands
// are dereferenced where expr's compiler emits OpDeref, && and || short-circuit and keep
// the operand value as its VM does, and a failure becomes the same *file.Error (message,
// location, wrapped error) that vm.Run returns. Compile-time errors come from mirroring
// the checker's rules on the few natures these expressions can have; anything the
// closure compiler does not cover, including what expr's optimizer would rewrite (an
// operation on constants only, folded possibly into a compile error; && or || with a
// constant operand), is left to expr. exprfast_test.go checks the equivalence on
// generated expressions and values, and FuzzExprFast on arbitrary sources. The one
// known difference is expr's: it keeps a single constant for 0.0 and -0.0.

// nature is the static type of a fast-compiled node, as expr's checker sees it.
type nature uint8

const (
	natUnknown nature = iota // interface{}: a context read, a call, unknown arithmetic
	natNil
	natBool
	natInt
	natFloat
	natString
)

func (n nature) number() bool { return n == natInt || n == natFloat }

// fastNode is a compiled node: its closure, its nature, and whether it is a constant.
type fastNode struct {
	eval    func(Scope) (any, error)
	nat     nature
	isConst bool
}

type fastCompiler struct {
	src         file.Source
	unsupported bool
}

// fastExpr is an Expression compiled to closures.
type fastExpr func(Scope) (any, error)

func (f fastExpr) Eval(s Scope) (any, error) { return f(s) }

// compileFast compiles a patched tree, or returns nil when it uses anything the closure
// compiler does not cover, or something expr's checker would reject.
func compileFast(tree *parser.Tree) Expression {
	c := fastCompiler{src: tree.Source}
	n := c.node(tree.Node)
	if c.unsupported {
		return nil
	}
	return fastExpr(n.eval)
}

func (c *fastCompiler) reject() fastNode {
	c.unsupported = true
	return fastNode{}
}

func constant(v any, nat nature) fastNode {
	return fastNode{eval: func(Scope) (any, error) { return v, nil }, nat: nat, isConst: true}
}

func (c *fastCompiler) node(n ast.Node) fastNode {
	if c.unsupported {
		return fastNode{}
	}
	switch n := n.(type) {
	case *ast.NilNode:
		return constant(nil, natNil)
	case *ast.BoolNode:
		return constant(n.Value, natBool)
	case *ast.IntegerNode:
		return constant(n.Value, natInt)
	case *ast.FloatNode:
		return constant(n.Value, natFloat)
	case *ast.StringNode:
		return constant(n.Value, natString)
	case *ast.CallNode:
		return c.call(n)
	case *ast.UnaryNode:
		return c.unary(n)
	case *ast.BinaryNode:
		return c.binary(n)
	case *ast.ConditionalNode:
		return c.conditional(n)
	case *ast.SequenceNode:
		return c.sequence(n)
	}
	return c.reject()
}

// vmError builds the error vm.Run returns when an instruction at loc panics with p (a
// function's error is re-panicked by the VM, so it arrives here the same way).
func vmError(src file.Source, loc file.Location, p any) error {
	f := &file.Error{Location: loc, Message: fmt.Sprintf("%v", p)}
	if err, ok := p.(error); ok {
		f.Wrap(err)
	}
	return f.Bind(src)
}

// derefValue does what expr's OpDeref does: it follows pointers (and interfaces) to the value.
func derefValue(v any) any {
	switch v.(type) {
	case nil, bool, int, int64, float64, string, map[string]any, []any:
		return v
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.IsValid() {
		return rv.Interface()
	}
	panic(fmt.Sprintf("cannot dereference %v", v))
}

// assertBool converts v as the VM's jump and not instructions do, returning the panic
// value of the failed type assertion, whose message expr users see.
func assertBool(v any) (b bool, failure any) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	defer func() { failure = recover() }()
	return v.(bool), nil
}

// safely runs an operator that may panic (expr's runtime functions report an invalid
// operation by panicking).
func safely(src file.Source, loc file.Location, op func(a, b any) any, a, b any) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, vmError(src, loc, p)
		}
	}()
	return op(a, b), nil
}

var binaryOps = map[string]func(a, b any) any{
	"==": func(a, b any) any { return runtime.Equal(a, b) },
	"!=": func(a, b any) any { return !runtime.Equal(a, b) },
	"<":  func(a, b any) any { return runtime.Less(a, b) },
	">":  func(a, b any) any { return runtime.More(a, b) },
	"<=": func(a, b any) any { return runtime.LessOrEqual(a, b) },
	">=": func(a, b any) any { return runtime.MoreOrEqual(a, b) },
	"+":  runtime.Add,
	"-":  runtime.Subtract,
	"*":  runtime.Multiply,
	"/":  func(a, b any) any { return runtime.Divide(a, b) },
	"%":  func(a, b any) any { return runtime.Modulo(a, b) },
	"**": func(a, b any) any { return runtime.Exponent(a, b) },
	"^":  func(a, b any) any { return runtime.Exponent(a, b) },
}

// binaryNature mirrors the checker's rule for op: the nature of the result, or false
// when the checker would reject the operands (or when deciding it needs more than the
// natures known here).
func binaryNature(op string, l, r nature) (nature, bool) {
	known := func(n nature, ok func(nature) bool) bool { return n == natUnknown || ok(n) }
	both := func(ok func(nature) bool) bool { return known(l, ok) && known(r, ok) }
	number := nature.number
	numOrString := func(n nature) bool { return n.number() || n == natString }
	isBool := func(n nature) bool { return n == natBool }
	isInt := func(n nature) bool { return n == natInt }
	if l != natUnknown && r != natUnknown {
		// Both natures known: only the plain cases.
		switch op {
		case "==", "!=":
			return natBool, l == r || l == natNil || r == natNil || l.number() && r.number()
		case "&&", "||", "and", "or":
			return natBool, l == natBool && r == natBool
		case "<", ">", "<=", ">=":
			return natBool, l.number() && r.number() || l == natString && r == natString
		case "+", "-", "*":
			if l.number() && r.number() {
				if l == natInt && r == natInt {
					return natInt, true
				}
				return natFloat, true
			}
			return natString, op == "+" && l == natString && r == natString
		case "/", "**", "^":
			return natFloat, l.number() && r.number()
		case "%":
			return natInt, l == natInt && r == natInt
		}
		return natUnknown, false
	}
	switch op {
	case "==", "!=":
		return natBool, true
	case "&&", "||", "and", "or":
		return natBool, both(isBool)
	case "<", ">", "<=", ">=":
		return natBool, both(numOrString)
	case "+":
		return natUnknown, both(numOrString)
	case "-", "*":
		return natUnknown, both(number)
	case "/", "**", "^":
		return natFloat, both(number)
	case "%":
		return natInt, both(isInt)
	}
	return natUnknown, false
}

func (c *fastCompiler) binary(n *ast.BinaryNode) fastNode {
	l, r := c.node(n.Left), c.node(n.Right)
	if c.unsupported || l.isConst && r.isConst {
		return c.reject() // expr folds constants at compile time, errors included
	}
	nat, ok := binaryNature(n.Operator, l.nat, r.nat)
	if !ok {
		return c.reject()
	}
	src, loc, le, re := c.src, n.Location(), l.eval, r.eval
	switch n.Operator {
	case "&&", "and", "||", "or":
		if l.isConst || r.isConst {
			return c.reject() // expr's optimizer drops the operator ("x || true" is true)
		}
		// The VM jumps on the left value, which must be a bool, and leaves it as the
		// result when it decides; otherwise the result is the right value.
		decideOn := n.Operator == "||" || n.Operator == "or"
		return fastNode{nat: nat, eval: func(s Scope) (any, error) {
			a, err := le(s)
			if err != nil {
				return nil, err
			}
			a = derefValue(a)
			b, failure := assertBool(a)
			if failure != nil {
				return nil, vmError(src, loc, failure)
			}
			if b == decideOn {
				return a, nil
			}
			v, err := re(s)
			if err != nil {
				return nil, err
			}
			return derefValue(v), nil
		}}
	}
	op, ok := binaryOps[n.Operator]
	if !ok {
		return c.reject()
	}
	intOp, floatOp := intOps[n.Operator], floatOps[n.Operator]
	return fastNode{nat: nat, eval: func(s Scope) (any, error) {
		a, err := le(s)
		if err != nil {
			return nil, err
		}
		a = derefValue(a)
		b, err := re(s)
		if err != nil {
			return nil, err
		}
		b = derefValue(b)
		switch x := a.(type) {
		case int:
			if y, ok := b.(int); ok && intOp != nil {
				return intOp(x, y), nil
			}
		case float64:
			if y, ok := b.(float64); ok && floatOp != nil {
				return floatOp(x, y), nil
			}
		}
		return safely(src, loc, op, a, b)
	}}
}

// intOps and floatOps are the operators on two ints or two float64s that cannot fail,
// computed as expr's runtime functions compute them for those types (an int result
// for ints, a float64 for floats), without the type switches and the recover the
// general case needs.
var (
	intOps = map[string]func(a, b int) any{
		"==": func(a, b int) any { return a == b }, "!=": func(a, b int) any { return a != b },
		"<": func(a, b int) any { return a < b }, ">": func(a, b int) any { return a > b },
		"<=": func(a, b int) any { return a <= b }, ">=": func(a, b int) any { return a >= b },
		"+": func(a, b int) any { return boxInt(a + b) }, "-": func(a, b int) any { return boxInt(a - b) },
		"*": func(a, b int) any { return boxInt(a * b) },
	}
	floatOps = map[string]func(a, b float64) any{
		"==": func(a, b float64) any { return a == b }, "!=": func(a, b float64) any { return a != b },
		"<": func(a, b float64) any { return a < b }, ">": func(a, b float64) any { return a > b },
		"<=": func(a, b float64) any { return a <= b }, ">=": func(a, b float64) any { return a >= b },
		"+": func(a, b float64) any { return a + b }, "-": func(a, b float64) any { return a - b },
		"*": func(a, b float64) any { return a * b }, "/": func(a, b float64) any { return a / b },
	}
)

// boxedInts holds small ints already in interfaces. Go boxes 0 to 255 without
// allocating, but not the negative numbers or the hundreds that counters and sums
// reach (case1's a - b is -1): a script's arithmetic would allocate 8 bytes per
// result, which is what made the garbage collector run at all in a short run.
var boxedInts = func() (t [boxedMax - boxedMin]any) {
	for i := range t {
		t[i] = i + boxedMin
	}
	return t
}()

const boxedMin, boxedMax = -256, 1024

// boxInt returns n in an interface, without allocating for small n.
func boxInt(n int) any {
	if uint(n-boxedMin) < uint(len(boxedInts)) {
		return boxedInts[n-boxedMin]
	}
	return n
}

func (c *fastCompiler) unary(n *ast.UnaryNode) fastNode {
	x := c.node(n.Node)
	if c.unsupported {
		return fastNode{}
	}
	src, loc, xe := c.src, n.Location(), x.eval
	switch n.Operator {
	case "!", "not":
		if x.isConst || x.nat != natUnknown && x.nat != natBool {
			return c.reject()
		}
		return fastNode{nat: natBool, eval: func(s Scope) (any, error) {
			v, err := xe(s)
			if err != nil {
				return nil, err
			}
			b, failure := assertBool(derefValue(v))
			if failure != nil {
				return nil, vmError(src, loc, failure)
			}
			return !b, nil
		}}
	case "-", "+":
		if x.nat != natUnknown && !x.nat.number() {
			return c.reject()
		}
		if x.isConst {
			// A signed number literal: negating a number cannot fail.
			v, _ := xe(nil)
			if n.Operator == "-" {
				v = runtime.Negate(v)
			}
			return constant(v, x.nat)
		}
		neg := n.Operator == "-"
		return fastNode{nat: x.nat, eval: func(s Scope) (any, error) {
			v, err := xe(s)
			if err != nil || !neg {
				return derefValue(v), err
			}
			return safely(src, loc, func(a, _ any) any { return runtime.Negate(a) }, derefValue(v), nil)
		}}
	}
	return c.reject()
}

func (c *fastCompiler) conditional(n *ast.ConditionalNode) fastNode {
	cond, yes, no := c.node(n.Cond), c.node(n.Exp1), c.node(n.Exp2)
	if c.unsupported || cond.isConst || cond.nat != natUnknown && cond.nat != natBool {
		return c.reject()
	}
	var nat nature
	switch {
	case yes.nat == no.nat:
		nat = yes.nat
	case yes.nat == natNil && no.nat != natUnknown:
		nat = no.nat
	case no.nat == natNil && yes.nat != natUnknown:
		nat = yes.nat
	default:
		return c.reject() // the checker's assignability rules; not worth mirroring
	}
	src, loc, ce, ye, ne := c.src, n.Location(), cond.eval, yes.eval, no.eval
	return fastNode{nat: nat, eval: func(s Scope) (any, error) {
		v, err := ce(s)
		if err != nil {
			return nil, err
		}
		b, failure := assertBool(derefValue(v))
		if failure != nil {
			return nil, vmError(src, loc, failure)
		}
		if b {
			return ye(s)
		}
		return ne(s)
	}}
}

func (c *fastCompiler) sequence(n *ast.SequenceNode) fastNode {
	if len(n.Nodes) == 0 {
		return c.reject()
	}
	parts := make([]func(Scope) (any, error), len(n.Nodes))
	var last fastNode
	for i, x := range n.Nodes {
		last = c.node(x)
		parts[i] = last.eval
	}
	if c.unsupported {
		return fastNode{}
	}
	return fastNode{nat: last.nat, eval: func(s Scope) (v any, err error) {
		for _, p := range parts {
			if v, err = p(s); err != nil {
				return nil, err
			}
		}
		return v, nil
	}}
}

// call compiles the calls the patcher leaves: __get($env, "name") for a variable read,
// __ctx($env, "method", args...) for a context method, and raise(...).
func (c *fastCompiler) call(n *ast.CallNode) fastNode {
	callee, ok := n.Callee.(*ast.IdentifierNode)
	if !ok {
		return c.reject()
	}
	args := n.Arguments
	env := func() bool {
		id, ok := args[0].(*ast.IdentifierNode)
		return ok && id.Value == "$env"
	}
	src, loc := c.src, n.Location()
	switch callee.Value {
	case "__get":
		key, ok := stringArg(args, 1)
		if len(args) != 2 || !ok || !env() {
			return c.reject()
		}
		return fastNode{eval: func(s Scope) (any, error) {
			v, _ := s.Get(key)
			return v, nil
		}}
	case "__ctx":
		method, ok := stringArg(args, 1)
		if len(args) < 2 || len(args) > 4 || !ok || !env() {
			return c.reject()
		}
		a := c.args(args[2:])
		return fastNode{eval: func(s Scope) (any, error) {
			var buf [2]any
			in, err := evalArgs(s, a, buf[:0])
			if err != nil {
				return nil, err
			}
			v, err := contextMethod(s, method, in)
			if err != nil {
				return nil, vmError(src, loc, err)
			}
			return v, nil
		}}
	case "raise":
		a := c.args(args)
		return fastNode{eval: func(s Scope) (any, error) {
			var buf [4]any
			in, err := evalArgs(s, a, buf[:0])
			if err != nil {
				return nil, err
			}
			_, err = raise(in...)
			return nil, vmError(src, loc, err)
		}}
	}
	return c.reject()
}

func stringArg(args []ast.Node, i int) (string, bool) {
	if i >= len(args) {
		return "", false
	}
	s, ok := args[i].(*ast.StringNode)
	if !ok {
		return "", false
	}
	return s.Value, true
}

func (c *fastCompiler) args(nodes []ast.Node) []func(Scope) (any, error) {
	out := make([]func(Scope) (any, error), len(nodes))
	for i, a := range nodes {
		out[i] = c.node(a).eval
	}
	return out
}

func evalArgs(s Scope, args []func(Scope) (any, error), buf []any) ([]any, error) {
	for _, a := range args {
		v, err := a(s)
		if err != nil {
			return nil, err
		}
		buf = append(buf, v)
	}
	return buf, nil
}
