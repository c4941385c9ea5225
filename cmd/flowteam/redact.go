package main

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
)

// metaRedactPattern names the Snapshot.Meta entries that record the --redact-pattern
// expressions, one entry each.
const metaRedactPattern = "redact-pattern"

// newRedactor returns the one Redactor of a command's output, audit and store: the
// default sensitive keys, the variables named secret and the patterns.
func newRedactor(names, patterns []string) (*redact.Redactor, error) {
	res := make([]*regexp.Regexp, 0, len(patterns))
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("--redact-pattern %q: %w", p, err)
		}
		if re.MatchString("") {
			// It would put a mask between every two characters of every text.
			return nil, fmt.Errorf("--redact-pattern %q matches the empty text", p)
		}
		res = append(res, re)
	}
	return redact.New(redact.Secrets(names...), redact.Patterns(res...)), nil
}

// redactor returns the Redactor these flags give (names and patterns).
func (s *storeFlags) redactor() (*redact.Redactor, error) {
	names, err := redactKeys(s.redact)
	if err != nil {
		return nil, err
	}
	return newRedactor(names, s.patterns)
}

// redactor returns the Redactor of st.
func (st settings) redactor() (*redact.Redactor, error) { return newRedactor(st.redact, st.patterns) }

// redacts reports whether st asks for the stored snapshots to be redacted. Without
// --redact or --redact-pattern a snapshot is stored whole, so that a resume has every
// variable back; the output and the audit are redacted by key all the same.
func (st settings) redacts() bool { return len(st.redact) > 0 || len(st.patterns) > 0 }

// addPatterns adds expressions to st.patterns.
func (st *settings) addPatterns(patterns ...string) {
	st.patterns = append(st.patterns, patterns...)
	slices.Sort(st.patterns)
	st.patterns = slices.Compact(st.patterns)
}

// instanceRedaction returns the redaction settings of a command on a stored
// instance, the --redact names and --redact-pattern expressions plus the rules snap
// records (none when snap is nil or cannot be opened), and their Redactor. Its error
// is a pattern that does not compile: one of the flags, or one the instance records.
func instanceRedaction(names, patterns []string, snap *session.Snapshot) (settings, *redact.Redactor, error) {
	st, err := redactSettings(names, patterns)
	if err != nil {
		return st, nil, err
	}
	if snap != nil {
		st.addRecorded(snap)
	}
	red, err := st.redactor()
	return st, red, err
}

// redactSettings returns the settings of the --redact lists names and the
// --redact-pattern expressions patterns.
func redactSettings(names, patterns []string) (settings, error) {
	keys, err := redactKeys(names)
	if err != nil {
		return settings{}, err
	}
	var st settings
	st.addRedact(keys...)
	st.addPatterns(patterns...)
	return st, nil
}

// addRecorded adds to st the redaction rules recorded with snap: the variables its
// last save masked, the --redact names and the patterns. A snapshot that cannot be
// opened, or that records a bad setting, adds none: the command that reads it
// reports that.
func (st *settings) addRecorded(snap *session.Snapshot) {
	if opened := openedSnapshot(snap); opened != nil {
		if rec, err := recordedSettings(opened); err == nil {
			st.addRedact(rec.redact...)
			st.addPatterns(rec.patterns...)
		}
	}
}

// redactMeta returns the Snapshot.Meta entries that record st's names and patterns.
func (st settings) redactMeta() []string {
	m := make([]string, 0, len(st.redact)+len(st.patterns))
	for _, k := range st.redact {
		m = append(m, metaRedact+"="+k)
	}
	for _, p := range st.patterns {
		m = append(m, metaRedactPattern+"="+p)
	}
	return m
}

// redactOutput masks o, the output of a run whose variables were vars: the variables
// under a sensitive key or named secret whole, and the secret values and pattern
// matches wherever they appear in the other variables, the suspend reason and the
// error messages.
func (o *runOutput) redactOutput(red *redact.Redactor, vars map[string]any) {
	red = red.ForVars(vars)
	o.Vars = red.Map(o.Vars)
	if o.Reason != nil {
		r := red.String(*o.Reason)
		o.Reason = &r
	}
	if o.Error != nil {
		o.Error.Message = red.String(o.Error.Message)
	}
	errs := make([]flow.ExecutionError, len(o.Errors))
	for i, e := range o.Errors {
		e.Error.Message = red.String(e.Error.Message)
		e.Fallback = red.Map(e.Fallback)
		errs[i] = e
	}
	o.Errors = errs
}
