package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const corpusDir = "../../../shared/corpus/solon-flow"

// validateCmd runs cmdValidate (see call).
func validateCmd(t *testing.T, args ...string) (int, string, string) {
	return call(t, cmdValidate, args...)
}

// writeDefs writes definition documents into a new directory and returns it.
func writeDefs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, doc := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.TrimLeft(doc, "\n")), 0o644))
	}
	return dir
}

const cleanDef = `
id: clean
layout:
  - {id: s, type: start, link: a}
  - {id: a, task: 'context.put("x", 1)', link: e}
  - {id: e, type: end}
`

const warnDef = `
id: warn
layout:
  - {id: s, type: start, link: a}
  - {id: a, task: 'context.put("x", 1)'}
`

const danglingDef = `
id: dangling
layout:
  - {id: s, type: start, link: a}
  - {id: a, link: [e, nowhere]}
  - {id: e, type: end}
`

var findingLine = regexp.MustCompile(`^[^:]+:\d+: (error|warning) [a-z]+(\.[a-z-]+)?: .+$`)

func TestValidateExitCodes(t *testing.T) {
	dir := writeDefs(t, map[string]string{"clean.yml": cleanDef, "warn.yml": warnDef, "dangling.yml": danglingDef})
	clean, warn, dangling := filepath.Join(dir, "clean.yml"), filepath.Join(dir, "warn.yml"), filepath.Join(dir, "dangling.yml")

	code, stdout, stderr := validateCmd(t, clean)
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "1 file checked: 0 errors, 0 warnings")

	code, stdout, _ = validateCmd(t, warn, clean)
	assert.Equal(t, exitOK, code, "warnings only")
	assert.Equal(t, warn+":1: warning end.missing: graph \"warn\" has no end node: a run finishes when its branches run out of links\n", stdout)

	code, stdout, _ = validateCmd(t, dir)
	assert.Equal(t, exitFail, code)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 2, stdout)
	assert.Equal(t, dangling+`:4: error link.missing-target: node "a" links to "nowhere", which is not a node of graph "dangling"`, lines[0])
	for _, l := range lines {
		assert.Regexp(t, findingLine, l)
	}

	code, _, stderr = validateCmd(t, clean, filepath.Join(dir, "missing.yml"))
	assert.Equal(t, exitUsage, code, "unreadable input")
	assert.Contains(t, stderr, "missing.yml")
	// The unreadable file is named first, and not counted as checked.
	assert.Regexp(t, `^flowteam validate: open \S+missing.yml: no such file or directory\n`+
		`flowteam validate: 1 file checked: 0 errors, 0 warnings; 1 file unreadable\n$`, stderr)

	code, _, stderr = validateCmd(t, filepath.Join(dir, "missing.yml"), filepath.Join(dir, "gone.yml"))
	assert.Equal(t, exitUsage, code)
	assert.Regexp(t, `^flowteam validate: open \S+gone.yml: .*\nflowteam validate: open \S+missing.yml: .*\n`+
		`flowteam validate: 0 files checked: 0 errors, 0 warnings; 2 files unreadable\n$`, stderr)

	code, _, stderr = validateCmd(t, t.TempDir())
	assert.Equal(t, exitUsage, code, "a directory without definitions")
	assert.Contains(t, stderr, "no definition files")
}

