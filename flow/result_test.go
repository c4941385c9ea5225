package flow

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// dirtyResult sets every field of res to a value no run produces, so that a test sees
// any field WithResult's run leaves as it was (a field added to Result later
// included).
func dirtyResult(t *testing.T, res *Result) {
	t.Helper()
	v := reflect.ValueOf(res).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case name == "last":
			res.last = []lastNode{{"stale", "stale"}, {"stale2", "stale"}}
		case name == "lastBuf": // backing array of last, read only through last
		case name == "runID":
			res.runID = "stale"
		case name == "runSeq":
			res.runSeq = 1 << 60
		case f.Kind() == reflect.String:
			f.SetString("stale")
		case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
			f.SetInt(-7)
		case f.Kind() == reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case f.Kind() == reflect.Map:
			f.Set(reflect.MakeMap(f.Type()))
			f.SetMapIndex(reflect.ValueOf("stale"), reflect.ValueOf(any(1)))
		case f.Kind() == reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case f.Type() == reflect.TypeFor[error]():
			f.Set(reflect.ValueOf(errors.New("stale")))
		default:
			t.Fatalf("dirtyResult does not know how to set Result.%s (%s)", name, f.Type())
		}
	}
}

// sameOutcome requires got and want to hold the same outcome; run ids and times
// differ between any two runs.
func sameOutcome(t *testing.T, want, got *Result) {
	t.Helper()
	w, g := *want, *got
	for _, r := range []*Result{&w, &g} {
		r.ExecutionErrors = append([]ExecutionError(nil), r.ExecutionErrors...)
		for i := range r.ExecutionErrors {
			r.ExecutionErrors[i].Time = time.Time{}
		}
	}
	w.runID, g.runID, w.runSeq, g.runSeq, w.Duration, w.lastBuf, g.Duration, g.lastBuf = "", "", 0, 0, 0, [1]lastNode{}, 0, [1]lastNode{}
	require.Equal(t, want.Last(), got.Last())
	w.last, g.last = nil, nil
	if w.Frontier != nil && g.Frontier != nil {
		require.Equal(t, w.Frontier.Pending(), g.Frontier.Pending())
		w.Frontier, g.Frontier = nil, nil
	}
	require.Equal(t, w, g)
}

func TestWithResultOverwritesEveryField(t *testing.T) {
	graphs := map[string]string{
		"completed": "id: c\nlayout:\n  - {type: start}\n  - {task: 'context.put(\"n\", 1)'}\n  - {type: end}\n",
		"suspended": "id: s\nlayout:\n  - {type: start}\n  - {id: ask, task: 'context.suspend(\"wait\")'}\n  - {type: end}\n",
		"failed":    "id: f\nlayout:\n  - {type: start}\n  - {id: bad, task: 'raise(\"E1\", \"bad\")'}\n  - {type: end}\n",
		"recovered": recoveredGraph,
	}
	for name, src := range graphs {
		t.Run(name, func(t *testing.T) {
			g, err := LoadGraph(name+".yml", []byte(src))
			require.NoError(t, err)
			e := NewEngine()
			want, wantErr := e.EvalGraph(context.Background(), g, NewContext("i"))
			var res Result
			dirtyResult(t, &res)
			got, err := e.EvalGraph(context.Background(), g, NewContext("i"), WithResult(&res))
			require.Same(t, &res, got)
			require.Equal(t, wantErr, err)
			require.NotEqual(t, "stale", res.RunID())
			require.Positive(t, res.Duration)
			sameOutcome(t, want, got)
		})
	}
}

// A Result filled by WithResult can be resumed into itself: the frontier is read
// before the run overwrites the Result.
func TestWithResultResumesIntoItself(t *testing.T) {
	g, err := LoadGraph("wait.yml", []byte(`
id: wait
layout:
  - {id: s, type: start}
  - {id: ask, task: 'approved == true || context.suspend("waiting for approval")'}
  - {id: e, type: end}
`))
	require.NoError(t, err)
	e := NewEngine()
	var res Result
	opt := WithResult(&res)
	fc := NewContext("i")
	_, err = e.EvalGraph(context.Background(), g, fc, opt)
	require.NoError(t, err)
	require.Equal(t, StatusSuspended, res.Status)
	require.Equal(t, "waiting for approval", res.Reason)
	fc.Set("approved", true)
	_, err = e.Resume(context.Background(), res.Frontier, fc, opt)
	require.NoError(t, err)
	require.Equal(t, StatusCompleted, res.Status)
	require.Empty(t, res.Reason)
	require.Nil(t, res.Frontier)
	require.Equal(t, map[string]string{"wait": "e"}, res.Last())
}

// A recycled run does not keep the caller's Result.
func TestRecycledRunDropsTheCallersResult(t *testing.T) {
	g, err := LoadGraph("x.yml", []byte("id: x\nlayout:\n  - {type: start}\n  - {task: 'context.put(\"n\", 1)'}\n  - {type: end}\n"))
	require.NoError(t, err)
	e := NewEngine()
	var res Result
	opt := WithResult(&res)
	for range 100 {
		_, err := e.EvalGraph(context.Background(), g, NewContext("i"), opt)
		require.NoError(t, err)
		if r, ok := e.runs.Get().(*run); ok {
			require.Empty(t, dirtyFields("", reflect.ValueOf(r).Elem()), "left in a recycled run")
			return
		}
	}
	t.Fatal("the run state never came back to the pool")
}

// A run with WithResult allocates nothing for its outcome: case1 with a kept Result
// allocates only the boxed value its script stores.
func TestWithResultAllocatesNoResult(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop what it is given")
	}
	g, err := LoadGraph("x.yml", []byte("id: x\nlayout:\n  - {type: start}\n  - {task: 'context.put(\"n\", a - b)'}\n  - {type: end}\n"))
	require.NoError(t, err)
	e := NewEngine()
	fc := NewContextWith("i", map[string]any{"a": 3, "b": 4})
	var res Result
	opt := WithResult(&res)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := e.EvalGraph(ctx, g, fc, opt); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, allocs, 2.0, "the run id and the boxed -1")
}
