package interceptor_test

import (
	"context"
	"fmt"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

// Metrics counts a run's node executions by status; WithRunMetrics hands the counts
// over as each run ends (Run reads them by run id while they are retained).
func ExampleNewMetrics() {
	m, err := interceptor.NewMetrics(interceptor.WithRunMetrics(func(tm trace.Metrics) {
		fmt.Println(tm.RunID, tm.Status, tm.Started, tm.Completed, tm.Suspended)
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	spec := flow.NewSpec("leave")
	spec.Start("s").LinkTo("manager")
	spec.Activity("manager").SetTask(`approved == nil ? context.suspend("waiting for the manager") : context.put("ok", approved)`).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	eng := flow.NewEngine(flow.WithInterceptor(m, 0))
	fc := flow.NewContext("leave-1")
	res, err := eng.EvalGraph(context.Background(), g, fc, flow.WithRunID("run-1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	if tm, ok := m.Run("run-1"); ok {
		fmt.Println("run-1 retained:", tm.Status, tm.Ended())
	}

	fc.Set("approved", true)
	if _, err := eng.Resume(context.Background(), res.Frontier, fc, flow.WithRunID("run-2")); err != nil {
		fmt.Println(err)
	}
	// Output:
	// run-1 SUSPENDED 2 1 1
	// run-1 retained: SUSPENDED 2
	// run-2 COMPLETED 2 2 0
}

// The audit never writes a secret: a suspend reason (or an error message) that quotes
// a sensitive key's value has the value masked before the record reaches a sink. The
// default keys cover password, token, api_key and the like; WithRedactKeys adds more.
func ExampleWithRedactKeys() {
	mem := interceptor.NewMemory()
	audit := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithRedactKeys("iban"))
	spec := flow.NewSpec("payout")
	spec.Start("s").LinkTo("check")
	spec.Activity("check").SetTask(`context.suspend("confirm iban=" + iban + " with token: " + token)`).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	eng := flow.NewEngine(flow.WithInterceptor(audit, 0))
	fc := flow.NewContextWith("p-1", map[string]any{"iban": "DE02120300000000202051", "token": "s3cr3t"})
	if _, err := eng.EvalGraph(context.Background(), g, fc); err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range mem.Records() {
		if r.Status == trace.Suspended && !r.IsRun() {
			fmt.Println(r.NodeID, r.Reason)
		}
	}
	// Output:
	// check confirm iban=*** with token: ***
}
