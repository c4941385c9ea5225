package team

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Schema is the JSON-schema subset flowteam tools describe their arguments with. It
// marshals to standard JSON Schema, which is what a model is shown, and Validate checks
// a value against it before a tool runs.
//
// The subset: type (object, array, string, number, integer, boolean, null; empty means
// any), properties, required, additionalProperties (false forbids unknown properties),
// enum (compared as JSON values), items, and description (not checked). Keywords
// outside the subset (patterns, lengths, formats, combinators, $ref) are not supported:
// put such rules in the tool's code, which must validate what it cannot express here.
type Schema struct {
	Type        string             `json:"type,omitempty"`
	Description string             `json:"description,omitempty"`
	Properties  map[string]*Schema `json:"properties,omitempty"`
	Required    []string           `json:"required,omitempty"`
	// AdditionalProperties set to false rejects properties not listed in Properties.
	AdditionalProperties *bool   `json:"additionalProperties,omitempty"`
	Enum                 []any   `json:"enum,omitempty"`
	Items                *Schema `json:"items,omitempty"`
}

// Object returns an object schema with the given properties, all listed in required
// unless their name ends with "?" (which is removed). Unknown properties are rejected.
func Object(props map[string]*Schema) *Schema {
	s := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: new(bool)}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p := props[name]
		if opt, ok := strings.CutSuffix(name, "?"); ok {
			s.Properties[opt] = p
			continue
		}
		s.Properties[name] = p
		s.Required = append(s.Required, name)
	}
	return s
}

// String returns a string schema with a description.
func String(desc string) *Schema { return &Schema{Type: "string", Description: desc} }

// Integer returns an integer schema with a description.
func Integer(desc string) *Schema { return &Schema{Type: "integer", Description: desc} }

// Number returns a number schema with a description.
func Number(desc string) *Schema { return &Schema{Type: "number", Description: desc} }

// Boolean returns a boolean schema with a description.
func Boolean(desc string) *Schema { return &Schema{Type: "boolean", Description: desc} }

// Array returns an array schema whose items follow items.
func Array(desc string, items *Schema) *Schema {
	return &Schema{Type: "array", Description: desc, Items: items}
}

// Enum returns a string schema that accepts only the given values.
func Enum(desc string, values ...string) *Schema {
	s := &Schema{Type: "string", Description: desc}
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}

// ValidationError lists every way a value does not match a schema, each as
// "path: problem" with a JSON-pointer-like path ("/items/2/qty").
type ValidationError struct {
	Problems []string
}

// Error lists every problem, separated by "; ".
func (e *ValidationError) Error() string {
	return "arguments do not match the schema: " + strings.Join(e.Problems, "; ")
}

// ValidateJSON parses data and validates it. Empty data counts as an empty object for
// an object schema (models often send "" for a call without arguments).
func (s *Schema) ValidateJSON(data []byte) error {
	if s == nil {
		return nil
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		if s.Type == "object" {
			data = []byte("{}")
		} else {
			return &ValidationError{Problems: []string{"/: no value"}}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &ValidationError{Problems: []string{"/: not JSON: " + err.Error()}}
	}
	if dec.More() {
		return &ValidationError{Problems: []string{"/: data after the JSON value"}}
	}
	return s.Validate(v)
}

// Validate checks a decoded JSON value (nil, bool, json.Number or float64, string,
// []any, map[string]any) against the schema.
func (s *Schema) Validate(v any) error {
	var probs []string
	s.check(v, "", &probs)
	if len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	return nil
}

func (s *Schema) check(v any, path string, probs *[]string) {
	if s == nil {
		return
	}
	at := path
	if at == "" {
		at = "/"
	}
	add := func(format string, args ...any) { *probs = append(*probs, at+": "+fmt.Sprintf(format, args...)) }
	if s.Type != "" && !hasType(v, s.Type) {
		add("want %s, got %s", s.Type, jsonType(v))
		return
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonEqual(e, v) }) {
		add("%s is not one of %s", compact(v), compact(s.Enum))
	}
	switch t := v.(type) {
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := t[r]; !ok {
				add("missing required property %q", r)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			ps, ok := s.Properties[k]
			if !ok {
				if s.AdditionalProperties != nil && !*s.AdditionalProperties {
					add("unknown property %q", k)
				}
				continue
			}
			ps.check(t[k], path+"/"+k, probs)
		}
	case []any:
		for i, e := range t {
			s.Items.check(e, path+"/"+strconv.Itoa(i), probs)
		}
	}
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := number(v)
		return ok
	case "integer":
		f, ok := number(v)
		return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
	}
	return false // an unsupported type name never matches, so the mistake shows
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	if f, ok := number(v); ok {
		if f == math.Trunc(f) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// jsonEqual compares two values as JSON does: numbers by value, whatever their Go type.
func jsonEqual(a, b any) bool {
	fa, oka := number(a)
	fb, okb := number(b)
	if oka || okb {
		return oka && okb && fa == fb
	}
	return reflect.DeepEqual(normalizeJSON(a), normalizeJSON(b))
}

func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
