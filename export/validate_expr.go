package export

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/flowteam/flowteam/flow"
)

// checkExpressions compiles every condition and script task the way the engine will,
// and checks "@name" references against the names given with WithTaskNames and
// WithConditionNames.
func (v *validator) checkExpressions(vg *vgraph) {
	for _, n := range vg.nodes {
		v.checkCondition(vg, n, n.spec.Pos, n.spec.WhenPos, "node condition", n.spec.When)
		for _, l := range n.out {
			v.checkCondition(vg, n, l.pos(), l.spec.WhenPos, fmt.Sprintf("condition of the link to %q", l.to.id()), l.spec.When)
		}
		if n.spec.Component == nil {
			v.checkTask(vg, n)
		}
	}
}

// checkCondition checks a condition defined at pos; a compile error is reported at its
// line in the condition, which starts at at.
func (v *validator) checkCondition(vg *vgraph, n *vnode, pos flow.Pos, at flow.ScriptPos, what, src string) {
	src = strings.TrimSpace(src)
	if src == "" {
		return
	}
	if name, ok := strings.CutPrefix(src, "@"); ok {
		if v.cfg.conds != nil && !v.cfg.conds[name] {
			v.report(vg, SeverityError, CodeConditionUnknown, n.id(), pos, "node %q: %s uses condition %q, which is not registered", n.id(), what, "@"+name)
		}
		return
	}
	if _, err := vg.eval.CompileCondition(src); err != nil {
		v.report(vg, SeverityError, CodeConditionCompile, n.id(), at.Locate(err, pos), "node %q: %s %q does not compile: %s%s", n.id(), what, oneLine(src), firstLine(err), javaHint(src))
	} else {
		v.checkJava(vg, n, pos, what, src)
	}
}

// normalWhen returns a condition in the form two conditions are compared in: expr's
// printed syntax tree, so that spaces, redundant parentheses and the quotes of a string
// make no other condition. A condition that does not parse ("@name", a syntax error
// with its own finding) is compared as trimmed text, and so is every condition when
// another evaluator than the default one compiles them: its language need not be
// expr's. Trailing semicolons are dropped, as the default evaluator drops them.
//
// The printer loses a little: the float 1.0 prints as the integer 1, and a ternary or a
// negation it should wrap (as in "(a ? b : c).d") it does not. So a tree is used only
// when its printed form parses back to the same tree; otherwise the text is, and two
// conditions that differ are never taken for one.
func (v *validator) normalWhen(vg *vgraph, when string) string {
	when = strings.TrimSpace(when)
	if _, ok := vg.eval.(*flow.ExprEvaluator); !ok || when == "" || strings.HasPrefix(when, "@") {
		return when
	}
	src := when
	for strings.HasSuffix(src, ";") {
		src = strings.TrimSpace(strings.TrimSuffix(src, ";"))
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return when
	}
	printed := tree.Node.String()
	back, err := parser.Parse(printed)
	if err != nil || ast.Dump(back.Node) != ast.Dump(tree.Node) {
		return when
	}
	return printed
}

// checkJava warns about a script that compiles as an expression but is Java: the
// expression reads System, java or a class name as an (unset) context variable and
// fails when it runs.
func (v *validator) checkJava(vg *vgraph, n *vnode, pos flow.Pos, what, src string) {
	if _, ok := vg.eval.(*flow.ExprEvaluator); ok && javaOnlyRe.MatchString(src) {
		v.report(vg, SeverityWarning, CodeScriptJava, n.id(), pos, "node %q: %s %q is Java for Solon's script engine: it compiles as an expression but fails when it runs (rewrite it, or register a Go task and use \"@name\")", n.id(), what, oneLine(src))
	}
}

func (v *validator) checkTask(vg *vgraph, n *vnode) {
	src := strings.TrimSpace(n.spec.Task)
	what, at := "task script", n.spec.TaskPos
	switch {
	case src == "", strings.HasPrefix(src, "#"):
		return // sub-graph calls are checked with the whole set
	case strings.HasPrefix(src, "@"):
		if name := src[1:]; v.cfg.tasks != nil && !v.cfg.tasks[name] {
			v.report(vg, SeverityError, CodeTaskUnknown, n.id(), n.spec.Pos, "node %q: task %q is not registered", n.id(), src)
		}
		return
	case strings.HasPrefix(src, "$"):
		key := src[1:]
		s, ok := metaValue(vg.spec.Meta, key).(string)
		if !ok {
			v.report(vg, SeverityError, CodeTaskMetaMissing, n.id(), n.spec.Pos, "node %q: task %q: the graph's meta has no script at %q", n.id(), src, key)
			return
		}
		what, src, at = fmt.Sprintf("task script (meta %q)", key), s, flow.ScriptPos{}
	}
	if _, err := vg.eval.CompileScript(src); err != nil {
		v.report(vg, SeverityError, CodeTaskCompile, n.id(), at.Locate(err, n.spec.Pos), "node %q: %s %q does not compile: %s%s", n.id(), what, oneLine(src), firstLine(err), javaHint(src))
	} else {
		v.checkJava(vg, n, n.spec.Pos, what, src)
		v.checkNoEffect(vg, n, what, src)
	}
}

