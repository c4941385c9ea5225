package team_test

import (
	"context"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOnAnswer(t *testing.T) {
	var got []string
	hook := func(_ context.Context, c *flow.Context, n *flow.Node, ans *team.Answer) error {
		got = append(got, n.ID+"="+ans.Content+"/"+c.BranchID())
		return nil
	}
	s := flow.NewSpec("g")
	s.Start("a").Do(team.AsTaskOnAnswer(testkit.NewFixedAgent("x", "X"), hook)).LinkTo("b")
	s.End("b").Do(team.AsTaskOnAnswer(testkit.NewFixedAgent("y", "Y"), hook))
	g, err := s.Build()
	require.NoError(t, err)
	_, err = flow.NewEngine().EvalGraph(context.Background(), g, flow.NewContext("i"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a=X/main", "b=Y/main"}, got)
}

func TestAsTaskRegisteredOnEngine(t *testing.T) {
	eng := flow.NewEngine()
	a := testkit.NewFixedAgent("a", "A")
	eng.RegisterTask(a.Name(), team.AsTask(a))
	g, err := flow.LoadGraph("g.yml", []byte("id: g\nlayout:\n  - {id: a, type: start, task: \"@a\"}\n"))
	require.NoError(t, err)
	fc := flow.NewContext("i")
	_, err = eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, "A", fc.Value("a.answer"))
}
