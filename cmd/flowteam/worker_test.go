package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
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
	} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := dispatch(args, &out, &errb)
			assert.Contains(t, []int{exitUsage, exitConflict}, code, "%s", errb.String())
			assert.NotEmpty(t, errb.String())
		})
	}
}
