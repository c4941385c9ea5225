package workflow

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// TaskState is the state of one node's task in an instance.
type TaskState string

// Task states. A node without a record is Unknown.
const (
	Unknown    TaskState = "unknown"
	Waiting    TaskState = "waiting"
	Completed  TaskState = "completed"
	Terminated TaskState = "terminated"
)

// Action is what a submit does to a task (Solon's TaskAction).
type Action string

// Actions, with Solon's meaning.
const (
	// Forward completes the task (running its script) and moves the instance on.
	Forward Action = "forward"
	// ForwardJump completes every task up to the target, which becomes waiting.
	ForwardJump Action = "forward_jump"
	// Back removes the task's record and the previous step's, so that step is
	// active again.
	Back Action = "back"
	// BackJump steps back until the target is where the instance stands, and makes
	// it waiting.
	BackJump Action = "back_jump"
	// Restart removes every record: the instance stands at the start again.
	Restart Action = "restart"
	// Terminate marks the task terminated: nothing moves until a restart.
	Terminate Action = "terminate"
)

// ParseAction returns the action named s, or an error wrapping ErrUnknownAction.
func ParseAction(s string) (Action, error) {
	switch a := Action(s); a {
	case Forward, ForwardJump, Back, BackJump, Restart, Terminate:
		return a, nil
	}
	return "", fmt.Errorf("%w %q (want forward, forward_jump, back, back_jump, restart or terminate)", ErrUnknownAction, s)
}

// needsAdmin reports whether only an administrator may submit the action.
func (a Action) needsAdmin() bool { return a != Forward && a != Back }

// Status is where an instance stands as a whole.
type Status string

// Instance statuses.
const (
	// Running: some task is still to be done.
	Running Status = "running"
	// Done: every branch reached its end.
	Done Status = "completed"
	// Stopped: a task was terminated; only a restart moves the instance again.
	Stopped Status = "terminated"
)

// Actor is who calls: one value per key the controller reads, such as
// Actor{"role": "tl"}. It is given with every call and never stored as a variable.
type Actor map[string]string

// As returns the actor whose value for key is value.
func As(key, value string) Actor { return Actor{key: value} }

// String lists the actor's values as key=value, sorted by key.
func (a Actor) String() string {
	if len(a) == 0 {
		return "(no actor)"
	}
	b, _ := json.Marshal(map[string]string(a)) // sorted keys
	return strings.NewReplacer(`{`, ``, `}`, ``, `"`, ``, `:`, `=`).Replace(string(b))
}

// Task is a node's task as a walk over an instance found it.
type Task struct {
	// Node is the node; for a node of a called sub-graph, Node.Graph() is that graph.
	Node *flow.Node
	// State is the task's state: Waiting for a task the actor claimed or that waits
	// for someone, Unknown for one nobody claimed yet, Terminated for the task that
	// stopped the instance.
	State TaskState
	root  string
}

// ID is the task's node id: the node's id in the root graph, "graph:node" for a node
// of a called sub-graph (the form every call that takes a node accepts).
func (t *Task) ID() string {
	if g := t.Node.Graph().ID; g != t.root {
		return g + ":" + t.Node.ID
	}
	return t.Node.ID
}

// key is the record key of a node: graph id and node id, as Solon keys its states.
func key(n *flow.Node) string { return n.Graph().ID + ":" + n.ID }
