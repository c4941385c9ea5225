package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// exportCmd runs cmdExport (see call).
func exportCmd(t *testing.T, args ...string) (int, string, string) {
	return call(t, cmdExport, args...)
}

func TestExportFormats(t *testing.T) {
	tests := []struct {
		format string
		starts string
	}{
		{"yaml", "id: leave\n"},
		{"json", "{\n  \"id\": \"leave\","},
		{"plantuml", "@startuml\n"},
		{"mermaid", "---\ntitle: "},
		{"dot", "digraph \"leave\" {\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			code, stdout, stderr := exportCmd(t, leaveYML, "--format", tt.format)
			require.Equal(t, exitOK, code, stderr)
			assert.True(t, strings.HasPrefix(stdout, tt.starts), stdout)
			assert.Empty(t, stderr)
		})
	}
}

// TestExportRoundTrip writes the example as YAML and JSON with -o and runs both files:
// they are the same graph, so the run ends the same way.
func TestExportRoundTrip(t *testing.T) {
	orig, err := flow.ReadDefinitionFile(leaveYML)
	require.NoError(t, err)
	dir := t.TempDir()
	for _, format := range []string{"yaml", "json"} {
		out := filepath.Join(dir, "leave."+format)
		code, stdout, stderr := exportCmd(t, "--format="+format, "-o", out, leaveYML)
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, stdout, "-o writes the file, not stdout")
		spec, err := flow.ReadDefinitionFile(out)
		require.NoError(t, err)
		require.Len(t, spec.Nodes, len(orig.Nodes))
		for i, n := range orig.Nodes {
			got := spec.Nodes[i]
			assert.Equal(t, [5]string{n.ID, n.Type.String(), n.Title, n.When, n.Task}, [5]string{got.ID, got.Type.String(), got.Title, got.When, got.Task})
			assert.Equal(t, len(n.Links), len(got.Links), n.ID)
			assert.Equal(t, n.Meta, got.Meta, n.ID)
		}

		code, stdout, stderr = runCmd(t, out, "--set", "day=5")
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "completed")
	}
}

func TestExportSelectsGraph(t *testing.T) {
	dir := writeDefs(t, map[string]string{"clean.yml": cleanDef, "warn.yml": warnDef})
	code, _, stderr := exportCmd(t, dir, "--format", "mermaid")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "2 graphs could be exported (clean, warn): choose one with --graph")

	code, stdout, stderr := exportCmd(t, dir, "--format", "mermaid", "--graph", "warn")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `title: "warn"`)

	code, _, stderr = exportCmd(t, dir, "--format", "dot", "--graph", "nope")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--graph "nope"`)
}

func TestExportErrors(t *testing.T) {
	dir := writeDefs(t, map[string]string{"dangling.yml": danglingDef})
	// Two files defining one graph id: which of them is "--graph x"?
	dup := writeDefs(t, map[string]string{
		"a.yml": "id: x\nlayout:\n  - {id: s, type: start, link: e}\n  - {id: e, type: end}\n",
		"b.yml": "id: x\nlayout:\n  - {id: s2, type: start, link: e2}\n  - {id: e2, type: end}\n",
	})
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no file", []string{"--format", "yaml"}, exitUsage, "no definition file given"},
		{"no format", []string{leaveYML}, exitUsage, "--format is required"},
		{"unknown format", []string{leaveYML, "--format", "png"}, exitUsage, `unknown export format "png"`},
		{"missing file", []string{filepath.Join(dir, "none.yml"), "--format", "yaml"}, exitUsage, "none.yml"},
		{"invalid definition", []string{filepath.Join(dir, "dangling.yml"), "--format", "yaml"}, exitUsage, `link from "a" to missing node "nowhere"`},
		{"one id twice", []string{dup, "--format", "mermaid", "--graph", "x"}, exitUsage,
			`graph "x" is defined twice: in ` + filepath.Join(dup, "a.yml") + " and in " + filepath.Join(dup, "b.yml")},
		{"one id twice, no --graph", []string{dup, "--format", "mermaid"}, exitUsage, `graph "x" is defined twice`},
		{"unwritable output", []string{leaveYML, "--format", "yaml", "-o", filepath.Join(dir, "no", "such", "dir.yml")}, exitFail, "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := exportCmd(t, tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stderr, tt.msg)
		})
	}

	code, stdout, _ := exportCmd(t, "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "Usage: flowteam export")
	var out, errOut bytes.Buffer
	assert.Equal(t, exitOK, dispatch([]string{"export", leaveYML, "--format", "dot"}, &out, &errOut), errOut.String())
}

// TestExportCorpus exports every corpus graph that builds in every format; the
// reader's files that do not build are refused with exit code 2.
func TestExportCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*"))
	if len(files) == 0 {
		t.Skipf("the Solon Flow corpus is not at %s", corpusDir)
	}
	for _, file := range files {
		_, loadErr := func() (*flow.Graph, error) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			return flow.LoadGraph(file, data)
		}()
		for _, format := range []string{"yaml", "json", "plantuml", "mermaid", "dot"} {
			code, stdout, stderr := exportCmd(t, file, "--format", format)
			if loadErr != nil {
				assert.Equal(t, exitUsage, code, "%s does not build: %v", file, loadErr)
				continue
			}
			assert.Equal(t, exitOK, code, "%s as %s: %s", file, format, stderr)
			assert.NotEmpty(t, stdout)
		}
	}
}

// "-o -" is stdout, as "-" is standard input for audit: it wrote a file named "-".
func TestExportToDash(t *testing.T) {
	leave, err := filepath.Abs(leaveYML)
	require.NoError(t, err)
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := exportCmd(t, leave, "--format", "yaml", "-o", "-")
	require.Equal(t, exitOK, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "id: leave\n"), stdout)
	assert.NoFileExists(t, filepath.Join(dir, "-"))
}
