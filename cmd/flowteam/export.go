package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
)

const exportUsage = `Usage: flowteam export FILE|DIR... --format FORMAT [--graph ID] [-o OUT]
       flowteam export FILE|DIR... --format svg --instance ID (--audit FILE | --store DSN) [--path P]

Writes one graph of the definition files in another form. The graph only needs to
build (its scripts need not compile), so any definition can be drawn. Flags may come
before or after the files.

Formats:
  yaml, json   the definition document in the layout schema, with explicit ids, types
               and links (link priorities included); "flowteam run" reads it back as
               the same graph
  plantuml     a PlantUML state diagram
  mermaid      a Mermaid flowchart (renders in GitHub and GitLab Markdown)
  dot          a Graphviz digraph (dot -Tsvg)
  svg          the DOT drawing laid out as SVG (Graphviz built in, nothing to install);
               with --instance, a run picture: nodes the run visited green with their
               counts, failed red (the error code as a tooltip), suspended or waiting
               amber, the frontier outlined, links taken bold and skipped ones grey

Flags:
  --format FORMAT   required: yaml, json, plantuml, mermaid, dot or svg
  --instance ID     svg: draw the run of this instance
  --audit FILE      svg: the JSON Lines audit file to read the run from
  --store DSN       svg: the session store holding the instance (its frontier,
                    errors, or approval task states)
  --path P          svg: draw the sub-graph call at call path P (ROOT/NODE/GRAPH),
                    as the calling node's link names it. With -o OUT and no --path,
                    every sub-graph call is also drawn beside OUT (OUT.ROOT.NODE.GRAPH.svg)
                    and its calling node links to that file
  --graph ID        the graph to write when the files hold several
  -o OUT            write to the file OUT instead of stdout ("-": stdout); OUT is replaced whole
                    once written, so a failed write leaves it as it was

Exit codes: 0 written; 1 the graph cannot be written in that format, or OUT cannot be
written; 2 bad usage, or an unreadable or invalid definition.
`

// cmdExport implements "flowteam export". It returns the process exit code.
func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flowteam export", flag.ContinueOnError)
	formatName := fs.String("format", "", "")
	graphID := fs.String("graph", "", "")
	out := fs.String("o", "", "")
	var pic pictureConfig
	fs.StringVar(&pic.audit, "audit", "", "")
	fs.StringVar(&pic.dsn, "store", "", "")
	fs.StringVar(&pic.instance, "instance", "", "")
	fs.StringVar(&pic.path, "path", "", "")
	paths, help, err := parseCommandLine(fs, args)
	if err == nil {
		err = checkNotEmpty(fs, "graph", "o", "audit", "store", "instance", "path")
	}
	svgFormat := strings.EqualFold(strings.TrimSpace(*formatName), "svg")
	pic.out = *out
	var format export.Format
	switch {
	case help:
		fmt.Fprint(stdout, exportUsage)
		return exitOK
	case err != nil:
	case len(paths) == 0:
		err = errors.New("no definition file given")
	case *formatName == "":
		err = errors.New("--format is required (yaml, json, plantuml, mermaid, dot or svg)")
	case svgFormat:
		err = pic.check()
	case pic.wanted():
		err = errors.New("--instance, --audit, --store and --path need --format svg")
	default:
		format, err = export.ParseFormat(*formatName)
	}
	if err != nil {
		return usageError(stderr, "export", err)
	}

	files, err := definitionFiles(paths)
	if err != nil {
		fmt.Fprintf(stderr, "flowteam export: %v\n", err)
		return exitUsage
	}
	graphs, err := buildGraphs(files)
	if err != nil {
		fmt.Fprintf(stderr, "flowteam export: %v\n", err)
		return exitUsage
	}
	g, err := pickGraph(graphs, *graphID, "exported")
	if err != nil && !pic.wanted() { // a run picture draws the instance's graph
		fmt.Fprintf(stderr, "flowteam export: %v\n", err)
		return exitUsage
	}

	var buf bytes.Buffer
	if svgFormat {
		data, err := exportSVG(context.Background(), graphs, g, pic, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "flowteam export: %v\n", err)
			return taskExit(err)
		}
		buf.Write(data)
	} else if err := export.Write(&buf, g, format); err != nil {
		fmt.Fprintf(stderr, "flowteam export: %v\n", err)
		return exitFail
	}
	if *out == "" || *out == "-" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			fmt.Fprintf(stderr, "flowteam export: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	if err := writeOutput(*out, buf.Bytes()); err != nil {
		fmt.Fprintf(stderr, "flowteam export: -o %s: %v\n", *out, err)
		return exitFail
	}
	return exitOK
}

// buildGraphs reads and builds the graph of each definition file without an engine:
// export only needs the graphs to build, not their scripts to compile. The errors of
// every file are joined.
func buildGraphs(files []string) ([]*flow.Graph, error) {
	var (
		graphs []*flow.Graph
		errs   []error
		from   = map[string]string{} // graph id -> the file defining it
	)
	for _, file := range files {
		spec, err := flow.ReadDefinitionFile(file)
		var g *flow.Graph
		if err == nil {
			g, err = spec.Build()
		}
		if err == nil && from[g.ID] != "" {
			// Refused, as run and validate refuse it: else "--graph x" would pick one
			// of the two unsaid.
			err = fmt.Errorf("graph %q is defined twice: in %s and in %s", g.ID, from[g.ID], file)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		from[g.ID] = file
		graphs = append(graphs, g)
	}
	return graphs, errors.Join(errs...)
}

// writeOutput writes data to the file path through a temporary file beside it, renamed
// over path once complete: a write that fails half way (a full disk) leaves the
// previous path as it was, where writing in place would have truncated it.
func writeOutput(path string, data []byte) (err error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target // replace the file a link names, not the link, as writing in place would
	}
	fi, statErr := os.Stat(path)
	if statErr == nil && !fi.Mode().IsRegular() {
		// A device or a pipe (-o /dev/stdout) cannot be replaced, and keeps nothing to lose.
		return os.WriteFile(path, data, 0o644)
	}
	if statErr == nil {
		// A file we may not write stays as it is, as writing in place would leave it:
		// renaming over it needs only the directory's permission.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		f.Close()
	}
	f, err := createTemp(path)
	if err != nil {
		return withoutTempName(err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = withoutTempName(err)
		}
	}()
	if statErr == nil { // keep the mode of the file replaced
		if err := f.Chmod(fi.Mode().Perm()); err != nil {
			return err
		}
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// withoutTempName drops the file names from err: they name the temporary file, which
// the user never asked for and which is gone by the time the error is shown.
func withoutTempName(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	case errors.As(err, &le):
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}

// createTemp creates a new hidden file in the directory of path. Unlike os.CreateTemp
// (always 0600) it creates the file 0644 less the umask, as os.WriteFile would create
// path itself.
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	for {
		name := filepath.Join(dir, "."+base+"."+rand.Text()+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) { // 130 random bits: a name taken is a fluke
			return f, err
		}
	}
}
