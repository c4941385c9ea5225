// Package svg draws graphs as SVG in pure Go: the DOT that package export writes,
// laid out by Graphviz compiled to WebAssembly (github.com/goccy/go-graphviz on the
// wazero runtime), so no Graphviz binary is needed.
//
//	var r svg.Renderer // ready to use; keep one and reuse it
//	img, err := r.Graph(ctx, g)
//	os.WriteFile("leave.svg", img, 0o644)
//
// # Cost
//
// Importing the package compiles the WebAssembly module once per process (cached
// on disk under os.TempDir()/go-graphviz), at start, whether the program draws or
// not: go-graphviz does it in its init. That is seconds the first time on a machine,
// then about a tenth of a second and 20 MB. A Renderer starts its Graphviz context
// on first use and keeps it: the first drawing pays for it, later ones only for the
// layout (a 200-node graph: 0.15 to 0.3 s on a busy two-core machine, see
// BenchmarkGraph200). Drawings run one at a time, in every Renderer of the process,
// as they share the one single-threaded WebAssembly module.
package svg

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	graphviz "github.com/goccy/go-graphviz"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
)

// gvMu serialises every call into go-graphviz: its WebAssembly instance is one per
// process, shared by every Renderer, and not safe for concurrent use.
var gvMu sync.Mutex

// Renderer turns DOT into SVG. The zero value is ready to use; it is safe for
// concurrent use. Close releases its Graphviz context.
type Renderer struct {
	once sync.Once
	gv   *graphviz.Graphviz
	err  error
}

func (r *Renderer) start(ctx context.Context) error {
	r.once.Do(func() {
		gvMu.Lock()
		defer gvMu.Unlock()
		r.gv, r.err = graphviz.New(ctx)
		if r.err != nil {
			r.err = fmt.Errorf("start graphviz: %w", r.err)
		}
	})
	return r.err
}

// Render lays out the DOT source with Graphviz's dot layout and returns the SVG. It
// returns ctx's error if ctx is done when its turn to draw comes (drawings run one at
// a time); a drawing under way is not stopped.
func (r *Renderer) Render(ctx context.Context, dot []byte) ([]byte, error) {
	if err := r.start(ctx); err != nil {
		return nil, err
	}
	gvMu.Lock()
	defer gvMu.Unlock()
	// Checked once the lock is held: a caller gone while others drew is not drawn for.
	// Graphviz itself does not stop on ctx.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g, err := graphviz.ParseBytes(dot)
	if err != nil {
		return nil, fmt.Errorf("parse dot: %w", err)
	}
	defer g.Close()
	var out bytes.Buffer
	if err := r.gv.Render(ctx, g, graphviz.SVG, &out); err != nil {
		return nil, fmt.Errorf("render svg: %w", err)
	}
	return out.Bytes(), nil
}

// Graph draws g as export.DOT does (with opts, such as export.WithDOTStyle) and
// returns the SVG.
func (r *Renderer) Graph(ctx context.Context, g *flow.Graph, opts ...export.WriteOption) ([]byte, error) {
	dot, err := export.DOT(g, opts...)
	if err != nil {
		return nil, err
	}
	return r.Render(ctx, dot)
}

// Close releases the Graphviz context. The Renderer must not be used afterwards.
func (r *Renderer) Close() error {
	gvMu.Lock()
	defer gvMu.Unlock()
	if r.gv == nil {
		return nil
	}
	err := r.gv.Close()
	r.gv = nil
	return err
}
