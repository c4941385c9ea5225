package team_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

type orderLine struct {
	SKU  string `json:"sku" jsonschema:"stock keeping unit"`
	Qty  int    `json:"qty" jsonschema:"quantity"`
	Note string `json:"note,omitempty" jsonschema:"optional note"`
}

type orderArgs struct {
	ID       int         `json:"id" jsonschema:"order id"`
	Priority string      `json:"priority" jsonschema:"how urgent"`
	Items    []orderLine `json:"items" jsonschema:"line items"`
	Express  bool        `json:"express,omitempty" jsonschema:"ship express"`
	Weight   float64     `json:"weight,omitempty" jsonschema:"kg"`
}

func orderTool(t *testing.T) team.Tool {
	t.Helper()
	schema, err := jsonschema.For[orderArgs](nil)
	require.NoError(t, err)
	schema.Properties["priority"].Enum = []any{"low", "high"}
	return team.NewTool("order", "Place an order", schema,
		func(context.Context, orderArgs) (string, error) { return "placed", nil })
}

func TestToolArgumentValidation(t *testing.T) {
	order := orderTool(t)
	cases := []struct {
		name string
		json string
		errs []string // substrings of the error; nil when the arguments are valid
	}{
		{"valid", `{"id": 7, "priority": "high", "items": [{"sku": "a", "qty": 2}], "weight": 1.5}`, nil},
		{"integer as float", `{"id": 7.0, "priority": "low", "items": []}`, nil},
		{"empty list", `{"id": 1, "priority": "low", "items": []}`, nil},
		{"missing", `{"priority": "low"}`, []string{"required", "id"}},
		{"wrong type", `{"id": "7", "priority": "low", "items": []}`, []string{"/id", "integer"}},
		{"wrong array", `{"id": 7, "priority": "low", "items": {}}`, []string{"/items", "array"}},
		{"wrong boolean", `{"id": 7, "priority": "low", "items": [], "express": "yes"}`, []string{"/express", "boolean"}},
		{"fraction", `{"id": 7.5, "priority": "low", "items": []}`, []string{"/id", "integer"}},
		{"enum", `{"id": 1, "priority": "urgent", "items": []}`, []string{"/priority", "urgent"}},
		{"nested missing", `{"id": 1, "priority": "low", "items": [{"sku": "a", "qty": 1}, {"sku": "b"}]}`, []string{"items", "missing", "qty"}},
		{"nested type", `{"id": 1, "priority": "low", "items": [{"sku": 3, "qty": 1}]}`, []string{"sku", "want \"string\""}},
		{"unknown property", `{"id": 1, "priority": "low", "items": [], "discount": 50}`, []string{"discount"}},
		{"not an object", `[1]`, []string{"object"}},
		{"not json", `{"id":`, []string{"not JSON"}},
		{"trailing data", `{} {}`, []string{"not JSON"}},
		{"empty is an empty object", "  ", []string{"required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := team.ValidateArgs(order, c.json)
			if c.errs == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, want := range c.errs {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestNewToolInfersSchema(t *testing.T) {
	type args struct {
		Q string `json:"q" jsonschema:"query"`
		N int    `json:"n,omitempty"`
	}
	tool := team.NewTool("find", "Find", nil, func(context.Context, args) (int, error) { return 0, nil })
	b, err := json.Marshal(tool.Schema)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","properties":{"q":{"type":"string","description":"query"},"n":{"type":"integer"}},"required":["q"],"additionalProperties":false}`, string(b))
	assert.NoError(t, team.ValidateArgs(tool, `{"q":"lamps"}`), "n is optional")
	assert.ErrorContains(t, team.ValidateArgs(tool, ""), "q", "no arguments are an empty object, which lacks q")
}

func TestNewToolWithoutSchemaFailsTheAgent(t *testing.T) {
	tool := team.NewTool("bad", "Takes a channel", nil, func(context.Context, chan int) (int, error) { return 0, nil })
	_, err := team.NewReActAgent("clerk", testkit.NewScriptedModel(), team.WithTools(tool))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `tool "bad": schema`)
}
