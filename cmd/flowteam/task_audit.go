package main

import (
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// isTaskLog reports whether run holds the task records of an instance (the claims
// and submits "flowteam task --audit" writes): no run of the engine, so "flowteam
// audit" shows them under a header of their own and leaves them out of its summary.
func isTaskLog(run trace.Records) bool {
	return len(run) > 0 && run[0].Seq == 0 && strings.HasPrefix(run[0].RunID, interceptor.TaskRunPrefix)
}

// taskLogHeader is the timeline header of an instance's task records.
func taskLogHeader(run trace.Records) string {
	return fmt.Sprintf("tasks of instance %s  graph %s  (claims and submits)", auditID(run[0].InstanceID), auditID(run[0].GraphID))
}

// taskNote describes a task record's claim or submit for the timeline ("" for any
// other record): "submit back by actor=lead: "which dates?" -> running".
func taskNote(r *trace.Record) string {
	kind, _ := r.Attrs["task"].(string)
	if r.Seq != 0 || kind == "" || !strings.HasPrefix(r.RunID, interceptor.TaskRunPrefix) {
		return ""
	}
	s := kind
	if a, _ := r.Attrs["action"].(string); a != "" {
		s += " " + a
	}
	s += fmt.Sprintf(" by %v", r.Attrs["actor"])
	if c, _ := r.Attrs["comment"].(string); c != "" {
		s += fmt.Sprintf(": %q", auditOneLine(c))
	}
	return s + fmt.Sprintf(" -> %v", r.Attrs["status"])
}
