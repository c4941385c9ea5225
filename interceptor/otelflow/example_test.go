package otelflow_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor/otelflow"
)

// Tracing opens a span per run and per node; the spans end with their status.
func Example() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())

	spec := flow.NewSpec("hello")
	spec.Start("s").LinkTo("greet")
	spec.Activity("greet").SetTask(`context.put("greeting", "hello")`).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	eng := flow.NewEngine(flow.WithInterceptor(otelflow.NewTracing(tp), 0))
	if _, err := eng.EvalGraph(context.Background(), g, flow.NewContext("hello-1")); err != nil {
		fmt.Println(err)
		return
	}
	for _, sp := range exp.GetSpans() {
		for _, kv := range sp.Attributes {
			if kv.Key == otelflow.AttrStatus {
				fmt.Println(sp.Name, kv.Value.AsString())
			}
		}
	}
	// Output:
	// node s COMPLETED
	// node greet COMPLETED
	// node e COMPLETED
	// flow hello COMPLETED
}
