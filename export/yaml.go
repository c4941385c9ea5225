package export

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/flowteam/flowteam/flow"
	"gopkg.in/yaml.v3"
)

// YAML writes g as a YAML definition document in the Solon "layout" schema, which
// flow.ParseDefinition reads back to the same spec: ids, types, titles, when, task,
// meta, and links with their titles, conditions, meta and priorities, in definition
// order. A node whose task is a graph used as a task (flow.Call) is written as "#id";
// one whose task is another Go component is written as "@name" when a WithTaskNamer
// resolver names it, and is otherwise an error wrapping ErrNoTextualForm. Strings are
// quoted wherever YAML 1.2 or YAML 1.1 (Solon's parser) would read them as something
// else: "true" and "1" as in any YAML, and "yes", "off" or the loop stepper "1:10:2" too.
func YAML(g *flow.Graph, opts ...WriteOption) ([]byte, error) {
	doc, err := document(g, newWriteConfig(opts))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(yamlNode(doc, 0)); err != nil {
		return nil, fmt.Errorf("graph %q: write yaml: %w", g.ID, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("graph %q: write yaml: %w", g.ID, err)
	}
	return buf.Bytes(), nil
}

// flowDepth is the nesting below which collections are written in flow style: block
// style indents every level, so deeply nested meta would grow with the square of its
// depth.
const flowDepth = 12

// yamlNode converts a document value at the given nesting depth. Scalars carry their
// tag, so the encoder quotes a string that would otherwise read as something else
// ("true", "1", "null", "<<").
func yamlNode(v any, depth int) *yaml.Node {
	switch v := v.(type) {
	case omap:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if len(v) == 0 || depth >= flowDepth {
			n.Style = yaml.FlowStyle
		}
		for _, f := range v {
			n.Content = append(n.Content, stringNode(f.key), yamlNode(f.val, depth+1))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if flowList(v) || depth >= flowDepth {
			n.Style = yaml.FlowStyle
		}
		for _, item := range v {
			n.Content = append(n.Content, yamlNode(item, depth+1))
		}
		return n
	case string:
		return stringNode(v)
	case int:
		return scalar("!!int", strconv.Itoa(v))
	case float64:
		switch {
		case math.IsNaN(v):
			return scalar("!!float", ".nan")
		case math.IsInf(v, 1):
			return scalar("!!float", ".inf")
		case math.IsInf(v, -1):
			return scalar("!!float", "-.inf")
		}
		return scalar("!!float", formatFloat(v))
	case bool:
		return scalar("!!bool", strconv.FormatBool(v))
	}
	return scalar("!!null", "null")
}

// stringNode is a string scalar. The encoder picks the style, except where its choice
// would not read back: "<<" unquoted is a merge key; a literal block would turn "\r\n"
// into "\n" and other line breaks (NEL, LS, PS) into whatever the parser makes of them,
// and yaml.v3 drops the leading empty lines of a literal block and cannot read one
// whose first line starts with a tab. Double quotes escape all of these.
//
// It also quotes what a YAML 1.1 parser, as Solon's (SnakeYAML) is, resolves to
// something else than the string (yaml11Typed): yaml.v3 writes YAML 1.2 and leaves
// those plain.
func stringNode(s string) *yaml.Node {
	n := scalar("!!str", s)
	if s == "<<" || strings.HasPrefix(s, "\n") || strings.HasPrefix(s, "\t") || strings.Contains(s, "\n\t") ||
		strings.ContainsAny(s, "\r\u0085\u2028\u2029") || yaml11Typed(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// yaml11Typed reports whether a plain scalar s reads as a boolean, a sexagesimal
// number or the value key "=" in YAML 1.1, though as a string in YAML 1.2: "yes",
// "off", "Y", and "1:10:2", a loop stepper, which is the integer 4202 there.
func yaml11Typed(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
		"on", "On", "ON", "off", "Off", "OFF", "=":
		return true
	}
	return sexagesimal(s)
}

// sexagesimal reports whether s is a YAML 1.1 base-60 integer
// ([-+]?[1-9][0-9_]*(:[0-5]?[0-9])+) or float ([-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*).
func sexagesimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	head, rest, ok := strings.Cut(s, ":")
	if !ok || head == "" || head[0] < '0' || head[0] > '9' || strings.Trim(head, "0123456789_") != "" {
		return false
	}
	rest, frac, float := strings.Cut(rest, ".")
	if float && strings.Trim(frac, "0123456789_") != "" {
		return false
	}
	if !float && head[0] == '0' {
		return false
	}
	for part := range strings.SplitSeq(rest, ":") {
		switch {
		case len(part) == 1 && part[0] >= '0' && part[0] <= '9':
		case len(part) == 2 && part[0] >= '0' && part[0] <= '5' && part[1] >= '0' && part[1] <= '9':
		default:
			return false
		}
	}
	return true
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

// flowList reports whether a list reads best on one line: empty, or a few short
// scalars ("$in: [a, b, c]").
func flowList(list []any) bool {
	if len(list) > 8 {
		return false
	}
	width := 0
	for _, item := range list {
		switch item := item.(type) {
		case string:
			for _, c := range item {
				if c < ' ' || c == 0x7f {
					return false
				}
			}
			width += len(item)
		case int, float64, bool, nil:
			width += 6
		default:
			return false
		}
	}
	return width <= 60
}
