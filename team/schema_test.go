package team_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
)

func TestSchemaValidation(t *testing.T) {
	order := team.Object(map[string]*team.Schema{
		"id":       team.Integer("order id"),
		"priority": team.Enum("how urgent", "low", "high"),
		"items": team.Array("line items", team.Object(map[string]*team.Schema{
			"sku":   team.String("stock keeping unit"),
			"qty":   team.Integer("quantity"),
			"note?": team.String("optional note"),
		})),
		"express?": team.Boolean("ship express"),
		"weight?":  team.Number("kg"),
	})
	cases := []struct {
		name string
		json string
		errs []string
	}{
		{"valid", `{"id": 7, "priority": "high", "items": [{"sku": "a", "qty": 2}], "weight": 1.5}`, nil},
		{"integer as float", `{"id": 7.0, "priority": "low", "items": []}`, nil},
		{"empty list", `{"id": 1, "priority": "low", "items": []}`, nil},
		{"missing", `{"priority": "low"}`, []string{`/: missing required property "id"`, `/: missing required property "items"`}},
		{"wrong types", `{"id": "7", "priority": "low", "items": {}, "express": "yes"}`,
			[]string{"/express: want boolean, got string", "/id: want integer, got string", "/items: want array, got object"}},
		{"fraction", `{"id": 7.5, "priority": "low", "items": []}`, []string{"/id: want integer, got number"}},
		{"enum", `{"id": 1, "priority": "urgent", "items": []}`, []string{`/priority: "urgent" is not one of ["low","high"]`}},
		{"nested", `{"id": 1, "priority": "low", "items": [{"sku": "a", "qty": 1}, {"sku": 3}]}`,
			[]string{`/items/1: missing required property "qty"`, "/items/1/sku: want string, got integer"}},
		{"unknown property", `{"id": 1, "priority": "low", "items": [], "discount": 50}`, []string{`/: unknown property "discount"`}},
		{"not an object", `[1]`, []string{"/: want object, got array"}},
		{"not json", `{"id":`, []string{"/: not JSON: unexpected EOF"}},
		{"trailing data", `{} {}`, []string{"/: data after the JSON value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := order.ValidateJSON([]byte(c.json))
			if c.errs == nil {
				assert.NoError(t, err)
				return
			}
			var ve *team.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, c.errs, ve.Problems)
		})
	}

	// Empty arguments are an empty object; a nil schema accepts anything.
	assert.NoError(t, team.Object(nil).ValidateJSON(nil))
	assert.Error(t, order.ValidateJSON([]byte("  ")))
	var none *team.Schema
	assert.NoError(t, none.ValidateJSON([]byte(`"x"`)))
	// Numeric enums compare by value; null and untyped schemas.
	assert.NoError(t, (&team.Schema{Enum: []any{1, 2}}).ValidateJSON([]byte(`2.0`)))
	assert.Error(t, (&team.Schema{Enum: []any{1, 2}}).ValidateJSON([]byte(`3`)))
	assert.NoError(t, (&team.Schema{Type: "null"}).ValidateJSON([]byte(`null`)))
	assert.Error(t, (&team.Schema{Type: "uuid"}).ValidateJSON([]byte(`"x"`)), "an unsupported type never matches")

	// The schema marshals as standard JSON Schema.
	b, err := json.Marshal(team.Object(map[string]*team.Schema{"q": team.String("query"), "n?": team.Integer("")}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","properties":{"q":{"type":"string","description":"query"},"n":{"type":"integer"}},"required":["q"],"additionalProperties":false}`, string(b))
}

func TestErrorModel(t *testing.T) {
	e := team.NewError(team.TypeRateLimited, "quota %d/min", 10)
	assert.True(t, e.Retryable())
	assert.Equal(t, "rate_limited: quota 10/min", e.Error())
	assert.ErrorIs(t, e, team.ErrRateLimited)
	assert.NotErrorIs(t, e, team.ErrTimeout)
	assert.Equal(t, "rate_limited", e.ErrorCode())
	b, err := json.Marshal(team.NewError(team.TypeNotFound, "gone"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"not_found","retryable":false,"message":"gone"}`, string(b))
	assert.Nil(t, team.AsError(nil, team.TypeAgentFailed))
}
