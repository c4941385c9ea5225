package solonscript

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/flowteam/flowteam/flow"
)

// machine is one goja runtime with the globals a script sees. A runtime is not safe
// for concurrent use, so each execution takes a machine of its own from the
// evaluator's pool (parallel branches run on separate machines) and binds it to the
// run for that execution only.
type machine struct {
	ev   *Evaluator
	rt   *goja.Runtime
	orig *goja.Object          // the runtime's own global object: the builtins
	prov map[string]goja.Value // the globals the evaluator provides
	ctxv map[string]goja.Value // context's methods, built once

	// The execution in progress and its clock; mu guards them against the watchdog
	// and the run's cancellation, which interrupt from other goroutines.
	mu      sync.Mutex
	b       *binding
	left    time.Duration // of the time limit, when started
	started time.Time
	paused  bool // a Go task the script called is running
	timer   *time.Timer
}

// binding is what one execution of a script is bound to: the variables (locked by the
// engine for a condition, by each access for a task) and, for a task, the run.
type binding struct {
	scope flow.Scope    // a condition's locked variables
	fc    *flow.Context // a task's branch view
	ctx   context.Context
	node  *flow.Node
	steps int
	// alloc is the process's heap allocation count when the memory limit's count
	// began: at the first loop step or watchdog tick (0 until then), as reading it
	// costs more than a short script.
	alloc atomic.Uint64
}

// atomic runs fn where the run's variables, and the maps and lists in them, may be
// read or changed: a condition already holds the run's variable lock; a task takes it.
func (b *binding) atomic(fn func(v flow.Vars)) {
	if b.fc == nil {
		fn(b.scope)
		return
	}
	_ = b.fc.Atomic(func(v flow.Vars) error { fn(v); return nil })
}

// locked is atomic for code that touches only a map or list in the context.
func (b *binding) locked(fn func()) { b.atomic(func(flow.Vars) { fn() }) }

func (b *binding) get(key string) (any, bool) {
	if b.fc != nil {
		return b.fc.Get(key)
	}
	return b.scope.Get(key)
}

func (b *binding) put(key string, v any) {
	if b.fc != nil {
		b.fc.Set(key, v)
		return
	}
	b.scope.Put(key, v)
}

func (b *binding) remove(key string) {
	if b.fc != nil {
		b.fc.Delete(key)
		return
	}
	b.scope.Remove(key)
}

// globals is the script's global object: the builtins the prelude keeps, then the
// evaluator's objects, then the run's variables (an unset one reads as null, as with
// the expr evaluator). Nothing can be assigned to it: context.put changes a variable.
type globals struct{ m *machine }

// builtins are the runtime's globals a script may use.
var builtins = map[string]bool{
	"Math": true, "String": true, "Number": true, "Boolean": true, "Object": true,
	"parseInt": true, "parseFloat": true, "isNaN": true, "isFinite": true, "NaN": true, "Infinity": true,
	"undefined": true, "Error": true, "TypeError": true, "RangeError": true, "Date": true,
}

func (g globals) Get(key string) goja.Value {
	m := g.m
	if v, ok := m.prov[key]; ok {
		return v
	}
	if builtins[key] {
		return m.orig.Get(key)
	}
	if m.b == nil {
		return goja.Null()
	}
	v, _ := m.b.get(key)
	return m.toJS(v)
}

func (g globals) Set(string, goja.Value) bool { return false }
func (g globals) Has(string) bool             { return true }
func (g globals) Delete(string) bool          { return false }
func (g globals) Keys() []string              { return nil }

