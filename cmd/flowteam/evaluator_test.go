package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ruleChain is Solon's rule chain (demo/rule/rule.chain.yml): Java scripts.
const ruleChain = `id: d1
layout:
  - { type: "start"}
  - { task: "if(s.amount>=100){s.setScore(0);}"}
  - { task: "if(s.amount > 100 && s.amount <= 500){s.setScore(100);}"}
  - { task: "if(s.amount > 500 && s.amount <= 1000){s.setScore(500);}"}
  - { type: "end"}
`

func writeDef(t *testing.T, name, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(doc), 0o600))
	return p
}

func TestRunEvaluatorSolon(t *testing.T) {
	p := writeDef(t, "rule.yml", ruleChain)
	var out, errOut bytes.Buffer
	code := cmdRun([]string{p, "--evaluator", "solon", "--set", `s={"amount":800}`, "--output", "json"}, &out, &errOut)
	require.Equal(t, exitOK, code, errOut.String())
	assert.Contains(t, out.String(), `"score": 500`)

	out.Reset()
	errOut.Reset()
	assert.Equal(t, exitUsage, cmdRun([]string{p, "--set", `s={"amount":800}`}, &out, &errOut))
	assert.Contains(t, errOut.String(), "does not compile")

	assert.Equal(t, exitUsage, cmdRun([]string{p, "--evaluator", "groovy"}, &out, &errOut))
	assert.Contains(t, errOut.String(), `--evaluator must be expr or solon, not "groovy"`)
}

// A file that names its evaluator runs without the flag.
func TestRunEvaluatorNamedInFile(t *testing.T) {
	p := writeDef(t, "rule.yml", strings.Replace(ruleChain, "id: d1\n", "id: d1\nevaluator: solon\n", 1))
	var out, errOut bytes.Buffer
	code := cmdRun([]string{p, "--set", `s={"amount":300}`, "--output", "json"}, &out, &errOut)
	require.Equal(t, exitOK, code, errOut.String())
	assert.Contains(t, out.String(), `"score": 100`)
}

func TestValidateReportsEvaluatorNeeded(t *testing.T) {
	java := writeDef(t, "rule.yml", ruleChain)
	plain := writeDef(t, "plain.yml", "id: p\nlayout:\n  - {type: start}\n  - {task: 'context.put(\"x\", 1);'}\n  - {type: end}\n")
	var out, errOut bytes.Buffer
	assert.Equal(t, exitFail, cmdValidate([]string{java, plain}, &out, &errOut))
	assert.Contains(t, out.String(), java+`:1: warning evaluator.needed: graph "d1" needs the solon evaluator`)
	assert.NotContains(t, out.String(), plain)

	out.Reset()
	errOut.Reset()
	assert.Equal(t, exitOK, cmdValidate([]string{java, plain, "--evaluator", "solon"}, &out, &errOut), out.String())
	assert.Empty(t, out.String())
}
