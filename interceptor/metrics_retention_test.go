package interceptor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
)

// A run id that finishes again (an application that sets run ids with WithRunID and
// reuses one, say for a resume) is the newest finished run, not the oldest: the
// retention forgets the runs that finished before it first.
func TestMetricsRetentionRunIDFinishingAgain(t *testing.T) {
	m, err := interceptor.NewMetrics(interceptor.WithRetention(2))
	require.NoError(t, err)
	e := flow.NewEngine(flow.WithInterceptor(m, 0))
	s := flow.NewSpec("g")
	s.Start("s").LinkTo("e")
	s.End("e")
	g := build(t, s)
	for _, id := range []string{"a", "b", "a", "c"} {
		_, err := e.EvalGraph(context.Background(), g, flow.NewContext("i"), flow.WithRunID(id))
		require.NoError(t, err)
	}
	for id, kept := range map[string]bool{"a": true, "b": false, "c": true} {
		_, ok := m.Run(id)
		assert.Equal(t, kept, ok, id)
	}
}
