package jsonvars_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/flowteam/flowteam/internal/jsonvars"
)

func TestValue(t *testing.T) {
	// An integer beyond int but within int64 (on a 32-bit platform) is an int64.
	big, maxInt64 := any(int64(1)<<40), any(int64(math.MaxInt64))
	if strconv.IntSize == 64 {
		big, maxInt64 = 1<<40, math.MaxInt64
	}
	tests := []struct {
		in   string
		want any
	}{
		{"5", 5},
		{"-7", -7},
		{"-0", 0},
		{"1099511627776", big},
		{"9223372036854775807", maxInt64},
		{"5.0", 5.0},
		{"2.5", 2.5},
		{"1e3", 1000.0},
		{"1E3", 1000.0},
		{"1e-400", 0.0}, // underflow: the nearest float64
		{"99999999999999999999.0", 1e20},
		{"true", true},
		{"null", nil},
		{`"5"`, "5"},
		{`"1e999"`, "1e999"},
		{`[1, 2.5, "x"]`, []any{1, 2.5, "x"}},
		{`{"a": {"b": [3]}}`, map[string]any{"a": map[string]any{"b": []any{3}}}},
		{`{"a": 1, "a": 2}`, map[string]any{"a": 2}}, // as encoding/json: the last wins
		{"\"a\xffb\"", "a\ufffdb"},                   // as encoding/json: U+FFFD
	}
	for _, tc := range tests {
		got, err := jsonvars.Value([]byte(tc.in))
		if err != nil || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) {
			t.Errorf("Value(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
}

func TestValueErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int64
		cause  error // nil: a syntax error
	}{
		{"1e999", 0, jsonvars.ErrRange},
		{"-1e999", 0, jsonvars.ErrRange},
		{"12345678901234567890", 0, jsonvars.ErrRange}, // as a float64: 12345678901234567000
		{"-9223372036854775809", 0, jsonvars.ErrRange},
		{`[1, {"a": 1e999}]`, 10, jsonvars.ErrRange},
		{"", 0, nil},
		{"5 apples", 2, nil},
		{"007", 1, nil},
		{"{broken", 1, nil},
	}
	for _, tc := range tests {
		_, err := jsonvars.Value([]byte(tc.in))
		var e *jsonvars.Error
		if !errors.As(err, &e) {
			t.Errorf("Value(%q): %v, want an *Error", tc.in, err)
			continue
		}
		if e.Offset != tc.offset || e.Var != "" || errors.Is(err, jsonvars.ErrRange) != (tc.cause != nil) {
			t.Errorf("Value(%q): %+v (%v), want offset %d and cause %v", tc.in, *e, err, tc.offset, tc.cause)
		}
	}
}

func TestObject(t *testing.T) {
	m, err := jsonvars.Object([]byte(`{"day": 5, "rate": 2.5, "tags": ["a"]}`))
	if err != nil || fmt.Sprint(m) != "map[day:5 rate:2.5 tags:[a]]" {
		t.Fatalf("Object = %v, %v", m, err)
	}
	tests := []struct {
		in     string
		offset int64
		msg    string
	}{
		{"{\n  \"a\": 1,\n  \"limits\": {\"max\": [1e400]},\n  \"also\": -1e999\n}", 33, `variable "limits": number out of range`},
		{`{"id": 12345678901234567890}`, 7, `variable "id": number out of range`},
		{"  [1]", 2, "want a JSON object of variables, got a JSON array"},
		{`"x"`, 0, "want a JSON object of variables, got a JSON string"},
		{"5", 0, "want a JSON object of variables, got a JSON number"},
		{"false", 0, "want a JSON object of variables, got a JSON boolean"},
		{"\n null", 2, "want a JSON object of variables, got null"},
		{"{\"a\": ada}", 6, "invalid character 'a' at start of value"},
		{"{} x", 3, "invalid character 'x' after top-level value"},
	}
	for _, tc := range tests {
		_, err := jsonvars.Object([]byte(tc.in))
		var e *jsonvars.Error
		if !errors.As(err, &e) || e.Offset != tc.offset || err.Error() != tc.msg {
			t.Errorf("Object(%q): %v (%+v), want %q at offset %d", tc.in, err, e, tc.msg, tc.offset)
		}
	}
}

// AnyUnmarshalers applies the number rule it is given at every depth (package
// session's makes integers int64).
func TestAnyUnmarshalers(t *testing.T) {
	opts := json.WithUnmarshalers(jsonvars.AnyUnmarshalers(func(raw []byte) (any, error) {
		if string(raw) == "13" {
			return nil, errors.New("unlucky")
		}
		return "n" + string(raw), nil
	}))
	var v any
	err := json.Unmarshal([]byte(`{"a": [1, {"b": 2.5}], "c": "3", "d": null, "e": true}`), &v, opts)
	want := map[string]any{"a": []any{"n1", map[string]any{"b": "n2.5"}}, "c": "3", "d": nil, "e": true}
	if err != nil || fmt.Sprint(v) != fmt.Sprint(want) {
		t.Errorf("got %v, %v; want %v", v, err, want)
	}
	err = json.Unmarshal([]byte(`{"a": [1, 13]}`), &v, opts)
	var se *json.SemanticError
	if !errors.As(err, &se) || se.JSONPointer != "/a/1" || se.Err.Error() != "unlucky" {
		t.Errorf("got %v, want the rule's error at /a/1", err)
	}
}

func ExampleObject() {
	vars, err := jsonvars.Object([]byte(`{"day": 5, "rate": 2.5, "id": 9007199254740993}`))
	fmt.Printf("%T %T %v %v\n", vars["day"], vars["rate"], vars["id"], err)
	_, err = jsonvars.Object([]byte("{\n  \"amount\": 1e999\n}"))
	fmt.Println(err)
	// Output:
	// int float64 9007199254740993 <nil>
	// variable "amount": number out of range
}

// Unmarshal reads as encoding/json does (a struct's fields by case-insensitive name,
// unknown members ignored), its untyped numbers int64 or float64.
func TestUnmarshal(t *testing.T) {
	var rec struct {
		Name  string
		Items []any
		Meta  map[string]any
	}
	in := `{"name": "n", "items": [3, 9007199254740993, 2.5, 1e3, 99999999999999999999, "x"], "meta": {"n": [1]}, "other": 1}`
	if err := jsonvars.Unmarshal([]byte(in), &rec); err != nil {
		t.Fatal(err)
	}
	want := []any{int64(3), int64(9007199254740993), 2.5, 1000.0, 1e20, "x"}
	if rec.Name != "n" || !reflect.DeepEqual(rec.Items, want) {
		t.Errorf("got %q %#v, want %#v", rec.Name, rec.Items, want)
	}
	if got := rec.Meta["n"]; !reflect.DeepEqual(got, []any{int64(1)}) {
		t.Errorf("meta: got %#v, want an int64 1", got)
	}
	if err := jsonvars.Unmarshal([]byte(`{"items": [1e400]}`), &rec); !errors.Is(err, jsonvars.ErrRange) {
		t.Errorf("1e400: got %v, want ErrRange", err)
	}
}
