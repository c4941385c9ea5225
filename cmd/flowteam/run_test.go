package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

const leaveYML = "../../examples/leave/leave.yml"

// runCmd runs cmdRun (see call).
func runCmd(t *testing.T, args ...string) (int, string, string) { return call(t, cmdRun, args...) }

// runJSON runs with --output json and decodes the output into a generic map, so the
// test sees the keys exactly as printed.
func runJSON(t *testing.T, args ...string) (int, map[string]any) {
	t.Helper()
	code, stdout, stderr := runCmd(t, append(args, "--output", "json")...)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), "stdout: %s\nstderr: %s", stdout, stderr)
	return code, out
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestRunJSONShape(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		status   string
		keys     []string
		steps    float64
		last     map[string]any
		frontier []any
		reason   any
		err      map[string]any
	}{
		{
			name: "completed", args: []string{leaveYML, "--set", "day=5", "--instance", "req-1"},
			code: 0, status: "completed", steps: 6, last: map[string]any{"leave": "e"},
			keys: []string{"instance", "graph", "status", "steps", "vars", "last", "error", "errors"},
		},
		{
			name: "suspended", args: []string{"testdata/misc/suspend.yml", "--instance", "req-1"},
			code: 0, status: "suspended", steps: 2, last: map[string]any{"suspend": "ask"},
			reason: "waiting for approval", frontier: []any{"suspend:ask"},
			keys: []string{"instance", "graph", "status", "reason", "steps", "vars", "last", "frontier", "error", "errors"},
		},
		{
			name: "stopped", args: []string{"testdata/misc/stop.yml", "--instance", "req-1"},
			code: 0, status: "stopped", steps: 2, last: map[string]any{"stop": "halt"},
			frontier: []any{"stop:after"},
			keys:     []string{"instance", "graph", "status", "steps", "vars", "last", "frontier", "error", "errors"},
		},
		{
			// day is unset: "day >= 3" compares null with a number, which is an error.
			name: "failed", args: []string{leaveYML, "--instance", "req-1"},
			code: 1, status: "failed", steps: 4, last: map[string]any{"leave": "g1"},
			frontier: []any{"leave:g1"},
			err:      map[string]any{"code": flow.CodeCondition, "node": "g1", "graph": "leave"},
			keys:     []string{"instance", "graph", "status", "steps", "vars", "last", "frontier", "error", "errors"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runJSON(t, tc.args...)
			assert.Equal(t, tc.code, code)
			assert.ElementsMatch(t, tc.keys, keys(out))
			assert.Equal(t, "req-1", out["instance"])
			assert.Equal(t, tc.status, out["status"])
			assert.Equal(t, tc.steps, out["steps"])
			assert.Equal(t, tc.last, out["last"])
			if tc.frontier != nil {
				assert.Equal(t, tc.frontier, out["frontier"])
			}
			assert.Equal(t, tc.reason, out["reason"])
			assert.IsType(t, map[string]any{}, out["vars"])
			if tc.err == nil {
				assert.Nil(t, out["error"])
				return
			}
			e, ok := out["error"].(map[string]any)
			require.True(t, ok, "error: %v", out["error"])
			assert.ElementsMatch(t, []string{"code", "node", "graph", "message"}, keys(e))
			for k, v := range tc.err {
				assert.Equal(t, v, e[k], k)
			}
			assert.Contains(t, e["message"], "day >= 3")
		})
	}
}

func TestRunLeavePaths(t *testing.T) {
	for _, tc := range []struct {
		day  string
		want []any
	}{
		{"1", []any{"manager"}},
		{"2", []any{"manager"}},
		{"3", []any{"manager", "director"}},
		{"5", []any{"manager", "director"}},
	} {
		t.Run("day="+tc.day, func(t *testing.T) {
			code, out := runJSON(t, leaveYML, "--set", "day="+tc.day)
			require.Equal(t, 0, code)
			vars := out["vars"].(map[string]any)
			assert.Equal(t, tc.want, vars["approvedBy"])
			assert.Equal(t, "approved", vars["status"])
			assert.Equal(t, "leave", out["graph"])
			assert.True(t, strings.HasPrefix(out["instance"].(string), "i-"), "generated instance id")
		})
	}
}

