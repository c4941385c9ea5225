package flow_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowteam/flowteam/flow"
)

// A loop that runs a graph many times and reads each outcome before the next run can
// keep one Result: WithResult fills it instead of allocating a new one.
func ExampleWithResult() {
	g, err := flow.LoadGraph("case1.yml", []byte(`
id: case1
layout:
  - {type: start}
  - {type: exclusive, link: [{nextId: sum, when: "a > b"}, sub]}
  - {id: sum, task: 'context.put("result", a + b)', link: end}
  - {id: sub, task: 'context.put("result", a - b)', link: end}
  - {id: end, type: end}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	e := flow.NewEngine()
	var res flow.Result
	keep := flow.WithResult(&res) // created once: creating an option allocates
	for _, a := range []int{3, 5} {
		fc := flow.NewContextWith("calc", map[string]any{"a": a, "b": 4})
		if _, err := e.EvalGraph(context.Background(), g, fc, keep); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Status, res.LastNode("case1"), fc.Value("result"))
	}
	// Output:
	// completed end -1
	// completed end 9
}

// A parallel split with branchPolicy "continue" withdraws a failing branch and lets the
// join run with the others; the nodes after the join read the failures with
// BranchFailuresOf, which also reads them after a trip through JSON (a stored session).
func ExampleBranchFailuresOf() {
	spec := flow.NewSpec("quotes")
	spec.Start("s").LinkTo("fork")
	spec.Parallel("fork").SetMeta(flow.MetaBranchPolicy, "continue").
		LinkTo("a").LinkTo("b")
	spec.Activity("a").SetTask(`context.put("a", 10);`).LinkTo("join")
	spec.Activity("b").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		return &flow.Error{Code: "SUPPLIER_DOWN", Message: "supplier b did not answer"}
	}).LinkTo("join")
	spec.Parallel("join").LinkTo("report")
	spec.Activity("report").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		for _, bf := range flow.BranchFailuresOf(c.Value(flow.KeyBranchFailures)) {
			fmt.Printf("after the join: split %s lost node %s (%s)\n", bf.Split, bf.Node, bf.Code)
		}
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := flow.NewEngine().EvalGraph(context.Background(), g, flow.NewContext("q-1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, len(res.BranchFailures))
	// Output:
	// after the join: split fork lost node b (SUPPLIER_DOWN)
	// completed 1
}

// A task suspends the run until the decision it waits for is in the context; Resume
// continues from the frontier the suspended run left, running the suspended node again
// and nothing before it.
func ExampleEngine_Resume() {
	spec := flow.NewSpec("leave")
	spec.Start("s").LinkTo("submit")
	spec.Activity("submit").SetTask(`context.put("submitted", true);`).LinkTo("manager")
	spec.Activity("manager").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		if _, ok := c.Get("approved"); !ok {
			c.Suspend("waiting for the manager")
		}
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	eng := flow.NewEngine()
	fc := flow.NewContext("leave-42")
	res, err := eng.EvalGraph(context.Background(), g, fc)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s at %s: %s\n", res.Status, res.LastNode("leave"), res.Reason)

	fc.Set("approved", true) // the decision arrives
	res, err = eng.Resume(context.Background(), res.Frontier, fc)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s at %s after %d more steps (manager again, then e)\n", res.Status, res.LastNode("leave"), res.Steps)
	// Output:
	// suspended at manager: waiting for the manager
	// completed at e after 2 more steps (manager again, then e)
}

// A graph built in Go: a Go task, an exclusive gateway whose link without a condition
// is the default, and a Solon-style script task. Build checks the graph once; Register
// compiles its conditions and scripts once; every Eval then shares it.
func ExampleNewSpec() {
	spec := flow.NewSpec("leave")
	spec.Start("s").LinkTo("review")
	spec.Activity("review").DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		c.Set("reviewed", true)
		return nil
	}).LinkTo("g")
	spec.Exclusive("g").
		LinkTo("director", flow.LinkWhen("day >= 3")).
		LinkTo("e")
	spec.Activity("director").SetTask(`context.put("director", true);`).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	eng := flow.NewEngine()
	if err := eng.Register(g); err != nil {
		fmt.Println(err)
		return
	}
	for _, day := range []int{5, 1} {
		fc := flow.NewContextWith("req", map[string]any{"day": day})
		res, err := eng.Eval(context.Background(), "leave", fc)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(day, res.Status, res.Steps, fc.Value("reviewed"), fc.Value("director"))
	}

	// An exclusive gateway with no true link and no default fails the run with a
	// stable code, where Solon would silently end the branch.
	strict := flow.NewSpec("strict")
	strict.Start("s").LinkTo("g")
	strict.Exclusive("g").LinkTo("e", flow.LinkWhen("day >= 3"))
	strict.End("e")
	g2, err := strict.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := eng.Register(g2); err != nil {
		fmt.Println(err)
		return
	}
	res, err := eng.Eval(context.Background(), "strict", flow.NewContextWith("req", map[string]any{"day": 1}))
	var ne *flow.NodeError
	if errors.As(err, &ne) {
		fmt.Println(res.Status, ne.Node, ne.Code, errors.Is(err, flow.ErrNoRoute))
	}
	// Output:
	// 5 completed 5 true true
	// 1 completed 4 true <nil>
	// failed g exclusive_no_match true
}

// The package's example: a graph from a definition document, with a script task and a
// Go task, run for a short leave and a long one.
func Example() {
	g, err := flow.LoadGraph("leave.yml", []byte(`
id: leave
layout:
  - {type: start}
  - {type: exclusive, link: [{nextId: auto, when: "day <= 3"}, manager]}
  - {id: auto, task: 'context.put("approved", true)', link: end}
  - {id: manager, task: "@askManager", link: end}
  - {id: end, type: end}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	askManager := func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		c.Set("approved", c.Value("day").(int) <= 10)
		return nil
	}
	e := flow.NewEngine(flow.WithTaskFunc("askManager", askManager))
	for _, day := range []int{2, 12} {
		fc := flow.NewContextWith("leave-42", map[string]any{"day": day})
		res, err := e.EvalGraph(context.Background(), g, fc)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(day, res.Status, fc.Value("approved"))
	}
	// Output:
	// 2 completed true
	// 12 completed false
}

// A task that must write outside the instance exactly once queues the write with
// Effect; the checkpoint that records the node's completion carries it, and the
// checkpoint's receiver (a session.EffectStore) makes it in the step that saves the
// checkpoint. The attempt that failed queued one too, and it was dropped.
func ExampleContext_Effect() {
	spec := flow.NewSpec("order")
	spec.Start("s").LinkTo("charge")
	attempt := 0
	spec.Activity("charge").SetRetry(flow.RetryPolicy{Max: 2}).DoFunc(func(ctx context.Context, c *flow.Context, n *flow.Node) error {
		attempt++
		if err := c.Effect(fmt.Sprintf("send receipt (attempt %d)", attempt)); err != nil {
			return err
		}
		if attempt == 1 {
			return flow.MarkRetryable(errors.New("payment service busy"))
		}
		return nil
	}).LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	save := flow.WithCheckpoint(func(ctx context.Context, cp flow.Checkpoint) error {
		fmt.Println(cp.Node, cp.Effects) // a store would save cp and make cp.Effects at once
		return nil
	})
	if _, err := flow.NewEngine().EvalGraph(context.Background(), g, flow.NewContext("o-1"), save); err != nil {
		fmt.Println(err)
	}
	// Output:
	// s []
	// charge [send receipt (attempt 2)]
	// e []
}
