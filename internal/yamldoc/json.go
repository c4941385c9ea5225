package yamldoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// LooksLikeJSON reports whether data starts like a JSON object or array.
func LooksLikeJSON(data []byte) bool {
	data = bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(data) > 0 && (data[0] == '{' || data[0] == '[')
}

// JSONErrorLine returns the line at which data stops being strict JSON, or 0 if it is
// valid JSON. A leading byte order mark is allowed.
func JSONErrorLine(data []byte) int {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if json.Valid(data) {
		return 0
	}
	var raw json.RawMessage
	var serr *json.SyntaxError
	if err := json.Unmarshal(data, &raw); errors.As(err, &serr) {
		// Offset counts the byte JSON rejected.
		return LineAt(data, int(serr.Offset)-1)
	}
	return 0
}

// DecodeJSON builds the same node tree yaml.v3 would, with lines, using encoding/json.
// Strings come back double-quoted, numbers as !!int or !!float by their text; nesting
// deeper than yaml.v3 allows (plus the few levels a graph document needs) is an error
// rather than a stack overflow. ErrorLine locates any error it returns.
func DecodeJSON(data []byte) (*yaml.Node, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var newlines []int
	for i, c := range data {
		if c == '\n' {
			newlines = append(newlines, i)
		}
	}
	// Tokens end at InputOffset; JSON tokens never span lines.
	line := func() int {
		n, _ := slices.BinarySearch(newlines, int(dec.InputOffset())-1)
		return n + 1
	}
	var build func(tok json.Token, depth int) (*yaml.Node, error)
	build = func(tok json.Token, depth int) (*yaml.Node, error) {
		n := &yaml.Node{Kind: yaml.ScalarNode, Line: line()}
		switch t := tok.(type) {
		case json.Delim:
			if depth > maxJSONDepth {
				return nil, &jsonDepthError{offset: dec.InputOffset()}
			}
			end := json.Delim(']')
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
			if t == '{' {
				end, n.Kind, n.Tag = '}', yaml.MappingNode, "!!map"
			}
			for {
				tok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				if tok == end {
					return n, nil
				}
				child, err := build(tok, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, child)
			}
		case string:
			n.Tag, n.Value, n.Style = "!!str", t, yaml.DoubleQuotedStyle
		case json.Number:
			n.Tag, n.Value = "!!float", t.String()
			if !strings.ContainsAny(n.Value, ".eE") {
				n.Tag = "!!int"
			}
		case bool:
			n.Tag, n.Value = "!!bool", strconv.FormatBool(t)
		default:
			n.Tag, n.Value = "!!null", "null"
		}
		return n, nil
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	root, err := build(tok, 1)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &json.SyntaxError{Offset: dec.InputOffset()}
	}
	return root, nil
}

// maxJSONDepth bounds the nesting DecodeJSON follows, as yaml.v3 bounds its own at 10000
// flow levels, so that no document exhausts the stack. It allows five levels more: the
// ones a JSON document needs above a link's meta (document, layout, node, link list,
// link) that YAML may write in block style, so the JSON form of any graph the YAML
// reader loads reads back.
const maxJSONDepth = 10000 + 5

// jsonDepthError reports a JSON document nested deeper than maxJSONDepth.
type jsonDepthError struct{ offset int64 }

func (e *jsonDepthError) Error() string {
	return fmt.Sprintf("nested more than %d levels deep", maxJSONDepth)
}
