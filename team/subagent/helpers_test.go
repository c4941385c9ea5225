package subagent_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// ttTeam builds a team whose engine records the path it takes.
func ttTeam(t *testing.T, name string, opts ...team.Option) (*team.TeamAgent, *testkit.PathRecorder) {
	t.Helper()
	rec := testkit.NewPathRecorder()
	tm, err := team.NewTeam(name, append(opts, team.WithEngineOptions(flow.WithInterceptor(rec, 0)))...)
	require.NoError(t, err)
	return tm, rec
}

func kinds(evs []team.Event) []team.EventKind {
	out := make([]team.EventKind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}
