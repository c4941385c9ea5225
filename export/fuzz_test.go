package export_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
)

// seedFuzz adds the corpus files (when present), some generated graphs and a few
// malformed documents to a fuzz target's seed corpus.
func seedFuzz(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err == nil {
			f.Add(data)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		g, err := randomSpec(r).Build()
		if err != nil {
			f.Fatal(err)
		}
		for _, w := range documentWriters {
			if data, err := w.write(g); err == nil {
				f.Add(data)
			}
		}
	}
	for _, s := range []string{
		"", "id: x", "id: x\nlayout: 5", "{", `{"id": "x", "layout": [{"id": "a", "link": [{"when": "x"}]}]}`,
		"id: x\nlayout:\n  - &a {id: a, meta: {m: *a}}", "id: x\nlayout:\n  - {id: a, link:[b]}\n  - {id: b}",
		"id: x\nlayout:\n  - {id: a, meta: {<<: {k: v}}}\n", "\xff\xfe", "id: x\nlayout:\n  - {id: a, link: {nextId: b, priority: x}}",
	} {
		f.Add([]byte(s))
	}
}

// located checks that a rejection says where: every error of the reader is a
// *flow.DefinitionError naming the file and a line; the builder's name the file.
func located(t *testing.T, err error, file string, wantLine bool) {
	t.Helper()
	var leaves []error
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		leaves = append(leaves, e)
	}
	walk(err)
	for _, e := range leaves {
		var de *flow.DefinitionError
		if !errors.As(e, &de) {
			t.Fatalf("rejection without a location: %T %v", e, e)
		}
		if de.Pos.File != file || wantLine && de.Pos.Line < 1 {
			t.Fatalf("rejection %q is located at %q, want %s with a line", e, de.Pos, file)
		}
	}
}

// FuzzReader feeds arbitrary documents to the reader and the validator: neither may
// panic, and every rejection is located.
func FuzzReader(f *testing.F) {
	seedFuzz(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := flow.ParseDefinition("fuzz.yml", data)
		if err != nil {
			located(t, err, "fuzz.yml", true)
			if fs := export.ValidateSpecs(nil); fs != nil {
				t.Fatal("findings for no spec")
			}
			return
		}
		fs := export.ValidateSpecs([]*flow.GraphSpec{spec})
		if _, err := spec.Build(); err != nil {
			located(t, err, "fuzz.yml", false)
			if !export.HasErrors(fs) {
				t.Fatalf("the spec does not build (%v) but validates:\n%s", err, joinFindings(fs))
			}
		}
		for _, f := range fs {
			if f.File != "fuzz.yml" || f.Line < 1 || f.Code == "" || f.Message == "" {
				t.Fatalf("finding without location or code: %+v", f)
			}
		}
	})
}

// FuzzRoundTrip reads arbitrary documents; whatever builds must write as YAML and JSON
// that read back as the same graph, and must draw in every diagram format.
func FuzzRoundTrip(f *testing.F) {
	seedFuzz(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := flow.ParseDefinition("fuzz.yml", data)
		if err != nil {
			located(t, err, "fuzz.yml", true)
			return
		}
		g, err := spec.Build()
		if err != nil {
			located(t, err, "fuzz.yml", false)
			return
		}
		for _, w := range documentWriters {
			out, err := w.write(g)
			if err != nil {
				// Only what the format cannot hold: "!!binary" meta decoded to bytes that are
				// not UTF-8, or a NaN or infinity in JSON.
				if msg := err.Error(); !strings.Contains(msg, "not valid UTF-8") && !strings.Contains(msg, "has no JSON form") {
					t.Fatalf("%s: %v", w.name, err)
				}
				continue
			}
			back, err := flow.ParseDefinition(w.file, out)
			if err != nil {
				t.Fatalf("%s output does not read back: %v\n%s", w.name, err, out)
			}
			if d := diffSpecs(spec, back); d != "" {
				t.Fatalf("%s round trip changed the graph:\n%s\n%s", w.name, d, out)
			}
		}
		for _, format := range []export.Format{export.FormatPlantUML, export.FormatMermaid, export.FormatDOT} {
			var b strings.Builder
			if err := export.Write(&b, g, format); err != nil || b.Len() == 0 {
				t.Fatalf("%s: %v", format, err)
			}
		}
	})
}