func TestValidateUsage(t *testing.T) {
	code, _, stderr := validateCmd(t)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "no definition file given")

	code, _, stderr = validateCmd(t, "x.yml", "--output", "xml")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--output must be text or json, not "xml"`)

	code, _, stderr = validateCmd(t, "--bogus", "x.yml")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "bogus")

	code, stdout, _ := validateCmd(t, "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "Usage: flowteam validate")

	var out, errOut bytes.Buffer
	assert.Equal(t, exitOK, dispatch([]string{"validate", "-h"}, &out, &errOut), "dispatched")
}

func TestValidateJSON(t *testing.T) {
	dir := writeDefs(t, map[string]string{"dangling.yml": danglingDef, "clean.yml": cleanDef})
	code, stdout, stderr := validateCmd(t, "--output", "json", dir)
	assert.Equal(t, exitFail, code, stderr)
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
	require.Len(t, got, 1)
	assert.Equal(t, map[string]any{
		"file": filepath.Join(dir, "dangling.yml"), "line": 4.0, "severity": "error", "code": "link.missing-target",
		"graph": "dangling", "node": "a", "message": `node "a" links to "nowhere", which is not a node of graph "dangling"`,
	}, got[0])

	code, stdout, _ = validateCmd(t, filepath.Join(dir, "clean.yml"), "--output=json")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "[]\n", stdout, "no finding is an empty array")
}

// TestValidateCorpus runs the command on the corpus folder: every line is a finding,
// the dangling link of the behaviour tree is an error, and so the exit code is 1.
func TestValidateCorpus(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("the Solon Flow corpus is not at %s (it lives in shared/corpus beside the repository)", corpusDir)
	}
	code, stdout, stderr := validateCmd(t, corpusDir)
	assert.Equal(t, exitFail, code, stderr)
	assert.Contains(t, stderr, "58 files checked")
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		assert.Regexp(t, findingLine, l)
	}
	assert.Contains(t, stdout, `solon-flow__flow__rule__BehaviorTree.MainTree.yml:13: error link.missing-target: node "CallUser" links to "xx", which is not a node of graph "MainTree"`)
	assert.Contains(t, stdout, `solon-flow__lab__fetch-demo-chains.yml:1: error definition.invalid: no "layout"`)
}

// A file named twice on the command line (a directory and a file in it, "./x.yml" and
// "x.yml", an absolute and a relative path, a link to it) is one definition: every
// command loads it once: loaded twice, its graph would be reported as defined twice,
// by itself.
func TestSameFileNamedTwice(t *testing.T) {
	dir := writeDefs(t, map[string]string{"clean.yml": cleanDef})
	require.NoError(t, os.Symlink("clean.yml", filepath.Join(dir, "alias.yml")))
	t.Chdir(dir)
	abs := filepath.Join(dir, "clean.yml")
	for _, args := range [][]string{
		{".", "./clean.yml"},
		{"clean.yml", abs},
		{"alias.yml", "clean.yml"},
		{"."}, // holds the link too
	} {
		code, stdout, stderr := validateCmd(t, args...)
		assert.Equal(t, exitOK, code, "validate %v: %s%s", args, stdout, stderr)
		assert.Contains(t, stderr, "1 file checked", "validate %v", args)
		code, _, stderr = call(t, cmdRun, args...)
		assert.Equal(t, exitOK, code, "run %v: %s", args, stderr)
		code, _, stderr = call(t, cmdExport, append(args, "--format", "dot")...)
		assert.Equal(t, exitOK, code, "export %v: %s", args, stderr)
	}
}

// A directory whose name ends in .yml (or .yaml, .json) is not a definition: a
// directory argument and a glob skip it, and its files are not read, as a directory
// argument reads only the files directly in it.
func TestValidateSkipsDirectoriesNamedLikeDefinitions(t *testing.T) {
	dir := writeDefs(t, map[string]string{"clean.yml": cleanDef})
	for _, sub := range []string{"sub.yml", "sub.yaml", "sub.json"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, sub), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, sub, "dangling.yml"), []byte(strings.TrimLeft(danglingDef, "\n")), 0o644))
	}
	for _, args := range [][]string{{dir}, {filepath.Join(dir, "*.yml")}, {filepath.Join(dir, "*")}} {
		code, stdout, stderr := validateCmd(t, args...)
		assert.Equal(t, exitOK, code, "validate %v: %s%s", args, stdout, stderr)
		assert.Contains(t, stderr, "1 file checked", "validate %v", args)
		assert.NotContains(t, stderr, "unreadable", "validate %v", args)
		code, _, stderr = call(t, cmdRun, args...)
		assert.Equal(t, exitOK, code, "run %v: %s", args, stderr)
	}

	only := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(only, "sub.yml"), 0o755))
	code, _, stderr := validateCmd(t, only)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "no definition files")
}

// A script that does not compile is reported at the line of the problem, inside the
// script, with the node named: here the line after "task: |".
func TestValidateScriptErrorLine(t *testing.T) {
	dir := writeDefs(t, map[string]string{"bad.yml": `
