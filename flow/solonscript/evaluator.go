package solonscript

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/expr-lang/expr/file"

	"github.com/flowteam/flowteam/flow"
)

// Name is the name definitions and the command line use for this evaluator
// ("evaluator: solon", --evaluator solon).
const Name = "solon"

// Errors a script fails with when it passes a limit (wrapped in a *ScriptError; the
// engine's node error names the node).
var (
	ErrTimeout     = errors.New("script ran out of time")
	ErrLoopLimit   = errors.New("script passed its loop step limit")
	ErrMemoryLimit = errors.New("script passed its memory limit")
	ErrStringLimit = errors.New("script built a string past the string limit")
)

// Defaults of the limits (see the options).
const (
	DefaultTimeout   = time.Second
	DefaultMaxSteps  = 100_000
	DefaultMaxString = 1 << 20
	DefaultMaxAlloc  = 128 << 20
)

// Evaluator is the flow.Evaluator for Solon's Java script subset. It is safe for
// concurrent use; create it with New.
type Evaluator struct {
	expr      *flow.ExprEvaluator
	logger    *slog.Logger
	timeout   time.Duration
	maxSteps  int
	maxString int
	maxAlloc  uint64
	pool      sync.Pool // *machine
}

// Option configures an Evaluator.
type Option func(*Evaluator)

// WithTimeout bounds the time one execution of a script or condition may take,
// without the Go tasks it runs (context.runTask). Default DefaultTimeout.
func WithTimeout(d time.Duration) Option { return func(e *Evaluator) { e.timeout = d } }

// WithMaxLoopSteps bounds the loop iterations of one execution. Default DefaultMaxSteps.
func WithMaxLoopSteps(n int) Option { return func(e *Evaluator) { e.maxSteps = n } }

// WithMaxString bounds the strings a script builds with repeat, padStart, padEnd and
// join, and those it gives the run (context.put, println, events). Default
// DefaultMaxString bytes.
func WithMaxString(n int) Option { return func(e *Evaluator) { e.maxString = n } }

// WithMaxAlloc bounds the bytes allocated while one execution runs. The count is the
// process's heap allocations, sampled every few loop steps and every few milliseconds,
// so other goroutines' allocations count too. Default DefaultMaxAlloc.
func WithMaxAlloc(n uint64) Option { return func(e *Evaluator) { e.maxAlloc = n } }

// WithLogger sets where System.out.println and System.err.println write (at levels
// Info and Warn, with the node, branch and run). Default slog.Default().
func WithLogger(l *slog.Logger) Option { return func(e *Evaluator) { e.logger = l } }

// New returns an evaluator with the given options.
func New(opts ...Option) *Evaluator {
	e := &Evaluator{expr: flow.NewExprEvaluator(), timeout: DefaultTimeout, maxSteps: DefaultMaxSteps,
		maxString: DefaultMaxString, maxAlloc: DefaultMaxAlloc}
	for _, o := range opts {
		o(e)
	}
	if e.logger == nil {
		e.logger = slog.Default()
	}
	return e
}

// CompileCondition implements flow.Evaluator. A condition is an expression; its value
// must be a boolean.
func (e *Evaluator) CompileCondition(src string) (flow.Expression, error) {
	return e.compile(src, true)
}

// CompileScript implements flow.Evaluator. A script written in Java runs as a task of
// its own (flow.ScriptTask): without the run's variables locked, so that it can run Go
// tasks, each variable access locked.
func (e *Evaluator) CompileScript(src string) (flow.Expression, error) {
	return e.compile(src, false)
}

