package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// The README is documentation users copy from; these tests keep it true.

var fenceRE = regexp.MustCompile("(?ms)^```(\\w*)\\n(.*?)^```$")

// readmeBlocks returns the README's fenced code blocks of the given language.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var out []string
	for _, m := range fenceRE.FindAllStringSubmatch(string(data), -1) {
		if m[1] == lang {
			out = append(out, m[2])
		}
	}
	return out
}

func TestReadmeStartsWithTheTwoCommands(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data),
		"```\ngo run ./cmd/flowteam run examples/leave/leave.yml --set day=5\ngo test ./...\n```\n"),
		"README.md must begin with the two commands")
}

func TestReadmeCommands(t *testing.T) {
	// Every "go run ./cmd/flowteam run ..." line of the README runs and exits 0.
	var n int
	for _, block := range append(readmeBlocks(t, ""), readmeBlocks(t, "sh")...) {
		for line := range strings.SplitSeq(block, "\n") {
			args, ok := strings.CutPrefix(line, "go run ./cmd/flowteam run ")
			if !ok {
				continue
			}
			n++
			fields := strings.Fields(args)
			for i, f := range fields {
				if strings.HasPrefix(f, "examples/") { // relative to the repository root
					fields[i] = filepath.Join("../..", f)
				}
			}
			code, _, stderr := runCmd(t, fields...)
			assert.Equal(t, 0, code, "%s\n%s", line, stderr)
		}
	}
	assert.GreaterOrEqual(t, n, 3)
}

func TestReadmeJSONOutput(t *testing.T) {
	blocks := readmeBlocks(t, "json")
	require.Len(t, blocks, 1)
	code, stdout, stderr := runCmd(t, leaveYML, "--set", "day=5", "--instance", "req-1", "--output", "json")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, blocks[0], stdout)
}

func TestReadmeYAML(t *testing.T) {
	blocks := readmeBlocks(t, "yaml")
	require.Len(t, blocks, 1)
	g, err := flow.LoadGraph("README.md", []byte(blocks[0]))
	require.NoError(t, err)
	eng := flow.NewEngine()
	require.NoError(t, eng.Register(g))
	for _, tc := range []struct {
		day  int
		want []any
	}{{5, []any{"manager", "director"}}, {1, []any{"manager"}}} {
		fc := flow.NewContextWith("req", map[string]any{"day": tc.day})
		res, err := eng.Eval(context.Background(), g.ID, fc)
		require.NoError(t, err)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, tc.want, fc.Value("approvedBy"), "day %d", tc.day)
	}
}

func TestReadmeGo(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the README's program")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	blocks := readmeBlocks(t, "go")
	require.Len(t, blocks, 1)
	src := blocks[0]
	m := regexp.MustCompile(`// Output: (.*)\n`).FindStringSubmatch(src)
	require.NotNil(t, m, "the Go example states its output")

	file := filepath.Join(t.TempDir(), "main.go")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "run", file)
	cmd.Dir = "../.." // inside the module, so the import resolves to this checkout
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	assert.Equal(t, m[1]+"\n", stdout.String())
}

// TestReadmeMermaidMatchesExport keeps the README's diagram equal to what
// `flowteam export --format mermaid` prints for the leave example.
func TestReadmeMermaidMatchesExport(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "```mermaid\n")
	require.True(t, ok, "README has a mermaid block")
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"export", "../../examples/leave/leave.yml", "--format", "mermaid"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Equal(t, stdout.String(), block)
}
