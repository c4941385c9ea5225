package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	orderYML   = "../../console/testdata/order.yml"
	paymentYML = "../../console/testdata/payment.yml"
)

func TestExportSVGDrawsTheGraph(t *testing.T) {
	code, stdout, stderr := exportCmd(t, leaveYML, "--format", "svg")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "<svg")
	assert.Contains(t, stdout, "</svg>")
}

func TestExportSVGDrawsARun(t *testing.T) {
	dir := t.TempDir()
	audit, dsn := filepath.Join(dir, "audit.jsonl"), "file:"+filepath.Join(dir, "s")
	code, _, _ := call(t, cmdRun, orderYML, paymentYML, "--graph", "order", "--set", "amount=500",
		"--instance", "o-1", "--audit", audit, "--store", dsn)
	require.Equal(t, exitFail, code)

	code, stdout, stderr := exportCmd(t, orderYML, paymentYML, "--format", "svg", "--instance", "o-1", "--audit", audit, "--store", dsn)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `id="node_check" class="node visited"`)
	assert.Contains(t, stdout, `class="node failed frontier call"`, "bill failed, is pending, and calls payment")
	assert.Contains(t, stdout, `xlink:href="?path=order/bill/payment"`)

	code, stdout, stderr = exportCmd(t, orderYML, paymentYML, "--format", "svg", "--instance", "o-1", "--audit", audit, "--path", "order/bill/payment")
	require.Equal(t, exitOK, code, stderr)
	i := strings.Index(stdout, `id="node_charge" class="node failed"`)
	require.GreaterOrEqual(t, i, 0, stdout)
	assert.Contains(t, stdout[i:], "card_declined")
}

func TestExportSVGWritesSubGraphCallsBeside(t *testing.T) {
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	code, _, _ := call(t, cmdRun, orderYML, paymentYML, "--graph", "order", "--set", "amount=500", "--instance", "o-1", "--audit", audit)
	require.Equal(t, exitFail, code)
	out := filepath.Join(dir, "run.svg")
	code, _, stderr := exportCmd(t, orderYML, paymentYML, "--format", "svg", "--instance", "o-1", "--audit", audit, "-o", out)
	require.Equal(t, exitOK, code, stderr)
	root, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(root), `xlink:href="run.order.bill.payment.svg"`)
	child, err := os.ReadFile(filepath.Join(dir, "run.order.bill.payment.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(child), `id="node_charge" class="node failed"`)
}

func TestExportSVGRefusesBadRunFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--format", "dot", "--instance", "x", "--audit", "a"}, "need --format svg"},
		{[]string{"--format", "svg", "--audit", "a"}, "--instance is required"},
		{[]string{"--format", "svg", "--instance", "x"}, "needs --audit or --store"},
	}
	for _, tt := range tests {
		code, _, stderr := exportCmd(t, append([]string{orderYML}, tt.args...)...)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, tt.want)
	}
	dir := t.TempDir()
	code, _, stderr := exportCmd(t, orderYML, paymentYML, "--format", "svg", "--instance", "nobody", "--store", "file:"+dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "no such instance")
}
