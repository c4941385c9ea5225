package flow_test

import (
	"context"
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