id: bad
layout:
  - id: s
    type: start
  - id: a
    type: activity
    title: hello
    task: |
      context.put("x", 1 +);
  - id: e
    type: end
`})
	code, stdout, stderr := validateCmd(t, filepath.Join(dir, "bad.yml"))
	assert.Equal(t, exitFail, code, stderr)
	assert.Contains(t, stdout, `bad.yml:9: error task.compile: node "a": task script`, stdout)

	cond := writeDefs(t, map[string]string{"cond.yml": `
id: cond
layout:
  - id: s
    type: exclusive
    link:
      - nextId: e
        when: |
          day > 1 &&
          day <
      - e
  - id: e
    type: end
`})
	code, stdout, stderr = validateCmd(t, filepath.Join(cond, "cond.yml"))
	assert.Equal(t, exitFail, code, stderr)
	assert.Contains(t, stdout, `cond.yml:9: error condition.compile: node "s": condition of the link to "e"`, stdout)
	code, _, stderr = call(t, cmdRun, filepath.Join(dir, "bad.yml"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `bad.yml:9: graph "bad": node "a": task script`)
}

// A .json file that is YAML rather than JSON loads, as in Solon, with a warning on the
// line of the first token that JSON rejects; strict JSON gets none.
func TestValidateLenientJSON(t *testing.T) {
	dir := writeDefs(t, map[string]string{
		"lenient.json": "{\"id\": \"lenient\",\n \"layout\": [\n  {id: s, type: start}, {\"id\": \"e\", \"type\": \"end\"}]}\n",
		"strict.json":  `{"id": "strict", "layout": [{"id": "s", "type": "start"}, {"id": "e", "type": "end"}]}`,
	})
	code, stdout, stderr := validateCmd(t, dir)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "2 files checked: 0 errors, 1 warning", stdout)
	assert.Contains(t, stdout, "lenient.json:3: warning json.lenient: ")
	assert.Regexp(t, findingLine, strings.TrimSpace(stdout))
}

// A directory without definition files, or a glob that matches none, is a warning
// naming it, and the other paths are checked; validate exits 2 only when no path given
// had a definition file. A bad glob is still bad input.
func TestValidateDirectoryWithoutDefinitions(t *testing.T) {
	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("not a definition"), 0o600))
	noMatch := filepath.Join(empty, "*.yaml")

	code, stdout, stderr := call(t, cmdValidate, empty, "testdata/misc/echo.yml")
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, "flowteam validate: warning: "+empty+": no definition files (*.yml, *.yaml, *.json)\n"+
		"flowteam validate: 1 file checked: 0 errors, 0 warnings\n", stderr)

	code, _, stderr = call(t, cmdValidate, noMatch, "testdata/bad")
	assert.Equal(t, exitFail, code, "the errors of the files found count: %s", stderr)
	assert.Contains(t, stderr, "flowteam validate: warning: "+noMatch+": no file matches\n")

	code, stdout, stderr = call(t, cmdValidate, empty, noMatch)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "flowteam validate: warning: "+empty+": no definition files (*.yml, *.yaml, *.json)\n"+
		"flowteam validate: warning: "+noMatch+": no file matches\n"+
		"flowteam validate: no definition files to check in the paths given\n", stderr)

	code, _, stderr = call(t, cmdValidate, filepath.Join(empty, "["), "testdata/misc/echo.yml")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "syntax error in pattern")
}
