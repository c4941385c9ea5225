package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// parseCommandLine parses flags that may come before, between or after the positional
// arguments (the flag package alone stops at the first positional one); "--" ends the
// flags. help is true when -h or --help was given. Arguments before -h are ignored (a
// command line with -h appended asks for help), but any after it is an error: "run -h
// extra" would otherwise print the help and exit 0, letting a script's mistake pass, as
// "help run extra" does not. A flag that takes one value may be given once: the flag
// package keeps the last, and "--vars defaults.json --vars mine.json" would drop a file
// unsaid (the repeatable ones are setFlags).
func parseCommandLine(fs *flag.FlagSet, args []string) (positional []string, help bool, err error) {
	fs.SetOutput(io.Discard) // errors are reported by the caller (usageError)
	var flags []string
	given := make(map[string]bool)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			if rest := args[i+1:]; len(rest) > 0 {
				return nil, false, fmt.Errorf("%s takes no arguments after it, got %q", a, rest)
			}
			return nil, true, nil
		}
		flags = append(flags, a)
		f := fs.Lookup(name)
		if f == nil { // an unknown flag is reported by Parse
			continue
		}
		b, isBool := f.Value.(interface{ IsBoolFlag() bool })
		isBool = isBool && b.IsBoolFlag()
		if _, repeatable := f.Value.(*setFlag); !repeatable && !isBool {
			if given[f.Name] {
				return nil, false, fmt.Errorf("%s given twice: give it once", strings.SplitN(a, "=", 2)[0])
			}
			given[f.Name] = true
		}
		if hasValue || isBool {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(flags); err != nil {
		return nil, false, err
	}
	return positional, false, nil
}

// lowerFlag is a string flag read in any case: "--output JSON" is "--output json", as
// "--format YAML" and "--status Failed" are.
type lowerFlag string

func (f *lowerFlag) String() string {
	if f == nil {
		return ""
	}
	return string(*f)
}

func (f *lowerFlag) Set(s string) error { *f = lowerFlag(strings.ToLower(s)); return nil }

// outputFlag registers --output (text or json, in any case) on fs.
func outputFlag(fs *flag.FlagSet, p *string) {
	*p = "text"
	fs.Var((*lowerFlag)(p), "output", "")
}

// checkOutput refuses an --output other than text or json (outputFlag lowers its case).
func checkOutput(output string) error {
	if output != "text" && output != "json" {
		return fmt.Errorf("--output must be text or json, not %q", output)
	}
	return nil
}

// errZeroSteps rejects "--steps 0", which would otherwise run with the engine's default
// limit: a user who asks for no steps at all, or for no limit, gets neither.
var errZeroSteps = fmt.Errorf("--steps must be at least 1 (leave it out for the engine's limit, %d)", flow.DefaultMaxSteps)

// checkSteps refuses a negative --steps n, and a --steps 0 given (errZeroSteps); n is 0
// when the flag was not given.
func checkSteps(fs *flag.FlagSet, n int) error {
	switch {
	case n < 0:
		return fmt.Errorf("--steps must not be negative, got %d", n)
	case n == 0 && flagGiven(fs, "steps"):
		return errZeroSteps
	}
	return nil
}

// checkNotEmpty rejects the named flags when they were given with an empty (or blank)
// value, as an unset shell variable gives them ("--store $DSN"): left to mean the flag
// was not given, a run meant to be saved, audited or named would silently not be.
func checkNotEmpty(fs *flag.FlagSet, names ...string) (err error) {
	fs.Visit(func(f *flag.Flag) {
		values := []string{f.Value.String()}
		if s, ok := f.Value.(*setFlag); ok { // repeated: each value counts
			values = *s
		}
		blank := slices.ContainsFunc(values, func(v string) bool { return strings.TrimSpace(v) == "" })
		if err == nil && slices.Contains(names, f.Name) && blank {
			dashes := "--"
			if len(f.Name) == 1 {
				dashes = "-"
			}
			err = fmt.Errorf("%s%s must not be empty", dashes, f.Name)
		}
	})
	return err
}

// depthUsage documents --max-depth for run and resume.
const depthUsage = `  --max-depth N     how deep sub-graph calls ("#id" tasks) may nest, at least 1
                    (default 32); a deeper call fails the run with code
                    "subgraph_depth" (give the same to resume as to run)
`

// depthFlag registers --max-depth on fs (0: not given, the engine's limit).
func depthFlag(fs *flag.FlagSet, p *int) { fs.IntVar(p, "max-depth", 0, "") }

// checkDepth refuses a --max-depth below 1: no sub-graph could be called, or, for a
// negative one, every call would fail.
func checkDepth(fs *flag.FlagSet, n int) error {
	if n < 1 && flagGiven(fs, "max-depth") {
		return fmt.Errorf("--max-depth must be at least 1, got %d", n)
	}
	return nil
}

// depthOptions returns the engine option of --max-depth n; none when it was not given.
func depthOptions(n int) []flow.Option {
	if n == 0 {
		return nil
	}
	return []flow.Option{flow.WithMaxCallDepth(n)}
}
