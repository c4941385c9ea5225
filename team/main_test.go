package team_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		// Re-executed as the "second process" of the resume tests.
		os.Exit(runChild())
	}
	goleak.VerifyTestMain(m)
}
