package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/flowteam/flowteam/team"
)

// subsetKeys are the keywords team.Schema holds, and the annotations that do not
// constrain a value: a schema with nothing else is checked completely by team.Schema.
var subsetKeys = map[string]bool{
	"type": true, "description": true, "properties": true, "required": true,
	"additionalProperties": true, "enum": true, "items": true,
	"title": true, "default": true, "examples": true, "$schema": true, "$comment": true,
}

// supportedDrafts are the $schema values jsonschema-go validates; a schema that names
// another is validated as draft 2020-12, which MCP prescribes.
var supportedDrafts = map[string]bool{
	"": true, "http://json-schema.org/draft-07/schema#": true,
	"https://json-schema.org/draft-07/schema#": true, "https://json-schema.org/draft/2020-12/schema": true,
}

// toolSchema converts an MCP tool's input schema (the JSON of a JSON Schema) into the
// team.Schema the agent validates arguments with and shows the model, and, when the
// schema uses keywords outside team.Schema's subset (patterns, lengths, combinators,
// $ref, type lists), a full validator for the rest. full is nil when the subset says
// everything.
func toolSchema(raw any) (sub *team.Schema, full *jsonschema.Resolved, err error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, nil, fmt.Errorf("input schema is not a JSON object: %s", b)
	}
	sub, complete := convert(m)
	if sub.Type == "" {
		sub.Type = "object" // MCP requires object arguments; an empty schema means any object
	}
	if complete {
		return sub, nil, nil
	}
	if s, _ := m["$schema"].(string); !supportedDrafts[s] {
		delete(m, "$schema")
		if b, err = json.Marshal(m); err != nil {
			return nil, nil, fmt.Errorf("input schema: %w", err)
		}
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	full, err = js.Resolve(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	return sub, full, nil
}

// convert maps one JSON Schema object onto team.Schema. complete is false when the
// schema (or a sub-schema) says something team.Schema cannot hold; the part it
// cannot hold is left open (any value) in the result.
func convert(m map[string]any) (s *team.Schema, complete bool) {
	s, complete = &team.Schema{}, true
	for k := range m {
		complete = complete && subsetKeys[k]
	}
	s.Description, _ = m["description"].(string)
	switch t := m["type"].(type) {
	case string:
		s.Type = t
	case nil:
	default: // a list of types: left to the full validator
		complete = false
	}
	if props, ok := m["properties"].(map[string]any); ok {
		s.Properties = make(map[string]*team.Schema, len(props))
		for name, p := range props {
			pm, ok := p.(map[string]any)
			if !ok { // true or false as a schema
				complete = false
				s.Properties[name] = &team.Schema{}
				continue
			}
			ps, pc := convert(pm)
			s.Properties[name], complete = ps, complete && pc
		}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	switch ap := m["additionalProperties"].(type) {
	case bool:
		s.AdditionalProperties = &ap
	case nil:
	default: // a schema for the extra properties
		complete = false
	}
	if enum, ok := m["enum"].([]any); ok {
		s.Enum = enum
	}
	switch it := m["items"].(type) {
	case map[string]any:
		var ic bool
		s.Items, ic = convert(it)
		complete = complete && ic
	case nil:
	default:
		complete = false
	}
	return s, complete
}

// validateFull checks arguments against the full schema, for the keywords team.Schema
// does not hold.
func validateFull(full *jsonschema.Resolved, args json.RawMessage) error {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return &team.Error{Type: team.TypeInvalidArguments, Message: "arguments are not JSON: " + err.Error(), Err: err}
	}
	if err := full.Validate(v); err != nil {
		return &team.Error{Type: team.TypeInvalidArguments, Message: "arguments do not match the schema: " + err.Error(), Err: err}
	}
	return nil
}
