package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `c1 {"status":"success","result":{"sku":"A-1","units":12}}
c2 {"status":"error","error":{"type":"tool_error","retryable":false,"message":"mcp tool \"stock\": unknown SKU \"Z-9\""}}
c3 {"status":"error","error":{"type":"invalid_arguments","retryable":false,"message":"arguments do not match the schema: validating root: unexpected additional properties [\"code\"]"}}
answer: A-1: 12 units. Z-9 is not a SKU we carry.
`, out.String())
}
