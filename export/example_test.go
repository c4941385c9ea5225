package export_test

import (
	"fmt"
	"os"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
)

func ExampleYAML() {
	spec := flow.NewSpec("leave")
	spec.Start("s").LinkTo("g")
	spec.Exclusive("g").
		LinkTo("director", flow.LinkWhen("day >= 3"), flow.LinkPriority(1)).
		LinkTo("e")
	spec.Activity("director").SetTask("@director").LinkTo("e")
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		panic(err)
	}
	out, err := export.YAML(g)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	// Output:
	// id: leave
	// layout:
	//   - id: s
	//     type: start
	//     link: g
	//   - id: g
	//     type: exclusive
	//     link:
	//       - nextId: director
	//         when: day >= 3
	//         priority: 1
	//       - nextId: e
	//   - id: director
	//     type: activity
	//     task: '@director'
	//     link: e
	//   - id: e
	//     type: end
}

func ExampleMermaid() {
	g, err := flow.LoadGraph("approve.yml", []byte(`
id: approve
layout:
  - {type: start}
  - {id: review, title: "Review #1", task: "@review"}
  - {type: end}
`))
	if err != nil {
		panic(err)
	}
	if err := export.Write(os.Stdout, g, export.FormatMermaid); err != nil {
		panic(err)
	}
	// Output:
	// ---
	// title: "approve"
	// ---
	// flowchart TD
	//     n0(["n-1<br/>«start»"])
	//     n1["Review #35;1<br/>task: @review"]
	//     n2(["n-3<br/>«end»"])
	//     n0 --> n1
	//     n1 --> n2
}

func ExampleValidateSpecs() {
	spec, err := flow.ParseDefinition("tree.yml", []byte(`id: tree
layout:
  - {id: s, type: start, link: g}
  - {id: g, type: exclusive, link: [{nextId: a, when: "visible"}, b, e]}
  - {id: a, link: xx}
  - {id: b, task: 'System.out.println("b");', link: e}
  - {id: e, type: end}
`))
	if err != nil {
		panic(err)
	}
	for _, f := range export.ValidateSpecs([]*flow.GraphSpec{spec}) {
		fmt.Println(f)
	}
	// Output:
	// tree.yml:4: error exclusive.multiple-defaults: exclusive gateway "g" has 2 default links (without when: to "b", "e"): only the first by priority is ever taken
	// tree.yml:5: error link.missing-target: node "a" links to "xx", which is not a node of graph "tree"
	// tree.yml:6: warning script.java: node "b": task script "System.out.println(\"b\");" is Java for Solon's script engine: it compiles as an expression but fails when it runs (rewrite it, or register a Go task and use "@name")
}
