package solonscript

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/dop251/goja"

	"github.com/flowteam/flowteam/flow"
)

// Counter is the value of `new AtomicInteger(n)` and `new AtomicLong(n)`: a counter a
// script keeps in the context and increments from any branch. Go code reads it with
// Get; it is written as its number in JSON.
type Counter struct{ n atomic.Int64 }

// NewCounter returns a counter holding n.
func NewCounter(n int64) *Counter {
	c := new(Counter)
	c.n.Store(n)
	return c
}

// Get returns the counter's value.
func (c *Counter) Get() int64 { return c.n.Load() }

// Set stores n.
func (c *Counter) Set(n int64) { c.n.Store(n) }

// Add adds delta and returns the new value.
func (c *Counter) Add(delta int64) int64 { return c.n.Add(delta) }

// String returns the value in decimal, as Java's toString.
func (c *Counter) String() string { return strconv.FormatInt(c.Get(), 10) }

// MarshalJSON writes the value as a JSON number.
func (c *Counter) MarshalJSON() ([]byte, error) { return []byte(c.String()), nil }

// Iterator is what a Go task puts in the context for a script to walk with
// `while (it.hasNext()) { x = it.next(); }`, as Solon tasks put a java.util.Iterator.
type Iterator interface {
	HasNext() bool
	Next() any
}

// NewIterator returns an Iterator over items. It is not safe for concurrent use.
func NewIterator(items []any) Iterator { return &sliceIterator{items: items} }

type sliceIterator struct {
	items []any
	i     int
}

func (s *sliceIterator) HasNext() bool { return s.i < len(s.items) }

func (s *sliceIterator) Next() any {
	if s.i >= len(s.items) {
		return nil
	}
	s.i++
	return s.items[s.i-1]
}

// toJS converts a context value for a script. Maps, lists, counters and iterators
// become objects with the Java methods a Solon script calls on them; other Go values
// are opaque (a script can pass them on, not look into them): no Go value is given to
// goja's reflection.
func (m *machine) toJS(v any) goja.Value {
	switch x := v.(type) {
	case nil:
		return goja.Null()
	case goja.Value:
		return x
	case string:
		return m.rt.ToValue(x)
	case bool:
		return m.rt.ToValue(x)
	case float64:
		return m.rt.ToValue(x)
	case float32:
		return m.rt.ToValue(float64(x))
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return m.rt.ToValue(i)
		}
		f, _ := x.Float64()
		return m.rt.ToValue(f)
	case map[string]any:
		return m.rt.NewDynamicObject(&mapObject{m: m, v: x})
	case []any:
		return m.rt.NewDynamicArray(&listObject{m: m, v: x})
	case *Counter:
		return m.counter(x)
	case Iterator:
		return m.iterator(x)
	}
	if i, ok := flow.AsInt64(v); ok {
		return m.rt.ToValue(i)
	}
	return m.rt.NewDynamicObject(&opaque{v: v})
}

// fromJS converts a script value for the context (or a Go task, or the log). Strings
// longer than the string limit are refused, so a script cannot hand the run a value it
// built to exhaust memory.
func (m *machine) fromJS(v goja.Value) (any, error) {
	return m.fromJSDepth(v, 0)
}

