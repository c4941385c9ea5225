package team

import (
	"time"

	"github.com/flowteam/flowteam/trace"
)

// addUsage counts one model call with its usage in m.
func addUsage(m *trace.Metrics, u Usage) {
	m.ModelCalls++
	m.PromptTokens += u.PromptTokens
	m.CompletionTokens += u.CompletionTokens
	m.ThinkTokens += u.ReasoningTokens
	m.CachedTokens += u.CachedTokens
	m.TotalTokens += u.TotalTokens
}

// mergeMetrics adds the agent counts of o to m (durations add up: for concurrent runs
// take the wall time separately).
func mergeMetrics(m *trace.Metrics, o trace.Metrics) {
	m.Duration += o.Duration
	m.ModelCalls += o.ModelCalls
	m.ToolCalls += o.ToolCalls
	m.PromptTokens += o.PromptTokens
	m.CompletionTokens += o.CompletionTokens
	m.ThinkTokens += o.ThinkTokens
	m.CachedTokens += o.CachedTokens
	m.TotalTokens += o.TotalTokens
}

// usageOf returns the token counts of m as a Usage.
func usageOf(m trace.Metrics) Usage {
	return Usage{PromptTokens: m.PromptTokens, CompletionTokens: m.CompletionTokens, ReasoningTokens: m.ThinkTokens,
		CachedTokens: m.CachedTokens, TotalTokens: m.TotalTokens}
}

// SimpleTrace records a SimpleAgent run: the rendered instruction, the prompt, the
// answer, the model call's usage and the time it took.
type SimpleTrace struct {
	RunID       string        `json:"runId"`
	Agent       string        `json:"agent"`
	Instruction string        `json:"instruction,omitempty"`
	Prompt      string        `json:"prompt"`
	Answer      string        `json:"answer"`
	Reasoning   string        `json:"reasoning,omitempty"`
	Status      string        `json:"status"`
	Error       *Error        `json:"error,omitempty"`
	Started     time.Time     `json:"started"`
	Usage       Usage         `json:"usage"`
	Metrics     trace.Metrics `json:"metrics"`
}

// StepKind is the kind of a ReAct trace step.
type StepKind string

// ReAct step kinds.
const (
	StepReason      StepKind = "reason"      // a model call
	StepAction      StepKind = "action"      // one tool call executed (or decided by a human)
	StepObservation StepKind = "observation" // what a tool call produced, as the model sees it
)

// TraceStep is one step of a ReAct run. Reason steps carry the model's content, its
// reasoning, the tool calls it asked for and the usage; action steps the call, the
// human decision if there was one, and the time the tool took; observation steps the
// outcome.
type TraceStep struct {
	Kind StepKind `json:"kind"`
	// Turn is the model call the step belongs to, from 1.
	Turn        int           `json:"turn"`
	Started     time.Time     `json:"started"`
	Duration    time.Duration `json:"duration"`
	Content     string        `json:"content,omitempty"`
	Reasoning   string        `json:"reasoning,omitempty"`
	ToolCalls   []ToolCall    `json:"toolCalls,omitempty"`
	Usage       *Usage        `json:"usage,omitempty"`
	Call        *ToolCall     `json:"call,omitempty"`
	Decision    *Decision     `json:"decision,omitempty"`
	Observation *Observation  `json:"observation,omitempty"`
}

// ReActTrace records a ReAct run: its steps in order, the answer and the metrics. A
// run suspended for human decisions keeps its trace in the session and goes on
// recording when it resumes, so the trace of a paused run is the trace it would have
// had without the pause (plus the decisions).
type ReActTrace struct {
	RunID   string        `json:"runId"`
	Agent   string        `json:"agent"`
	Prompt  string        `json:"prompt"`
	Steps   []TraceStep   `json:"steps"`
	Answer  string        `json:"answer,omitempty"`
	Status  string        `json:"status"`
	Error   *Error        `json:"error,omitempty"`
	Started time.Time     `json:"started"`
	Metrics trace.Metrics `json:"metrics"`
}

// stepsOf returns the steps of one kind.
func (t *ReActTrace) stepsOf(kind StepKind) []TraceStep {
	var out []TraceStep
	for _, s := range t.Steps {
		if s.Kind == kind {
			out = append(out, s)
		}
	}
	return out
}
