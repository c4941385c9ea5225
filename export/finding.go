package export

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Severity says whether a finding blocks production use.
type Severity string

// Severities.
const (
	// SeverityError is a definition that fails to load or misbehaves at run time.
	SeverityError Severity = "error"
	// SeverityWarning is a definition that runs but probably not as intended.
	SeverityWarning Severity = "warning"
)

// Finding codes. They are stable: tools and CI scripts may match on them.
const (
	CodeDefinitionInvalid = "definition.invalid" // the reader rejected the document
	// CodeJSONLenient: a .json file is not JSON but YAML (unquoted keys, a trailing
	// comma): it loads, as Solon's lenient reader loads it, but other JSON tools reject it.
	CodeJSONLenient = "json.lenient"

	CodeGraphIDMissing   = "graph.id-missing"
	CodeGraphIDDuplicate = "graph.id-duplicate" // within the validated set or the registry
	CodeGraphEmpty       = "graph.empty"
	CodeGraphCompile     = "graph.compile" // the engine refused the graph for a reason no other check names

	CodeNodeIDMissing   = "node.id-missing"
	CodeNodeIDDuplicate = "node.id-duplicate"
	CodeNodeUnreachable = "node.unreachable"
	CodeNodeUnknownType = "node.unknown-type" // the type is not one the engine knows: an error, or (read with flow.SolonNodeTypes) a warning that the node is an activity
	CodeNodeNote        = "node.suspicious"   // something the reader doubted, such as a key "type:end"

	CodeLinkMissingTarget = "link.missing-target"
	// CodeLinkNeverTaken: a link's condition is the literal false, so no gateway or
	// activity ever takes it (a parallel gateway ignores conditions: see
	// CodeParallelCondition).
	CodeLinkNeverTaken = "link.never-taken"
	// CodeLinkDuplicate: a node has two links to the same node with the same condition
	// (two conditions are the same when their normal forms are, or both always hold).
	// A warning, not an error: the graph runs, though not as meant: a parallel gateway
	// starts two branches doing the same work, an inclusive gateway or an activity runs
	// the target twice, and an exclusive gateway never takes the second link.
	CodeLinkDuplicate = "link.duplicate"

	CodeStartMissing  = "start.missing"
	CodeStartMultiple = "start.multiple"
	CodeStartImplicit = "start.implicit" // no type: start; the graph builder picked one

	CodeEndMissing     = "end.missing"
	CodeEndUnreachable = "end.unreachable"

	CodeExclusiveDefaults  = "exclusive.multiple-defaults"
	CodeExclusiveNoDefault = "exclusive.no-default" // no unconditioned link: no match fails the run with exclusive_no_match
	// CodeExclusiveUnreachable: a conditional link of an exclusive gateway comes after
	// a link whose condition is the literal true, or after a link to another node with
	// the same condition, so the gateway never takes it.
	CodeExclusiveUnreachable = "exclusive.unreachable-link"
	CodeInclusiveNoDefault   = "inclusive.no-default"
	CodeParallelCondition    = "parallel.condition-ignored" // a link of a parallel gateway has a when, which the engine ignores
	CodeSplitJoinMismatch    = "split.join-mismatch"
	CodeSplitBranchEscapes   = "split.branch-escapes"
	CodeSplitNoJoin          = "split.no-join"
	CodeJoinUnpaired         = "join.unpaired"
	CodeCycleUnguarded       = "cycle.unguarded"
	// CodeCycleNoExit: no link leaves the cycle, its conditions only choose the way
	// round. The checks that follow a run's way (cycle exits, the branches of a split,
	// calls that always run) leave out every link an exclusive gateway never takes
	// (CodeExclusiveUnreachable) or that never holds: a cycle whose only way out is such
	// a link has no exit.
	CodeCycleNoExit         = "cycle.no-exit"
	CodeLoopInvalid         = "loop.invalid"
	CodeBranchPolicyInvalid = "meta.branch-policy"
	CodeOnErrorGoto         = "meta.on-error-goto" // onError sends errors to a node that does not exist
	// CodeOnErrorGotoLoop: onError sends errors into a loop's body from outside that
	// loop (or from its closing node, which runs after the loop); the body then runs
	// without the loop item, and the closing node as an ordinary node.
	CodeOnErrorGotoLoop = "meta.on-error-goto-loop"

	CodeSubgraphMissing   = "subgraph.missing"
	CodeSubgraphRecursive = "subgraph.recursive"

	CodeTaskCompile      = "task.compile"
	CodeTaskMetaMissing  = "task.meta-missing"
	CodeTaskUnknown      = "task.unknown"
	CodeTaskNoEffect     = "task.no-effect" // the script is only a name: the task does nothing (meant "#id"?)
	CodeConditionCompile = "condition.compile"
	CodeConditionUnknown = "condition.unknown"
	CodeScriptJava       = "script.java" // compiles as an expression, but is Java that fails when run
)

// Finding is one result of the production checklist.
type Finding struct {
	File     string   `json:"file,omitempty"`  // definition file, when the graph came from one
	Line     int      `json:"line,omitempty"`  // 1-based line in File; 0 when unknown
	Severity Severity `json:"severity"`        // SeverityError or SeverityWarning
	Code     string   `json:"code"`            // one of the Code constants
	Graph    string   `json:"graph,omitempty"` // graph id
	Node     string   `json:"node,omitempty"`  // node id, when the finding belongs to a node
	Message  string   `json:"message"`         // what is wrong, naming the nodes and links involved
}

// String formats the finding as "file:line: severity code: message", the form editors
// and CI logs link to. Without a file the location is the graph id.
func (f Finding) String() string {
	var b strings.Builder
	switch {
	case f.File != "" && f.Line > 0:
		b.WriteString(f.File + ":" + strconv.Itoa(f.Line) + ": ")
	case f.File != "":
		b.WriteString(f.File + ": ")
	case f.Graph != "":
		fmt.Fprintf(&b, "graph %q: ", f.Graph)
	}
	fmt.Fprintf(&b, "%s %s: %s", f.Severity, f.Code, f.Message)
	return b.String()
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity == SeverityError })
}

// sortFindings orders findings by file, line, code and message, so output is stable.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Graph, b.Graph), cmp.Compare(a.Code, b.Code), cmp.Compare(a.Message, b.Message))
	})
}
