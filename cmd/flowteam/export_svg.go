package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
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
	out                        string // -o: sub-graph calls are drawn beside it
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
	if p.out == "" || p.out == "-" || p.path != "" {
		return drawCall(ctx, &rd, run, path, byID, func(child string) string { return "?path=" + child })
	}
	// Written to a file: each sub-graph call is drawn to a file beside it, which its
	// calling node links to.
	link := func(child string) string { return filepath.Base(callFile(p.out, child)) }
	for _, child := range run.Paths() {
		if child == path {
			continue
		}
		img, err := drawCall(ctx, &rd, run, child, byID, link)
		if err != nil {
			return nil, err
		}
		if err := writeOutput(callFile(p.out, child), img); err != nil {
			return nil, err
		}
	}
	return drawCall(ctx, &rd, run, path, byID, link)
}

// drawCall draws the call at path of the run.
func drawCall(ctx context.Context, rd *svg.Renderer, run *console.Run, path string, byID func(string) (*flow.Graph, bool), link func(string) string) ([]byte, error) {
	id := path[strings.LastIndexByte(path, '/')+1:]
	g, ok := byID(id)
	if !ok {
		return nil, badInput{fmt.Errorf("graph %q of instance %q is not in the definition files", id, run.Instance)}
	}
	return console.Picture(ctx, rd, g, run, path, link)
}

// callFile is the file a sub-graph call's picture is written to beside out:
// run.svg and call path order/bill/payment give run.order.bill.payment.svg.
func callFile(out, callPath string) string {
	base := strings.TrimSuffix(out, filepath.Ext(out))
	return base + "." + strings.ReplaceAll(callPath, "/", ".") + ".svg"
}
