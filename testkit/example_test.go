package testkit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/testkit"
)

// printT stands in for the *testing.T of a real test: it prints what a failing
// assertion reports, so the examples can show it.
type printT struct{ testing.TB }

func (printT) Helper() {}

func (printT) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

func (printT) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// routeGraph routes by risk: an analyst writes a risk level, a router sends
// high risk to manual review and the rest to automatic handling.
func routeGraph() *flow.Graph {
	s := flow.NewSpec("route")
	s.Start("start").LinkTo("analyst")
	s.Activity("analyst").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		c.Set("analysis.result", "HIGH") // a deterministic stand-in for an agent
		return nil
	}).LinkTo("route")
	s.Exclusive("route").
		LinkTo("manual", flow.LinkWhen(`context.get("analysis.result") == "HIGH"`)).
		LinkTo("auto")
	s.Activity("manual").SetTask(`context.put("route.result", "MANUAL")`).LinkTo("end")
	s.Activity("auto").SetTask(`context.put("route.result", "AUTO")`).LinkTo("end")
	s.End("end")
	g, err := s.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// A topology test in the style of the Java examples: record the path of a run with a
// per-evaluation interceptor, then assert the business result and the path. In a real
// test, t is the test's *testing.T.
func Example() {
	var t testing.TB = printT{}

	rec := testkit.NewPathRecorder()
	fc := flow.NewContext("case-1")
	_, err := flow.NewEngine().EvalGraph(context.Background(), routeGraph(), fc, flow.WithEvalInterceptor(rec, 0))
	if err != nil {
		t.Fatal(err)
	}

	fmt.Println(fc.Value("route.result"))
	testkit.AssertVisited(t, rec, "analyst", "route", "manual")
	testkit.AssertNotVisited(t, rec, "auto")
	testkit.AssertVisitedInOrder(t, rec, "analyst", "route", "manual")
	fmt.Println(rec)
	// Output:
	// MANUAL
	// start -> analyst -> route -> manual -> end
}

// The fluent form runs every assertion of the chain; OK tells whether all held.
func ExampleExpect() {
	var t testing.TB = printT{}
	rec := testkit.NewPathRecorder()
	e := flow.NewEngine(flow.WithInterceptor(rec, 0)) // records every run of the engine
	if _, err := e.EvalGraph(context.Background(), routeGraph(), flow.NewContext("case-2")); err != nil {
		t.Fatal(err)
	}

	ok := testkit.Expect(t, rec).
		Visited("analyst", "manual").
		NotVisited("auto").
		InOrder("start", "route", "end").
		Times("analyst", 1).
		OK()
	fmt.Println(ok)
	// Output:
	// true
}

// A failing assertion shows the whole recorded path.
func ExampleAssertVisitedInOrder() {
	rec := testkit.NewPathRecorder()
	_, _ = flow.NewEngine().EvalGraph(context.Background(), routeGraph(), flow.NewContext("case-3"), flow.WithEvalInterceptor(rec, 0))

	testkit.AssertVisitedInOrder(printT{}, rec, "manual", "analyst")
	// Output:
	// testkit: not visited in order "manual", "analyst": "analyst" was not visited after "manual" (position 4)
	// 	path: start -> analyst -> route -> manual -> end
}

// Parallel branches finish in no fixed order; each branch's own path is causal.
func ExamplePathRecorder_ByBranch() {
	s := flow.NewSpec("fan")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("a").LinkTo("b")
	s.Activity("a").LinkTo("j")
	s.Activity("b").LinkTo("j")
	s.Parallel("j").LinkTo("e")
	s.End("e")
	g, _ := s.Build()

	rec := testkit.NewPathRecorder()
	_, _ = flow.NewEngine().EvalGraph(context.Background(), g, flow.NewContext("fan-1"), flow.WithEvalInterceptor(rec, 0))

	byBranch := rec.ByBranch()
	fmt.Println(byBranch["main"])
	fmt.Println(byBranch["main/p:a"], byBranch["main/p:b"])
	// Output:
	// [s p j e]
	// [a] [b]
}

// Nodes of a sub-graph are told apart from the caller's by their call path.
func ExamplePathRecorder_QualifiedPath() {
	e := flow.NewEngine()
	child := flow.NewSpec("check")
	child.Start("cs").LinkTo("verify")
	child.Activity("verify").LinkTo("ce")
	child.End("ce")
	cg, _ := child.Build()
	_ = e.Register(cg)

	parent := flow.NewSpec("order")
	parent.Start("s").LinkTo("call")
	parent.Activity("call").SetTask("#check").LinkTo("e")
	parent.End("e")
	pg, _ := parent.Build()

	rec := testkit.NewPathRecorder()
	_, _ = e.EvalGraph(context.Background(), pg, flow.NewContext("o-1"), flow.WithEvalInterceptor(rec, 0))
	for _, id := range rec.QualifiedPath() {
		fmt.Println(id)
	}
	fmt.Println(rec.Count("order/call/check:verify"))
	// Output:
	// order:s
	// order:call
	// order/call/check:cs
	// order/call/check:verify
	// order/call/check:ce
	// order:e
	// 1
}
