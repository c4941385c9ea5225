package worker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
)

// The error a worker logs is masked with the run's Redactor, which has learned the
// secret values of the updates and of the run's variables, and is still the error it
// wraps for errors.Is.
func TestShownErrMasksTheRunsSecrets(t *testing.T) {
	red := redact.New(redact.Secrets("card", "pin"))
	err := fmt.Errorf("card 4111-1111 pin 9876 declined: %w", session.ErrConflict)
	res := &session.Result{Context: flow.NewContextWith("i", map[string]any{"card": "4111-1111"})}

	got := shown(red, map[string]any{"pin": "9876"}, res, err)
	assert.Equal(t, "card *** pin *** declined: "+session.ErrConflict.Error(), got.Error())
	assert.ErrorIs(t, got, session.ErrConflict)

	got = shown(red, nil, nil, err)
	assert.Equal(t, err.Error(), got.Error(), "no values known")
	assert.Same(t, err, shown(nil, nil, res, err), "no Redactor")
	assert.NoError(t, shown(red, nil, res, nil))
}
