package interceptor

import (
	"context"
	"fmt"
	"time"

	"github.com/flowteam/flowteam/trace"
)

// TaskEvent is a person's claim or submit of an approval task (package workflow's
// Event as plain data), for Audit.Task.
type TaskEvent struct {
	// Kind is "claim" or "submit".
	Kind string
	// Time is when it took effect; zero means now, by the audit's clock.
	Time     time.Time
	Graph    string
	Instance string
	// Node is the task's node: its id, or "graph:node" in a called sub-graph.
	Node string
	// Action is the submit's action (forward, back, forward_jump, back_jump,
	// restart, terminate); empty for a claim.
	Action string
	// Actor is who called, as workflow.Actor.String writes it ("actor=lead").
	Actor   string
	Comment string
	// Status is the instance's status after the call: running, completed or
	// terminated.
	Status string
}

// TaskRunPrefix starts the RunID of task records: "task:" and the instance id, so
// that the claims and submits of one instance read as one block of the audit.
const TaskRunPrefix = "task:"

// Task writes the record of a claim or a submit, at once, to every sink: a task
// record. It is a node record outside any run's numbering (Seq 0, as an orphan),
// with RunID TaskRunPrefix+instance, STARTED for a claim (the task now waits on
// its actor) and COMPLETED for a submit (it took effect, whatever its action), and
// these attributes: "task" (claim or submit), "action", "actor", "comment" (when
// given) and "status" (the instance's status after the call), redacted by the
// audit's Redactor: by key, by its patterns and by the values it was given
// (redact.Values); the instance's variables are not in scope here, so the secret
// values only they hold are not masked in a comment. Run records and node records of runs are unchanged by it, and
// trace.Records.Verify takes task records for orphans. It returns the sinks' errors
// (joined), or an error for a Kind other than claim or submit.
func (a *Audit) Task(ctx context.Context, ev TaskEvent) error {
	st := trace.Started
	switch ev.Kind {
	case "claim":
	case "submit":
		st = trace.Completed
	default:
		return fmt.Errorf("audit: task event kind %q: want claim or submit", ev.Kind)
	}
	attrs := map[string]any{"task": ev.Kind, "actor": ev.Actor, "status": ev.Status}
	if ev.Action != "" {
		attrs["action"] = ev.Action
	}
	if ev.Comment != "" {
		attrs["comment"] = ev.Comment
	}
	at := ev.Time
	if at.IsZero() {
		at = a.cfg.clock()
	}
	rec := trace.Record{Time: at, Status: st, GraphID: ev.Graph, Path: ev.Graph, NodeID: ev.Node,
		InstanceID: ev.Instance, RunID: TaskRunPrefix + ev.Instance, Attrs: a.cfg.redact.Map(attrs)}
	return a.write(ctx, []trace.Record{rec})
}
