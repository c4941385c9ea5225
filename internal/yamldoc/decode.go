package yamldoc

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decode parses one YAML document with yaml.v3 and returns its root (nil when empty).
// A second document in data is an error, as it is to Solon's loader; so is a panic
// inside yaml.v3, which Decode recovers. ErrorLine locates any error it returns.
func Decode(data []byte) (root *yaml.Node, err error) {
	defer func() {
		// yaml.v3 reports errors by panicking internally; a bug there must not take the
		// caller down with it.
		if p := recover(); p != nil {
			root, err = nil, fmt.Errorf("yaml: internal parser error: %v", p)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == io.EOF:
	case err != nil:
		return nil, err
	default:
		return nil, &extraDocError{line: next.Line}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// extraDocError reports a second document in the input: Solon's loader rejects it too.
type extraDocError struct{ line int }

func (e *extraDocError) Error() string {
	return "more than one YAML document (a definition file holds one graph)"
}

// Deref follows aliases to the anchored node. It returns a null scalar for nil and for
// an alias it cannot resolve (unset, or in a chain of more than 100).
func Deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	if n == nil || n.Kind == yaml.AliasNode {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	return n
}

// KindOf names a node's shape for messages: "a list", "a string ("x")".
func KindOf(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.ShortTag() == "!!null":
		return "null"
	}
	kind, ok := map[string]string{"!!str": "a string", "!!int": "an integer", "!!float": "a number", "!!bool": "a boolean"}[n.ShortTag()]
	if !ok {
		kind = "a " + strings.TrimPrefix(n.ShortTag(), "!!") + " value"
	}
	return kind + " (" + strconv.Quote(n.Value) + ")"
}

// Describe quotes a scalar's text, or names the shape of anything else.
func Describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
		return strconv.Quote(n.Value)
	}
	return KindOf(n)
}

// LineEnds returns the offset just after each line break of data, reading "\r\n", "\n"
// and a lone "\r" as one break each, as yaml.v3 counts lines.
func LineEnds(data []byte) []int {
	var ends []int
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '\n':
			ends = append(ends, i+1)
		case data[i] == '\r' && (i+1 == len(data) || data[i+1] != '\n'):
			ends = append(ends, i+1)
		}
	}
	return ends
}

// LineAt returns the 1-based line of byte offset off, counted as LineEnds counts; an
// offset outside data is taken as its nearest end.
func LineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	n, _ := slices.BinarySearch(LineEnds(data), off+1) // the breaks before off
	return n + 1
}
