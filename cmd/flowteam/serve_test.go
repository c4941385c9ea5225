package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServeRefusesBadStarts(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.json")
	require.NoError(t, os.WriteFile(short, []byte(`{"abc": {"actor": "lead"}}`), 0o600))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--store", "memory:"}, "no definition file given"},
		{[]string{leaveYML}, "--store is required"},
		{[]string{leaveYML, "--store", "memory:", "--addr", "0.0.0.0:8080"}, "is not loopback: give --users"},
		{[]string{leaveYML, "--store", "memory:", "--addr", ":8080"}, "is not loopback"},
		{[]string{leaveYML, "--store", "memory:", "--users", short}, "shorter than 16"},
		{[]string{leaveYML, "--store", "memory:", "--users", filepath.Join(dir, "none.json")}, "users file"},
	}
	for _, tt := range tests {
		code, _, stderr := call(t, cmdServe, tt.args...)
		assert.Equal(t, exitUsage, code, tt.args)
		assert.Contains(t, stderr, tt.want, tt.args)
	}
}

func TestServeHelp(t *testing.T) {
	code, stdout, _ := call(t, cmdServe, "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "flowteam serve DEFS --store DSN")
}
