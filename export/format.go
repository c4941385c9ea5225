// Package export writes graphs out and checks them before production.
//
// The writers turn a *flow.Graph into a definition document in the Solon "layout" schema
// (YAML or JSON, exactly what flow.ParseDefinition reads back, with every attribute and
// link priority kept) or into a diagram (PlantUML state diagram, Mermaid flowchart,
// Graphviz DOT). Every writer is deterministic: the same graph gives the same bytes.
//
// ValidateSpecs runs the production checklist over a set of specifications, including
// ones that do not build, and reports findings with stable codes and file positions.
// Validate runs it on one built graph, and ValidateFiles on definition files read as
// one set (what "flowteam validate" prints). The checklist reasons about conditions
// only as far as their text shows: an empty when and the literal true always hold (so
// an exclusive gateway never looks past a true link, and the links after it are
// reported as unreachable), the literal false never holds (the link is reported as
// never taken, and the checks that follow a run's way, such as cycle exits, leave it
// out); any other condition may or may not hold.
//
// Conditions are read in a normal form: with the default evaluator, expr's syntax
// tree, so that spaces, redundant parentheses, trailing semicolons and a string's
// quotes do not count ("a>1" and "(a > 1)", `x == "y"` and "x=='y'", "true" and
// "(true)" are one condition each), but other ways to write an equivalent expression
// do ("a > 1" and "1 < a" differ). Conditions that do not parse ("@name", a syntax
// error), and every condition with another evaluator (whose language need not be
// expr's), are read as text, spaces around it aside. Each condition is parsed once per
// validation. Two conditions are the same when their normal forms are, or both always
// hold. Two links from one node to one target with the same condition are a warning
// (link.duplicate), not an error, because the graph runs, though not as meant: a
// parallel gateway starts two branches doing the same work, an inclusive gateway or an
// activity runs the target twice, and an exclusive gateway never takes the second link
// (nor a later link to another node with the same condition:
// exclusive.unreachable-link). The checks that follow a run's way (cycle exits, the
// branches of a split, calls that always run) leave out every link an exclusive
// gateway never takes, whether after a true link or after the same condition: a cycle
// whose only way out is such a link is a cycle.no-exit.
//
// The reader lives in package flow (an engine must load files, and flow cannot import
// export).
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
