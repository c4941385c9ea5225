package flow

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// recycledFields are the fields of a recycled run that the next run sets before it
// reads them; every other field must be zero once the run is back in the pool.
var recycledFields = map[string]bool{
	"e": true, "id": true, "seq": true, "root": true, "maxSteps": true, "icpts": true, "began": true, "seed": true,
	"rootFrame.kind": true, "rootFrame.graph": true, "rootFrame.path": true, "rootFrame.branch": true, "rootFrame.call": true, "rootFrame.run": true,
	"startTok.node": true, "startTok.mode": true, "startTok.frame": true, "startTok.call": true, "startTok.branch": true,
}

// dirtyFields lists the fields of v (a struct) that are neither zero nor in
// recycledFields, descending into the run's embedded state.
func dirtyFields(prefix string, v reflect.Value) []string {
	var out []string
	for i := range v.NumField() {
		name := prefix + v.Type().Field(i).Name
		f := v.Field(i)
		switch {
		case recycledFields[name]:
		case name == "rootFrame" || name == "startTok" || name == "rctx":
			out = append(out, dirtyFields(name+".", f)...)
		case !f.IsZero():
			out = append(out, name)
		}
	}
	return out
}

// recycledRun runs g on e until the run state comes back to the pool (the race
// detector makes sync.Pool drop some of what it is given) and returns it.
func recycledRun(t *testing.T, e *Engine, g *Graph, vars map[string]any) *run {
	t.Helper()
	for range 100 {
		res, err := e.EvalGraph(context.Background(), g, NewContextWith("i", vars))
		require.NoError(t, err)
		require.Equal(t, StatusCompleted, res.Status)
		if r, ok := e.runs.Get().(*run); ok {
			return r
		}
	}
	t.Fatal("the run state never came back to the pool")
	return nil
}

// recoveredGraph fails a node with a recoverable error that its onError sends to a
// fallback node.
const recoveredGraph = `
id: f
layout:
  - {id: s, type: start}
  - {id: fail, task: 'raise("E2", "recoverable", true)', meta: {onError: {goto: fb, recover: true, set: {fell: true}}}, link: e}
  - {id: fb, task: 'context.put("fb", 1)', link: e}
  - {id: e, type: end}
`

func TestRecycledRunIsClean(t *testing.T) {
	graphs := map[string]string{
		"exclusive": `
id: x
layout:
  - {id: s, type: start}
  - {id: g, type: exclusive, link: [{nextId: big, when: "a > b"}, {nextId: small}]}
  - {id: big, task: 'context.put("r", a + b)', link: e}
  - {id: small, task: 'context.put("r", a - b)', link: e}
  - {id: e, type: end}
`,
		"parallel-continue": `
id: p
meta: {branchPolicy: continue}
layout:
  - {id: s, type: start}
  - {id: split, type: parallel, link: [ok, bad]}
  - {id: ok, task: 'context.put("ok", true)', link: join}
  - {id: bad, task: 'raise("E1", "bad branch")', link: join}
  - {id: join, type: parallel}
  - {id: e, type: end}
`,
		"loop-inclusive": `
id: l
layout:
  - {id: s, type: start}
  - {id: loop, type: loop, meta: {$for: i, $in: "1:4"}}
  - {id: inc, type: inclusive, link: [{nextId: x, when: "i > 1"}, {nextId: y}]}
  - {id: x, task: 'context.incr("n")', link: join}
  - {id: y, task: 'context.incr("m")', link: join}
  - {id: join, type: inclusive}
  - {id: close, type: loop}
  - {id: e, type: end}
`,
		"recovered": recoveredGraph,
	}
	for name, src := range graphs {
		t.Run(name, func(t *testing.T) {
			g, err := LoadGraph(name+".yml", []byte(src))
			require.NoError(t, err)
			e := NewEngine()
			cg, err := e.prepare(g)
			require.NoError(t, err)
			require.True(t, cg.sealed)
			r := recycledRun(t, e, g, map[string]any{"a": 3, "b": 4})
			require.Empty(t, dirtyFields("", reflect.ValueOf(r).Elem()), "left in a recycled run")
		})
	}
}

func TestRunsOfUnsealedGraphsAreNotRecycled(t *testing.T) {
	spec := NewSpec("go")
	spec.Start("s").LinkTo("a")
	spec.Activity("a").SetTask("@noop").LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	require.NoError(t, err)
	e := NewEngine(WithTaskFunc("noop", func(context.Context, *Context, *Node) error { return nil }))
	for range 10 {
		_, err := e.EvalGraph(context.Background(), g, NewContext("i"))
		require.NoError(t, err)
	}
	require.Nil(t, e.runs.Get(), "a Go task saw the run: its state must not be reused")
}

