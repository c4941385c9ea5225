package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flowteam/flowteam/console"
	"github.com/flowteam/flowteam/export/svg"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/trace"
)

// pictureConfig is what "export --format svg" draws besides the graph: the run of
// an instance, read from an audit file, a store or both.
type pictureConfig struct {
	audit, dsn, instance, path string
}

func (p pictureConfig) wanted() bool {
	return p.audit != "" || p.dsn != "" || p.instance != "" || p.path != ""
}

func (p pictureConfig) check() error {
	switch {
	case !p.wanted():
		return nil
	case p.instance == "":
		return errors.New("--audit, --store and --path draw a run: --instance is required")
	case p.audit == "" && p.dsn == "":
		return errors.New("--instance needs --audit or --store")
	}
	return nil
}

// exportSVG draws g, or the run of an instance over its graph, as SVG.
func exportSVG(ctx context.Context, graphs []*flow.Graph, g *flow.Graph, p pictureConfig, stderr io.Writer) ([]byte, error) {
	var rd svg.Renderer
	defer rd.Close()
	if !p.wanted() {
		return rd.Graph(ctx, g)
	}
	byID := func(id string) (*flow.Graph, bool) {
		for _, g := range graphs {
			if g.ID == id {
				return g, true
			}
		}
		return nil, false
	}
	var recs trace.Records
	if p.audit != "" {
		var err error
		if recs, err = readAudit(p.audit, stderr); err != nil {
			return nil, badInput{err}
		}
	}
	var store session.Store
	if p.dsn != "" {
		s, closeStore, err := openExistingStore(p.dsn)
		if err != nil {
			return nil, badInput{err}
		}
		defer closeStore()
		store = s
	}
	run, err := console.LoadRun(ctx, store, nil, recs, p.instance, byID)
	if err != nil {
		return nil, badInput{err}
	}
	path := p.path
	if path == "" {
		path = run.Graph
	}
	if !run.Has(path) {
		return nil, badInput{fmt.Errorf("instance %q has no call %q", p.instance, path)}
	}
	id := path[strings.LastIndexByte(path, '/')+1:]
	drawn, ok := byID(id)
	if !ok {
		return nil, badInput{fmt.Errorf("graph %q of instance %q is not in the definition files", id, p.instance)}
	}
	return console.Picture(ctx, &rd, drawn, run, path, func(child string) string { return "?path=" + child })
}
