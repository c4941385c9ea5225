package interceptor

import (
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/trace"
)

// runOutcome returns how the evaluation inv ended (flow.Invocation.Outcome): status,
// suspend reason and error. An error from the interceptor chain fails the run.
// The redactor is made only for those texts, as it copies the run's variables.
func runOutcome(inv *flow.Invocation, invokeErr error, cfg *config) (trace.Status, string, *trace.ErrorInfo) {
	st, reason, err := inv.Outcome()
	switch {
	case invokeErr != nil:
		return trace.Failed, "", errorInfo(invokeErr, cfg.redactor(inv.Context))
	case st == flow.StatusFailed:
		return trace.Failed, "", errorInfo(err, cfg.redactor(inv.Context))
	case st == flow.StatusSuspended:
		return trace.Suspended, cfg.redactor(inv.Context).String(reason), nil
	case st == flow.StatusStopped:
		return trace.Interrupted, "stopped", nil
	case st == flow.StatusInterrupted: // a sub-graph call whose branch was withdrawn
		return trace.Interrupted, "", nil
	}
	return trace.Completed, "", nil
}

// errorInfo converts an error into its structured, redacted form.
func errorInfo(err error, red *redact.Redactor) *trace.ErrorInfo {
	if err == nil {
		return &trace.ErrorInfo{Type: flow.ErrorTypeFlow, Code: flow.CodeTask, Message: "unknown error"}
	}
	se := flow.ToStructured(err)
	if se.Code == "" {
		se.Code = flow.CodeTask
	}
	return &trace.ErrorInfo{Type: se.Type, Code: se.Code, Message: red.String(se.Message)}
}
