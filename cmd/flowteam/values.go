package main

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/internal/jsonvars"
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
	v, err := jsonvars.Value([]byte(s))
	if errors.Is(err, jsonvars.ErrRange) {
		return nil, jsonvars.ErrRange
	}
	if err != nil {
		return s, nil // not JSON, or trailing data: "5 apples"
	}
	return v, nil
}

// utf8BOM is the byte order mark some editors (Windows ones) write at the start of a
// UTF-8 file.
const utf8BOM = "\xef\xbb\xbf"

// decodeVars reads a JSON object of variables, after a leading UTF-8 byte order mark
// if there is one (Windows editors write it; JSON decoders reject it). Errors name the
// file and line.
func decodeVars(file string, data []byte) (map[string]any, error) {
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s:1: empty file: want a JSON object of variables", file)
	}
	m, err := jsonvars.Object(data)
	if e, ok := errors.AsType[*jsonvars.Error](err); ok {
		return nil, fmt.Errorf("%s:%d: %w", file, lineOf(data, e.Offset), err)
	}
	return m, err
}

// lineOf returns the 1-based line of byte offset off in data.
func lineOf(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}
