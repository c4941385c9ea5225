package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
)

const validateUsage = `Usage: flowteam validate FILE|DIR|GLOB... [flags]

Checks definition files against the production checklist, as one set of graphs: graph
ids must be unique across them and "#id" sub-graph calls resolve within them. A
directory checks its *.yml, *.yaml and *.json files, not those of its sub-directories.
Flags may come before or after the files.

Prints one finding per line, sorted by file and line:

  file:line: severity code: message

severity is error or warning; code is stable (link.missing-target, start.missing,
task.compile, cycle.unguarded, ...). A summary goes to stderr.

Flags:
  --output FORMAT   text (default) or json: a JSON array of objects with "file",
                    "line", "severity", "code", "graph", "node" and "message"
` + evaluatorUsage + solonTypesUsage + `
With the expr evaluator, a file whose scripts only the solon evaluator accepts gets an
evaluator.needed warning.

A directory without definition files, or a glob that matches none, is reported as a
warning on stderr and skipped; when no path given has any, validate exits 2.

Exit codes: 0 no error (warnings only, or nothing found); 1 at least one error;
2 bad usage, unreadable input, or no definition file in any path given.
`

// cmdValidate implements "flowteam validate". It returns the process exit code.
func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flowteam validate", flag.ContinueOnError)
	output, evaluator, solonTypes := new(string), new(string), new(bool)
	outputFlag(fs, output)
	evaluatorFlag(fs, evaluator)
	solonTypesFlag(fs, solonTypes)
	paths, help, err := parseCommandLine(fs, args)
	switch {
	case help:
		fmt.Fprint(stdout, validateUsage)
		return exitOK
	case err == nil && len(paths) == 0:
		err = errors.New("no definition file given")
	case err == nil:
		err = checkOutput(*output)
	}
	if err != nil {
		return usageError(stderr, "validate", err)
	}
	files, err := validatePaths(paths, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "flowteam validate: %v\n", err)
		return exitUsage
	}
	opts, err := validateOptions(*evaluator)
	if err != nil {
		fmt.Fprintf(stderr, "flowteam validate: %v\n\n%s", err, validateUsage)
		return exitUsage
	}
	read := readOptions(*solonTypes)
	findings, readErr := export.ValidateFiles(files, append(opts, export.WithReadOptions(read...))...)
	if *evaluator == flow.DefaultEvaluatorName {
		findings = addEvaluatorNeeds(findings, read...)
	}
	if *output == "json" {
		if findings == nil {
			findings = []export.Finding{}
		}
		data, err := json.MarshalIndent(findings, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "flowteam validate: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "%s\n", data)
	} else {
		for _, f := range findings {
			fmt.Fprintln(stdout, f)
		}
	}
	errs, warns := 0, 0
	for _, f := range findings {
		if f.Severity == export.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	// The files that could not be read were not checked: say which, then count them
	// apart in the summary.
	unreadable := readErrors(readErr)
	for _, err := range unreadable {
		fmt.Fprintf(stderr, "flowteam validate: %v\n", err)
	}
	checked := len(files) - len(unreadable)
	fmt.Fprintf(stderr, "flowteam validate: %d %s checked: %d %s, %d %s",
		checked, plural(checked, "file"), errs, plural(errs, "error"), warns, plural(warns, "warning"))
	if len(unreadable) > 0 {
		fmt.Fprintf(stderr, "; %d %s unreadable", len(unreadable), plural(len(unreadable), "file"))
	}
	fmt.Fprintln(stderr)
	switch {
	case readErr != nil:
		return exitUsage
	case errs > 0:
		return exitFail
	}
	return exitOK
}

// validatePaths expands the FILE|DIR|GLOB arguments (definitionFiles). A directory
// without definition files, or a glob that matches none, is reported on stderr and
// skipped, so that "validate */" checks the directories that have some; it is an
// error only when no path given had any.
func validatePaths(paths []string, stderr io.Writer) ([]string, error) {
	var kept []string
	for _, p := range paths {
		if _, err := definitionFiles([]string{p}); err != nil && namesNoFile(p, err) {
			fmt.Fprintf(stderr, "flowteam validate: warning: %v\n", err)
			continue
		}
		kept = append(kept, p)
	}
	if len(kept) == 0 {
		return nil, errors.New("no definition files to check in the paths given")
	}
	return definitionFiles(kept)
}

// namesNoFile reports whether err, the expansion error of path, says only that path
// names no definition file: an empty directory, or a valid glob that matches nothing.
func namesNoFile(path string, err error) bool {
	fi, statErr := os.Stat(path)
	if statErr == nil {
		return fi.IsDir()
	}
	return strings.ContainsAny(path, `*?[`) && !errors.Is(err, filepath.ErrBadPattern)
}

// readErrors splits the error of export.ValidateFiles into one error per unreadable file.
func readErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
