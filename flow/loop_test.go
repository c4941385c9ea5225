package flow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// Steppers, worked out by hand: the end is excluded, a negative step counts down, and
// bounds near the ends of int64 neither overflow nor loop for ever.
func TestLoopSteppers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []any
	}{
		{"1:10:2", []any{1, 3, 5, 7, 9}},
		{"1...4", []any{1, 2, 3}},
		{"0:3", []any{0, 1, 2}},
		{"5:0:-2", []any{5, 3, 1}},
		{" -2 : 1 ", []any{-2, -1, 0}},
		{"3:3", nil},
		{"3...1", nil},
		{"1:10:-1", nil},
		{"9223372036854775800:9223372036854775807:5", []any{9223372036854775800, 9223372036854775805}},
		{"-9223372036854775800:-9223372036854775807:-5", []any{-9223372036854775800, -9223372036854775805}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			s := flow.NewSpec("st")
			s.Start("s").LinkTo("l")
			s.Loop("l", "i", tc.in).LinkTo("b")
			s.Activity("b").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
				c.Update("seen", func(old any, _ bool) any { return append(old.([]any), c.Value("i")) })
				return nil
			}).LinkTo("c")
			s.Loop("c", "", nil).SetTask(`context.put("closed", true)`).LinkTo("e")
			s.End("e")
			fc := flow.NewContextWith("i", map[string]any{"seen": []any{}})
			res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), fc)
			require.NoError(t, err)
			require.Equal(t, flow.StatusCompleted, res.Status)
			if tc.want == nil {
				tc.want = []any{}
			}
			assert.Equal(t, tc.want, fc.Value("seen"))
			assert.Equal(t, true, fc.Value("closed"))
		})
	}
	for _, in := range []string{"-9000000000000000000:9000000000000000000", "0:2000000", "1:10:0"} {
		s := flow.NewSpec("big")
		s.Start("s").LinkTo("l")
		s.Loop("l", "i", in).LinkTo("c")
		s.Loop("c", "", nil).LinkTo("e")
		s.End("e")
		err := flow.NewEngine().Register(build(t, s))
		assert.ErrorContains(t, err, "stepper", in)
	}
}

// Interrupt in a loop body ends that iteration only: the loop goes on with the next
// item (like continue) and passes its closing node once. The loop item shadows a
// shared variable of the same name inside the loop only.
func TestInterruptInLoopBodyEndsTheIteration(t *testing.T) {
	s := flow.NewSpec("li")
	s.Start("s").LinkTo("l")
	s.Loop("l", "it", []any{1, 2, 3, 4}).LinkTo("body")
	s.Activity("body").SetTask(`context.put("seen", seen + it); it % 2 == 1 || context.interrupt()`).LinkTo("odd")
	s.Activity("odd").SetTask(`context.put("odd", odd + it)`).LinkTo("close")
	s.Loop("close", "", nil).SetTask(`context.incr("closed")`).LinkTo("after")
	s.Activity("after").SetTask(`context.put("itAfter", it)`).LinkTo("e")
	s.End("e")
	fc := flow.NewContextWith("i", map[string]any{"seen": 0, "odd": 0, "it": "shared"})
	res, err := flow.NewEngine().EvalGraph(context.Background(), build(t, s), fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, 10, fc.Value("seen"), "1+2+3+4")
	assert.Equal(t, 4, fc.Value("odd"), "1+3: the even iterations were interrupted")
	assert.Equal(t, int64(1), fc.Value("closed"))
	assert.Equal(t, "shared", fc.Value("itAfter"))
}

// A run suspended inside a loop over integers, whose frontier goes through plain
// encoding/json (as a caller stores it), resumes with integer items: `it == 3` and
// typed getters see the same item as before the restart, and an integer beyond
// float64's precision comes back exactly.
func TestLoopItemsKeepTheirTypeThroughJSON(t *testing.T) {
	big := 9007199254740993 // 2^53 + 1: a float64 would round it
	s := flow.NewSpec("lj")
	s.Start("s").LinkTo("l")
	s.Loop("l", "it", []any{1, 3, big, 2.5, "x"}).LinkTo("body")
	s.Activity("body").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		it := c.Value("it")
		if it == 3 && c.Value("ok") != true {
			c.Suspend("at 3")
			return nil
		}
		c.Update("seen", func(old any, _ bool) any { return append(old.([]any), it) })
		return nil
	}).LinkTo("three")
	s.Activity("three").SetTask(`it == 3 && context.put("three", true)`).LinkTo("close")
	s.Loop("close", "", nil).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	fc := flow.NewContextWith("i", map[string]any{"seen": []any{}})
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)

	data, err := json.Marshal(res.Frontier.State())
	require.NoError(t, err)
	var st flow.FrontierState
	require.NoError(t, json.Unmarshal(data, &st))
	fr, err := e.RestoreFrontier(g, st)
	require.NoError(t, err)
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), fr, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []any{1, int64(3), int64(big), 2.5, "x"}, fc.Value("seen"))
	assert.Equal(t, true, fc.Value("three"))

	// A loop item beyond float64 is refused when the frontier is read, as encoding/json
	// would refuse it.
	bad := bytes.Replace(data, []byte(`"x"]`), []byte(`1e400]`), 1)
	require.NotEqual(t, data, bad)
	var badSt flow.FrontierState
	assert.ErrorContains(t, json.Unmarshal(bad, &badSt), "out of range")
}

