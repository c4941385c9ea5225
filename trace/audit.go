package trace

import (
	"strings"
	"time"
)

// Record is one entry of the audit log: a node execution starting or ending, or a run
// starting or ending.
//
// Node records come in pairs: a STARTED record, then exactly one terminal record
// (COMPLETED, FAILED, INTERRUPTED or SUSPENDED) for the same execution. A branch runs
// one node at a time, so within a run the records of one branch (BranchID) alternate
// STARTED / terminal; Records.Verify checks this.
//
// Run records have an empty NodeID: one STARTED record when the root graph's evaluation
// (Eval or Resume) begins, and one terminal record when it ends, whose status is the
// run's outcome: COMPLETED, FAILED or SUSPENDED (see the interceptor package for how a
// stopped run is written). Sub-graph evaluations have no run records of their own: the
// calling node's records frame them, and their nodes carry the sub-graph's call path.
//
// The JSON field names are those of the JSON Lines audit file; AppendJSON writes the
// same encoding as encoding/json with HTML escaping off, faster, but for the time (in
// UTC, with nine fraction digits) and a path equal to the graph id, which it leaves
// out (UnmarshalJSON puts it back).
type Record struct {
	// Seq numbers the records of one run from 1, in the order they were produced.
	// It is 0 on an orphan record: a node record written alone because it came
	// outside any run the audit saw or after its run's records were written (an
	// interceptor gave up on the run while a node went on). An orphan belongs to no
	// run's sequence, and Records.Verify does not count it in one.
	Seq int64 `json:"seq"`
	// Time is when the record was produced (for a terminal record: when the node
	// ended).
	Time time.Time `json:"time"`
	// Status is STARTED or how the node (or run) ended.
	Status Status `json:"status"`
	// GraphID is the id of the graph the node belongs to (the root graph for run
	// records).
	GraphID string `json:"graph"`
	// Path is the call path of that graph: the root graph id, then "/node/graph" for
	// every sub-graph call on the way down. The JSON encoding leaves it out when it
	// equals GraphID (every record of a root graph), and decoding puts it back.
	Path string `json:"path"`
	// NodeID is the node's id; empty on run records.
	NodeID string `json:"node,omitempty"`
	// NodeType is the node's type name (start, activity, exclusive, ...).
	NodeType string `json:"type,omitempty"`
	// Title is the node's title, if any.
	Title string `json:"title,omitempty"`
	// InstanceID is the id of the flow instance (the FlowContext).
	InstanceID string `json:"instance"`
	// RunID identifies the run (one Eval or Resume).
	RunID string `json:"run"`
	// BranchID is the stable id of the branch that ran the node ("main", "main/p:a",
	// "main/call/child", "main/loop[2]"...), derived from the gateways and links that
	// created it; empty on run records.
	BranchID string `json:"branch,omitempty"`
	// Agent is the name of the agent the node runs, when the node is an agent.
	Agent string `json:"agent,omitempty"`
	// Step is the run's step number of the execution (terminal node records).
	Step int `json:"step,omitempty"`
	// Attempt numbers the retries of one node execution: set on terminal records from
	// the second attempt on (2 is the first retry).
	Attempt int `json:"attempt,omitempty"`
	// Duration is how long the node (or the run) took; on terminal records.
	Duration time.Duration `json:"duration_ns,omitempty"`
	// Error describes the failure on FAILED records.
	Error *ErrorInfo `json:"error,omitempty"`
	// Reason is the suspend reason on SUSPENDED records.
	Reason string `json:"reason,omitempty"`
	// Arrivals is, for a join, how many branches it waited for.
	Arrivals int `json:"arrivals,omitempty"`
	// Retrying is true on a FAILED record whose node will be tried again.
	Retrying bool `json:"retrying,omitempty"`
	// Recovered is true on a FAILED record the error policy recovered from: the run
	// went on (along the node's links or to a fallback node).
	Recovered bool `json:"recovered,omitempty"`
	// Goto is, on a recovered FAILED record, the fallback node the error policy sent
	// the run to (a fallback path taken).
	Goto string `json:"goto,omitempty"`
	// Resumed is true on the run records of a resumed run.
	Resumed bool `json:"resumed,omitempty"`
	// Attrs holds extra attributes an application attached to the record (redacted
	// before they are written).
	Attrs map[string]any `json:"attrs,omitempty"`
}

// ErrorInfo is the structured form of an error in a record: what programs branch on
// (Type, Code) and what people read (Message).
type ErrorInfo struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IsRun reports whether r is a run record rather than a node record.
func (r *Record) IsRun() bool { return r.NodeID == "" }

// Qualified returns the node id qualified by its call path, "callpath:node".
func (r *Record) Qualified() string { return r.Path + ":" + r.NodeID }

// Depth returns how many sub-graph calls deep the record's graph is (0 for the root
// graph): each call adds "/node/graph" to the call path.
func (r *Record) Depth() int { return strings.Count(r.Path, "/") / 2 }