func (m *machine) fromJSDepth(v goja.Value, depth int) (any, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, nil
	}
	if depth > 32 {
		return nil, fmt.Errorf("value nested deeper than 32 levels")
	}
	obj, isObj := v.(*goja.Object)
	if !isObj {
		x := v.Export()
		if s, ok := x.(string); ok && len(s) > m.ev.maxString {
			return nil, fmt.Errorf("%w: a string of %d bytes (at most %d)", ErrStringLimit, len(s), m.ev.maxString)
		}
		return x, nil
	}
	switch x := obj.Export().(type) {
	case *mapObject:
		return x.v, nil
	case *listObject:
		return x.v, nil
	case *counterObject:
		return x.c, nil
	case *iteratorObject:
		return x.it, nil
	case *opaque:
		return x.v, nil
	}
	if _, ok := goja.AssertFunction(obj); ok {
		return nil, fmt.Errorf("a function cannot leave the script")
	}
	keys := obj.Keys()
	if obj.ClassName() == "Array" {
		out := make([]any, 0, len(keys))
		for _, k := range keys {
			e, err := m.fromJSDepth(obj.Get(k), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		e, err := m.fromJSDepth(obj.Get(k), depth+1)
		if err != nil {
			return nil, err
		}
		out[k] = e
	}
	return out, nil
}

// mapObject shows a context map to a script as a Java bean or Map would be seen:
// s.amount, s.getAmount(), s.isActive(), s.setScore(1), s.get("k"), s.put("k", v),
// s.containsKey("k"), s.size(). Writes change the map itself, under the run's
// variable lock when the script runs as a task.
type mapObject struct {
	m *machine
	v map[string]any
}

func (o *mapObject) Get(key string) goja.Value {
	if v, ok := o.read(key); ok {
		return o.m.toJS(v)
	}
	if f := o.method(key); f != nil {
		return o.m.rt.ToValue(f)
	}
	return nil
}

func (o *mapObject) read(key string) (v any, ok bool) {
	o.m.b.locked(func() { v, ok = o.v[key] })
	return v, ok
}

func (o *mapObject) write(key string, v any) {
	o.m.b.locked(func() { o.v[key] = v })
}

// method returns the Java method a script calls on a map, or nil.
func (o *mapObject) method(key string) func(goja.FunctionCall) goja.Value {
	m := o.m
	switch key {
	case "get":
		return func(c goja.FunctionCall) goja.Value { v, _ := o.read(c.Argument(0).String()); return m.toJS(v) }
	case "put":
		return func(c goja.FunctionCall) goja.Value {
			old, _ := o.read(c.Argument(0).String())
			o.write(c.Argument(0).String(), m.mustGo(c.Argument(1)))
			return m.toJS(old)
		}
	case "containsKey":
		return func(c goja.FunctionCall) goja.Value { _, ok := o.read(c.Argument(0).String()); return m.rt.ToValue(ok) }
	case "size":
		return func(goja.FunctionCall) goja.Value {
			n := 0
			m.b.locked(func() { n = len(o.v) })
			return m.rt.ToValue(n)
		}
	case "toString":
		return func(goja.FunctionCall) goja.Value { return m.rt.ToValue("{map}") }
	}
	for _, p := range []string{"get", "is", "set"} {
		rest, ok := strings.CutPrefix(key, p)
		if !ok || rest == "" || !unicode.IsUpper([]rune(rest)[0]) {
			continue
		}
		field := strings.ToLower(rest[:1]) + rest[1:]
		if p == "set" {
			return func(c goja.FunctionCall) goja.Value { o.write(field, m.mustGo(c.Argument(0))); return goja.Undefined() }
		}
		return func(goja.FunctionCall) goja.Value { v, _ := o.read(field); return m.toJS(v) }
	}
	return nil
}

func (o *mapObject) Set(key string, val goja.Value) bool {
	o.write(key, o.m.mustGo(val))
	return true
}

func (o *mapObject) Has(key string) bool { _, ok := o.read(key); return ok }

func (o *mapObject) Delete(key string) bool {
	o.m.b.locked(func() { delete(o.v, key) })
	return true
}

func (o *mapObject) Keys() []string {
	var keys []string
	o.m.b.locked(func() {
		for k := range o.v {
			keys = append(keys, k)
		}
	})
	return keys
}

// listObject shows a context list to a script: indexes and length, the array methods,
// and size(), get(i), isEmpty(), contains(x) (added to Array.prototype by the prelude).
// It cannot grow: the list in the context would not see it.
type listObject struct {
	m *machine
	v []any
}

func (l *listObject) Len() int { return len(l.v) }

func (l *listObject) Get(i int) goja.Value {
	if i < 0 || i >= len(l.v) {
		return goja.Undefined()
	}
	var v any
	l.m.b.locked(func() { v = l.v[i] })
	return l.m.toJS(v)
}

func (l *listObject) Set(i int, val goja.Value) bool {
	if i < 0 || i >= len(l.v) {
		return false
	}
	v := l.m.mustGo(val)
	l.m.b.locked(func() { l.v[i] = v })
	return true
}

func (l *listObject) SetLen(n int) bool { return n == len(l.v) }

type counterObject struct {
	m *machine
	c *Counter
}

func (m *machine) counter(c *Counter) goja.Value {
	return m.rt.NewDynamicObject(&counterObject{m: m, c: c})
}

func (o *counterObject) Get(key string) goja.Value {
	c, rt := o.c, o.m.rt
	num := func(f func(goja.FunctionCall) int64) goja.Value {
		return rt.ToValue(func(call goja.FunctionCall) goja.Value { return rt.ToValue(f(call)) })
	}
	switch key {
	case "get", "intValue", "longValue", "valueOf":
		return num(func(goja.FunctionCall) int64 { return c.Get() })
	case "set":
		return num(func(call goja.FunctionCall) int64 { c.Set(call.Argument(0).ToInteger()); return c.Get() })
	case "incrementAndGet":
		return num(func(goja.FunctionCall) int64 { return c.Add(1) })
	case "decrementAndGet":
		return num(func(goja.FunctionCall) int64 { return c.Add(-1) })
	case "getAndIncrement":
		return num(func(goja.FunctionCall) int64 { return c.Add(1) - 1 })
	case "getAndDecrement":
		return num(func(goja.FunctionCall) int64 { return c.Add(-1) + 1 })
	case "addAndGet":
		return num(func(call goja.FunctionCall) int64 { return c.Add(call.Argument(0).ToInteger()) })
	case "getAndAdd":
		return num(func(call goja.FunctionCall) int64 {
			d := call.Argument(0).ToInteger()
			return c.Add(d) - d
		})
	case "toString":
		return rt.ToValue(func(goja.FunctionCall) goja.Value { return rt.ToValue(c.String()) })
	}
	return nil
}

func (o *counterObject) Set(string, goja.Value) bool { return false }
func (o *counterObject) Has(key string) bool         { return o.Get(key) != nil }
func (o *counterObject) Delete(string) bool          { return false }
func (o *counterObject) Keys() []string              { return nil }

type iteratorObject struct {
	m  *machine
	it Iterator
}

func (m *machine) iterator(it Iterator) goja.Value {
	return m.rt.NewDynamicObject(&iteratorObject{m: m, it: it})
}

func (o *iteratorObject) Get(key string) goja.Value {
	m := o.m
	switch key {
	case "hasNext":
		return m.rt.ToValue(func(goja.FunctionCall) goja.Value { return m.rt.ToValue(o.it.HasNext()) })
	case "next":
		return m.rt.ToValue(func(goja.FunctionCall) goja.Value { return m.toJS(o.it.Next()) })
	}
	return nil
}

func (o *iteratorObject) Set(string, goja.Value) bool { return false }
func (o *iteratorObject) Has(key string) bool         { return key == "hasNext" || key == "next" }
func (o *iteratorObject) Delete(string) bool          { return false }
func (o *iteratorObject) Keys() []string              { return nil }

// opaque is a Go value a script may pass on but not look into.
type opaque struct{ v any }

func (o *opaque) Get(key string) goja.Value   { return nil }
func (o *opaque) Set(string, goja.Value) bool { return false }
func (o *opaque) Has(string) bool             { return false }
func (o *opaque) Delete(string) bool          { return false }
func (o *opaque) Keys() []string              { return nil }
