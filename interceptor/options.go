package interceptor

import (
	"log/slog"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/trace"
)

// Option configures the interceptors of this package; each says which ones it applies to.
type Option func(*config)

type config struct {
	sinks     []Sink
	redact    *redact.Redactor
	strict    bool
	logger    *slog.Logger
	batch     int
	agent     func(c *flow.Context, n *flow.Node) string
	attrs     func(c *flow.Context, n *flow.Node, end *flow.NodeEnd) map[string]any
	now       func() time.Time
	recorder  MetricsRecorder
	retention int
	onRun     func(trace.Metrics)
	every     time.Duration // WithFlushInterval
	durable   bool          // WithDurableNodes
}

// Defaults.
const (
	// DefaultBatchSize is how many records of a run the audit keeps before writing them.
	DefaultBatchSize = 4096
	// DefaultRetention is how many finished runs the Metrics interceptor remembers.
	DefaultRetention = 1024
)

func newConfig(opts []Option) config {
	c := config{redact: redact.New(), batch: DefaultBatchSize, retention: DefaultRetention}
	for _, o := range opts {
		o(&c)
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.batch < 1 {
		c.batch = 1
	}
	return c
}

// WithSink adds a sink the audit writes every record to (Audit); it may repeat.
func WithSink(s Sink) Option { return func(c *config) { c.sinks = append(c.sinks, s) } }

// WithRedactor replaces the default redactor, redact.New() (Audit). A nil
// redactor disables redaction. Where a record gets text (an error message, a suspend
// reason, attributes), the redactor also masks the secret values of the node's
// variables (redact.Redactor.ForVars).
func WithRedactor(r *redact.Redactor) Option { return func(c *config) { c.redact = r } }

// WithRedactKeys adds sensitive keys to the redactor's (Audit): to the
// default ones, or to those of the redactor WithRedactor set before it.
func WithRedactKeys(keys ...string) Option {
	return func(c *config) { c.redact = c.redact.With(redact.Keys(keys...)) }
}

// redactor returns the configured redactor, also masking the secret values of fc's
// variables. It copies them: call it only where there is text to write.
func (c *config) redactor(fc *flow.Context) *redact.Redactor { return forVars(c.redact, fc) }

// WithStrict makes a failing sink fail the run (Audit): once the run has ended and its
// last records are written, the root InterceptFlow returns the first sink error (a run
// that failed by itself keeps its own error). A mid-run batch failure does not stop
// the run's nodes. By default a sink failure is logged once per sink and counted.
func WithStrict() Option { return func(c *config) { c.strict = true } }

// WithLogger sets the logger that reports sink failures (Audit); default slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithBatchSize sets how many records of a run are kept before they are written ahead
// of the run's end (Audit; default DefaultBatchSize); 1 suits a slog sink watched live.
func WithBatchSize(n int) Option { return func(c *config) { c.batch = n } }

// WithFlushInterval makes the audit write a run's buffered records at least every d
// while the run goes on (Audit), so that a process that dies loses at most the records
// of the last d: a goroutine per run writes them and ends with the run. The default, 0,
// writes when a batch is full (WithBatchSize) and when the run ends, halted or not.
func WithFlushInterval(d time.Duration) Option { return func(c *config) { c.every = d } }

// WithDurableNodes makes the audit write every node's records as they happen (Audit):
// the STARTED record before the node's task runs, the terminal record, followed by a
// Sync of every sink that has one (JSONL.Sync), before the engine moves the branch on.
// The engine takes a node's checkpoint (flow.WithCheckpoint, session.PerNode) after
// that, so a checkpoint saved is never ahead of the audit: after a crash, every node
// the snapshot counts done has its records, and a node that was running has its
// STARTED record. It costs a write per record and a sync per node (branches that end
// together may share one). A JSONL sink needs no WithFsync for it: with WithFsync it
// syncs every write, the STARTED records' too, two syncs per node.
func WithDurableNodes() Option { return func(c *config) { c.durable = true } }

// WithAgentName sets how a node's agent name is found (Audit). The default is
// AgentName.
func WithAgentName(fn func(c *flow.Context, n *flow.Node) string) Option {
	return func(c *config) { c.agent = fn }
}

// WithAttrs attaches attributes to node records (Audit): fn is called for the STARTED
// record with a nil end and for the terminal record with the node's end. Values under
// sensitive keys are masked before they are written.
func WithAttrs(fn func(c *flow.Context, n *flow.Node, end *flow.NodeEnd) map[string]any) Option {
	return func(c *config) { c.attrs = fn }
}

// WithClock sets the clock of record times and run durations (Audit, Metrics).
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithRecorder makes Metrics hand what it counts to r as it counts it (Metrics), as
// package otelflow's Instruments records it to OpenTelemetry.
func WithRecorder(r MetricsRecorder) Option { return func(c *config) { c.recorder = r } }

// WithRetention sets how many finished runs Metrics.Run remembers (DefaultRetention).
func WithRetention(n int) Option { return func(c *config) { c.retention = n } }

// WithRunMetrics calls fn with what Metrics.Run reports for a run id when each of its
// evaluations ends (Metrics).
func WithRunMetrics(fn func(trace.Metrics)) Option { return func(c *config) { c.onRun = fn } }

// clock returns the current time: the configured clock's, else time.Now.
func (c *config) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// since returns the current time as base plus the monotonic time elapsed since base
// (base must come from clock): half the cost of time.Now.
func (c *config) since(base time.Time) time.Time {
	if c.now != nil {
		return c.now()
	}
	return base.Add(time.Since(base))
}

// AgentName returns the name of the agent that runs n, as WithAgentName does by
// default: the node's meta "agent", else the Go task's AgentName() string, else "".
func AgentName(n *flow.Node) string {
	if s, ok := n.Meta["agent"].(string); ok {
		return s
	}
	if a, ok := n.Component.(interface{ AgentName() string }); ok {
		return a.AgentName()
	}
	return ""
}

func (c *config) agentOf(fc *flow.Context, n *flow.Node) string {
	if c.agent != nil {
		return c.agent(fc, n)
	}
	return AgentName(n)
}
