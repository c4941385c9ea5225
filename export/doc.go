// Package export writes graphs out and checks them before production.
//
// Writing a graph as a definition document, and checking one:
//
//	g, err := spec.Build()
//	...
//	yml, err := export.YAML(g) // what flow.ParseDefinition reads back
//	...
//	for _, f := range export.ValidateSpecs([]*flow.GraphSpec{spec}) {
//		fmt.Println(f) // tree.yml:5: error link.missing-target: ...
//	}
//
// ExampleYAML, ExampleMermaid and ExampleValidateSpecs run these as tests.
//
// # Writers
//
// YAML and JSON write a *flow.Graph in the Solon "layout" schema, with every attribute
// and link priority kept; PlantUML, Mermaid and DOT draw it as a diagram. Write and
// ParseFormat pick a writer by name. Every writer is deterministic: the same graph
// gives the same bytes. The reader is flow.ParseDefinition: an engine must load
// files, and flow cannot import export.
//
// # Validation
//
// ValidateSpecs runs the production checklist over a set of specifications meant to be
// registered together, including ones that do not build, and returns findings with
// stable codes (the Code constants) and file positions. Validate checks one built
// graph, and ValidateFiles definition files read as one set (what "flowteam validate"
// prints). WithTaskNames and WithConditionNames name what the engine registers, so
// that an unknown "@name" is an error.
//
// # Conditions
//
// The checklist reasons about conditions only as far as their text shows: an empty
// when and the literal true always hold, the literal false never holds, and any other
// condition may or may not hold. Conditions compare by a normal form: with the default
// evaluator, expr's syntax tree, so spaces, redundant parentheses, trailing semicolons
// and a string's quotes do not count ("a>1" and "(a > 1)" are one condition), but other
// ways to write an equivalent expression do ("a > 1" and "1 < a" differ). A condition
// that does not parse, and every condition with another evaluator, compares as text.
package export
