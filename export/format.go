package export

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// Format is an output format of Write.
type Format string

// Output formats.
const (
	FormatYAML     Format = "yaml"
	FormatJSON     Format = "json"
	FormatPlantUML Format = "plantuml"
	FormatMermaid  Format = "mermaid"
	FormatDOT      Format = "dot"
)

// Formats returns every format Write knows, in a stable order.
func Formats() []Format {
	return []Format{FormatYAML, FormatJSON, FormatPlantUML, FormatMermaid, FormatDOT}
}

// ParseFormat maps a format name to a Format. Matching ignores case; "yml", "puml",
// "mmd" and "graphviz"/"gv" are accepted as aliases.
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "yaml", "yml":
		return FormatYAML, nil
	case "json":
		return FormatJSON, nil
	case "plantuml", "puml":
		return FormatPlantUML, nil
	case "mermaid", "mmd":
		return FormatMermaid, nil
	case "dot", "graphviz", "gv":
		return FormatDOT, nil
	}
	return "", fmt.Errorf("unknown export format %q (want yaml, json, plantuml, mermaid or dot)", name)
}

// ErrNoTextualForm is returned (wrapped, naming the node) when a graph is written as a
// definition document and a node's task is a Go component that no WithTaskNamer
// resolver names.
var ErrNoTextualForm = errors.New("task is a Go component with no textual form")

// WriteOption configures a writer.
type WriteOption func(*writeConfig)

type writeConfig struct {
	namer func(n *flow.Node) (string, bool)
	json  bool // writing JSON: NaN and infinities are errors
	style DOTStyle
}

// WithTaskNamer supplies the registered name of Go task components (NodeSpec.Component),
// so documents can refer to them as "@name" and diagrams can show the name. namer gets
// the node (its Component set) and returns the name, with or without the leading "@",
// and whether it knows one.
func WithTaskNamer(namer func(n *flow.Node) (name string, ok bool)) WriteOption {
	return func(c *writeConfig) { c.namer = namer }
}

func newWriteConfig(opts []WriteOption) *writeConfig {
	c := &writeConfig{}
	for _, o := range opts {
		o(c)
	}
	return c
}

// componentName returns the textual form of a node's Go component: "#id" for a graph
// used as a task (flow.Call runs it exactly like that reference), else "@name" if the
// namer knows it.
func (c *writeConfig) componentName(n *flow.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	if g, ok := flow.CalledGraph(n.Component); ok && g != nil {
		return "#" + g.ID, true
	}
	if c.namer == nil {
		return "", false
	}
	name, ok := c.namer(n)
	name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "@"))
	if !ok || name == "" {
		return "", false
	}
	return "@" + name, true
}

// Write writes g to w in format f, which may also be any name ParseFormat accepts.
func Write(w io.Writer, g *flow.Graph, f Format, opts ...WriteOption) error {
	var (
		data []byte
		err  error
	)
	switch f {
	case FormatYAML:
		data, err = YAML(g, opts...)
	case FormatJSON:
		data, err = JSON(g, opts...)
	case FormatPlantUML:
		data, err = PlantUML(g, opts...)
	case FormatMermaid:
		data, err = Mermaid(g, opts...)
	case FormatDOT:
		data, err = DOT(g, opts...)
	default:
		// A name ParseFormat accepts ("YAML", "puml") must write its format, not nothing.
		canonical, perr := ParseFormat(string(f))
		if perr != nil {
			return perr
		}
		return Write(w, g, canonical, opts...)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
