package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// help takes at most one command: anything more is a usage error, not a request for
// the general help that exits 0 as if the words after it meant nothing.
func TestHelpExtraArguments(t *testing.T) {
	for _, args := range [][]string{{"help", "run", "extra"}, {"help", "run", "--graph"}, {"--help", "run", "validate"}} {
		code, stdout, stderr := call(t, dispatch, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Empty(t, stdout, "%v", args)
		assert.Contains(t, stderr, "help takes one command", "%v", args)
		assert.Contains(t, stderr, "Commands:", "%v: the general usage follows", args)
	}
	// The other spellings of help name a command as help does.
	for _, h := range []string{"help", "-h", "-help", "--help"} {
		code, stdout, _ := call(t, dispatch, h, "validate")
		assert.Equal(t, exitOK, code, h)
		assert.Contains(t, stdout, "flowteam validate", h)
		assert.NotContains(t, stdout, "Commands:", h)
	}
}