func (e *Evaluator) compile(src string, cond bool) (flow.Expression, error) {
	src = strings.TrimSpace(src)
	for strings.HasSuffix(src, ";") && cond {
		src = strings.TrimSpace(strings.TrimSuffix(src, ";"))
	}
	if !needsJava(src) {
		// What the default evaluator runs keeps its meaning and its speed.
		var x flow.Expression
		var err error
		if cond {
			x, err = e.expr.CompileCondition(src)
		} else {
			x, err = e.expr.CompileScript(src)
		}
		if err == nil {
			return x, nil
		}
	}
	body, err := translate(src)
	if err != nil {
		return nil, fileError(err)
	}
	prefix, suffix := `(function(){"use strict";`, "\n})()"
	if cond {
		prefix, suffix = `(function(){"use strict"; return (`, "\n);})()"
	}
	prog, err := goja.Compile("script", prefix+body+suffix, true)
	if err != nil {
		return nil, syntaxError(err, len(prefix))
	}
	s := &program{ev: e, prog: prog}
	if cond {
		return (*condition)(s), nil
	}
	return (*taskScript)(s), nil
}

// needsJava reports whether src uses what only the Java subset has: a keyword of it, a
// method call on anything but context's expr methods, a block.
func needsJava(src string) bool {
	toks, err := lex(src)
	if err != nil {
		return true
	}
	var sig []tok
	for _, t := range toks {
		if t.kind != tkSpace {
			sig = append(sig, t)
		}
	}
	for i, t := range sig {
		if t.kind == tkIdent && javaWords[t.text] {
			return true
		}
		if t.text == "." && i > 0 && i+2 < len(sig) && sig[i+1].kind == tkIdent && sig[i+2].text == "(" {
			if sig[i-1].text != "context" || !flow.IsContextMethod(sig[i+1].text) {
				return true
			}
		}
	}
	return false
}

var javaWords = map[string]bool{
	"if": true, "else": true, "while": true, "for": true, "do": true, "return": true, "new": true, "final": true,
	"switch": true, "break": true, "continue": true, "try": true, "throw": true, "System": true, "Thread": true,
	"int": true, "long": true, "double": true, "float": true, "boolean": true, "String": true, "var": true, "char": true,
}

// fileError gives a translation error the form flow locates in a definition.
func fileError(err error) error {
	var le *loadError
	if errors.As(err, &le) {
		return &file.Error{Line: le.line, Message: le.Error()}
	}
	return err
}

var syntaxLine = regexp.MustCompile(`Line (\d+):(\d+) (.*)`)

// syntaxError turns goja's compile error into one with the script's line; prefix is
// the length of what the wrapper added before the script's first line.
func syntaxError(err error, prefix int) error {
	m := syntaxLine.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	if line == 1 {
		col -= prefix
	}
	msg := strings.TrimSuffix(m[3], ")")
	if i := strings.Index(msg, " (and "); i > 0 {
		msg = msg[:i]
	}
	return &file.Error{Line: line, Column: max(col, 0),
		Message: fmt.Sprintf("line %d: %s (the Java subset: see package solonscript)", line, msg)}
}

// ScriptError is a failure of a running script: its line and what went wrong.
type ScriptError struct {
	Line int
	Msg  string
	Err  error // the Go error under it, if any (ErrTimeout, a task's error, ...)
}

