// Package yamldoc reads YAML and JSON documents into yaml.v3 node trees whose lines are
// exact, and says on which line a document stops being readable. Package flow reads
// graph definitions with it; it knows nothing of graphs.
//
//	root, err := yamldoc.Decode(data)
//	if err != nil {
//		line, msg := yamldoc.ErrorLine(data, err)
//		return fmt.Errorf("%s:%d: %s", file, line, msg)
//	}
//
// # JSON
//
// JSON is YAML, so Decode reads most JSON documents with the same lines. DecodeJSON reads
// the valid JSON that yaml.v3 refuses ("\/" escapes, keys over 1024 bytes) into the same
// tree, and JSONErrorLine says where a document YAML accepted stops being strict JSON.
//
// # Solon's relaxations
//
// SnakeYAML, which Solon uses, reads "link:[a, b]" inside a flow mapping as a key and a
// list; RelaxFlowColons rewrites such text, keeping every line where it was, so that
// yaml.v3 reads it the same way.
package yamldoc
