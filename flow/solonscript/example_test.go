package solonscript_test

import (
	"context"
	"fmt"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/flow/solonscript"
)

// A Solon rule chain whose scripts are Java, loaded as it is: the file names the
// evaluator, the engine knows it by name.
func Example() {
	doc := `id: rules
evaluator: solon
layout:
  - {type: start}
  - {task: "if (s.amount >= 100) { s.setScore(0); }"}
  - {task: "if (s.amount > 100 && s.amount <= 500) { s.setScore(100); }"}
  - {task: "if (s.amount > 500 && s.amount <= 1000) { s.setScore(500); }"}
  - {type: end}
`
	g, err := flow.LoadGraph("rules.yml", []byte(doc))
	if err != nil {
		panic(err)
	}
	eng := flow.NewEngine(flow.WithNamedEvaluator(solonscript.Name, solonscript.New()))
	for _, amount := range []int{300, 800} {
		s := map[string]any{"amount": amount}
		if _, err := eng.EvalGraph(context.Background(), g, flow.NewContextWith("", map[string]any{"s": s})); err != nil {
			panic(err)
		}
		fmt.Println(amount, s["score"])
	}
	// Output:
	// 300 100
	// 800 500
}