func (e *ScriptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Unwrap returns the Go error under the failure.
func (e *ScriptError) Unwrap() error { return e.Err }

// ErrorCode is the engine's code of a script failure (flow.CodeScript), unless the
// error under it has a code of its own.
func (e *ScriptError) ErrorCode() string {
	var c interface{ ErrorCode() string }
	if errors.As(e.Err, &c) {
		return c.ErrorCode()
	}
	return flow.CodeScript
}

// program is a compiled script or condition.
type program struct {
	ev   *Evaluator
	prog *goja.Program
}

// condition is a compiled condition; Eval returns its value.
type condition program

// Eval implements flow.Expression.
func (c *condition) Eval(scope flow.Scope) (any, error) {
	return (*program)(c).exec(&binding{scope: scope})
}

// taskScript is a compiled task script (flow.ScriptTask).
type taskScript program

// Eval runs the script on locked variables, without a run: context.runTask and
// eventBus fail. The engine calls Run instead.
func (s *taskScript) Eval(scope flow.Scope) (any, error) {
	_, err := (*program)(s).exec(&binding{scope: scope})
	return nil, err
}

// Run implements flow.Task: the engine runs the script as the node's task.
func (s *taskScript) Run(ctx context.Context, c *flow.Context, n *flow.Node) error {
	_, err := (*program)(s).exec(&binding{fc: c, ctx: ctx, node: n})
	return err
}

func (p *program) exec(b *binding) (any, error) {
	e := p.ev
	m, _ := e.pool.Get().(*machine)
	if m == nil {
		var err error
		if m, err = newMachine(e); err != nil {
			return nil, fmt.Errorf("solon script runtime: %w", err)
		}
	}
	m.bind(b)
	v, err := m.rt.RunProgram(p.prog)
	var out any
	if err == nil {
		out, err = m.fromJS(v)
	}
	m.unbind()
	e.pool.Put(m)
	if err != nil {
		return nil, scriptError(err)
	}
	return out, nil
}

// scriptError describes a failure with the script's line.
func scriptError(err error) error {
	se := &ScriptError{Msg: err.Error(), Err: errors.Unwrap(err)}
	var ex *goja.Exception
	var intr *goja.InterruptedError
	switch {
	case errors.As(err, &intr):
		se.Err, _ = intr.Value().(error)
		se.Msg = fmt.Sprint(intr.Value())
		se.Line = line(intr.Stack())
	case errors.As(err, &ex):
		se.Line = line(ex.Stack())
		if se.Err != nil {
			se.Msg = se.Err.Error()
		} else if ex.Value() != nil {
			se.Msg = ex.Value().String()
		}
	}
	return se
}

// line returns the script line of the innermost frame in the script.
func line(stack []goja.StackFrame) int {
	for i := range stack {
		if stack[i].SrcName() == "script" {
			return stack[i].Position().Line
		}
	}
	return 0
}

// bind prepares the machine for an execution: the binding and the clock.
func (m *machine) bind(b *binding) {
	m.mu.Lock()
	m.b, m.left, m.started = b, m.ev.timeout, time.Now()
	m.timer.Reset(m.tick())
	m.mu.Unlock()
}

func (m *machine) unbind() {
	m.mu.Lock()
	m.timer.Stop()
	m.b = nil
	m.mu.Unlock()
	m.rt.ClearInterrupt() // one that came in as the script ended
}

// watchTick is how often the watchdog looks at the clock and the memory.
const watchTick = 2 * time.Millisecond

func (m *machine) tick() time.Duration { return min(watchTick, max(m.left, time.Microsecond)) }

// watch is the watchdog: it interrupts the script when its time is up, when the run's
// context ended (polled: a hook on it would cost a goroutine per execution) or when
// the process allocated more than the memory limit since the script started.
func (m *machine) watch() {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.b
	if b == nil || m.paused {
		return
	}
	switch {
	case time.Since(m.started) >= m.left:
		m.rt.Interrupt(fmt.Errorf("%w: more than %v", ErrTimeout, m.ev.timeout))
	case b.ctx != nil && b.ctx.Err() != nil:
		m.rt.Interrupt(context.Cause(b.ctx))
	case b.overAlloc(m.ev.maxAlloc):
		m.rt.Interrupt(fmt.Errorf("%w: more than %d bytes allocated", ErrMemoryLimit, m.ev.maxAlloc))
	default:
		m.timer.Reset(m.tick())
	}
}

// pauseClock stops the script's clock while a Go task it called runs.
func (e *Evaluator) pauseClock(m *machine) {
	m.mu.Lock()
	m.paused = true
	m.left -= time.Since(m.started)
	m.timer.Stop()
	m.mu.Unlock()
}

func (e *Evaluator) resumeClock(m *machine) {
	m.mu.Lock()
	m.paused = false
	m.started = time.Now()
	m.b.alloc.Store(allocated()) // what the task allocated is not the script's
	m.timer.Reset(m.tick())
	m.mu.Unlock()
}
