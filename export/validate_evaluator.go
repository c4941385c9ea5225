package export

import (
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// Finding codes about evaluators.
const (
	// CodeEvaluatorUnknown: a definition names an evaluator the validation was not given.
	CodeEvaluatorUnknown = "evaluator.unknown"
	// CodeEvaluatorNeeded: a definition's scripts need another evaluator than the one it
	// was checked with (reported by callers that can tell, such as flowteam validate).
	CodeEvaluatorNeeded = "evaluator.needed"
)

// WithNamedEvaluator checks the graphs whose definition names evaluator name
// ("evaluator: solon") with ev, as flow.WithNamedEvaluator has an engine compile them.
// A graph that names an evaluator no option gave is an evaluator.unknown error.
func WithNamedEvaluator(name string, ev flow.Evaluator) ValidateOption {
	return func(c *validateConfig) {
		if c.evals == nil {
			c.evals = make(map[string]flow.Evaluator)
		}
		c.evals[name] = ev
	}
}

// evaluatorOf returns the evaluator vg's definition names: the configured one if it
// names none, unchecked (reported) if it names one not known.
func (v *validator) evaluatorOf(vg *vgraph) flow.Evaluator {
	name := strings.TrimSpace(vg.spec.Evaluator)
	switch ev := v.cfg.evals[name]; {
	case name == "":
		return v.cfg.eval
	case ev != nil:
		return ev
	case name == flow.DefaultEvaluatorName:
		return flow.NewExprEvaluator()
	default:
		known := []string{flow.DefaultEvaluatorName}
		for n := range v.cfg.evals {
			known = append(known, n)
		}
		slices.Sort(known[1:])
		v.report(vg, SeverityError, CodeEvaluatorUnknown, "", vg.graphPos(), "graph %q names evaluator %q, which is not known (known: %s)",
			vg.spec.ID, name, strings.Join(known, ", "))
		return unchecked{} // its scripts are in a language nothing here reads
	}
}

// unchecked accepts every script and condition.
type unchecked struct{}

func (unchecked) CompileCondition(string) (flow.Expression, error) { return nil, nil }
func (unchecked) CompileScript(string) (flow.Expression, error)    { return nil, nil }

// namedEvaluators returns the engine options of the evaluators given by name.
func (v *validator) namedEvaluators() []flow.Option {
	var opts []flow.Option
	for n, ev := range v.cfg.evals {
		opts = append(opts, flow.WithNamedEvaluator(n, ev))
	}
	return opts
}
