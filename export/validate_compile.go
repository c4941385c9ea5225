package export

import (
	"errors"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// checkCompile asks a scratch engine to compile a graph that passed every other check,
// so that whatever the engine refuses is reported even when no check above names it.
func (v *validator) checkCompile(vg *vgraph) {
	if vg.built == nil {
		return
	}
	opts := append(v.namedEvaluators(), flow.WithEvaluator(v.cfg.eval))
	noop := flow.TaskFunc(nil)
	never := flow.ConditionFunc(nil)
	for _, n := range vg.nodes {
		if name, ok := strings.CutPrefix(strings.TrimSpace(n.spec.Task), "@"); ok {
			opts = append(opts, flow.WithTask(name, noop))
		}
		for _, when := range append([]string{n.spec.When}, linkWhens(n)...) {
			if name, ok := strings.CutPrefix(strings.TrimSpace(when), "@"); ok {
				opts = append(opts, flow.WithCondition(name, never))
			}
		}
	}
	err := flow.NewEngine(opts...).Register(vg.built)
	if err == nil {
		return
	}
	for _, e := range flatten(err) {
		var de *flow.DefinitionError
		if errors.As(e, &de) {
			v.report(vg, SeverityError, CodeGraphCompile, de.Node, de.Pos, "%s", de.Msg)
		} else {
			v.report(vg, SeverityError, CodeGraphCompile, "", vg.graphPos(), "%v", e)
		}
	}
}

func linkWhens(n *vnode) []string {
	out := make([]string, len(n.out))
	for i, l := range n.out {
		out[i] = l.spec.When
	}
	return out
}

// flatten splits errors.Join trees into their leaves.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
