package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// supportedDrafts are the $schema values jsonschema-go validates.
var supportedDrafts = map[string]bool{
	"": true, "http://json-schema.org/draft-07/schema#": true,
	"https://json-schema.org/draft-07/schema#": true, "https://json-schema.org/draft/2020-12/schema": true,
}

// toolSchema reads an MCP tool's input schema (any JSON form of a JSON Schema) into
// the schema the agent shows the model and validates arguments with. A $schema naming
// another draft is dropped, so the schema is read as draft 2020-12, which MCP
// prescribes; a schema without a type means any object, as MCP arguments are objects.
// A schema that does not resolve (a dangling $ref) is an error.
func toolSchema(raw any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if !supportedDrafts[s.Schema] {
		s.Schema = ""
	}
	if s.Type == "" && len(s.Types) == 0 {
		s.Type = "object"
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return &s, nil
}
