// Package otelflow reports flow runs to OpenTelemetry: Tracing opens a span per
// graph evaluation and per node execution, and Instruments records the counts of an
// interceptor.Metrics as OpenTelemetry metrics. It lives apart from package
// interceptor so that the audit does not depend on the OpenTelemetry API.
//
//	tracing := otelflow.NewTracing(otel.GetTracerProvider())
//	instruments, err := otelflow.NewInstruments(otel.GetMeterProvider())
//	if err != nil {
//		return err
//	}
//	metrics, _ := interceptor.NewMetrics(interceptor.WithRecorder(instruments))
//	engine := flow.NewEngine(flow.WithInterceptor(tracing, 0), flow.WithInterceptor(metrics, 0))
//
// # Spans
//
// A run's span is named "flow <graph id>", a node's "node <node id>", its child. A
// sub-graph call's span is a child of its calling node's. A node's task runs with its
// node's span in its context, so the spans it starts nest under it. Spans carry the
// flow.* attributes (AttrGraphID and the others) and, when they end, the status; a
// failure is an "exception" event and the span status Error.
//
// # Redaction
//
// Error messages and suspend reasons are masked with a redact.Redactor, redact.New()
// unless WithRedactor or WithRedactKeys says otherwise, as the audit masks them: the
// secret values of the node's variables and the matches of the redactor's patterns.
//
// # Metrics
//
// Instruments records the runs, node executions, retries, recoveries, fallbacks and
// rejections interceptor.Metrics counts, and run and node durations, with the
// attributes flow.graph.id, flow.status and flow.node.type (see Instruments).
package otelflow
