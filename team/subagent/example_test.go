package subagent_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/subagent"
)

// A custom merge of a Parallel team of sub-agents gets the members' coverage notes, so
// its answer can tell a source that holds nothing from one that could not be searched.
func ExampleMerge() {
	market := &subagent.SubAgent{Task: "market", Search: func(ctx context.Context, q string) ([]any, error) {
		return []any{"20bn EUR in 2024"}, nil
	}}
	recalls := &subagent.SubAgent{Task: "recalls", Search: func(ctx context.Context, q string) ([]any, error) {
		return []any{}, nil // searched: none exist
	}}
	patents := &subagent.SubAgent{Task: "patents", Search: func(ctx context.Context, q string) ([]any, error) {
		return nil, &team.Error{Type: team.TypeAuthDenied, Message: "no licence for patent_db"}
	}}
	members := []team.Agent{market, recalls, patents}
	merge := team.WithMerge(subagent.Merge(members, func(ctx context.Context, tr *team.TeamTrace, cov subagent.Coverage) (string, error) {
		var b strings.Builder
		for _, n := range cov.Notes {
			fmt.Fprintln(&b, strings.TrimSpace(fmt.Sprintf("%s: %s %s %s", n.Task, n.Class, n.Gap, n.ErrorType)))
		}
		return b.String(), nil
	}))
	research, err := team.NewTeam("research",
		team.WithMembers(members...),
		team.WithProtocol(team.Parallel), team.WithBranchPolicy(flow.ContinueOnError), merge)
	if err != nil {
		panic(err)
	}
	ans, err := research.Call(context.Background(), "e-bikes in Europe", team.NewSession("research-1"))
	if err != nil {
		panic(err)
	}
	fmt.Print(ans.Content)
	// Output:
	// market: well_supported
	// recalls: valid_empty
	// patents: gap access_failure auth_denied
}
