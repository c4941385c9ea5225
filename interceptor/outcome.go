package interceptor

import (
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/trace"
)

// RunOutcome returns how the evaluation inv ended (flow.Invocation.Outcome), as the
// audit records it: status, suspend reason and error. invokeErr is what inv.Invoke
// returned; an error from the interceptor chain fails the run. The reason and the
// error's message are masked by red with the secret values of the run's variables
// (redact.Redactor.ForVars), copied only when there is such text; a nil red masks
// nothing.
func RunOutcome(inv *flow.Invocation, invokeErr error, red *redact.Redactor) (trace.Status, string, *trace.ErrorInfo) {
	st, reason, err := inv.Outcome()
	switch {
	case invokeErr != nil:
		return trace.Failed, "", ErrorInfo(invokeErr, forVars(red, inv.Context))
	case st == flow.StatusFailed:
		return trace.Failed, "", ErrorInfo(err, forVars(red, inv.Context))
	case st == flow.StatusSuspended:
		return trace.Suspended, forVars(red, inv.Context).String(reason), nil
	case st == flow.StatusStopped:
		return trace.Interrupted, "stopped", nil
	case st == flow.StatusInterrupted: // a sub-graph call whose branch was withdrawn
		return trace.Interrupted, "", nil
	}
	return trace.Completed, "", nil
}

// ErrorInfo converts an error into its structured form (flow.ToStructured), its
// message masked by red (nil masks nothing). A nil err gives a task error with the
// message "unknown error"; an error without a code gets flow.CodeTask.
func ErrorInfo(err error, red *redact.Redactor) *trace.ErrorInfo {
	if err == nil {
		return &trace.ErrorInfo{Type: flow.ErrorTypeFlow, Code: flow.CodeTask, Message: "unknown error"}
	}
	se := flow.ToStructured(err)
	if se.Code == "" {
		se.Code = flow.CodeTask
	}
	return &trace.ErrorInfo{Type: se.Type, Code: se.Code, Message: red.String(se.Message)}
}

// forVars returns red also masking the secret values of fc's variables, or nil if
// either is nil. It copies them: call it only where there is text to write.
func forVars(red *redact.Redactor, fc *flow.Context) *redact.Redactor {
	if red == nil || fc == nil {
		return nil
	}
	return red.ForVars(fc.Vars())
}
