// Package console shows graphs and runs as pictures and serves them, with the
// approval inbox, in a browser: what "flowteam serve" runs.
//
//	srv, err := console.New(console.Config{Engine: eng, Store: store, Audit: "audit.jsonl"})
//	...
//	defer srv.Close()
//	http.ListenAndServe("127.0.0.1:8080", srv)
//
// # Run pictures
//
// LoadRun gathers what one instance did from its audit records and its snapshot;
// Picture draws a graph coloured by it (with package export/svg, no Graphviz binary):
//
//	run, err := console.LoadRun(ctx, store, nil, records, "o-1", eng.Graph)
//	var rd svg.Renderer
//	img, err := console.Picture(ctx, &rd, g, run, run.Graph, nil)
//
// Nodes that ran are green with their counts, a node whose last execution failed is
// red with its error code as a tooltip, suspended and waiting nodes are amber, the
// stored frontier is outlined; links the run followed are bold, links it skipped
// from a node it ran are grey and dashed. A sub-graph call is drawn on its own,
// under its call path ("order/bill/payment"), and its calling node links there. An
// approval instance (package workflow) counts its completed tasks as visits.
//
// # Pages and API
//
// The pages are html/template files embedded in the binary, with a little plain
// JavaScript: graphs, instances (status filter, paging), one instance (its picture,
// audit timeline, variables, errors, history; a live instance follows server-sent
// events) and the task inbox. What they show of an instance is masked by its
// Redaction (Config.Redaction; by default Config.Redactor and the rules the
// instance records), and a claim or submit saves the instance as it says. The
// JSON API under /api/ serves the same data and the claim and submit actions;
// errors map to 404 unknown, 409 conflict, 403 not permitted, 400 bad input, 401 no
// token, 422 a failed script.
//
// # Who may do what
//
// Without Config.Users the console is read-only. With it every request needs a
// token of the users file (a bearer token, or the cookie the sign-in form sets);
// every change also passes http.CrossOriginProtection, and a claim or submit acts
// as the signed-in user's actor. Config.Loopback refuses requests whose Host is not
// a loopback name, against DNS rebinding.
package console