// checkNoEffect warns about a script that is only a name: it compiles (an unset
// variable reads as nil) and the engine drops a script's value, so the task does
// nothing. A name that is a graph id was most likely meant as a "#id" call (Solon runs
// such a script as Java, where it fails), and a registered task's name as "@name". Other evaluators may give a name a meaning,
// so only the default one is checked.
func (v *validator) checkNoEffect(vg *vgraph, n *vnode, what, src string) {
	if _, ok := vg.eval.(*flow.ExprEvaluator); !ok {
		return
	}
	name := strings.TrimRight(strings.TrimSpace(src), "; \t\r\n")
	if !bareNameRe.MatchString(name) {
		return
	}
	hint := ""
	switch {
	case v.graphIDs[name]:
		hint = fmt.Sprintf("; to call graph %q write \"#%s\"", name, name)
	case v.cfg.tasks[name]:
		hint = fmt.Sprintf("; to run the Go task %q write \"@%s\"", name, name)
	}
	v.report(vg, SeverityWarning, CodeTaskNoEffect, n.id(), n.spec.Pos, "node %q: %s %q is only a name: the task reads it and does nothing%s", n.id(), what, oneLine(src), hint)
}

// bareNameRe matches a script that is a single identifier.
var bareNameRe = regexp.MustCompile(`^[\p{L}_][\p{L}\p{N}_]*$`)

// checkMeta checks the meta keys the engine interprets: loop $for/$in and branchPolicy.
func (v *validator) checkMeta(vg *vgraph) {
	if p, ok := vg.spec.Meta[flow.MetaBranchPolicy]; ok {
		v.checkPolicy(vg, nil, vg.graphPos(), p)
	}
	for _, n := range vg.nodes {
		if p, ok := n.spec.Meta[flow.MetaBranchPolicy]; ok {
			v.checkPolicy(vg, n, n.spec.Pos, p)
		}
		if n.spec.Type != flow.Loop {
			continue
		}
		forVar, opens := n.spec.Meta[flow.MetaFor]
		if !opens {
			continue
		}
		if s, ok := forVar.(string); !ok || strings.TrimSpace(s) == "" {
			v.report(vg, SeverityError, CodeLoopInvalid, n.id(), n.spec.Pos, "loop node %q: %s must be a non-empty variable name, not %s", n.id(), flow.MetaFor, describeValue(forVar))
		}
		switch in := n.spec.Meta[flow.MetaIn]; {
		case in == nil:
			v.report(vg, SeverityError, CodeLoopInvalid, n.id(), n.spec.Pos, "loop node %q has %s but no %s (a list, a context variable or a stepper such as \"1:10:2\")", n.id(), flow.MetaFor, flow.MetaIn)
		case !isListOrString(in):
			v.report(vg, SeverityError, CodeLoopInvalid, n.id(), n.spec.Pos, "loop node %q: %s must be a list, a context variable or a stepper, not %s", n.id(), flow.MetaIn, describeValue(in))
		}
	}
}

func (v *validator) checkPolicy(vg *vgraph, n *vnode, pos flow.Pos, p any) {
	node, where := "", fmt.Sprintf("graph %q", vg.spec.ID)
	if n != nil {
		node, where = n.id(), fmt.Sprintf("node %q", n.id())
	}
	s, ok := p.(string)
	if !ok {
		v.report(vg, SeverityError, CodeBranchPolicyInvalid, node, pos, "%s: meta %s must be a string (fail-fast or continue), not %s; the engine ignores it", where, flow.MetaBranchPolicy, describeValue(p))
		return
	}
	if _, err := flow.ParseBranchPolicy(s); err != nil {
		v.report(vg, SeverityError, CodeBranchPolicyInvalid, node, pos, "%s: %v", where, err)
	}
}

func isListOrString(v any) bool {
	if _, ok := v.(string); ok {
		return true
	}
	k := reflect.ValueOf(v).Kind()
	return k == reflect.Slice || k == reflect.Array
}

func describeValue(v any) string {
	if v == nil {
		return "nothing"
	}
	return fmt.Sprintf("%T %v", v, v)
}

// metaValue looks up a dotted path ("a.b.c") in a meta mapping, as Graph.MetaValue does.
func metaValue(meta map[string]any, path string) any {
	var cur any = meta
	for part := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		if cur, ok = m[part]; !ok {
			return nil
		}
	}
	return cur
}

// javaRe spots scripts written for Solon's Java script engines.
var javaRe = regexp.MustCompile(`System\.(out|err)\.|\bnew\s+[A-Za-z_][\w.]*\s*\(|\.equals\(|\bjava\.|\b(while|for|if)\s*\(.*\)\s*\{|\b(String|int|long|var|Integer)\s+[a-z_]\w*\s*=|\.(get|set|is)[A-Z]\w*\(`)

// javaOnlyRe spots what only Java has: System.out, new Class(...), "x".equals(y), java.*.
var javaOnlyRe = regexp.MustCompile(`\bSystem\.(out|err|currentTimeMillis|nanoTime)\b|\bnew\s+[A-Za-z_][\w.]*\s*\(|\.equals\(|\bjava\.[a-z]`)

// javaHint explains why a Solon script does not compile.
func javaHint(src string) string {
	if javaRe.MatchString(src) {
		return " (this looks like Java for Solon's script engine; the expr evaluator does not run it: use the solon evaluator (--evaluator solon, or \"evaluator: solon\" at the top of the file), rewrite it, or register a Go task and use \"@name\")"
	}
	return ""
}

func firstLine(err error) string {
	s := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}