// A Stop from outside that races with the end of a run must never reach the next run,
// which may reuse the state: runs on another Context all complete.
func TestLateStopDoesNotReachARecycledRun(t *testing.T) {
	g, err := LoadGraph("x.yml", []byte("id: x\nlayout:\n  - {type: start}\n  - {task: 'context.put(\"n\", 1)'}\n  - {type: end}\n"))
	require.NoError(t, err)
	e := NewEngine()
	stopped := NewContext("stopped")
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
				stopped.Stop()
				_ = stopped.Trace()
				_ = stopped.RunID()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 2000 {
			_, _ = e.EvalGraph(context.Background(), g, stopped)
		}
	}()
	for range 2000 {
		res, err := e.EvalGraph(context.Background(), g, NewContext("other"))
		require.NoError(t, err)
		require.Equal(t, StatusCompleted, res.Status)
	}
	close(done)
	wg.Wait()
}

// A resumed run starts from cloned frames, not from the run's own root frame and
// start token; once it completes, its state is recycled clean as well.
func TestRecycledResumedRunIsClean(t *testing.T) {
	g, err := LoadGraph("wait.yml", []byte(`
id: wait
layout:
  - {id: s, type: start}
  - {id: ask, task: 'approved == true || context.suspend("waiting for approval")'}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	e := NewEngine()
	for range 100 {
		fc := NewContext("i")
		res, err := e.EvalGraph(context.Background(), g, fc)
		require.NoError(t, err)
		require.Equal(t, StatusSuspended, res.Status)
		require.Nil(t, e.runs.Get(), "a suspended run's frontier points into its state: it must not be recycled")
		fc.Set("approved", true)
		res, err = e.Resume(context.Background(), res.Frontier, fc)
		require.NoError(t, err)
		require.Equal(t, StatusCompleted, res.Status)
		if r, ok := e.runs.Get().(*run); ok {
			require.Empty(t, dirtyFields("", reflect.ValueOf(r).Elem()), "left in a recycled run")
			return
		}
	}
	t.Fatal("the resumed run's state never came back to the pool")
}

// The run ids of private runs live in their Results: each stays what it was when its
// run returned, whatever runs come after.
func TestPrivateRunIDsStay(t *testing.T) {
	g, err := LoadGraph("x.yml", []byte("id: x\nlayout:\n  - {type: start}\n  - {task: 'context.put(\"n\", 1)'}\n  - {type: end}\n"))
	require.NoError(t, err)
	e := NewEngine()
	var results []*Result
	var ids []string
	for range 500 {
		res, err := e.EvalGraph(context.Background(), g, NewContext("i"))
		require.NoError(t, err)
		results = append(results, res)
		ids = append(ids, strings.Clone(res.RunID()))
	}
	seen := map[string]bool{}
	for i, res := range results {
		require.Equal(t, ids[i], res.RunID())
		require.Regexp(t, `^r[0-9a-z]+-[0-9]+$`, res.RunID())
		require.False(t, seen[res.RunID()], "run id %s given twice", res.RunID())
		seen[res.RunID()] = true
	}
}

// Runs of one sealed graph on many goroutines share the engine's pool of run states:
// each run sees only its own variables and its Result only its own outcome.
func TestRecycledRunsShareNoStateBetweenConcurrentRuns(t *testing.T) {
	g, err := LoadGraph("c.yml", []byte(`
id: c
layout:
  - {id: s, type: start}
  - {id: g, type: exclusive, link: [{nextId: odd, when: "n % 2 == 1"}, {nextId: even}]}
  - {id: odd, task: 'context.put("r", n * 10)', link: e}
  - {id: even, task: 'raise("EVEN", "even", true)', meta: {onError: {recover: true, set: {r: -1}}}, link: e}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	e := NewEngine()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var kept Result
			opt := WithResult(&kept)
			for i := range 300 {
				n := w*1000 + i
				fc := NewContextWith("i", map[string]any{"n": n})
				var (
					res *Result
					err error
				)
				if i%2 == 0 {
					res, err = e.EvalGraph(context.Background(), g, fc, opt)
				} else {
					res, err = e.EvalGraph(context.Background(), g, fc)
				}
				want, records, last := n*10, 0, "odd"
				if n%2 == 0 {
					want, records, last = -1, 1, "even"
				}
				switch {
				case err != nil || res.Status != StatusCompleted:
					errs <- fmt.Errorf("n=%d: %v %v", n, res.Status, err)
				case fc.Value("r") != want || len(res.ExecutionErrors) != records || res.Steps != 4:
					errs <- fmt.Errorf("n=%d: r=%v records=%d steps=%d", n, fc.Value("r"), len(res.ExecutionErrors), res.Steps)
				case res.LastNode("c") != "e" || fc.LastNode("c") != "e":
					errs <- fmt.Errorf("n=%d: last %q", n, res.LastNode("c"))
				case len(ExecutionErrors(fc, DefaultErrorKey)) != records:
					errs <- fmt.Errorf("n=%d: context holds %d records (%s)", n, len(ExecutionErrors(fc, DefaultErrorKey)), last)
				default:
					continue
				}
				return
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
