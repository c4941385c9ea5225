package session

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestCopyVarsMatchesCanonValue holds copyVars, which skips the variables equal to
// those of a recycled map, to the reference: after every checkpoint of a long random
// run (values replaced, deleted, changed in place, keys not valid UTF-8), what the
// store keeps (the copied map, canonicalized by the store unless copyVars says it
// need not be) equals canonValue of each variable, and a stored map is never changed
// by what the run does afterwards.
func TestCopyVarsMatchesCanonValue(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fuzz := make([]byte, 64)
	gen := func() any {
		for i := range fuzz {
			fuzz[i] = byte(r.UintN(256))
		}
		pos := 0
		return genValue(fuzz, &pos, 0)
	}
	keys := []string{"a", "b", "c", "list", "map", "bad\xff", "e", "f"}
	in := &instance{}
	src := map[string]any{}
	var spare map[string]any // the map of the checkpoint before the last one stored
	var storedCopy map[string]any
	skipped := 0
	for step := range 5000 {
		// What a node does to the variables.
		for range r.IntN(3) {
			k := keys[r.IntN(len(keys))]
			switch op := r.IntN(10); {
			case op == 0:
				delete(src, k)
			case op <= 4:
				src[k] = gen()
			case op <= 6:
				src[k] = []any{int64(r.IntN(3)), "x", []any{r.Float64()}}
			default: // in place, without setting the variable again
				switch v := src[k].(type) {
				case []any:
					if len(v) > 0 {
						v[r.IntN(len(v))] = gen()
					}
				case map[string]any:
					v[keys[r.IntN(3)]] = gen()
				}
			}
		}
		want := map[string]any{}
		ok := true
		for k, v := range src {
			cv, err := canonValue(v, 0)
			if err != nil || k == "bad\xff" {
				ok = false
				break
			}
			want[k] = cv
		}

		dst := spare
		if dst == nil {
			dst = map[string]any{}
		}
		in.copyVars(dst, src)
		got := dst
		if in.varsDone {
			skipped++
		} else {
			c, err := canonicalize(&Snapshot{Vars: dst}, true, in.stored, false)
			if (err == nil) != ok {
				t.Fatalf("step %d: store error %v, reference ok %v", step, err, ok)
			}
			if err != nil {
				// The save fails (the run with it): nothing is stored or recycled.
				// Go on with variables that can be saved.
				for k, v := range src {
					if _, err := canonValue(v, 0); err != nil || k == "bad\xff" {
						delete(src, k)
					}
				}
				continue
			}
			got = c.Vars
		}
		if !ok {
			t.Fatalf("step %d: copyVars says done for variables that cannot be saved", step)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("step %d: stored\n%#v\nwant\n%#v", step, got, want)
		}
		if in.stored != nil && !reflect.DeepEqual(storedCopy, in.stored.Vars) {
			t.Fatalf("step %d: the previous stored variables changed", step)
		}
		// The store keeps got; the map it replaced is recycled.
		if in.stored != nil {
			spare = in.stored.Vars
		}
		in.stored = &Snapshot{Vars: got}
		storedCopy = deepCopy(got).(map[string]any)
	}
	if skipped == 0 {
		t.Fatal("no checkpoint came out canonical without the store: the test tests nothing")
	}
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	case map[string]any:
		out := maps.Clone(t)
		for k, e := range out {
			out[k] = deepCopy(e)
		}
		return out
	}
	return v
}
