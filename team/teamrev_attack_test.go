package team_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// Two levels of nesting: outer → middle → inner → bot. The member's resumed run fails
// after its approved batch; called again with its prompt, the outer team retries its
// failed run: the member goes on, as it does one level down
// (TestNestedTeamMemberModelFailureAfterResumedBatch).
func TestDoublyNestedTeamMemberModelFailureAfterResumedBatch(t *testing.T) {
	box := &toolbox{}
	model := testkit.NewScriptedModel(removeA(), testkit.FailWith(team.TypeSourceUnavailable), afterRemove("cleaned"))
	bot, err := team.NewReActAgent("bot", model, team.WithTools(box.remove()))
	require.NoError(t, err)
	inner, err := team.NewTeam("inner", team.WithMembers(bot))
	require.NoError(t, err)
	middle, err := team.NewTeam("middle", team.WithMembers(inner))
	require.NoError(t, err)
	outer, err := team.NewTeam("outer", team.WithMembers(testkit.NewFixedAgent("planner", "plan"), middle))
	require.NoError(t, err)
	sess := team.NewSession("nested2-retry")
	ans, err := outer.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	require.Equal(t, "bot", ans.Pending.Agent)
	require.NoError(t, sess.Decide("bot", team.Approve("d1")))

	_, err = outer.Call(context.Background(), "clean up", sess)
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	ans, err = outer.Call(context.Background(), "clean up", sess)
	require.NoError(t, err)
	require.Nil(t, ans.Pending, "nobody is asked again")
	assert.Equal(t, "cleaned", ans.Content)
	assert.Equal(t, []string{`remove:{"path":"/a"}`}, box.Calls(), "the approved call ran once")
	assert.Equal(t, 3, model.Calls())
}
