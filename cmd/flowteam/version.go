package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

const versionUsage = `Usage: flowteam version

Prints flowteam's module version, the Go version it was built with and the platform:

  flowteam v1.2.0 go1.26.0 linux/amd64

The module version is "(devel)" in a binary built without one (go run, or go build
outside a version control checkout).

Exit codes: 0 printed; 2 bad usage.
`

// cmdVersion implements "flowteam version". It returns the process exit code.
func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flowteam version", flag.ContinueOnError)
	pos, help, err := parseCommandLine(fs, args)
	switch {
	case help:
		fmt.Fprint(stdout, versionUsage)
		return exitOK
	case err == nil && len(pos) > 0:
		err = fmt.Errorf("takes no arguments, got %q", pos)
	}
	if err != nil {
		return usageError(stderr, "version", err)
	}
	fmt.Fprintln(stdout, versionLine(debug.ReadBuildInfo))
	return exitOK
}

// versionLine formats what "flowteam version" prints from the build information
// readBuildInfo returns (debug.ReadBuildInfo, or a stand-in in tests).
func versionLine(readBuildInfo func() (*debug.BuildInfo, bool)) string {
	version, goVersion := "(devel)", runtime.Version()
	if bi, ok := readBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
	}
	return fmt.Sprintf("flowteam %s %s %s/%s", version, goVersion, runtime.GOOS, runtime.GOARCH)
}
