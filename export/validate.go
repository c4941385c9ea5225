package export

import (
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// ValidateOption configures ValidateSpecs.
type ValidateOption func(*validateConfig)

type validateConfig struct {
	read       []flow.ReadOption // ValidateFiles' (WithReadOptions)
	eval       flow.Evaluator
	evals      map[string]flow.Evaluator
	tasks      map[string]bool // nil: "@name" tasks are not checked
	conds      map[string]bool // nil: "@name" conditions are not checked
	registered []*flow.Graph
}

// WithReadOptions sets how ValidateFiles reads the files (flow.ParseDefinition):
// WithReadOptions(flow.SolonNodeTypes()) reads node types the engine does not know as
// activities, as Solon does, and warns about them instead of reporting errors.
func WithReadOptions(opts ...flow.ReadOption) ValidateOption {
	return func(c *validateConfig) { c.read = append(c.read, opts...) }
}

// WithEvaluator compiles conditions and scripts with ev instead of the default
// flow.NewExprEvaluator(); pass the evaluator the engine will use.
func WithEvaluator(ev flow.Evaluator) ValidateOption {
	return func(c *validateConfig) { c.eval = ev }
}

// WithTaskNames lists the Go tasks the engine registers; "@name" tasks outside the list
// become task.unknown errors. Without this option "@name" tasks are not checked.
func WithTaskNames(names ...string) ValidateOption {
	return func(c *validateConfig) {
		if c.tasks == nil {
			c.tasks = make(map[string]bool)
		}
		for _, n := range names {
			c.tasks[strings.TrimPrefix(n, "@")] = true
		}
	}
}

// WithConditionNames lists the Go conditions the engine registers; "@name" conditions
// outside the list become condition.unknown errors. Without this option they are not
// checked.
func WithConditionNames(names ...string) ValidateOption {
	return func(c *validateConfig) {
		if c.conds == nil {
			c.conds = make(map[string]bool)
		}
		for _, n := range names {
			c.conds[strings.TrimPrefix(n, "@")] = true
		}
	}
}

// WithRegistered adds the graphs an engine already holds (flow.Engine.Graphs()): a
// validated graph may not reuse their ids (unless it is the same file), and "#id"
// references may call them.
func WithRegistered(gs ...*flow.Graph) ValidateOption {
	return func(c *validateConfig) { c.registered = append(c.registered, gs...) }
}

// Validate runs the production checklist on one built graph; see ValidateSpecs.
func Validate(g *flow.Graph, opts ...ValidateOption) []Finding {
	spec := g.Spec()
	return ValidateSpecs([]*flow.GraphSpec{spec}, opts...)
}

// ValidateSpecs runs the production checklist on a set of graph specifications that
// are meant to be registered together, and returns its findings sorted by file and
// line (nil when there is nothing to report). Specs need not build: a spec with a
// dangling link or a duplicate node id is reported and still checked as far as
// possible. The codes are the Code constants; a finding's position is the node's, the
// link's, or the document's first line for findings about a whole graph.
//
// Errors:
//   - graph ids missing or not unique in the set (or the registry, see WithRegistered);
//     no nodes; node ids missing or duplicated; links to missing nodes (naming both);
//     no start node or more than one; end nodes none of which is reachable;
//   - exclusive gateways with more than one link that always holds (no when, or the
//     literal true); branches of one split that reach different joins (of the
//     branches it can start);
//   - "#id" sub-graph calls that resolve to no graph, or that call back into their own
//     graph unconditionally;
//   - conditions and scripts that do not compile (most scripts written in Java for
//     Solon do not: flowteam runs expressions); "$key" tasks whose script is not in the
//     graph's meta; invalid loop, branch-policy or onError meta; unregistered "@name"
//     tasks and conditions when the names are given (WithTaskNames,
//     WithConditionNames); and whatever else the engine refuses when it compiles a
//     graph that passed every other check (graph.compile).
//
// Warnings:
//   - node types the engine does not know, in a spec read with flow.SolonNodeTypes
//     (ValidateFiles reports them as errors unless WithReadOptions says so);
//   - no node of type start (the builder picked one, as Solon does); no end node;
//     nodes not reachable from the start (links and onError goto);
//   - inclusive and exclusive gateways whose every link has a condition (a literal
//     "true" counts as none; an exclusive one fails the run with exclusive_no_match
//     when none holds); conditions other than the literal true on the links of a
//     parallel gateway (ignored: it takes every link);
//   - links that repeat another link of their node (the same target and condition; at
//     a parallel gateway, the same target); conditional links of an exclusive gateway
//     that come after a link whose condition is the literal true in priority order, or
//     after a link to another node with the same condition, which the gateway never
//     takes (a link without when is tried only after every condition, so it makes no
//     link dead; other constant expressions such as "1 == 1" are not recognised:
//     conditions are compared by their syntax tree, never folded);
//   - split branches that end without reaching the join the others reach; splits
//     without a join (a branch through a literal false link counts for neither);
//     joins that belong to no split;
//   - cycles that pass through no condition and no loop node, and cycles nothing
//     leaves, each named with all its nodes, the links out of it that are never taken,
//     and the link each of its nodes always takes;
//   - Java scripts that happen to compile as expressions but fail when run; task
//     scripts that are only a name, which do nothing (with the default evaluator;
//     "#id" is suggested when the name is a graph's id, "@name" when it is a
//     registered task's);
//   - sub-graph recursion that is conditional (bounded only by the conditions and the
//     engine's call depth limit); onError gotos into a loop's body from outside that
//     loop or from its closing node (the body runs without the loop item, the closing
//     node as an ordinary node).
func ValidateSpecs(specs []*flow.GraphSpec, opts ...ValidateOption) []Finding {
	cfg := &validateConfig{}
	for _, o := range opts {
		o(cfg)
	}
	if cfg.eval == nil {
		cfg.eval = flow.NewExprEvaluator()
	}
	v := &validator{cfg: cfg}
	graphs := make([]*vgraph, 0, len(specs))
	for _, s := range specs {
		if s != nil {
			graphs = append(graphs, v.model(s))
		}
	}
	v.checkGraphIDs(graphs)
	v.graphIDs = make(map[string]bool, len(graphs)+len(cfg.registered))
	for _, vg := range graphs {
		v.graphIDs[vg.spec.ID] = true
	}
	for _, g := range cfg.registered {
		v.graphIDs[g.ID] = true
	}
	for _, vg := range graphs {
		v.checkGraph(vg)
	}
	v.checkSubgraphs(graphs)
	for _, vg := range graphs {
		if !vg.failed {
			v.checkCompile(vg)
		}
	}
	sortFindings(v.findings)
	return v.findings
}

type validator struct {
	cfg      *validateConfig
	findings []Finding
	graphIDs map[string]bool // of the validated set and the registry: what "#id" may name
}

// report adds a finding located at pos (or, when pos is unknown, at the graph's file).
func (v *validator) report(vg *vgraph, sev Severity, code, node string, pos flow.Pos, format string, args ...any) {
	f := Finding{File: pos.File, Line: pos.Line, Severity: sev, Code: code, Graph: vg.spec.ID, Node: node, Message: fmt.Sprintf(format, args...)}
	if f.File == "" {
		f.File = vg.spec.Source
	}
	if f.File != "" && f.Line == 0 {
		f.Line = 1
	}
	if sev == SeverityError {
		vg.failed = true
	}
	v.findings = append(v.findings, f)
}

// checkGraph runs the per-graph checks.
func (v *validator) checkGraph(vg *vgraph) {
	if p := vg.spec.LenientJSON; p != (flow.Pos{}) {
		v.report(vg, SeverityWarning, CodeJSONLenient, "", p, "not valid JSON from this line on: flowteam reads the file as YAML, as Solon's lenient JSON reader does, but other JSON tools will reject it")
	}
	if len(vg.spec.Nodes) == 0 {
		v.report(vg, SeverityError, CodeGraphEmpty, "", vg.graphPos(), "graph %q has no nodes", vg.spec.ID)
		return
	}
	v.checkNodes(vg)
	v.checkStart(vg)
	v.checkGateways(vg)
	v.checkDuplicateLinks(vg)
	v.checkExpressions(vg)
	v.checkMeta(vg)
	if vg.start != nil {
		v.checkReach(vg)
	}
	v.checkSplits(vg)
	v.checkCycles(vg)
	v.checkGotoLoops(vg)
}
