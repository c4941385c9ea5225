// Package interceptor holds ready-made flow.Interceptors: the audit log (Audit, with
// JSON Lines, log/slog and in-memory sinks) and run metrics (Metrics). Package
// otelflow reports runs to OpenTelemetry: spans (Tracing) and the metrics'
// instruments (Instruments).
//
//	sink, err := interceptor.OpenJSONL("audit.jsonl")
//	if err != nil {
//		return err
//	}
//	defer sink.Close()
//	audit := interceptor.NewAudit(interceptor.WithSink(sink))
//	engine := flow.NewEngine(flow.WithInterceptor(audit, 0))
//
// # What the audit records
//
// For every run: a run STARTED record, for every node execution a STARTED record and
// exactly one terminal record (COMPLETED, FAILED with a structured error,
// INTERRUPTED or SUSPENDED with the reason), and a terminal run record with the run's
// outcome (see trace.Record). Records are numbered per run (Seq) and carry the
// instance, run and branch ids; trace.Records.Verify checks the invariants.
// Sub-graph calls have no run records: their node records carry the call path. A
// node event that arrives after its run was written is an orphan record (Seq 0).
//
// # Approval tasks
//
// Audit.Task writes a task record for a person's claim or submit of an approval
// task (package workflow; wire it with workflow.WithObserver): outside any run's
// numbering (Seq 0), with run id "task:<instance>", STARTED for a claim and
// COMPLETED for a submit, and the attributes task, action, actor, comment and
// status. Records of runs are unchanged.
//
// # Sinks and failures
//
// Records are buffered per run and written when the run ends, in batches of
// WithBatchSize, and every WithFlushInterval. A JSONL sink writes a batch with one
// call, so concurrent runs never interleave lines; WithFsync syncs after every batch.
// A failing sink is logged once and counted (Audit.Failures); WithStrict makes it
// fail the run instead.
//
// # Surviving a crash
//
// With per-node checkpoints (session.PerNode), WithDurableNodes writes each node's
// records, and syncs the sinks, before the engine takes the node's checkpoint: after
// a crash the audit holds every node the snapshot counts done, and the STARTED record
// of a node that was running. That record keeps no end (nor does the crashed run):
// the resumed run runs the node again and records it anew.
//
// # Redaction
//
// The audit masks secrets with a redact.Redactor (redact.New() unless
// WithRedactor or WithRedactKeys says otherwise): values under sensitive keys in
// attributes, and, in error messages, suspend reasons and attributes, the secret
// values of the node's variables and the matches of the redactor's patterns.
//
//	red := redact.New(redact.Secrets("employee"))
//	audit := interceptor.NewAudit(interceptor.WithSink(sink), interceptor.WithRedactor(red))
//
// # Metrics
//
// Metrics counts per run the node executions by status, retries, recoveries,
// fallbacks and rejections (code that knows calls trace.Count), and the run's
// duration; Metrics.Run returns them by run id, WithRunMetrics as each run ends, and
// WithRecorder hands them to a MetricsRecorder such as otelflow.Instruments.
package interceptor
