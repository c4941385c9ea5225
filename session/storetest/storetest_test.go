package storetest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
)

// lossyEnv names, in the child process TestSuiteCatchesLossyStores starts, the part of
// a snapshot its store loses.
const lossyEnv = "FLOWTEAM_STORETEST_LOSSY"

// losses are ways a store built on its own schema could lose part of a snapshot.
var losses = map[string]func(s *session.Snapshot){
	"nothing":  func(*session.Snapshot) {},
	"sealed":   func(s *session.Snapshot) { s.Sealed = nil },
	"redacted": func(s *session.Snapshot) { s.Redacted = nil },
	"dropped":  func(s *session.Snapshot) { s.Dropped = nil },
	"error type and severity": func(s *session.Snapshot) {
		for i := range s.Errors {
			s.Errors[i].Type, s.Errors[i].Severity = "", ""
		}
	},
}

// lossyStore is a MemoryStore whose Load loses part of the snapshot.
type lossyStore struct {
	*session.MemoryStore
	lose func(s *session.Snapshot)
}

func (l lossyStore) Load(ctx context.Context, id string) (*session.Snapshot, error) {
	s, err := l.MemoryStore.Load(ctx, id)
	if err == nil {
		l.lose(s)
	}
	return s, err
}

// TestLossyStore runs the suite against a lossy store; only in the child process of
// TestSuiteCatchesLossyStores, which expects it to fail.
func TestLossyStore(t *testing.T) {
	name := os.Getenv(lossyEnv)
	if name == "" {
		t.Skip("run by TestSuiteCatchesLossyStores")
	}
	storetest.Run(t, func(t *testing.T) session.Store {
		clk := storetest.NewClock()
		s := lossyStore{MemoryStore: session.NewMemoryStore(session.WithClock(clk.Now)), lose: losses[name]}
		return storetest.WithFastForward(s, clk.FastForward)
	})
}

// TestSuiteCatchesLossyStores: the suite fails a store that loses any part of a
// snapshot the session package relies on (a failing suite fails its test, so it runs
// in a child process), and passes the same store when it loses nothing.
func TestSuiteCatchesLossyStores(t *testing.T) {
	for name := range losses {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestLossyStore$", "-test.count=1")
			cmd.Env = append(os.Environ(), lossyEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if name == "nothing" {
				require.NoError(t, err, "%s", out)
				return
			}
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "the suite passes a store that loses %s (%v):\n%s", name, err, out)
			assert.Contains(t, string(out), "--- FAIL: TestLossyStore/")
		})
	}
}
