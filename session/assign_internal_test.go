package session

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/flowteam/flowteam/flow"
)

// TestAssignCopiesEveryField holds the conditional assignments (assign, assignFrontier) to a plain one: after
// assign, every field of the destination is the source's (the same map, slice or
// pointer; an equal string or time), whatever the destination held before, with a
// field added to the types caught by filling every field by reflection.
func TestAssignCopiesEveryField(t *testing.T) {
	check := func(t *testing.T, typ reflect.Type, assign func(d, s any)) {
		for _, before := range []string{"zero", "other", "same contents"} {
			t.Run(before, func(t *testing.T) {
				src := reflect.New(typ)
				fillSeed(src.Elem(), 1)
				dst := reflect.New(typ)
				switch before {
				case "other":
					fillSeed(dst.Elem(), 2)
				case "same contents":
					fillSeed(dst.Elem(), 1)
				}
				assign(dst.Interface(), src.Interface())
				same(t, typ.Name(), dst.Elem(), src.Elem())
				empty := reflect.New(typ) // and back to zero values
				assign(dst.Interface(), empty.Interface())
				same(t, typ.Name(), dst.Elem(), empty.Elem())
			})
		}
	}
	t.Run("Snapshot", func(t *testing.T) {
		check(t, reflect.TypeFor[Snapshot](), func(d, s any) { d.(*Snapshot).assign(s.(*Snapshot)) })
	})
	t.Run("FrontierState", func(t *testing.T) {
		check(t, reflect.TypeFor[flow.FrontierState](), func(d, s any) {
			assignFrontier(d.(*flow.FrontierState), s.(*flow.FrontierState))
		})
	})
}

// fillSeed sets every field of v, recursively, to a value that depends on seed.
func fillSeed(v reflect.Value, seed int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d", v.Type().Name(), seed))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(seed))
	case reflect.Bool:
		v.SetBool(seed%2 == 1)
	case reflect.Uint8:
		v.SetUint(uint64(seed))
	case reflect.Interface:
		v.Set(reflect.ValueOf(fmt.Sprint(seed)))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillSeed(v.Elem(), seed)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillSeed(v.Index(0), seed)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillSeed(k, seed)
		fillSeed(e, seed)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(int64(seed), 0).In(time.FixedZone("z", seed))))
			return
		}
		for i := range v.NumField() {
			fillSeed(v.Field(i), seed)
		}
	default:
		panic("fillSeed: kind " + v.Kind().String())
	}
}

// same fails unless got is want: maps, slices and pointers the same ones, the rest
// equal.
func same(t *testing.T, path string, got, want reflect.Value) {
	t.Helper()
	switch got.Kind() {
	case reflect.Map, reflect.Pointer:
		if got.Pointer() != want.Pointer() {
			t.Errorf("%s: not the same %s", path, got.Kind())
		}
	case reflect.Slice:
		if got.Pointer() != want.Pointer() || got.Len() != want.Len() || got.Cap() != want.Cap() || got.IsNil() != want.IsNil() {
			t.Errorf("%s: not the same slice", path)
		}
	case reflect.Struct:
		if got.Type().Comparable() && got.Type().PkgPath() == "time" {
			if got.Interface() != want.Interface() {
				t.Errorf("%s: %v, want %v", path, got, want)
			}
			return
		}
		for i := range got.NumField() {
			same(t, path+"."+got.Type().Field(i).Name, got.Field(i), want.Field(i))
		}
	default:
		if !got.Equal(want) {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
}