// A loop suspended in its second iteration resumes in that iteration, with its item,
// and finishes the remaining items.
func TestLoopSuspendedMidwayResumesItsIteration(t *testing.T) {
	s := flow.NewSpec("ls")
	s.Start("s").LinkTo("l")
	s.Loop("l", "it", []any{"a", "b", "c"}).LinkTo("body")
	s.Activity("body").SetTask(`context.put("log", log + it); it != "b" || ok == true || context.suspend("at b")`).LinkTo("close")
	s.Loop("close", "", nil).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	fc := flow.NewContextWith("i", map[string]any{"log": ""})
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Equal(t, "ab", fc.Value("log"))
	fc.Set("ok", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "abbc", fc.Value("log"), "b runs again, then c")
	_, set := fc.Get("it")
	assert.False(t, set, "the loop item is not left in the shared variables")
}

// A parallel split inside a loop body: each iteration's branches see that iteration's
// item, the join fires once per iteration, and nested parallel splits on an engine
// bounded to one goroutine (the rest run inline) complete from several runs at once.
func TestParallelInsideLoopBoundedConcurrency(t *testing.T) {
	s := flow.NewSpec("pl")
	s.Start("s").LinkTo("l")
	s.Loop("l", "it", "0:5").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("q")
	s.Activity("a").SetTask(`context.put("sum", sum + it)`).LinkTo("j")
	s.Parallel("q").LinkTo("b").LinkTo("c")
	s.Activity("b").SetTask(`context.put("sum", sum + it * 10)`).LinkTo("qj")
	s.Activity("c").SetTask(`context.put("sum", sum + it * 100)`).LinkTo("qj")
	s.Parallel("qj").LinkTo("j")
	s.Parallel("j").SetTask(`context.incr("joins")`).LinkTo("close")
	s.Loop("close", "", nil).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine(flow.WithMaxConcurrency(1))
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				fc := flow.NewContextWith("i", map[string]any{"sum": 0})
				res, err := e.EvalGraph(context.Background(), g, fc)
				if !assert.NoError(t, err) || !assert.Equal(t, flow.StatusCompleted, res.Status) {
					return
				}
				// 0+1+2+3+4 = 10, times 1 + 10 + 100.
				assert.Equal(t, 1110, fc.Value("sum"))
				assert.Equal(t, int64(5), fc.Value("joins"))
			}
		}()
	}
	wg.Wait()
}

func TestLoopItemsAreBranchScoped(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]any{}
	e := flow.NewEngine(flow.WithTaskFunc("see", func(_ context.Context, c *flow.Context, n *flow.Node) error {
		v, _ := c.Get("item")
		mu.Lock()
		seen[n.ID] = append(seen[n.ID], v)
		mu.Unlock()
		time.Sleep(time.Millisecond) // let the branches interleave
		return nil
	}))
	s := flow.NewSpec("scoped")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("l1").LinkTo("l2")
	s.Loop("l1", "item", []any{"a", "b", "c"}).LinkTo("x1")
	s.Activity("x1").SetTask("@see").LinkTo("c1")
	s.Loop("c1", "", nil).LinkTo("j")
	s.Loop("l2", "item", []any{1, 2, 3}).LinkTo("x2")
	s.Activity("x2").SetTask("@see").LinkTo("c2")
	s.Loop("c2", "", nil).LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	res, _, path := run(t, e, build(t, s), nil)
	require.NoError(t, res.Err)
	assert.Equal(t, []any{"a", "b", "c"}, seen["x1"])
	assert.Equal(t, []any{1, 2, 3}, seen["x2"])
	assert.Equal(t, 1, count(path, "e"))
}

func TestLoopOverContextVariableAndEmpty(t *testing.T) {
	s := flow.NewSpec("lv")
	s.Start("s").LinkTo("l")
	s.Loop("l", "x", "items").LinkTo("b")
	s.Activity("b").SetTask(`context.put("sum", sum + x)`).LinkTo("c")
	s.Loop("c", "", nil).SetTask(`context.put("closed", true)`).LinkTo("e")
	s.End("e")
	g := build(t, s)
	e := flow.NewEngine()
	res, fc, _ := run(t, e, g, map[string]any{"items": []int{1, 2, 3, 4}, "sum": 0})
	require.NoError(t, res.Err)
	assert.Equal(t, 10, fc.Value("sum"))
	assert.Equal(t, true, fc.Value("closed"))
	// No items: the flow still passes the closing node once.
	res, fc, path := run(t, e, g, map[string]any{"items": []int{}, "sum": 0})
	require.NoError(t, res.Err)
	assert.Equal(t, true, fc.Value("closed"))
	assert.NotContains(t, path, "b")
	// Not a list: an error with a stable code naming the loop node.
	res, _, _ = run(t, e, g, map[string]any{"items": 5})
	var ne *flow.NodeError
	require.ErrorAs(t, res.Err, &ne)
	assert.Equal(t, flow.CodeLoopItems, ne.Code)
	assert.Equal(t, "l", ne.Node)
}
