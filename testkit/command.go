package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// builds holds one build per package path for the life of the test process.
var builds sync.Map // package path -> func() (string, error)

// BuildCommand builds the main package pkg (an import path such as
// "github.com/flowteam/flowteam/cmd/flowteam") once per test process and returns the
// binary's path, for tests that run the command as a separate process. It skips
// the test where the go tool is not on PATH and fails it when the build fails. The
// binary lives in a temporary directory that outlives the test, so that every test of
// the process shares it.
func BuildCommand(t testing.TB, pkg string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	build, _ := builds.LoadOrStore(pkg, sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "flowteam-bin-")
		if err != nil {
			return "", err
		}
		bin := filepath.Join(dir, path.Base(pkg))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
		}
		return bin, nil
	}))
	bin, err := build.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
