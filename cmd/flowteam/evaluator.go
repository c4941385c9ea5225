package main

import (
	"cmp"
	"flag"
	"fmt"
	"slices"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/flow/solonscript"
)

// evaluatorUsage documents --evaluator for run, resume and validate.
const evaluatorUsage = `  --evaluator NAME  the script language of files that do not name one ("evaluator:" at
                    their top): expr (default) or solon, the Java statements of Solon's
                    script engine (give the same to resume as to run)
`

// solonTypesUsage documents --solon-types for validate; run and resume say how the
// instance keeps it.
const solonTypesUsage = `  --solon-types     read a node type flowteam does not know as an activity, as Solon
                    does, instead of refusing it (then a node.unknown-type warning)
`

// solonTypesFlag registers --solon-types on fs.
func solonTypesFlag(fs *flag.FlagSet, p *bool) {
	fs.BoolVar(p, "solon-types", false, "")
}

// readOptions returns the definition reader's options for --solon-types: without it
// a node type the engine does not know is an error that suggests the nearest known one.
func readOptions(solonTypes bool) []flow.ReadOption {
	if !solonTypes {
		return nil
	}
	return []flow.ReadOption{flow.SolonNodeTypes()}
}

// evaluatorFlag registers --evaluator on fs.
func evaluatorFlag(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "evaluator", flow.DefaultEvaluatorName, "")
}

// evaluatorFor returns the evaluator of --evaluator name.
func evaluatorFor(name string) (flow.Evaluator, error) {
	switch name {
	case flow.DefaultEvaluatorName:
		return flow.NewExprEvaluator(), nil
	case solonscript.Name:
		return solonscript.New(), nil
	}
	return nil, fmt.Errorf("--evaluator must be %s or %s, not %q", flow.DefaultEvaluatorName, solonscript.Name, name)
}

// evaluatorOptions returns the engine options for --evaluator name: name is the
// default, and solon is known by name to files that ask for it.
func evaluatorOptions(name string) ([]flow.Option, error) {
	ev, err := evaluatorFor(name)
	if err != nil {
		return nil, err
	}
	return []flow.Option{flow.WithEvaluator(ev), flow.WithNamedEvaluator(solonscript.Name, solonscript.New())}, nil
}

// validateOptions is evaluatorOptions for export's checks.
func validateOptions(name string) ([]export.ValidateOption, error) {
	ev, err := evaluatorFor(name)
	if err != nil {
		return nil, err
	}
	return []export.ValidateOption{export.WithEvaluator(ev), export.WithNamedEvaluator(solonscript.Name, solonscript.New())}, nil
}

// scriptCodes are the findings of scripts an evaluator does not accept.
var scriptCodes = []string{export.CodeTaskCompile, export.CodeConditionCompile, export.CodeScriptJava}

// addEvaluatorNeeds reports which evaluator each file needs: a file whose scripts
// the expr evaluator refuses and the solon evaluator accepts gets an evaluator.needed
// warning beside its script findings. read are the options the files were read with.
func addEvaluatorNeeds(findings []export.Finding, read ...flow.ReadOption) []export.Finding {
	seen := map[string]bool{}
	var added []export.Finding
	for _, f := range findings {
		if seen[f.File] || !slices.Contains(scriptCodes, f.Code) {
			continue
		}
		seen[f.File] = true
		spec, err := flow.ReadDefinitionFile(f.File, read...)
		if err != nil || spec.Evaluator != "" {
			continue
		}
		opts, _ := validateOptions(solonscript.Name)
		again := export.ValidateSpecs([]*flow.GraphSpec{spec}, opts...)
		if slices.ContainsFunc(again, func(g export.Finding) bool { return slices.Contains(scriptCodes, g.Code) }) {
			continue
		}
		added = append(added, export.Finding{File: f.File, Line: 1, Severity: export.SeverityWarning, Code: export.CodeEvaluatorNeeded,
			Graph: spec.ID, Message: fmt.Sprintf("graph %q needs the %s evaluator: its scripts are Java for Solon's script engine; "+
				"run it with --evaluator %s, or write \"evaluator: %s\" at the top of the file", spec.ID, solonscript.Name, solonscript.Name, solonscript.Name)})
	}
	if len(added) == 0 {
		return findings
	}
	findings = append(findings, added...)
	slices.SortStableFunc(findings, func(a, b export.Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return findings
}