// prelude adds the Java methods scripts call on strings and lists, caps the builtins
// that build large strings at once, and freezes the builtins so that no script changes
// them for the scripts that run on the machine after it.
const prelude = `(function(cap, count){
"use strict";
var sp = String.prototype, ap = Array.prototype;
sp.equals = function(o) { return o !== null && o !== undefined && String(this) === String(o); };
sp.equalsIgnoreCase = function(o) { return o !== null && o !== undefined && String(this).toLowerCase() === String(o).toLowerCase(); };
sp.isEmpty = function() { return this.length === 0; };
sp.contains = function(s) { return this.indexOf(s) >= 0; };
sp.compareTo = function(o) { var a = String(this), b = String(o); return a < b ? -1 : a > b ? 1 : 0; };
Number.prototype.equals = function(o) { return Number(this) === o; };
Boolean.prototype.equals = function(o) { return Boolean(this) === o; };
ap.size = function() { return this.length; };
ap.get = function(i) { return this[i]; };
ap.isEmpty = function() { return this.length === 0; };
ap.contains = function(x) { return this.indexOf(x) >= 0; };
ap.add = function(x) { this.push(x); return true; };
// What builds a string in one call is measured first: an interrupt cannot stop it.
function len(x) { return x === null || x === undefined ? 0 : String(x).length; }
var repeat = sp.repeat, padStart = sp.padStart, padEnd = sp.padEnd, concat = sp.concat,
    replace = sp.replace, replaceAll = sp.replaceAll, join = ap.join;
sp.repeat = function(n) { cap(this.length * n); return repeat.call(this, n); };
sp.padStart = function(n, s) { cap(n); return padStart.call(this, n, s); };
sp.padEnd = function(n, s) { cap(n); return padEnd.call(this, n, s); };
sp.concat = function() { var n = this.length; for (var i = 0; i < arguments.length; i++) n += len(arguments[i]); cap(n); return concat.apply(this, arguments); };
sp.replace = function(p, r) { cap(this.length + len(r)); return replace.call(this, p, r); };
sp.replaceAll = function(p, r) { var s = String(this); cap(s.length + count(s, String(p)) * len(r)); return replaceAll.call(this, p, r); };
sp.match = sp.matchAll = sp.search = undefined; // they compile regular expressions
ap.join = function(s) { var n = 0, k = s === undefined ? 1 : len(s); for (var i = 0; i < this.length; i++) n += len(this[i]) + k; cap(n); return join.call(this, s); };
delete Function.prototype.constructor; // the Function constructor compiles code
[Object, Object.prototype, String, sp, Number, Number.prototype, Boolean, Boolean.prototype, Array, ap,
 Math, JSON, Error, Error.prototype, TypeError, RangeError, Date, Date.prototype,
 Function.prototype].forEach(Object.freeze);
})`

func newMachine(ev *Evaluator) (*machine, error) {
	rt := goja.New()
	rt.SetMaxCallStackSize(64)
	m := &machine{ev: ev, rt: rt, orig: rt.GlobalObject()}
	init, err := rt.RunString(prelude)
	if err != nil {
		return nil, err
	}
	fn, _ := goja.AssertFunction(init)
	limit := func(c goja.FunctionCall) goja.Value {
		if n := c.Argument(0).ToInteger(); n > int64(ev.maxString) {
			panic(rt.NewGoError(fmt.Errorf("%w: a string of %d characters (at most %d)", ErrStringLimit, n, ev.maxString)))
		}
		return goja.Undefined()
	}
	count := func(c goja.FunctionCall) goja.Value {
		s, p := c.Argument(0).String(), c.Argument(1).String()
		if p == "" {
			return rt.ToValue(len([]rune(s)) + 1)
		}
		return rt.ToValue(strings.Count(s, p))
	}
	if _, err := fn(goja.Undefined(), rt.ToValue(limit), rt.ToValue(count)); err != nil {
		return nil, err
	}
	m.prov = m.provided()
	rt.SetGlobalObject(rt.NewDynamicObject(globals{m}))
	m.timer = time.AfterFunc(time.Hour, m.watch) // armed by each execution (bind)
	m.timer.Stop()
	return m, nil
}

// provided builds the objects the evaluator gives every script.
func (m *machine) provided() map[string]goja.Value {
	rt := m.rt
	fn := func(f func(goja.FunctionCall) goja.Value) goja.Value { return rt.ToValue(f) }
	printer := func(level slog.Level) goja.Value {
		o := rt.NewObject()
		print := fn(func(c goja.FunctionCall) goja.Value { m.print(level, c.Arguments); return goja.Undefined() })
		_ = o.Set("println", print)
		_ = o.Set("print", print)
		return o
	}
	system := rt.NewObject()
	_ = system.Set("out", printer(slog.LevelInfo))
	_ = system.Set("err", printer(slog.LevelWarn))
	_ = system.Set("currentTimeMillis", fn(func(goja.FunctionCall) goja.Value { return rt.ToValue(time.Now().UnixMilli()) }))
	thread := rt.NewObject()
	current := rt.NewObject()
	_ = current.Set("getName", fn(func(goja.FunctionCall) goja.Value {
		if m.b != nil && m.b.fc != nil {
			return rt.ToValue(m.b.fc.BranchID())
		}
		return rt.ToValue("main")
	}))
	_ = thread.Set("currentThread", fn(func(goja.FunctionCall) goja.Value { return current }))
	// Frozen, as the builtins are: a script must not change them for the next one.
	freeze, _ := goja.AssertFunction(m.orig.Get("Object").ToObject(rt).Get("freeze"))
	for _, o := range []*goja.Object{system, system.Get("out").ToObject(rt), system.Get("err").ToObject(rt), thread, current} {
		_, _ = freeze(goja.Undefined(), o)
	}
	ctx := rt.NewDynamicObject(contextObject{m})
	return map[string]goja.Value{
		"context": ctx,
		"System":  system,
		"Thread":  thread,
		"__atomic": fn(func(c goja.FunctionCall) goja.Value {
			return m.counter(NewCounter(c.Argument(0).ToInteger()))
		}),
		"__map":  fn(func(goja.FunctionCall) goja.Value { return m.toJS(map[string]any{}) }),
		"__list": fn(func(goja.FunctionCall) goja.Value { return rt.NewArray() }),
		"__step": fn(func(goja.FunctionCall) goja.Value { m.step(); return rt.ToValue(true) }),
	}
}

