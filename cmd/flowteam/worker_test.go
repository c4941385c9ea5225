package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
)

func TestWorkerCommandsRefuseBadInput(t *testing.T) {
	def := filepath.Join("testdata", "worker", "job.yml")
	for name, args := range map[string][]string{
		"submit without store":         {"submit", def},
		"submit without files":         {"submit", "--store", "redis://localhost:1/0"},
		"submit with a bad set":        {"submit", def, "--store", "redis://localhost:1/0", "--set", "x"},
		"submit on a memory store":     {"submit", def, "--store", "memory:"},
		"worker without files":         {"worker", "--store", "redis://localhost:1/0"},
		"worker with concurrency 0":    {"worker", def, "--store", "redis://localhost:1/0", "--concurrency", "0"},
		"worker with max deliveries 0": {"worker", def, "--store", "redis://localhost:1/0", "--max-deliveries", "0"},
		"worker with ttl <= renew":     {"worker", def, "--store", "redis://localhost:1/0", "--lease-renew", "5s", "--lease-ttl", "5s"},
		"worker with a bad def":        {"worker", filepath.Join("testdata", "worker", "missing.yml"), "--store", "redis://localhost:1/0"},
		"workers with an argument":     {"workers", "x", "--store", "redis://localhost:1/0"},
		"workers with bad output":      {"workers", "--store", "redis://localhost:1/0", "--output", "xml"},
		"submit with a bad pattern":    {"submit", def, "--store", "redis://localhost:1/0", "--redact-pattern", "(x"},
		"submit with an empty redact":  {"submit", def, "--store", "redis://localhost:1/0", "--redact", " "},
		"worker with a bad pattern":    {"worker", def, "--store", "redis://localhost:1/0", "--redact-pattern", "x*"},
		"worker with an empty redact":  {"worker", def, "--store", "redis://localhost:1/0", "--redact", ","},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := dispatch(args, &out, &errb)
			assert.Contains(t, []int{exitUsage, exitConflict}, code, "%s", errb.String())
			assert.NotEmpty(t, errb.String())
			if strings.Contains(name, "redact") || strings.Contains(name, "pattern") {
				assert.Contains(t, errb.String(), "--redact")
			}
		})
	}
}

// A worker's run of an instance masks with the worker's --redact names and
// --redact-pattern expressions and those the instance records; with none, it does not
// mask; a rule the instance records that is bad is an error, not a run in clear.
func TestWorkerRedaction(t *testing.T) {
	const card, token = "4111-2222-3333-4444", "tok-918273"
	vars := map[string]any{"card": card, "pin": "98765", "note": "card " + card + " " + token}
	masked := func(fn func(*session.Snapshot) (*redact.Redactor, error), snap *session.Snapshot) map[string]any {
		t.Helper()
		red, err := fn(snap)
		require.NoError(t, err)
		return red.ForVars(vars).Map(vars)
	}
	recorded := &session.Snapshot{Meta: []string{"durability=per-node", "redact=card"}, Redacted: []string{"pin"}}
	assert.Equal(t, map[string]any{"card": "***", "pin": "***", "note": "card *** ***"},
		masked(workerRedaction(nil, []string{`tok-\d+`}), recorded))
	assert.Equal(t, map[string]any{"card": "***", "pin": "98765", "note": "card *** " + token},
		masked(workerRedaction([]string{"card"}, nil), &session.Snapshot{}))
	red, err := workerRedaction(nil, nil)(&session.Snapshot{Meta: []string{"other=1"}})
	require.NoError(t, err)
	assert.Nil(t, red, "no rules: saved whole, as run saves")

	for _, meta := range []string{"redact-pattern=(x", "durability=sometimes"} {
		_, err = workerRedaction([]string{"card"}, nil)(&session.Snapshot{Instance: "i", Meta: []string{meta}})
		assert.Error(t, err, meta)
	}
}
