package yamldoc_test

import (
	"fmt"

	"github.com/flowteam/flowteam/internal/yamldoc"
)

func Example() {
	data := []byte("id: g\nlayout:\n  - {id: a, link: [b}\n")
	if _, err := yamldoc.Decode(data); err != nil {
		line, msg := yamldoc.ErrorLine(data, err)
		fmt.Printf("graph.yml:%d: %s\n", line, msg)
	}
	// Output: graph.yml:3: invalid YAML: did not find expected ',' or ']'
}

func ExampleRelaxFlowColons() {
	relaxed, changed := yamldoc.RelaxFlowColons([]byte("- {id: a, link:[b, c]}\n"))
	fmt.Printf("%v %q\n", changed, relaxed)
	// Output: true "- {id: a, link: [b, c]}\n"
}
