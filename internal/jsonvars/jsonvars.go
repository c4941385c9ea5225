// Package jsonvars decodes the JSON a user gives a run as variables (a --vars file, a
// --set value, an MCP tool call's arguments) with the numbers the YAML reader and the
// expression engine produce: an integer literal is an int, any other number a
// float64, and a number no variable can hold is an error, not a value of another type.
//
//	vars, err := jsonvars.Object([]byte(`{"day": 5, "rate": 2.5}`))
//	// vars["day"] is the int 5, vars["rate"] the float64 2.5
//
// # Errors
//
// An *Error says where the input is wrong, as a byte offset a caller turns into a
// line, and, for a number out of range in an object, which variable holds it.
//
// # Other number rules
//
// AnyUnmarshalers reads untyped values with another rule for numbers: package session
// reads a snapshot's variables with it, its integers int64. Unmarshal reads as
// encoding/json does with those numbers: package flow reads a frontier's loop items
// and an error record's fallback with it.
package jsonvars

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// ErrRange is the cause of an *Error for a number beyond float64 (1e999), or for an
// integer literal beyond int64, which as a float64 would silently lose its last
// digits (an id changed).
var ErrRange = errors.New("number out of range")

// Error is a failure to decode: where it is and what is wrong.
type Error struct {
	Offset int64  // the byte offset in the input of the value or character at fault
	Var    string // with Object and a number out of range: the variable holding it
	Err    error  // ErrRange, the syntax error, or with Object what the input is instead
}

// Error returns the cause, after the variable's name when there is one.
func (e *Error) Error() string {
	if e.Var != "" {
		return fmt.Sprintf("variable %q: %v", e.Var, e.Err)
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// options read as encoding/json does (a repeated member's last value wins, invalid
// UTF-8 becomes U+FFFD), except for numbers.
var options = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	json.WithUnmarshalers(AnyUnmarshalers(number)),
)

// Value decodes data, exactly one JSON value. An integer literal that fits an int is
// an int (one that fits only an int64, on a 32-bit platform, an int64), any other
// number a float64; a number beyond float64, or an integer literal beyond int64, is an
// *Error for ErrRange. Objects are map[string]any and arrays []any.
func Value(data []byte) (any, error) {
	var v any
	if err := json.Unmarshal(data, &v, options); err != nil {
		return nil, located(err, false)
	}
	return v, nil
}

// Object decodes data, a JSON object of variables, with the numbers of Value. Any other
// value, null included, is an *Error.
func Object(data []byte) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m, options); err != nil {
		return nil, ObjectError(err)
	}
	if m == nil {
		at := int64(len(data) - len(bytes.TrimLeft(data, " \t\r\n")))
		return nil, &Error{Offset: at, Err: errors.New("want a JSON object of variables, got null")}
	}
	return m, nil
}

// ObjectError returns err, an error of github.com/go-json-experiment/json decoding a
// JSON object of variables (with AnyUnmarshalers, for any number rule), as Object
// returns it: an *Error with the offset, the variable holding a value the rule
// refused, and the cause without the library's wording. Other errors are returned as
// they are.
func ObjectError(err error) error { return located(err, true) }

// located returns err, an error of the library, as an *Error. In an object of
// variables, the first token of a value's JSON pointer is its variable; a value with
// no pointer is the input itself, of another kind than an object.
func located(err error, object bool) error {
	var se *jsontext.SyntacticError
	var me *json.SemanticError
	switch {
	case errors.As(err, &se):
		return &Error{Offset: se.ByteOffset, Err: se.Err}
	case !errors.As(err, &me):
		return err
	case object && me.JSONPointer == "":
		kind := map[jsontext.Kind]string{'[': "array", '"': "string", 't': "boolean", 'f': "boolean"}[me.JSONKind]
		return &Error{Offset: me.ByteOffset, Err: fmt.Errorf("want a JSON object of variables, got a JSON %s", cmp.Or(kind, "number"))}
	case me.Err == nil:
		return err // a mismatch only a typed target has: the library's words are the best
	}
	e := &Error{Offset: me.ByteOffset, Err: me.Err}
	if object {
		for name := range me.JSONPointer.Tokens() {
			e.Var = name
			break
		}
	}
	return e
}

// v1Options read as encoding/json does, but with int64Number's numbers.
var v1Options = json.JoinOptions(jsonv1.DefaultOptionsV1(), json.WithUnmarshalers(AnyUnmarshalers(int64Number)))

// Unmarshal decodes data into v as encoding/json's Unmarshal does, except for the
// numbers it puts in untyped values (any, and the maps and slices of any they hold): an
// integer literal that fits an int64 is an int64, any other number a float64, as
// package session reads a snapshot's; a number beyond float64 is an error for
// ErrRange. So an integer read back is an integer, and one beyond float64's precision
// keeps its value.
func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v, v1Options) }

// int64Number converts a JSON number literal with Unmarshal's rule.
func int64Number(raw []byte) (any, error) {
	if !bytes.ContainsAny(raw, ".eE") {
		if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return nil, ErrRange
	}
	return f, nil
}

// number converts a JSON number literal (its syntax checked by the library).
func number(raw []byte) (any, error) {
	if !bytes.ContainsAny(raw, ".eE") {
		i, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, ErrRange
		}
		if int64(int(i)) == i {
			return int(i), nil
		}
		return i, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return nil, ErrRange
	}
	return f, nil
}

// AnyUnmarshalers reads untyped values (any) with number for their numbers, given a
// number's literal: objects become map[string]any and arrays []any of such values;
// strings, booleans and null are read as the library reads them.
func AnyUnmarshalers(number func(raw []byte) (any, error)) *json.Unmarshalers {
	return json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
		switch dec.PeekKind() {
		case '0':
			raw, err := dec.ReadValue()
			if err == nil {
				*v, err = number(raw)
			}
			return err
		case '{':
			m := map[string]any{}
			err := json.UnmarshalDecode(dec, &m)
			*v = m
			return err
		case '[':
			a := []any{}
			err := json.UnmarshalDecode(dec, &a)
			*v = a
			return err
		}
		return errors.ErrUnsupported // the library's way
	})
}
