package export

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
)

// maxMetaDepth bounds the nesting of meta values, so that a value set in code that
// refers to itself is an error rather than endless. It is the reader's own limit (the
// YAML parser's 10000 levels, and five more for JSON documents): whatever the reader
// loads can be written.
const maxMetaDepth = 10000 + 5

// normalize converts a meta value to a document value: maps with string keys become an
// omap sorted by key (so output is deterministic), slices and arrays become []any,
// numbers become int or float64. What the reader produces passes unchanged; values set
// in Go code (a []string, an int64, a struct) are converted to the form the reader
// would give back. Anything without a textual form is an error naming its path.
func normalize(v any, depth int) (any, error) {
	if depth > maxMetaDepth {
		return nil, &pathError{msg: "is nested too deeply (or refers to itself)"}
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string, bool, int:
		return v, nil
	case float64:
		return v, nil
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 0); err == nil {
			return int(i), nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, &pathError{msg: fmt.Sprintf("is not a number: %q", string(v))}
		}
		return f, nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		m := make(omap, 0, len(v))
		for _, k := range keys {
			x, err := normalize(v[k], depth+1)
			if err != nil {
				return nil, prefix(err, k)
			}
			m = append(m, field{k, x})
		}
		return m, nil
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			x, err := normalize(item, depth+1)
			if err != nil {
				return nil, prefix(err, strconv.Itoa(i))
			}
			out[i] = x
		}
		return out, nil
	case encoding.TextMarshaler:
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
			return nil, nil
		}
		text, err := v.MarshalText()
		if err != nil {
			return nil, &pathError{msg: fmt.Sprintf("%T cannot be written: %v", v, err)}
		}
		return string(text), nil
	}
	return normalizeReflect(reflect.ValueOf(v), depth)
}

func normalizeReflect(rv reflect.Value, depth int) (any, error) {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return int(u), nil
		}
		// Beyond int64 the reader keeps the magnitude as a float, as JSON would.
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		return normalize(rv.Elem().Interface(), depth+1)
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[it.Key().String()] = it.Value().Interface()
		}
		return normalize(m, depth)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil, nil
		}
		list := make([]any, rv.Len())
		for i := range list {
			list[i] = rv.Index(i).Interface()
		}
		return normalize(list, depth)
	case reflect.Struct:
		// A struct is written as the JSON object encoding/json makes of it.
		data, err := json.Marshal(rv.Interface())
		if err != nil {
			return nil, &pathError{msg: fmt.Sprintf("%s cannot be written: %v", rv.Type(), err)}
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			return nil, &pathError{msg: fmt.Sprintf("%s cannot be written: %v", rv.Type(), err)}
		}
		return normalize(x, depth+1)
	}
	return nil, &pathError{msg: fmt.Sprintf("%s has no textual form", rv.Type())}
}

// prefix adds key, the key of the value err is about, to err's path. It extends the
// error in place: each pathError is made for one problem and travels up alone.
func prefix(err error, key string) error {
	if pe, ok := err.(*pathError); ok {
		pe.rev = append(pe.rev, key)
	}
	return err
}

// formatFloat writes f so that both readers see a float again: an integral value keeps
// a ".0" (1.0 would otherwise read back as the integer 1).
func formatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'n' || c == 'I' {
			return s
		}
	}
	return s + ".0"
}
