package trace

import (
	"context"
	"time"
)

// Metrics summarizes one run: how many node executions ended in each status, the
// retries, recoveries, fallbacks and human rejections, and how long the run took;
// for agent runs, also the model and tool calls and the tokens.
type Metrics struct {
	RunID      string `json:"run"`
	InstanceID string `json:"instance"`
	GraphID    string `json:"graph"`
	// Status is the run's outcome ("" while it runs), as on its terminal run record.
	Status Status `json:"status,omitempty"`
	// Started counts node executions (retries included); each ends in one of the next
	// four counters.
	Started     int `json:"started"`
	Completed   int `json:"completed"`
	Failed      int `json:"failed"`
	Interrupted int `json:"interrupted"`
	Suspended   int `json:"suspended"`
	// Retries counts failed attempts recorded as retrying (a retry a cancellation put
	// off included: the node runs again when the run resumes).
	Retries int `json:"retries"`
	// Recovered counts failures the error policy recovered from (the run went on).
	Recovered int `json:"recovered"`
	// Fallbacks counts the fallback paths taken: the recoveries an error policy sent
	// to a fallback node (FAILED records with Goto, as flow.Result.Fallbacks counts
	// them), plus those reported with Count(CountFallback) by code that takes a
	// fallback of its own. Rejections counts the decisions a human rejected, as
	// reported with Count(CountRejection).
	Fallbacks  int `json:"fallbacks"`
	Rejections int `json:"rejections"`
	// Duration is the wall time of the run (0 while it runs).
	Duration time.Duration `json:"duration_ns"`

	// The counts of agent runs (package team): model calls, tool calls and tokens.
	// ThinkTokens are the reasoning tokens of thinking models and CachedTokens the
	// prompt tokens served from the provider's cache; both are included in the
	// completion and prompt counts, as the providers report them.
	ModelCalls       int   `json:"modelCalls,omitempty"`
	ToolCalls        int   `json:"toolCalls,omitempty"`
	PromptTokens     int64 `json:"promptTokens,omitempty"`
	CompletionTokens int64 `json:"completionTokens,omitempty"`
	ThinkTokens      int64 `json:"thinkTokens,omitempty"`
	CachedTokens     int64 `json:"cachedTokens,omitempty"`
	TotalTokens      int64 `json:"totalTokens,omitempty"`
}

// Ended returns how many node executions ended (every status but STARTED).
func (m *Metrics) Ended() int { return m.Completed + m.Failed + m.Interrupted + m.Suspended }

// Add counts one audit record of the run: node records by status, run records for the
// outcome and duration.
func (m *Metrics) Add(r *Record) {
	if r.IsRun() {
		if m.RunID == "" {
			m.RunID, m.InstanceID, m.GraphID = r.RunID, r.InstanceID, r.GraphID
		}
		if r.Status.Terminal() {
			m.Status, m.Duration = r.Status, r.Duration
		}
		return
	}
	switch r.Status {
	case Started:
		m.Started++
	case Completed:
		m.Completed++
	case Interrupted:
		m.Interrupted++
	case Suspended:
		m.Suspended++
	case Failed:
		m.Failed++
		if r.Retrying {
			m.Retries++
		}
		if r.Recovered {
			m.Recovered++
			if r.Goto != "" {
				m.Fallbacks++
			}
		}
	}
}

// Metrics computes the metrics of one run from its records. Fallbacks counts only
// those records show (recoveries with Goto), Rejections stays 0: what was reported
// with Count is not in records.
//
// Orphan records (Seq 0, see Record.Seq) are not counted for a run that has records
// of its own: they come after the run recorded how their executions ended. A run
// with orphans only (one the audit did not see) is counted from them.
func (rs Records) Metrics(runID string) Metrics {
	m, orphans := Metrics{RunID: runID}, Metrics{RunID: runID}
	own := false
	for i := range rs {
		if r := &rs[i]; r.RunID == runID {
			to := &m
			if r.Seq == 0 {
				to = &orphans
			} else {
				own = true
			}
			if to.InstanceID == "" && to.GraphID == "" {
				to.InstanceID, to.GraphID = r.InstanceID, r.GraphID
			}
			to.Add(r)
		}
	}
	if !own {
		return orphans
	}
	return m
}

// Counter names a run event that the engine does not see by itself.
type Counter uint8

// Counters reported with Count.
const (
	// CountFallback: an error handler took a fallback (degraded) path.
	CountFallback Counter = iota + 1
	// CountRejection: a human rejected a decision (HITL).
	CountRejection
	// CountRetry: a retry the engine did not make itself (an agent retrying a tool).
	CountRetry
)

// CounterSink receives the events reported with Count; interceptors that keep run
// metrics put one in the context of the run with WithRunCounterSink, other code with
// WithCounterSink.
type CounterSink interface {
	Count(c Counter, n int)
}

type counterSinks struct {
	sink CounterSink
	run  string // the run of a sink added with WithRunCounterSink, else ""
	next *counterSinks
}

type counterKey struct{}

// WithCounterSink returns a context whose Count calls also reach s (the sinks already
// in ctx keep receiving them), in that context and in every run started from it.
func WithCounterSink(ctx context.Context, s CounterSink) context.Context {
	return withSink(ctx, s, "")
}

// WithRunCounterSink returns a context whose Count calls reach s as a sink of the run
// runID, which counts the events of that run. A run started from inside another one
// (a task running a graph with its context) is a run of its own, whose events count
// for it and not also for the runs around it: Count reaches the run sinks of the
// innermost run that has any, and the sinks of WithCounterSink. For example, with a
// metrics interceptor on the engine, a task of run A that runs graph B on it:
//
//	trace.Count(ctx, trace.CountRejection, 1) // in A's task: counts for A
//	trace.Count(ctx, trace.CountRejection, 1) // in B's task: counts for B, not for A
//
// and, if B runs on an engine without one, the second call counts for A, as nothing
// else counts it. A sink the application added with WithCounterSink around A sees
// both.
func WithRunCounterSink(ctx context.Context, runID string, s CounterSink) context.Context {
	return withSink(ctx, s, runID)
}

func withSink(ctx context.Context, s CounterSink, run string) context.Context {
	next, _ := ctx.Value(counterKey{}).(*counterSinks)
	return context.WithValue(ctx, counterKey{}, &counterSinks{sink: s, run: run, next: next})
}

// Count reports n events of kind c to the CounterSinks in ctx (the run's context, as
// a task or handler receives it): those of WithCounterSink, and those of the
// innermost run with sinks of WithRunCounterSink. Without a sink it does nothing.
func Count(ctx context.Context, c Counter, n int) {
	run := "" // the innermost run with a sink
	for s, _ := ctx.Value(counterKey{}).(*counterSinks); s != nil; s = s.next {
		if s.run != "" {
			if run == "" {
				run = s.run
			} else if s.run != run {
				continue // a run around the one the event belongs to
			}
		}
		s.sink.Count(c, n)
	}
}
