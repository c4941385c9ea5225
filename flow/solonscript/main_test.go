package solonscript_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every execution's watchdog timer and cancellation hook end with it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
