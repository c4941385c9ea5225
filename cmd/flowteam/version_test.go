package main

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersionLine(t *testing.T) {
	platform := " " + runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"released", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.2.0"}}, true,
			"flowteam v1.2.0 go1.26.1" + platform},
		{"source checkout", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}}, true,
			"flowteam (devel) go1.26.1" + platform},
		{"no module version", &debug.BuildInfo{GoVersion: "go1.26.1"}, true, "flowteam (devel) go1.26.1" + platform},
		{"no build information", nil, false, "flowteam (devel) " + runtime.Version() + platform},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := versionLine(func() (*debug.BuildInfo, bool) { return tc.info, tc.ok })
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestVersionCommand(t *testing.T) {
	code, stdout, stderr := call(t, dispatch, "version")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, versionLine(debug.ReadBuildInfo)+"\n", stdout)
	assert.Contains(t, stdout, runtime.Version())

	code, stdout, stderr = call(t, dispatch, "help", "version")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Usage: flowteam version")
}
