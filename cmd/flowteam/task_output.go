package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/workflow"
)

// taskJSON is a task as "flowteam task" prints it.
type taskJSON struct {
	Node  string             `json:"node"`
	Title string             `json:"title"`
	State workflow.TaskState `json:"state"`
	Meta  map[string]any     `json:"meta"`
}

func newTaskJSON(t *workflow.Task) *taskJSON {
	if t == nil {
		return nil
	}
	meta := t.Node.Meta
	if meta == nil {
		meta = map[string]any{}
	}
	return &taskJSON{Node: t.ID(), Title: t.Node.Title, State: t.State, Meta: meta}
}

// standingJSON is the output of claim and find.
type standingJSON struct {
	Instance string          `json:"instance"`
	Graph    string          `json:"graph"`
	Status   workflow.Status `json:"status"`
	Task     *taskJSON       `json:"task"`
}

type taskList struct {
	Instance string     `json:"instance"`
	Graph    string     `json:"graph"`
	Tasks    []taskJSON `json:"tasks"`
}

type stateJSON struct {
	Instance string             `json:"instance"`
	Node     string             `json:"node"`
	State    workflow.TaskState `json:"state"`
}

type submitJSON struct {
	Instance string          `json:"instance"`
	Graph    string          `json:"graph"`
	Node     string          `json:"node"`
	Action   workflow.Action `json:"action"`
	Status   workflow.Status `json:"status"`
}

type historyJSON struct {
	Instance string           `json:"instance"`
	Graph    string           `json:"graph"`
	Status   workflow.Status  `json:"status"`
	History  []workflow.Entry `json:"history"`
}

// standing is the output of claim and find: the task with the instance's status.
func standing(ctx context.Context, x *workflow.Executor, graph, id string, task *workflow.Task, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	inst, err := x.Instance(ctx, id)
	if err != nil {
		return nil, err
	}
	return standingJSON{Instance: id, Graph: graph, Status: inst.Status, Task: newTaskJSON(task)}, nil
}

// taskHistory is the output of history: the instance's submits, their variables,
// comments and actors masked with red, which learns the secret values of the
// instance's variables and of every entry's.
func taskHistory(ctx context.Context, repo workflow.Repository, id string, red *redact.Redactor) (any, error) {
	inst, err := repo.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	red = red.ForVars(inst.Vars)
	for _, e := range inst.History {
		red = red.ForVars(e.Vars)
	}
	return historyJSON{Instance: id, Graph: inst.Graph, Status: inst.Status, History: workflow.RedactHistory(red, inst.History)}, nil
}

// writeTaskOutput prints out as JSON or as text.
func writeTaskOutput(w io.Writer, format string, out any) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	var b strings.Builder
	switch o := out.(type) {
	case standingJSON:
		fmt.Fprintf(&b, "instance %s (graph %s): %s\n", o.Instance, o.Graph, o.Status)
		if o.Task == nil {
			b.WriteString("task: none\n")
		} else {
			fmt.Fprintf(&b, "task: %s %s %q\n", o.Task.Node, o.Task.State, o.Task.Title)
		}
	case taskList:
		for _, t := range o.Tasks {
			fmt.Fprintf(&b, "%s %s %q\n", t.Node, t.State, t.Title)
		}
	case stateJSON:
		fmt.Fprintf(&b, "%s\n", o.State)
	case submitJSON:
		fmt.Fprintf(&b, "instance %s: %s %s: %s\n", o.Instance, o.Action, o.Node, o.Status)
	case historyJSON:
		for _, e := range o.History {
			fmt.Fprintf(&b, "%s  %-12s %-10s %s", e.Time.Format(time.RFC3339), e.Action, e.Node, e.Actor)
			if e.Comment != "" {
				fmt.Fprintf(&b, "  %q", e.Comment)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "instance %s (graph %s): %s\n", o.Instance, o.Graph, o.Status)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