// print writes System.out.println's line to the evaluator's logger.
func (m *machine) print(level slog.Level, args []goja.Value) {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.String()
		if len(parts[i]) > m.ev.maxString {
			panic(m.rt.NewGoError(fmt.Errorf("%w: println of %d bytes (at most %d)", ErrStringLimit, len(parts[i]), m.ev.maxString)))
		}
	}
	ctx := context.Background()
	attrs := []any{}
	if b := m.b; b != nil && b.fc != nil {
		ctx = b.ctx
		attrs = append(attrs, slog.String("node", b.node.ID), slog.String("branch", b.fc.BranchID()), slog.String("run", b.fc.RunID()))
	}
	m.ev.logger.Log(ctx, level, strings.Join(parts, " "), attrs...)
}

// step counts a loop iteration: past the step limit, or when the process has allocated
// more than the memory limit since the script started, the script fails.
func (m *machine) step() {
	b := m.b
	b.steps++
	if b.steps > m.ev.maxSteps {
		panic(m.rt.NewGoError(fmt.Errorf("%w: more than %d loop iterations", ErrLoopLimit, m.ev.maxSteps)))
	}
	if b.steps == 1 {
		b.alloc.CompareAndSwap(0, allocated())
	} else if b.steps%64 == 0 && b.overAlloc(m.ev.maxAlloc) {
		panic(m.rt.NewGoError(fmt.Errorf("%w: more than %d bytes allocated", ErrMemoryLimit, m.ev.maxAlloc)))
	}
}

// mustGo converts a script value for Go or throws the reason into the script.
func (m *machine) mustGo(v goja.Value) any {
	x, err := m.fromJS(v)
	if err != nil {
		panic(m.rt.NewGoError(err))
	}
	return x
}

// overAlloc reports whether more than limit bytes were allocated since the count
// began; it begins the count if it had not.
func (b *binding) overAlloc(limit uint64) bool {
	now := allocated()
	if b.alloc.CompareAndSwap(0, now) {
		return false
	}
	return now-b.alloc.Load() > limit
}

const allocMetric = "/gc/heap/allocs:bytes"

