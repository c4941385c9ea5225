// Package console shows graphs and runs as pictures and serves them, with the
// approval inbox, in a browser: what "flowteam serve" runs.
//
// A run picture colours a graph by what one instance did:
//
//	run, err := console.LoadRun(ctx, store, nil, records, "o-1", eng.Graph)
//	var rd svg.Renderer
//	img, err := console.Picture(ctx, &rd, g, run, run.Graph, nil)
//
// # Run pictures
//
// LoadRun reads the instance's audit records (any may be given: others are
// ignored) and its snapshot. Nodes that ran are green with their counts, a node
// whose last execution failed is red with its error code as a tooltip, suspended
// and waiting nodes are amber, the stored frontier is outlined; links the run
// followed are bold, links it skipped from a node it ran are grey and dashed. A
// sub-graph call is drawn on its own, under its call path ("order/bill/payment"),
// and its calling node links there. An approval instance (package workflow) counts
// its completed tasks as visits and its waiting tasks as waiting.
package console
