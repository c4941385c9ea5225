package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// checkReserved refuses a variable the engine writes itself (flow.DefaultErrorKey,
// flow.KeyBranchFailures): set from the command line, a run would start with, or a
// resume continue from, failures that never happened, or lose those that did.
func checkReserved(key string) error {
	what := ""
	switch key {
	case flow.DefaultErrorKey:
		what = "the run's execution errors"
	case flow.KeyBranchFailures:
		what = "the failures of parallel branches"
	default:
		return nil
	}
	return fmt.Errorf("variable %q is reserved: the engine keeps %s there", key, what)
}

// parseValue reads a --set value: JSON when s is exactly one valid JSON value, else the
// string itself. So 5 is a number, "5" (with the quotes reaching the program) is a
// string, abc is a string, and [1,2] is a list. A JSON value holding a number beyond
// float64 (1e999), or an integer beyond int64 (which as a float64 would lose its last
// digits: an id silently changed), is an error, as it is in a --vars file: the user
// meant a number, and the string "1e999" would compare wrongly with every number of
// the run. Quoted, such a value is a string.
func parseValue(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return s, nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return s, nil // trailing data: "5 apples"
	}
	v, ok := normalizeJSON(v)
	if !ok {
		return nil, errors.New("number out of range")
	}
	return v, nil
}

// utf8BOM is the byte order mark some editors (Windows ones) write at the start of a
// UTF-8 file.
const utf8BOM = "\xef\xbb\xbf"

// decodeVars reads a JSON object of variables, after a leading UTF-8 byte order mark
// if there is one (Windows editors write it; encoding/json rejects it). Errors name the
// file and line.
func decodeVars(file string, data []byte) (map[string]any, error) {
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	err := dec.Decode(&m)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = fmt.Errorf("data after the JSON object")
		}
	}
	if err != nil {
		line := lineOf(data, dec.InputOffset())
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line = lineOf(data, se.Offset-1) // Offset counts the offending byte
		case errors.As(err, &te):
			line = lineOf(data, te.Offset)
			err = fmt.Errorf("want a JSON object of variables, got a JSON %s", te.Value)
		case errors.Is(err, io.EOF):
			err = errors.New("empty file: want a JSON object of variables")
		}
		return nil, fmt.Errorf("%s:%d: %w", file, line, err)
	}
	if m == nil { // the file holds null
		return nil, fmt.Errorf("%s:1: want a JSON object of variables, got null", file)
	}
	for k, v := range m {
		nv, ok := normalizeJSON(v)
		if !ok {
			k, line := outOfRange(data)
			return nil, fmt.Errorf("%s:%d: variable %q: number out of range", file, line, k)
		}
		m[k] = nv
	}
	return m, nil
}

// normalizeJSON converts the json.Number values inside v: an integral number that fits
// an int becomes an int (as the YAML reader and the expression engine produce), any
// other number a float64. ok is false when a number is out of float64 range.
func normalizeJSON(v any) (any, bool) {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil && int64(int(i)) == i {
			return int(i), true
		}
		if !strings.ContainsAny(string(t), ".eE") {
			return nil, false // an integer beyond int64: as a float64 it would lose digits
		}
		f, err := t.Float64()
		if err != nil || math.IsInf(f, 0) {
			return nil, false
		}
		return f, true
	case map[string]any:
		for k, e := range t {
			nv, ok := normalizeJSON(e)
			if !ok {
				return nil, false
			}
			t[k] = nv
		}
	case []any:
		for i, e := range t {
			nv, ok := normalizeJSON(e)
			if !ok {
				return nil, false
			}
			t[i] = nv
		}
	}
	return v, true
}

// outOfRange names the first variable of the JSON object in data that holds a number
// beyond float64, and the line of that number: the first in the file, where ranging
// over the decoded map would name any of them.
func outOfRange(data []byte) (key string, line int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // the object's '{'
		return "", 1
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", 1
		}
		key, _ = tok.(string)
		// The value: one token, or tokens up to the delimiter that closes it.
		for depth := 0; ; {
			tok, err := dec.Token()
			if err != nil {
				return "", 1
			}
			switch t := tok.(type) {
			case json.Delim:
				if t == '{' || t == '[' {
					depth++
				} else {
					depth--
				}
			case json.Number:
				if _, ok := normalizeJSON(t); !ok {
					return key, lineOf(data, dec.InputOffset()) // the offset just past the number
				}
			}
			if depth == 0 {
				break
			}
		}
	}
	return "", 1
}

// lineOf returns the 1-based line of byte offset off in data.
func lineOf(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}
