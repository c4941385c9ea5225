package flow

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/flowteam/flowteam/internal/yamldoc"
)

// This file holds the syntax layer of the definition reader: which decoder reads a
// document (package yamldoc does the decoding) and where a syntax error is.
// definition.go reads the schema from the trees it returns.

// document decodes data into its root node (nil for an empty document). YAML is tried
// first, so JSON gets line numbers from the same parser; the fallbacks cover real Solon
// documents yaml.v3 rejects.
func (r *defReader) document(data []byte) (*yaml.Node, error) {
	root, yerr := yamldoc.Decode(data)
	if yerr == nil {
		r.checkJSON(data)
		r.data = data
		return root, nil
	}
	if yamldoc.LooksLikeJSON(data) {
		// Valid JSON that YAML cannot read: "\/" escapes, keys over 1024 bytes.
		root, jerr := yamldoc.DecodeJSON(data)
		if jerr == nil {
			return root, nil
		}
		if strings.HasSuffix(strings.ToLower(r.file), ".json") {
			return nil, r.syntaxError(data, jerr)
		}
	}
	// SnakeYAML, which Solon uses, reads "link:[a, b]" inside a flow mapping as a key and
	// a list; yaml.v3 does not. Solon's own test documents rely on it.
	if relaxed, changed := yamldoc.RelaxFlowColons(data); changed {
		root, err := yamldoc.Decode(relaxed)
		if err == nil {
			r.checkJSON(data)
			r.data = relaxed
			return root, nil
		}
		// The relaxed text has the same lines; its error is the one Solon would meet.
		data, yerr = relaxed, err
	}
	return nil, r.syntaxError(data, yerr)
}

// checkJSON records, for a .json document YAML has read, where it stops being JSON.
// Accepting such a document is deliberate (see ParseDefinition); recording it lets a
// validator say that other JSON tools will reject the file.
func (r *defReader) checkJSON(data []byte) {
	if !strings.HasSuffix(strings.ToLower(r.file), ".json") {
		return
	}
	if line := yamldoc.JSONErrorLine(data); line > 0 {
		r.lenient = Pos{File: r.file, Line: line}
	}
}

// syntaxError locates a YAML or JSON syntax error.
func (r *defReader) syntaxError(data []byte, err error) error {
	line, msg := yamldoc.ErrorLine(data, err)
	return &DefinitionError{Pos: Pos{File: r.file, Line: line}, Msg: msg}
}