// allocated returns the bytes the process has allocated on the heap so far. The
// counter is the process's: a script's memory limit counts what other goroutines
// allocate meanwhile too, which is why the limit is generous.
func allocated() uint64 {
	s := []metrics.Sample{{Name: allocMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// contextObject is `context` in a script: Solon's FlowContext methods.
type contextObject struct{ m *machine }

func (o contextObject) Get(key string) goja.Value {
	m := o.m
	if v, ok := m.ctxv[key]; ok {
		return v
	}
	f := o.method(key)
	if f == nil {
		return nil
	}
	if m.ctxv == nil {
		m.ctxv = make(map[string]goja.Value)
	}
	m.ctxv[key] = m.rt.ToValue(f)
	return m.ctxv[key]
}

func (o contextObject) method(key string) func(goja.FunctionCall) goja.Value {
	m := o.m
	str := func(c goja.FunctionCall, i int) string { return c.Argument(i).String() }
	switch key {
	case "put":
		return func(c goja.FunctionCall) goja.Value {
			m.b.put(str(c, 0), m.mustGo(c.Argument(1)))
			return goja.Undefined()
		}
	case "get":
		return func(c goja.FunctionCall) goja.Value { v, _ := m.b.get(str(c, 0)); return m.toJS(v) }
	case "getOrDefault":
		return func(c goja.FunctionCall) goja.Value {
			if v, ok := m.b.get(str(c, 0)); ok && v != nil {
				return m.toJS(v)
			}
			return c.Argument(1)
		}
	case "containsKey":
		return func(c goja.FunctionCall) goja.Value { _, ok := m.b.get(str(c, 0)); return m.rt.ToValue(ok) }
	case "remove":
		return func(c goja.FunctionCall) goja.Value {
			v, _ := m.b.get(str(c, 0))
			m.b.remove(str(c, 0))
			return m.toJS(v)
		}
	case "incr":
		return func(c goja.FunctionCall) goja.Value { return m.incr(str(c, 0), c) }
	case "stop":
		return func(goja.FunctionCall) goja.Value { m.control().Stop(); return goja.Undefined() }
	case "interrupt":
		return func(goja.FunctionCall) goja.Value { m.control().Interrupt(); return goja.Undefined() }
	case "suspend":
		return func(c goja.FunctionCall) goja.Value {
			reason := ""
			if len(c.Arguments) > 0 {
				reason = str(c, 0)
			}
			m.control().Suspend(reason)
			return goja.Undefined()
		}
	case "suspendUntil":
		return func(c goja.FunctionCall) goja.Value { return m.rt.ToValue(m.suspendUntil(str(c, 0))) }
	case "runTask":
		return func(c goja.FunctionCall) goja.Value { m.runTask(str(c, 0)); return goja.Undefined() }
	case "eventBus":
		return func(goja.FunctionCall) goja.Value { return m.eventBus() }
	}
	return nil
}

func (o contextObject) Set(string, goja.Value) bool { return false }
func (o contextObject) Has(key string) bool         { return o.method(key) != nil }
func (o contextObject) Delete(string) bool          { return false }
func (o contextObject) Keys() []string              { return nil }

type controls interface {
	Stop()
	Interrupt()
	Suspend(string)
}

func (m *machine) control() controls {
	if m.b.fc != nil {
		return m.b.fc
	}
	return m.b.scope
}

// incr is context.incr(key[, delta]): the variable's integer plus delta, stored.
func (m *machine) incr(key string, c goja.FunctionCall) goja.Value {
	delta := int64(1)
	if len(c.Arguments) > 1 {
		delta = c.Argument(1).ToInteger()
	}
	var n int64
	var err error
	m.b.atomic(func(v flow.Vars) {
		old, _ := v.Get(key)
		cur, ok := flow.AsInt64(old)
		if old != nil && !ok {
			err = fmt.Errorf("context.incr: %q holds %T, not an integer", key, old)
			return
		}
		n = cur + delta
		v.Put(key, n)
	})
	if err != nil {
		panic(m.rt.NewGoError(err))
	}
	return m.rt.ToValue(n)
}

// suspendUntil is context.suspendUntil(at), as the expr evaluator runs it: at is an
// RFC 3339 time or a Go duration ("10m") from the node's first run (the time
// flow.SuspendUntil records then). It reports whether the wait is over.
func (m *machine) suspendUntil(at string) bool {
	if m.b.fc == nil || m.b.node == nil {
		panic(m.rt.NewGoError(fmt.Errorf("%w: only a node's script can suspend until a time", flow.ErrSuspendUntil)))
	}
	t, err := flow.WakeTime(at)
	if err != nil {
		panic(m.rt.NewGoError(err))
	}
	return flow.SuspendUntil(m.b.fc, m.b.node, t)
}

// taskOnly fails a call that needs the run (runTask, eventBus) in a condition.
func (m *machine) taskOnly(what string) {
	if m.b.fc == nil {
		panic(m.rt.NewGoError(fmt.Errorf("context.%s is only available in task scripts, not in conditions", what)))
	}
}

// runTask runs a Go task of the engine; the script's time limit does not count it.
func (m *machine) runTask(name string) {
	m.taskOnly("runTask")
	b := m.b
	m.ev.pauseClock(m)
	err := b.fc.RunTask(b.ctx, name)
	m.ev.resumeClock(m)
	if err != nil {
		panic(m.rt.NewGoError(err))
	}
}

// eventBus returns the object whose send(topic, payload) publishes an event of the run.
func (m *machine) eventBus() goja.Value {
	m.taskOnly("eventBus")
	bus := m.rt.NewObject()
	_ = bus.Set("send", func(c goja.FunctionCall) goja.Value {
		payload := m.mustGo(c.Argument(1))
		m.b.fc.Publish(m.b.ctx, c.Argument(0).String(), payload)
		return goja.Undefined()
	})
	return bus
}
