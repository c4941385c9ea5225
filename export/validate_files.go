package export

import (
	"errors"
	"fmt"
	"os"

	"github.com/flowteam/flowteam/flow"
)

// ValidateFiles reads the definition files at paths and validates them as one set of
// graphs (see ValidateSpecs). A document the reader rejects yields definition.invalid
// findings, one per problem, at its file and line. The error reports the files that
// could not be read at all (missing, a directory, no permission); the findings for the
// others are returned with it. A node type the engine does not know is a
// node.unknown-type error (see WithReadOptions).
func ValidateFiles(paths []string, opts ...ValidateOption) ([]Finding, error) {
	var (
		specs    []*flow.GraphSpec
		findings []Finding
		errs     []error
		cfg      validateConfig
	)
	for _, o := range opts {
		o(&cfg)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		spec, err := flow.ParseDefinition(p, data, cfg.read...)
		if err != nil {
			findings = append(findings, readerFindings(p, err)...)
			continue
		}
		specs = append(specs, spec)
	}
	findings = append(findings, ValidateSpecs(specs, opts...)...)
	sortFindings(findings)
	return findings, errors.Join(errs...)
}

// readerFindings turns the reader's errors into findings.
func readerFindings(file string, err error) []Finding {
	var out []Finding
	for _, e := range flatten(err) {
		f := Finding{File: file, Line: 1, Severity: SeverityError, Code: CodeDefinitionInvalid, Message: e.Error()}
		if errors.Is(e, flow.ErrUnknownNodeType) {
			f.Code = CodeNodeUnknownType
		}
		var de *flow.DefinitionError
		if errors.As(e, &de) {
			f.Graph, f.Node, f.Message = de.Graph, de.Node, de.Msg
			if de.Pos.File != "" {
				f.File = de.Pos.File
			}
			if de.Pos.Line > 0 {
				f.Line = de.Pos.Line
			}
			if de.Node != "" {
				f.Message = fmt.Sprintf("node %q: %s", de.Node, de.Msg)
			}
		}
		out = append(out, f)
	}
	return out
}