// run refuses a node type the engine does not know (exit 2, suggesting the nearest
// known one) unless --solon-types reads it as an activity, as Solon does.
func TestRunSolonTypes(t *testing.T) {
	file := filepath.Join(writeDefs(t, map[string]string{"solon.yml": solonTypesDef}), "solon.yml")
	code, stdout, stderr := runCmd(t, file)
	assert.Equal(t, exitUsage, code, stdout)
	assert.Contains(t, stderr, `solon.yml:4: graph "solontypes": node "a": unknown node type "startb" (did you mean start?)`)

	code, out := runJSON(t, file, "--solon-types")
	require.Equal(t, exitOK, code, out)
	assert.Equal(t, "completed", out["status"])
	assert.Equal(t, 1.0, out["vars"].(map[string]any)["x"], "the startb node ran as an activity")

	code, stdout, _ = runCmd(t, "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "--solon-types")
}

func TestRunSetAndVars(t *testing.T) {
	code, out := runJSON(t, "testdata/misc/echo.yml",
		"--set", "day=5", "--set=who=ada lovelace", "-set", "rate=2.5", "--set", "ok=true",
		"--set", `list=[1,"two"]`, "--set", "eq=a=b", "--set", "empty=")
	require.Equal(t, 0, code)
	assert.Equal(t, map[string]any{
		"day": 5.0, "who": "ada lovelace", "rate": 2.5, "ok": true, "list": []any{1.0, "two"},
		"eq": "a=b", "empty": "", "seen": true,
	}, out["vars"])

	// --vars, with --set winning wherever it is written.
	code, out = runJSON(t, "--set", "day=1", "testdata/misc/echo.yml", "--vars", "testdata/misc/vars.json")
	require.Equal(t, 0, code)
	assert.Equal(t, map[string]any{
		"day": 1.0, "rate": 1.5, "name": "ada", "tags": []any{"x", 2.0},
		"nested": map[string]any{"n": 1e10}, "seen": true,
	}, out["vars"])

	// The variables reach the run with Go types: integral numbers as int.
	vars, err := runVars(runConfig{varsFile: "testdata/misc/vars.json", sets: []string{"x=3", "y=3.5"}})
	require.NoError(t, err)
	assert.Equal(t, 5, vars["day"])
	assert.Equal(t, 10000000000, vars["nested"].(map[string]any)["n"])
	assert.Equal(t, 3, vars["x"])
	assert.Equal(t, 3.5, vars["y"])
}

func TestRunStepsLimit(t *testing.T) {
	code, out := runJSON(t, "testdata/misc/count.yml")
	require.Equal(t, 0, code)
	assert.Equal(t, 14.0, out["steps"]) // see count.yml
	assert.Equal(t, 10.0, out["vars"].(map[string]any)["n"])

	code, out = runJSON(t, "testdata/misc/count.yml", "--steps", "5")
	assert.Equal(t, 1, code)
	assert.Equal(t, "failed", out["status"])
	e := out["error"].(map[string]any)
	assert.Equal(t, flow.CodeStepLimit, e["code"])
	assert.Equal(t, "body", e["node"])
	// Steps s, each and three bodies ran; the fourth body was refused.
	assert.Equal(t, 3.0, out["vars"].(map[string]any)["n"])

	code, out = runJSON(t, "testdata/misc/count.yml", "--steps", "14")
	assert.Equal(t, 0, code, "a limit equal to the steps needed is enough")
	assert.Equal(t, "completed", out["status"])
}

func TestRunSeveralGraphs(t *testing.T) {
	// main calls child: main is the only graph nobody calls.
	code, out := runJSON(t, "testdata/multi")
	require.Equal(t, 0, code)
	assert.Equal(t, "main", out["graph"])
	assert.Equal(t, map[string]any{"main": "e", "main/call/child": "ce"}, out["last"])
	assert.Equal(t, map[string]any{"inChild": true, "after": true}, out["vars"])

	// A glob (quoted, so the program expands it) loads the same batch.
	code, out = runJSON(t, "testdata/multi/*.yml")
	require.Equal(t, 0, code)
	assert.Equal(t, "main", out["graph"])

	// --graph picks the sub-graph itself.
	code, out = runJSON(t, "testdata/multi", "--graph", "child")
	require.Equal(t, 0, code)
	assert.Equal(t, map[string]any{"child": "ce"}, out["last"])

	// Two unrelated graphs: the user must choose.
	code, stdout, stderr := runCmd(t, "testdata/two")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "2 graphs could be run (a, b): choose one with --graph")

	// Files given one by one (as a shell expands a glob), flags in between.
	code, out = runJSON(t, "testdata/two/a.yml", "--graph", "b", "testdata/two/b.yml")
	require.Equal(t, 0, code)
	assert.Equal(t, "b", out["vars"].(map[string]any)["ran"])

	code, _, stderr = runCmd(t, "testdata/two", "--graph", "c")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--graph "c": no such graph among the loaded ones (a, b)`)
}

func TestRunBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"no file", nil, []string{"no definition file given", `Run "flowteam run -h" for usage.`}},
		{"unknown flag", []string{leaveYML, "--colour"}, []string{"flag provided but not defined: -colour"}},
		{"bad output", []string{leaveYML, "--output", "xml"}, []string{`--output must be text or json, not "xml"`}},
		{"bad steps", []string{leaveYML, "--steps", "many"}, []string{`invalid value "many" for flag -steps`}},
		{"negative steps", []string{leaveYML, "--steps", "-1"}, []string{"--steps must not be negative"}},
		{"zero steps", []string{leaveYML, "--steps", "0"}, []string{"--steps must be at least 1"}},
		{"zero steps with =", []string{leaveYML, "--steps=0"}, []string{"--steps must be at least 1"}},
		{"set without =", []string{leaveYML, "--set", "day"}, []string{`--set "day": want KEY=VALUE`}},
		{"set without key", []string{leaveYML, "--set", "=5"}, []string{`--set "=5": want KEY=VALUE`}},
		{"set out of range", []string{leaveYML, "--set", "day=1e400"}, []string{`--set "day=1e400": number out of range`}},
		{"missing file", []string{"testdata/nope.yml"}, []string{"testdata/nope.yml", "no such file"}},
		{"empty glob", []string{"testdata/*.nope"}, []string{"testdata/*.nope: no file matches"}},
		{"empty dir", []string{"testdata"}, []string{"testdata: no definition files"}},
		{"link to missing node", []string{"testdata/bad/missing-link.yml"},
			[]string{`testdata/bad/missing-link.yml:5: graph "broken": node "a": link from "a" to missing node "nowhere"`}},
		{"syntax error", []string{"testdata/bad/syntax.yml"}, []string{"testdata/bad/syntax.yml:3: invalid YAML"}},
		{"every error of a folder", []string{"testdata/bad"},
			[]string{"testdata/bad/missing-link.yml:5:", "testdata/bad/syntax.yml:3:"}},
		{"missing vars file", []string{leaveYML, "--vars", "testdata/nope.json"}, []string{"--vars:", "testdata/nope.json"}},
		{"invalid vars file", []string{leaveYML, "--vars", "testdata/misc/badvars.json"},
			[]string{"--vars: testdata/misc/badvars.json:3: invalid character 'a'"}},
		{"go task", []string{"testdata/misc/gotask.yml"}, []string{`testdata/misc/gotask.yml:5: graph "gotask": node "work": unknown task "sendMail"`,
			"\n\"@name\" tasks are Go code: from the command line only script tasks"}},
		{"vars out of range", []string{leaveYML, "--vars", "testdata/misc/rangevars.json"},
			[]string{`--vars: testdata/misc/rangevars.json:3: variable "limits": number out of range`}},
		{"vars not an object", []string{leaveYML, "--vars", "testdata/misc/listvars.json"},
			[]string{"testdata/misc/listvars.json:1: want a JSON object of variables, got a JSON array"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tc.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout)
			for _, w := range tc.want {
				assert.Contains(t, stderr, w)
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "-help"} {
		code, stdout, stderr := runCmd(t, leaveYML, arg)
		assert.Equal(t, 0, code)
		assert.Contains(t, stdout, "Usage: flowteam run")
		assert.Empty(t, stderr)
	}
}

func TestRunUnprintableVars(t *testing.T) {
	// 1/0 is +Inf, which JSON cannot hold: the variable is named, not printed.
	code, out := runJSON(t, "testdata/misc/inf.yml")
	require.Equal(t, 0, code)
	assert.Equal(t, map[string]any{"ok": 1.0}, out["vars"])
	assert.Equal(t, []any{"ratio"}, out["unprintable"])

	res := &flow.Result{Graph: "g", Status: flow.StatusCompleted}
	o := newRunOutput(res, map[string]any{"f": func() {}, "ch": make(chan int), "nan": math.NaN(), "n": 1}, nil)
	assert.Equal(t, []string{"ch", "f", "nan"}, o.Unprintable)
	assert.Equal(t, map[string]any{"n": 1}, o.Vars)
	var b bytes.Buffer
	require.NoError(t, o.writeText(&b))
	assert.Contains(t, b.String(), "f    (not printable)")
}

func TestRunTextOutput(t *testing.T) {
	code, stdout, _ := runCmd(t, leaveYML, "--set", "day=5", "--instance", "req-7")
	require.Equal(t, 0, code)
	assert.Equal(t, `graph leave: completed in 6 steps (instance req-7)
vars:
  approvedBy        ["manager","director"]
  day               5
  directorApproved  true
  managerApproved   true
  status            "approved"
last nodes:
  leave  e
`, stdout)

	code, stdout, _ = runCmd(t, "testdata/misc/suspend.yml", "--instance", "req-7")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "graph suspend: suspended after 2 steps (instance req-7)\nreason: waiting for approval\n")
	assert.Contains(t, stdout, "pending: suspend:ask\n")

	code, stdout, _ = runCmd(t, leaveYML, "--set", "day=soon")
	require.Equal(t, 1, code)
	assert.Contains(t, stdout, `error: condition_error at node "g1" in graph "leave": link to "director": invalid operation: string >= int`)

	// A run that completed despite errors (a recovered node, a failed branch under the
	// continue policy) says so: the text output is not cleaner than the JSON one.
	code, stdout, _ = runCmd(t, "testdata/misc/recovered.yml", "--instance", "req-7")
	require.Equal(t, 0, code)
	// (The failed branch's step depends on which branch took a step first.)
	assert.Regexp(t, `^graph recovered: completed in 8 steps \(instance req-7\)
vars:
  b   1
  fb  1
errors:
  recoverable  node "fail" in graph "recovered" \(branch main, step 2\): E2: recoverable, continued at "fb"
  fatal        node "a" in graph "recovered" \(branch main/p:a, step [56]\): E1: boom
last nodes:
  recovered  e
$`, stdout)
}

// TestBinaryReadmeCommand builds the real binary and runs the README's command from the
// repository root, proving it works as documented.
func TestBinaryReadmeCommand(t *testing.T) {
	bin := buildFlowteam(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)

	cmd := exec.CommandContext(ctx, bin, "run", "examples/leave/leave.yml", "--set", "day=5", "--output", "json")
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	var out map[string]any
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), stdout.String())
	assert.Equal(t, "completed", out["status"])
	assert.Equal(t, []any{"manager", "director"}, out["vars"].(map[string]any)["approvedBy"])

	// Exit codes reach the shell.
	cmd = exec.CommandContext(ctx, bin, "run", "examples/leave/leave.yml")
	cmd.Dir = root
	err = cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())

	cmd = exec.CommandContext(ctx, bin, "run", "no/such/file.yml")
	cmd.Dir = root
	err = cmd.Run()
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.ExitCode())

	// The binary knows its build: the module version (a pseudo-version from version
	// control, or "(devel)") and the Go version.
	version, err := exec.CommandContext(ctx, bin, "version").Output()
	require.NoError(t, err)
	assert.Regexp(t, `^flowteam (\(devel\)|v\S+) `+regexp.QuoteMeta(runtime.Version())+` \S+/\S+\n$`, string(version))
}

// The help text lists every key of the JSON output.
func TestRunHelpNamesEveryOutputKey(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[runOutput](), reflect.TypeFor[runError]()} {
		for f := range typ.Fields() {
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			assert.Contains(t, runUsage, `"`+key+`"`, "%s.%s", typ.Name(), f.Name)
		}
	}
}

// A flag given with an empty value ("--store "$DSN"" with DSN unset) is bad input, not
// the flag left out: a run meant to be saved, audited or named would silently not be.
func TestEmptyFlagValues(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	audit := filepath.Join(t.TempDir(), "a.jsonl")
	for _, tc := range []struct {
		cmd  func(args []string, stdout, stderr io.Writer) int
		args []string
		flag string
	}{
		{cmdRun, []string{leaveYML, "--instance", ""}, "--instance"},
		{cmdRun, []string{leaveYML, "--instance="}, "--instance"},
		{cmdRun, []string{leaveYML, "--instance", " "}, "--instance"},
		{cmdRun, []string{leaveYML, "--graph", ""}, "--graph"},
		{cmdRun, []string{leaveYML, "--store", ""}, "--store"},
		{cmdRun, []string{leaveYML, "--audit", ""}, "--audit"},
		{cmdRun, []string{leaveYML, "--vars", ""}, "--vars"},
		{cmdRun, []string{leaveYML, "--store", dsn, "--durability", ""}, "--durability"},
		{cmdResume, []string{"x", "--store", dsn, "--durability", ""}, "--durability"},
		{cmdResume, []string{"x", "--store", dsn, "--audit", ""}, "--audit"},
		{cmdResume, []string{"x", "--store", dsn, "--vars", ""}, "--vars"},
		{cmdResume, []string{"x", "--store", dsn, "--file", ""}, "--file"},
		{cmdResume, []string{"x", "--store", dsn, "--file", leaveYML, "--file", " "}, "--file"},
		{cmdExport, []string{leaveYML, "--format", "dot", "--graph", ""}, "--graph"},
		{cmdExport, []string{leaveYML, "--format", "dot", "-o", ""}, "-o"},
		{cmdAudit, []string{audit, "--instance", ""}, "--instance"},
		{cmdAudit, []string{audit, "--run", ""}, "--run"},
		{cmdAudit, []string{audit, "--node", ""}, "--node"},
	} {
		code, stdout, stderr := call(t, tc.cmd, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Empty(t, stdout, "%v", tc.args)
		assert.Contains(t, stderr, tc.flag+" must not be empty", "%v", tc.args)
	}
	// So is an empty file argument (not "open : no such file or directory").
	for _, args := range [][]string{{"run", leaveYML, ""}, {"validate", "", leaveYML}, {"export", " ", "--format", "dot"}} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, exitUsage, dispatch(args, &stdout, &stderr), "%q", args)
		assert.Contains(t, stderr.String(), "an empty file name", "%q", args)
	}
}

// --redact given but naming no variable ("--redact $KEYS" with KEYS unset, or a stray
// comma) is bad input: taken for no redaction, it would store in clear the values the
// user meant to mask, and the run would report nothing wrong.
func TestRedactNamesAVariable(t *testing.T) {
	noLeaks(t)
	dsn := fileDSN(t)
	for _, tc := range []struct {
		cmd  func(args []string, stdout, stderr io.Writer) int
		args []string
		want string
	}{
		{cmdRun, []string{approvalYML, "--store", dsn, "--instance", "r-1", "--redact", ""}, "--redact must not be empty"},
		{cmdRun, []string{approvalYML, "--store", dsn, "--instance", "r-1", "--redact", " "}, "--redact must not be empty"},
		{cmdRun, []string{approvalYML, "--store", dsn, "--instance", "r-1", "--redact", ","}, `--redact "," names no variable`},
		{cmdResume, []string{"r-1", "--store", dsn, "--redact="}, "--redact must not be empty"},
		{cmdResume, []string{"r-1", "--store", dsn, "--redact", " , "}, `--redact " , " names no variable`},
	} {
		code, stdout, stderr := call(t, tc.cmd, tc.args...)
		assert.Equal(t, exitUsage, code, "%q", tc.args)
		assert.Empty(t, stdout, "%q", tc.args)
		assert.Contains(t, stderr, tc.want, "%q", tc.args)
	}
	// Refused before the store was touched: run did not even create its directory.
	assert.NoDirExists(t, strings.TrimPrefix(dsn, "file:"))
}

// The flags that say how an instance is saved need --store: ignored without it, they
// would let a user believe the run was saved per node when nothing was saved.
// --redact applies without a store too: to the output and the audit.
func TestStoreFlagsNeedStore(t *testing.T) {
	for _, args := range [][]string{
		{leaveYML, "--set", "day=1", "--durability", "per-node"},
		{leaveYML, "--set", "day=1", "--ttl", "1h"},
	} {
		code, stdout, stderr := runCmd(t, args...)
		assert.Equal(t, exitUsage, code, "%q", args)
		assert.Empty(t, stdout, "%q", args)
		assert.Contains(t, stderr, "applies with --store only", "%q", args)
	}
	code, _, stderr := runCmd(t, leaveYML, "--set", "day=1", "--store", "memory:", "--instance", "i",
		"--redact", "token", "--durability", "per-node", "--ttl", "1h")
	assert.Equal(t, exitOK, code, stderr)
}

// --redact is repeatable, as --set is: "--redact token --redact password" masks both,
// where the last one alone was masked and the first stored in clear.
func TestRedactRepeated(t *testing.T) {
	noLeaks(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	code, _, stderr := call(t, cmdRun, approvalYML, "--store", "file:"+dir, "--instance", "r",
		"--set", "token=s3cr3t", "--set", "password=pw123", "--set", "pin=1234",
		"--redact", "token", "--redact", "password,pin")
	require.Equal(t, exitOK, code, stderr)
	raw, err := os.ReadFile(filepath.Join(dir, "r.json"))
	require.NoError(t, err)
	for _, secret := range []string{"s3cr3t", "pw123", "1234"} {
		assert.NotContains(t, string(raw), secret)
	}
	code, _, stderr = call(t, cmdRun, approvalYML, "--store", "file:"+dir, "--instance", "q",
		"--redact", "token", "--redact", ",")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--redact "," names no variable`, "each one must name one")
}

// A run of one step says "1 step", not "1 steps".
func TestRunTextOutputOneStep(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "one.yml")
	require.NoError(t, os.WriteFile(file, []byte("id: one\nlayout:\n  - {id: s, type: start}\n"), 0o644))
	code, stdout, stderr := runCmd(t, file, "--instance", "i-1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "graph one: completed in 1 step (instance i-1)\n")
}
