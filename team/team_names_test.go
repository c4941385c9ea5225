package team_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// A team keeps its state in variables named from its name ("_team.<name>",
// "_team.<name>.input", "_team.<name>.next", "_team.<name>.prompt.<member>"): a name
// whose variables could be another team's is refused, naming the name and the clash.
// Names that merely look alike keep working.
func TestTeamNameCannotClash(t *testing.T) {
	member := func() team.TeamOption { return team.WithMembers(testkit.NewFixedAgent("a", "A")) }
	for _, name := range []string{"crew.next", "crew.input", "crew.prompt", "crew.prompt.a", "x.prompt.a.input", "x.y.next"} {
		t.Run(name, func(t *testing.T) {
			_, err := team.NewTeam(name, member())
			require.Error(t, err)
			assert.Contains(t, err.Error(), `"`+name+`"`)
			assert.Contains(t, err.Error(), "another team")
		})
	}
	for _, name := range []string{"crew", "crew.nexts", "crew.inputs", "crew.prompter", "prompt.crew", "next", "input", "prompt", "crew.v2", "a.b.c"} {
		t.Run(name, func(t *testing.T) {
			_, err := team.NewTeam(name, member())
			assert.NoError(t, err)
		})
	}
}
