// Package trace holds the plain data that flowteam records about runs: the last node
// per call path (FlowTrace), node outcome statuses, audit records and run metrics. It
// imports only the standard library, so every other package can share these types
// without import cycles.
//
// Reading an audit file (JSON Lines, one Record a line) and asking it questions:
//
//	var recs trace.Records
//	for sc.Scan() {
//		var r trace.Record
//		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
//			return err
//		}
//		recs = append(recs, r)
//	}
//	for _, r := range recs.Nodes().Terminal() {
//		fmt.Println(r.NodeID, r.Status, r.Reason) // manager SUSPENDED waiting for the manager
//	}
//	m := recs.Metrics("r1") // the run's status and its nodes counted by outcome
//	err := recs.Verify()    // nil when every run is complete and consistent
//
// ExampleRecords runs this as a test.
//
// # Writing records
//
// Record.AppendJSON writes one record as a JSON line; an Encoder writes a stream of
// them faster, caching what consecutive records share. Both write what encoding/json
// writes, but for a root graph's path, which they leave out (decoding puts it back).
//
// # Counting
//
// Count adds to the CounterSink a context carries (WithCounterSink,
// WithRunCounterSink): how interceptors and tasks report what a run did beyond its
// records, without importing the package that collects it.
package trace

import "time"

// Status is the state a node execution (or a whole run) reached, as written to audit
// records. The values are the upper-case words of the audit log.
type Status string

// Audit statuses. Every STARTED record is followed by exactly one terminal record.
const (
	Started     Status = "STARTED"
	Completed   Status = "COMPLETED"
	Suspended   Status = "SUSPENDED"
	Interrupted Status = "INTERRUPTED"
	Failed      Status = "FAILED"
)

// Terminal reports whether s ends a node execution.
func (s Status) Terminal() bool { return s != Started && s != "" }

// NodeRecord is the last node a graph (identified by its call path) reached.
type NodeRecord struct {
	// Path is the call path of the graph: the root graph id, then "/node/graph" for
	// every sub-graph call on the way down.
	Path string `json:"path"`
	// GraphID is the id of the graph the node belongs to.
	GraphID string `json:"graph"`
	// NodeID is the id of the node.
	NodeID string `json:"node"`
	// NodeType is the node's type name (start, activity, exclusive, ...).
	NodeType string `json:"type"`
	// Title is the node's title, if any.
	Title string `json:"title,omitempty"`
	// Time is when the record was taken (when the graph's call ended, at a checkpoint,
	// or when the trace was read), not when the node started: the engine does not read
	// the clock for every node.
	Time time.Time `json:"time"`
}

// FlowTrace keeps the last node reached per call path. It answers "where did this run
// stop" for recovery; it is not an audit log and cannot say which path a run took.
// FlowTrace is plain data: the engine guards it while a run is in progress.
type FlowTrace struct {
	// Last maps a call path to the last node recorded under it.
	Last map[string]NodeRecord `json:"last"`
}

// Record stores rec as the last node of its call path.
func (t *FlowTrace) Record(rec NodeRecord) {
	if t.Last == nil {
		t.Last = make(map[string]NodeRecord)
	}
	t.Last[rec.Path] = rec
}

// LastNode returns the id of the last node recorded under path, or "" if none.
func (t *FlowTrace) LastNode(path string) string {
	return t.Last[path].NodeID
}

// Clone returns an independent copy of t.
func (t *FlowTrace) Clone() FlowTrace {
	c := FlowTrace{Last: make(map[string]NodeRecord, len(t.Last))}
	for k, v := range t.Last {
		c.Last[k] = v
	}
	return c
}
